"""The squarified treemap of a spatial aggregation (paper 002; Bruls, Huizing and van
Wijk's squarified layout): nodes as nested boxes with areas in proportion to their
leaves, the parts filled in their mode state's colour with alpha = the mode's share.
Boxes below `MIN_AREA` square pixels are not divided further: a part is drawn as is, an
aggregate of finer parts as one box in its own mode colour marked by a diagonal (a visual
aggregate), so the work and the picture stay bounded by the page, even at 10^6 leaves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..aggregate_model import Hierarchy
from .axes import MARGIN, TEXT_SIZE, TITLE_HEIGHT, legend, legend_height, title
from .drawing import Drawing
from .shapes import Line, Rect, Shape, Text, text_width

__all__ = ["MIN_AREA", "TreemapFigure", "draw_treemap", "squarify"]

MIN_AREA = 24.0
HEADER = 13


@dataclass(frozen=True)
class TreemapFigure:
    """Per node of ``hierarchy``: whether it is a part, its mode state and the mode's share."""

    title: str
    hierarchy: Hierarchy
    is_part: np.ndarray
    mode: np.ndarray
    share: np.ndarray
    states: list[str]
    colours: np.ndarray

    def shown(self) -> list[int]:
        """The mode states of the parts with some share (the picture may show more: the
        modes of the boxes that stand for many small parts)."""
        return sorted(set(self.mode[self.is_part & (self.share > 0)].tolist()))


def squarify(sizes: np.ndarray, x: float, y: float, w: float, h: float) -> list[tuple[float, float, float, float]]:
    """Rectangles for ``sizes`` (positive, in decreasing order) filling ``(x, y, w, h)``,
    rows laid along the shorter side while they improve the worst aspect ratio."""
    out: list[tuple[float, float, float, float]] = []
    areas = sizes * (w * h / sizes.sum())
    i, n = 0, len(areas)
    while i < n:
        short = min(w, h)
        if short <= 0:
            out += [(x, y, 0.0, 0.0)] * (n - i)
            break
        total, low, high, j = areas[i], areas[i], areas[i], i + 1
        worst = max(short * short * high / (total * total), total * total / (short * short * low))
        while j < n:
            t, lo, hi = total + areas[j], min(low, areas[j]), max(high, areas[j])
            candidate = max(short * short * hi / (t * t), t * t / (short * short * lo))
            if candidate > worst:
                break
            total, low, high, worst, j = t, lo, hi, candidate, j + 1
        thickness = total / short
        offset = 0.0
        for area in areas[i:j]:
            length = area / thickness
            out.append((x, y + offset, thickness, length) if w >= h else (x + offset, y, length, thickness))
            offset += length
        if w >= h:
            x, w = x + thickness, w - thickness
        else:
            y, h = y + thickness, h - thickness
        i = j
    return out


def draw_treemap(figure: TreemapFigure, width: int = 1000, height: int = 600) -> Drawing:
    """The treemap on a ``width`` x ``height`` page (title and legend included); a box
    is named when its name fits in it. The legend names the states of the boxes drawn."""
    shown = figure.shown()
    for _ in range(2):  # the legend's height depends on the states drawn, which depend a little on it
        below = legend_height([figure.states[x] for x in shown], width - 2 * MARGIN)
        area = (MARGIN, TITLE_HEIGHT, width - 2 * MARGIN, height - TITLE_HEIGHT - 2 * MARGIN - below)
        boxes, labels, drawn = _layout(figure, *area)
        if drawn == shown:
            break
        shown = drawn
    drawing = Drawing(width, height)
    drawing.add("plot", *boxes)
    drawing.add("node-labels", *labels)
    legend(drawing, MARGIN, height - MARGIN - below, width - 2 * MARGIN, [figure.states[x] for x in drawn],
           figure.colours[drawn] if drawn else figure.colours[:0])
    title(drawing, figure.title)
    return drawing


def _layout(figure: TreemapFigure, *area: float) -> tuple[list[Shape], list[Shape], list[int]]:
    """The boxes and labels of the treemap in ``area`` (x, y, w, h), and the states of
    the boxes filled."""
    h = figure.hierarchy
    leaves = (np.asarray(h.stop_leaf) - np.asarray(h.first_leaf)).astype(np.float64)
    boxes: list[Shape] = []
    labels: list[Shape] = []
    drawn: set[int] = set()
    stack = [(0, *area)]
    while stack:
        node, x, y, w, hh = stack.pop()
        colour = tuple(figure.colours[figure.mode[node]]) if len(figure.colours) else (200.0, 200.0, 200.0)
        children = h.children(node)
        fits = w >= text_width(h.names[node], TEXT_SIZE) + 4
        if figure.is_part[node] or len(children) == 0 or w * hh < MIN_AREA * max(2, len(children)):
            boxes.append(Rect(x, y, w, hh, colour, float(figure.share[node]), outline=(255.0, 255.0, 255.0)))
            if figure.share[node] > 0 and len(figure.colours):
                drawn.add(int(figure.mode[node]))
            if not figure.is_part[node]:
                boxes.append(Line(x, y + hh, x + w, y))
            if fits and hh >= HEADER + 2:
                labels.append(Text(x + 2, y + HEADER / 2 + 1, h.names[node], TEXT_SIZE))
            continue
        boxes.append(Rect(x, y, w, hh, (255.0, 255.0, 255.0), 0.0, outline=(60.0, 60.0, 60.0)))
        if fits and hh >= 3 * HEADER:
            labels.append(Text(x + 2, y + HEADER / 2 + 1, h.names[node], TEXT_SIZE))
            y, hh = y + HEADER, hh - HEADER
        pad = 1.0 if min(w, hh) > 8 else 0.0
        order = children[np.argsort(-leaves[children], kind="stable")]
        for child, box in zip(order.tolist(), squarify(leaves[order], x + pad, y + pad, w - 2 * pad, hh - 2 * pad)):
            stack.append((child, *box))
    return boxes, labels, sorted(drawn)
