"""PNG pictures through matplotlib (the optional ``plot`` extra): a figure's cell grids
copied onto the page pixel for pixel, its other shapes drawn over them by Agg at one
pixel per unit in their painting order; and cell grids encoded as PNG (for the SVG
writer's ``<image>``). Without matplotlib both raise `MissingExtraError` naming the
extra."""

from __future__ import annotations

import io
import warnings
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..extras import require
from .shapes import Image, Line, Rect, Shape, Text

__all__ = ["MAX_SIDE", "encode_png", "png_bytes"]

DPI = 100
#: Agg draws at most this many pixels along each side of a picture
MAX_SIDE = (1 << 16) - 1
_ANCHOR = {"start": "left", "middle": "center", "end": "right"}


def encode_png(pixels: np.ndarray) -> bytes:
    """The PNG of (height, width, 3) uint8 pixels."""
    require("matplotlib", "a PNG picture")
    from matplotlib.image import imsave
    out = io.BytesIO()
    imsave(out, np.ascontiguousarray(pixels, dtype=np.uint8), format="png")
    return out.getvalue()


def png_bytes(width: int, height: int, layers: Mapping[str, Sequence[Shape]]) -> bytes:
    """The PNG of a ``width`` x ``height`` white page with ``layers`` drawn in order: the
    cell grids copied onto the page as they are, the other shapes drawn by Agg over them."""
    require("matplotlib", "a PNG picture")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    if max(width, height) > MAX_SIDE:
        raise ParameterError(f"a {width} x {height} pixel picture is too large for a PNG (at most {MAX_SIDE} pixels "
                             f"a side): draw fewer columns or rows, or write SVG")
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="none")
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    axes.set_axis_off()
    shapes = [shape for layer in layers.values() for shape in layer]
    for order, (kind, batch) in enumerate(groupby((shape for shape in shapes if not isinstance(shape, Image)),
                                                  key=type)):
        _DRAW[kind](axes, list(batch), order)
    axes.set_xlim(0, width)
    axes.set_ylim(height, 0)
    with warnings.catch_warnings():  # a character the font lacks is drawn as a box, as a browser does
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        canvas.draw()
    drawn = np.asarray(canvas.buffer_rgba())              # straight (not premultiplied) alpha
    page = np.full((height, width, 3), 255, dtype=np.uint8)
    for image in (shape for shape in shapes if isinstance(shape, Image)):
        _paste(page, image)
    ys, xs = np.nonzero(drawn[..., 3])                    # blend only where Agg drew
    alpha = drawn[ys, xs, 3:].astype(np.uint32)
    page[ys, xs] = (drawn[ys, xs, :3] * alpha + page[ys, xs] * (255 - alpha) + 127) // 255
    return encode_png(page)


def _paste(page: np.ndarray, image: Image) -> None:
    """The grid's cells blown up to their whole pixels, copied onto ``page`` (clipped to it);
    a grid of no cells (a timeline without rows) draws nothing."""
    rows, columns = image.pixels.shape[:2]
    if not rows or not columns:
        return
    cells = np.repeat(np.repeat(image.pixels, round(image.h / rows), axis=0), round(image.w / columns), axis=1)
    x, y = round(image.x), round(image.y)
    target = page[max(y, 0):y + cells.shape[0], max(x, 0):x + cells.shape[1]]
    target[...] = cells[max(-y, 0):max(-y, 0) + target.shape[0], max(-x, 0):max(-x, 0) + target.shape[1]]


def _points(pixels: float) -> float:
    return pixels * 72.0 / DPI


def _rgba(colour: Sequence[float], alpha: float = 1.0) -> tuple[float, float, float, float]:
    return (colour[0] / 255.0, colour[1] / 255.0, colour[2] / 255.0, alpha)


def _rects(axes: Any, rects: list[Rect], order: int) -> None:
    from matplotlib.collections import PolyCollection
    corners = [((r.x, r.y), (r.x + r.w, r.y), (r.x + r.w, r.y + r.h), (r.x, r.y + r.h)) for r in rects]
    outlined = any(r.outline is not None for r in rects)
    axes.add_collection(PolyCollection(
        corners, facecolors=[_rgba(r.fill, r.alpha) for r in rects], zorder=order, antialiased=outlined,
        edgecolors=[_rgba(r.outline) if r.outline is not None else (0, 0, 0, 0) for r in rects],
        linewidths=_points(0.5) if outlined else 0.0), autolim=False)


def _lines(axes: Any, lines: list[Line], order: int) -> None:
    from matplotlib.collections import LineCollection
    axes.add_collection(LineCollection(
        [((line.x0, line.y0), (line.x1, line.y1)) for line in lines], colors=[_rgba(line.colour) for line in lines],
        linewidths=[_points(line.width) for line in lines], zorder=order), autolim=False)


def _texts(axes: Any, texts: list[Text], order: int) -> None:
    for text in texts:
        axes.text(text.x, text.y, text.text, fontsize=_points(text.size), ha=_ANCHOR[text.anchor],
                  va="center_baseline", color=_rgba(text.colour), family="monospace",
                  fontweight="bold" if text.bold else "normal", zorder=order, parse_math=False, clip_on=False)


_DRAW = {Rect: _rects, Line: _lines, Text: _texts}


