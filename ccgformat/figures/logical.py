"""The logical timeline (paper 003 sections 3.1, 4.1): logical steps across, locations
down, each event a cell coloured by its lateness on a continuous scale, message lines
from send to receive while each step and location has a cell of its own; the title,
row labels (thinned), a step axis and the colour scale's legend."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .axes import AXIS_HEIGHT, GREY, MARGIN, TITLE_HEIGHT, Box, label_margin, row_labels, title, x_axis
from .drawing import Drawing
from .scale import SCALE_HEIGHT, scale_legend
from .shapes import BLACK, Image, Line, Rect

__all__ = ["LogicalFigure", "draw_logical"]

#: a figure of fewer columns has them drawn several pixels wide, up to this width
MIN_PLOT_WIDTH = 480
#: rows are `ROW_HEIGHT` pixels high unless that makes the plot taller than `PLOT_HEIGHT`
ROW_HEIGHT, PLOT_HEIGHT = 16, 800
RIGHT = 40.0


@dataclass(frozen=True, eq=False)
class LogicalFigure:
    """``pixels[row, column]``: the cells, column ``c`` showing the steps
    ``[first + c * span // columns, first + (c + 1) * span // columns)`` of ``[first,
    stop)``; ``lines``: (k, 4) message lines as (column, row, column, row) of the cells
    they join; ``high``: the value the colour scale's darkest colour stands for."""

    title: str
    first: int
    stop: int
    row_names: list[str]
    pixels: np.ndarray
    lines: np.ndarray
    high: float
    scale_caption: str
    x_caption: str = "logical step"


def draw_logical(figure: LogicalFigure, row_height: int | None = None) -> Drawing:
    """Lay the figure out: each column one pixel wide (wider when there are fewer than
    `MIN_PLOT_WIDTH`), each row ``row_height`` pixels high (by default `ROW_HEIGHT`, less
    - down to one - when the rows would take more than `PLOT_HEIGHT`)."""
    rows, columns = figure.pixels.shape[:2]
    if row_height is None:
        row_height = max(1, min(ROW_HEIGHT, PLOT_HEIGHT // max(rows, 1)))
    cell = max(1, math.ceil(MIN_PLOT_WIDTH / max(columns, 1))) if columns < MIN_PLOT_WIDTH else 1
    left = math.ceil(label_margin(figure.row_names))
    plot = Box(left, TITLE_HEIGHT, columns * cell, rows * row_height)
    width = int(math.ceil(max(plot.right + RIGHT, left + 400)))
    legend_top = plot.bottom + AXIS_HEIGHT
    drawing = Drawing(width, int(math.ceil(legend_top + SCALE_HEIGHT + MARGIN)))
    frame = Rect(plot.x - 1, plot.y - 1, plot.w + 2, plot.h + 2, (255.0, 255.0, 255.0), 0.0, outline=GREY)
    drawing.add("plot", Image(plot.x, plot.y, plot.w, plot.h, figure.pixels), frame)
    if len(figure.lines):
        at = (np.asarray(figure.lines, np.float64) + 0.5) * [cell, row_height, cell, row_height] + \
            [plot.x, plot.y, plot.x, plot.y]
        drawing.add("messages", *(Line(*points, BLACK, 0.75) for points in at.tolist()))
    span = figure.stop - figure.first
    # a column stands for its first step: ticks on whole steps at the middle of one-step columns
    low = figure.first - 0.5 * span / max(columns, 1)
    x_axis(drawing, plot, low, low + span, figure.x_caption, whole=True)
    row_labels(drawing, plot, figure.row_names)
    scale_legend(drawing, plot.x, legend_top, figure.high, figure.scale_caption)
    title(drawing, figure.title)
    return drawing
