"""The shapes a figure is made of - rectangles, lines, text and images of cell grids -
in pixel coordinates (x right, y down). The SVG writer and the matplotlib renderer
draw the same shapes, so the two pictures of a figure cannot differ in content."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BLACK", "CHAR_WIDTH", "FONT", "Colour", "Image", "Line", "Rect", "Shape", "Text", "text_width"]

Colour = tuple[float, float, float]  #: red, green, blue in 0..255
BLACK: Colour = (0.0, 0.0, 0.0)
#: Every text is set in a monospaced font, so that a layout can measure it.
FONT = "DejaVu Sans Mono, monospace"
#: The advance of one character of `FONT`, in units of the font size.
CHAR_WIDTH = 0.6


def text_width(text: str, size: float) -> float:
    """The pixels ``text`` takes at font size ``size`` (in `FONT`)."""
    return len(text) * size * CHAR_WIDTH


@dataclass(frozen=True)
class Rect:
    """A rectangle filled in ``fill`` with opacity ``alpha``, outlined unless ``outline`` is None."""

    x: float
    y: float
    w: float
    h: float
    fill: Colour
    alpha: float = 1.0
    outline: Colour | None = None


@dataclass(frozen=True)
class Line:
    x0: float
    y0: float
    x1: float
    y1: float
    colour: Colour = BLACK
    width: float = 1.0


@dataclass(frozen=True)
class Text:
    """``text`` of font size ``size`` pixels, vertically centred on ``y``, with its
    ``start``, ``middle`` or ``end`` (``anchor``) at ``x``."""

    x: float
    y: float
    text: str
    size: float = 10.0
    anchor: str = "start"
    colour: Colour = BLACK
    bold: bool = False


@dataclass(frozen=True, eq=False)
class Image:
    """A grid of cells: ``pixels`` (rows, columns, 3) uint8 over the box (``x``, ``y``,
    ``w``, ``h``), each cell a sharp-edged rectangle of whole pixels (the box's corner
    on whole pixels, ``w`` a multiple of the columns, ``h`` of the rows)."""

    x: float
    y: float
    w: float
    h: float
    pixels: np.ndarray


Shape = Rect | Line | Text | Image
