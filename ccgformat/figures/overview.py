"""The overview picture (paper 000, section IV): time across, the hierarchy's leaves down,
each part a rectangle in its mode state's colour with alpha = the mode's share, visual
aggregates marked by a diagonal (their resources share one temporal partition) or a cross
(they do not), node labels on the left, a time axis in seconds and a legend."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .axes import (AXIS_HEIGHT, GREY, MARGIN, TEXT_SIZE, TICK, TITLE_HEIGHT, Box, fit, label_margin, legend,
                   legend_height, thinned, time_axis, title)
from .drawing import Drawing
from .shapes import Line, Rect, Text

__all__ = ["OverviewFigure", "draw_overview"]

RIGHT = 40.0


@dataclass(frozen=True)
class OverviewFigure:
    """What the overview shows, in rows (leaf positions) and slices.

    Rectangles are arrays of one entry per drawn part: rows ``row[k] .. stop[k] - 1``,
    slices ``first[k] .. last[k]``, colour index ``mode[k]`` (into ``colours``), opacity
    ``alpha[k]`` and ``mark[k]``: 0 data part, 1 diagonal, 2 cross (visual aggregates).
    ``bounds`` are the slices' bounds in ticks, ``resolution`` ticks a second.
    """

    title: str
    rows: int
    bounds: np.ndarray             #: T + 1 slice bounds in ticks
    resolution: int
    row: np.ndarray
    stop: np.ndarray
    first: np.ndarray
    last: np.ndarray
    mode: np.ndarray
    alpha: np.ndarray
    mark: np.ndarray
    states: list[str]
    colours: np.ndarray
    labels: list[tuple[int, int, str]]  #: (row, stop, name) of the labelled nodes

    def shown(self) -> list[int]:
        """The states the picture shows (of the parts drawn with some opacity): the legend's."""
        return sorted(set(self.mode[self.alpha > 0].tolist()))


def draw_overview(figure: OverviewFigure, width: int = 1000, plot_height: int = 480) -> Drawing:
    """Lay the overview out on a page ``width`` pixels wide, the labels `thinned`."""
    left = label_margin([name for _, _, name in figure.labels])
    plot = Box(left, TITLE_HEIGHT, width - left - RIGHT, plot_height)
    shown = figure.shown()
    names = [figure.states[x] for x in shown]
    legend_top = plot.bottom + AXIS_HEIGHT
    drawing = Drawing(width, int(math.ceil(legend_top + legend_height(names, plot.w) + MARGIN)))
    bounds = np.asarray(figure.bounds, dtype=np.float64)
    span = bounds[-1] - bounds[0] if bounds[-1] > bounds[0] else 1.0
    x_of = plot.x + (bounds - bounds[0]) / span * plot.w
    y_of = lambda row: plot.y + row / max(figure.rows, 1) * plot.h  # noqa: E731
    order = np.argsort(figure.mark == 0, kind="stable")  # visual aggregates first, data parts over them
    parts, marks = [], []
    for k in order.tolist():
        x0, x1 = x_of[figure.first[k]], x_of[figure.last[k] + 1]
        y0, y1 = y_of(figure.row[k]), y_of(figure.stop[k])
        parts.append(Rect(x0, y0, x1 - x0, y1 - y0, tuple(figure.colours[figure.mode[k]]), float(figure.alpha[k]),
                          outline=GREY))
        if figure.mark[k] >= 1:
            marks.append(Line(x0, y1, x1, y0))
        if figure.mark[k] == 2:
            marks.append(Line(x0, y0, x1, y1))
    drawing.add("plot", *parts)
    drawing.add("marks", *marks)
    spans = [(y_of(row), y_of(stop)) for row, stop, _ in figure.labels]
    labels: list = [Line(plot.x - TICK, y0 + 1, plot.x - TICK, y1 - 1, GREY) for y0, y1 in spans if y1 - y0 >= 3]
    for k in thinned([(y0 + y1) / 2 for y0, y1 in spans]):
        (y0, y1), middle = spans[k], (spans[k][0] + spans[k][1]) / 2
        if y1 - y0 < 3:
            labels.append(Line(plot.x - TICK, middle, plot.x, middle, GREY))
        labels.append(Text(plot.x - 2 * TICK, middle, fit(figure.labels[k][2], plot.x - MARGIN - 2 * TICK), TEXT_SIZE,
                           "end"))
    drawing.add("row-labels", *labels)
    time_axis(drawing, plot, int(figure.bounds[0]), int(figure.bounds[-1]), figure.resolution)
    legend(drawing, plot.x, legend_top, plot.w, names, figure.colours[shown])
    title(drawing, figure.title)
    return drawing
