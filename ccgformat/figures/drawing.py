"""A picture as a list of shapes - rectangles (with alpha), lines and text - rendered as
SVG text or as a PNG raster (`png_bytes`), so that each figure is laid out once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from ..atomic import atomic_output
from .font import GLYPH_HEIGHT, glyphs
from .png import png_bytes

__all__ = ["Drawing"]

Colour = tuple[float, float, float]
BLACK: Colour = (0.0, 0.0, 0.0)


@dataclass
class Drawing:
    """Shapes in pixel coordinates (x right, y down) on a white ``width`` x ``height`` page.
    Text is ``size`` pixels high (a multiple of the 5-pixel font in PNG)."""

    width: int
    height: int
    shapes: list[tuple] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, colour: Colour, alpha: float = 1.0,
             outline: Colour | None = None) -> None:
        self.shapes.append(("rect", x, y, w, h, colour, alpha, outline))

    def line(self, x0: float, y0: float, x1: float, y1: float, colour: Colour = BLACK) -> None:
        self.shapes.append(("line", x0, y0, x1, y1, colour))

    def text(self, x: float, y: float, text: str, size: int = 10, anchor: str = "start",
             colour: Colour = BLACK) -> None:
        """``text`` with its baseline-free box starting at ``y`` (top), anchored at ``x``
        on its ``start``, ``middle`` or ``end``."""
        self.shapes.append(("text", x, y, text, size, anchor, colour))

    # ------------------------------------------------------------------ SVG

    def svg(self) -> str:
        """The picture as an SVG document."""
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
               f'viewBox="0 0 {self.width} {self.height}" font-family="monospace">',
               f'<rect width="{self.width}" height="{self.height}" fill="#ffffff"/>']
        for shape in self.shapes:
            kind = shape[0]
            if kind == "rect":
                _, x, y, w, h, colour, alpha, outline = shape
                stroke = f' stroke="{_hex(outline)}" stroke-width="0.5"' if outline is not None else ""
                out.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" fill="{_hex(colour)}" '
                           f'fill-opacity="{alpha:.3f}"{stroke}/>')
            elif kind == "line":
                _, x0, y0, x1, y1, colour = shape
                out.append(f'<line x1="{x0:.2f}" y1="{y0:.2f}" x2="{x1:.2f}" y2="{y1:.2f}" '
                           f'stroke="{_hex(colour)}" stroke-width="1"/>')
            else:
                _, x, y, text, size, anchor, colour = shape
                out.append(f'<text x="{x:.2f}" y="{y + size:.2f}" font-size="{size}" text-anchor="{anchor}" '
                           f'fill="{_hex(colour)}">{escape(text)}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    # ------------------------------------------------------------------ PNG

    def raster(self) -> np.ndarray:
        """The picture as (height, width, 3) uint8 pixels."""
        page = np.full((self.height, self.width, 3), 255.0)
        for shape in self.shapes:
            kind = shape[0]
            if kind == "rect":
                _, x, y, w, h, colour, alpha, outline = shape
                x0, y0, x1, y1 = _box(x, y, w, h, self.width, self.height)
                if x1 > x0 and y1 > y0:
                    page[y0:y1, x0:x1] = (1 - alpha) * page[y0:y1, x0:x1] + alpha * np.asarray(colour)
                if outline is not None:
                    for a, b, c, d in ((x, y, x + w, y), (x, y + h, x + w, y + h), (x, y, x, y + h),
                                       (x + w, y, x + w, y + h)):
                        _line(page, a, b, c, d, outline)
            elif kind == "line":
                _, x0, y0, x1, y1, colour = shape
                _line(page, x0, y0, x1, y1, colour)
            else:
                _, x, y, text, size, anchor, colour = shape
                _text(page, x, y, text, size, anchor, colour)
        return np.clip(np.rint(page), 0, 255).astype(np.uint8)

    def png(self) -> bytes:
        return png_bytes(self.raster())

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the picture atomically: SVG when ``path`` ends in .svg, else PNG."""
        path = Path(path)
        data = self.svg().encode() if path.suffix.lower() == ".svg" else self.png()
        with atomic_output(path) as temporary:
            temporary.write_bytes(data)
        return path


def _hex(colour: Colour) -> str:
    return "#" + "".join(f"{int(round(min(max(c, 0), 255))):02x}" for c in colour)


def _box(x: float, y: float, w: float, h: float, width: int, height: int) -> tuple[int, int, int, int]:
    """The pixels a rectangle covers: rounded edges, at least one pixel each way."""
    x0, y0 = int(round(x)), int(round(y))
    x1, y1 = max(int(round(x + w)), x0 + 1), max(int(round(y + h)), y0 + 1)
    return max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)


def _line(page: np.ndarray, x0: float, y0: float, x1: float, y1: float, colour: Colour) -> None:
    steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, steps)).astype(np.int64)
    ys = np.rint(np.linspace(y0, y1, steps)).astype(np.int64)
    keep = (xs >= 0) & (xs < page.shape[1]) & (ys >= 0) & (ys < page.shape[0])
    page[ys[keep], xs[keep]] = colour


def _text(page: np.ndarray, x: float, y: float, text: str, size: int, anchor: str, colour: Colour) -> None:
    scale = max(1, size // (GLYPH_HEIGHT + 1))
    bitmap = np.repeat(np.repeat(glyphs(text), scale, axis=0), scale, axis=1)
    height, width = bitmap.shape
    left = int(round(x - {"start": 0, "middle": width / 2, "end": width}[anchor]))
    top = int(round(y + (size - height) / 2))
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + height, page.shape[0]), min(left + width, page.shape[1])
    if y1 > y0 and x1 > x0:
        page[y0:y1, x0:x1][bitmap[y0 - top:y1 - top, x0 - left:x1 - left]] = colour
