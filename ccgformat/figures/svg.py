"""The SVG writer: a figure's shapes as an SVG document, one ``<g class="ROLE">`` per
layer (title, plot, x-axis, row-labels, legend, ...) in painting order. Cell grids are
an ``<image>`` of a PNG when matplotlib is installed, else rectangles, one per run of
equal cells in a row - so that an SVG can always be written."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from html import escape  # not xml.sax.saxutils: it imports urllib.request (15 ms of a ``ccg`` start)

import numpy as np

from ..errors import MissingExtraError
from .matplotlib_png import encode_png
from .shapes import FONT, Colour, Image, Line, Rect, Shape, Text

__all__ = ["grid_runs", "svg_document"]

#: characters XML 1.0 does not allow (control characters other than tab and line ends)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def svg_document(width: int, height: int, layers: Mapping[str, Sequence[Shape]]) -> str:
    """The SVG of a ``width`` x ``height`` white page with ``layers`` drawn in order."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="{FONT}">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    for role, shapes in layers.items():
        out.append(f'<g class="{role}">')
        out.extend(_element(shape) for shape in shapes)
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _element(shape: Shape) -> str:
    if isinstance(shape, Rect):
        stroke = f' stroke="{_hex(shape.outline)}" stroke-width="0.5"' if shape.outline is not None else ""
        opacity = f' fill-opacity="{shape.alpha:.3f}"' if shape.alpha < 1 else ""
        return (f'<rect x="{shape.x:.2f}" y="{shape.y:.2f}" width="{shape.w:.2f}" height="{shape.h:.2f}" '
                f'fill="{_hex(shape.fill)}"{opacity}{stroke}/>')
    if isinstance(shape, Line):
        return (f'<line x1="{shape.x0:.2f}" y1="{shape.y0:.2f}" x2="{shape.x1:.2f}" y2="{shape.y1:.2f}" '
                f'stroke="{_hex(shape.colour)}" stroke-width="{shape.width:g}"/>')
    if isinstance(shape, Text):
        bold = ' font-weight="bold"' if shape.bold else ""
        return (f'<text x="{shape.x:.2f}" y="{shape.y:.2f}" font-size="{shape.size:g}" text-anchor="{shape.anchor}" '
                f'dominant-baseline="central" fill="{_hex(shape.colour)}"{bold}>'
                f'{escape(_NOT_XML.sub(chr(0xFFFD), shape.text), quote=False)}</text>')
    return _image(shape)


def _image(image: Image) -> str:
    """A cell grid: a PNG stretched over its box without smoothing, or rectangles of runs;
    nothing for a grid of no cells (a timeline without rows)."""
    if not image.pixels.size:
        return ""
    box = f'x="{image.x:.2f}" y="{image.y:.2f}" width="{image.w:.2f}" height="{image.h:.2f}"'
    try:
        data = base64.b64encode(encode_png(image.pixels)).decode("ascii")
    except MissingExtraError:
        rows, columns = image.pixels.shape[:2]
        sx, sy = image.w / max(columns, 1), image.h / max(rows, 1)
        rects = [f'<rect x="{image.x + a * sx:.2f}" y="{image.y + row * sy:.2f}" width="{(b - a) * sx:.2f}" '
                 f'height="{sy:.2f}" fill="{_hex(colour)}"/>' for row, a, b, colour in grid_runs(image.pixels)
                 if colour != (255, 255, 255)]
        return '<g shape-rendering="crispEdges">' + "".join(rects) + "</g>"
    return (f'<image {box} preserveAspectRatio="none" style="image-rendering:pixelated" '
            f'href="data:image/png;base64,{data}"/>')


def grid_runs(pixels: np.ndarray) -> list[tuple[int, int, int, Colour]]:
    """(row, first column, stop column, colour) of each run of equal cells of each row
    of a (rows, columns, 3) grid."""
    rows, columns = pixels.shape[:2]
    starts = np.ones((rows, columns), dtype=bool)
    starts[:, 1:] = (pixels[:, 1:] != pixels[:, :-1]).any(axis=2)
    row, first = np.nonzero(starts)
    flat = row * columns + first
    stop = np.append(flat[1:], rows * columns) - row * columns  # each row's first run starts at column 0
    colours = pixels[row, first].tolist()
    return [(r, a, b, tuple(c)) for r, a, b, c in zip(row.tolist(), first.tolist(), stop.tolist(), colours)]


def _hex(colour: Colour | Sequence[float]) -> str:
    return "#" + "".join(f"{int(round(min(max(c, 0), 255))):02x}" for c in colour)
