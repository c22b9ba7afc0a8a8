"""The overview picture (paper 000, section IV): time across, the hierarchy's leaves down,
each part a rectangle in its mode state's colour with alpha = the mode's share, visual
aggregates marked by a diagonal (their resources share one temporal partition) or a cross
(they do not), node labels on the left, a time axis in seconds and a legend."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .axes import legend, legend_height, nice_ticks, seconds_label
from .drawing import Drawing

__all__ = ["OverviewFigure", "draw_overview"]

LEFT, TOP, RIGHT, AXIS = 150, 28, 20, 34


@dataclass(frozen=True)
class OverviewFigure:
    """What the overview shows, in rows (leaf positions) and slices.

    Rectangles are arrays of one entry per drawn part: rows ``row[k] .. stop[k] - 1``,
    slices ``first[k] .. last[k]``, colour index ``mode[k]`` (into ``colours``), opacity
    ``alpha[k]`` and ``mark[k]``: 0 data part, 1 diagonal, 2 cross (visual aggregates).
    """

    title: str
    rows: int
    seconds: np.ndarray            #: T + 1 slice bounds in seconds
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


def draw_overview(figure: OverviewFigure, width: int = 1000, plot_height: int = 480) -> Drawing:
    """Lay the overview out on a page ``width`` pixels wide."""
    plot_width = width - LEFT - RIGHT
    shown = sorted(set(figure.mode[figure.alpha > 0].tolist()))  # the legend names the states drawn
    names = [figure.states[x] for x in shown]
    drawing = Drawing(width, TOP + plot_height + AXIS + legend_height(names, plot_width) + 10)
    drawing.text(LEFT, 6, figure.title, 12)
    start, end = 0.0, float(figure.seconds[-1] - figure.seconds[0])  # the axis counts from the window start
    span = end if end > 0 else 1.0
    x_of = lambda seconds: LEFT + (seconds - start) / span * plot_width  # noqa: E731
    y_of = lambda row: TOP + row / figure.rows * plot_height  # noqa: E731
    order = np.argsort(figure.mark == 0, kind="stable")  # visual aggregates first, data parts over them
    for k in order:
        x0 = x_of(figure.seconds[figure.first[k]] - figure.seconds[0])
        x1 = x_of(figure.seconds[figure.last[k] + 1] - figure.seconds[0])
        y0, y1 = y_of(figure.row[k]), y_of(figure.stop[k])
        drawing.rect(x0, y0, x1 - x0, y1 - y0, tuple(figure.colours[figure.mode[k]]), float(figure.alpha[k]),
                     outline=(90, 90, 90))
        if figure.mark[k] >= 1:
            drawing.line(x0, y1, x1, y0)
        if figure.mark[k] == 2:
            drawing.line(x0, y0, x1, y1)
    for row, stop, name in figure.labels:
        y0, y1 = y_of(row), y_of(stop)
        drawing.line(LEFT - 4, y0, LEFT - 4, y1, (90, 90, 90))
        if y1 - y0 >= 8:
            label = name if len(name) <= 28 else "~" + name[-27:]
            drawing.text(LEFT - 8, (y0 + y1) / 2 - 5, label, 10, "end")
    axis = TOP + plot_height
    drawing.line(LEFT, axis, LEFT + plot_width, axis)
    ticks = nice_ticks(start, end)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else span
    for tick in ticks:
        drawing.line(x_of(tick), axis, x_of(tick), axis + 4)
        drawing.text(x_of(tick), axis + 6, seconds_label(tick, step), 10, "middle")
    drawing.text(LEFT + plot_width, axis + 18, f"time (s) from {figure.seconds[0]:.6g} s", 10, "end")
    legend(drawing, LEFT, axis + AXIS, names, figure.colours[shown], 10, plot_width)
    return drawing
