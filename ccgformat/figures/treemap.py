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
from .axes import legend, legend_height
from .drawing import Drawing

__all__ = ["MIN_AREA", "TreemapFigure", "draw_treemap", "squarify"]

MIN_AREA = 24.0
HEADER = 12


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
    """The treemap on a ``width`` x ``height`` page (title and legend included)."""
    h = figure.hierarchy
    shown = sorted(set(figure.mode[figure.is_part & (figure.share > 0)].tolist()))
    names = [figure.states[x] for x in shown]
    below = legend_height(names, width - 20)
    drawing = Drawing(width, height)
    drawing.text(10, 6, figure.title, 12)
    leaves = (np.asarray(h.stop_leaf) - np.asarray(h.first_leaf)).astype(np.float64)
    stack = [(0, 10.0, 24.0, width - 20.0, height - 34.0 - below)]
    while stack:
        node, x, y, w, hh = stack.pop()
        colour = tuple(figure.colours[figure.mode[node]]) if len(figure.colours) else (200.0, 200.0, 200.0)
        children = h.children(node)
        if figure.is_part[node] or len(children) == 0 or w * hh < MIN_AREA * max(2, len(children)):
            drawing.rect(x, y, w, hh, colour, float(figure.share[node]), outline=(255, 255, 255))
            if not figure.is_part[node]:
                drawing.line(x, y + hh, x + w, y)
            if w >= 7 * len(h.names[node]) and hh >= 14:
                drawing.text(x + 2, y + 2, h.names[node], 10)
            continue
        drawing.rect(x, y, w, hh, (255.0, 255.0, 255.0), 0.0, outline=(60, 60, 60))
        if hh >= 3 * HEADER and w >= 7 * len(h.names[node]):
            drawing.text(x + 2, y + 1, h.names[node], 10)
            y, hh = y + HEADER, hh - HEADER
        pad = 1.0 if min(w, hh) > 8 else 0.0
        order = children[np.argsort(-leaves[children], kind="stable")]
        for child, box in zip(order.tolist(), squarify(leaves[order], x + pad, y + pad, w - 2 * pad, hh - 2 * pad)):
            stack.append((child, *box))
    legend(drawing, 10, height - 6 - below, names, figure.colours[shown] if shown else figure.colours[:0], 10,
           width - 20)
    return drawing
