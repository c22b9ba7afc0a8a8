"""The timeline picture (dissertation 3.4.4, 4.5.4): one row of cells per location (or
call level), one column per pixel column of the timeline, each cell its colour classes'
shares blended (4.31); row labels on the left, the time axis in seconds below and the
legend of the classes shown. The cells are one image, however many they are."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .axes import (AXIS_HEIGHT, GREY, MARGIN, TITLE_HEIGHT, Box, label_margin, legend, legend_height, row_labels,
                   time_axis, title)
from .drawing import Drawing
from .shapes import Image, Rect

__all__ = ["MIN_PLOT_WIDTH", "PLOT_HEIGHT", "ROW_HEIGHT", "TimelineFigure", "draw_timeline"]

#: a timeline of fewer columns has them drawn several pixels wide, up to this width
MIN_PLOT_WIDTH = 480
#: rows are `ROW_HEIGHT` pixels high unless that makes the plot taller than `PLOT_HEIGHT`
ROW_HEIGHT, PLOT_HEIGHT = 16, 800
RIGHT = 40.0


@dataclass(frozen=True, eq=False)
class TimelineFigure:
    """``pixels[row, column]`` of the window ``[start, stop)`` (ticks, ``resolution`` a
    second); ``classes`` and ``colours``: the legend, the colour classes the cells show."""

    title: str
    start: int
    stop: int
    resolution: int
    row_names: list[str]
    pixels: np.ndarray
    classes: list[str]
    colours: np.ndarray


def draw_timeline(figure: TimelineFigure, row_height: int | None = None) -> Drawing:
    """Lay the timeline out: each column one pixel wide (wider when there are fewer
    than `MIN_PLOT_WIDTH`), each row ``row_height`` pixels high (by default `ROW_HEIGHT`,
    less - down to one - when the rows would take more than `PLOT_HEIGHT`)."""
    rows, columns = figure.pixels.shape[:2]
    if row_height is None:
        row_height = max(1, min(ROW_HEIGHT, PLOT_HEIGHT // max(rows, 1)))
    cell = max(1, math.ceil(MIN_PLOT_WIDTH / max(columns, 1))) if columns < MIN_PLOT_WIDTH else 1
    left = math.ceil(label_margin(figure.row_names))  # the cells on whole pixels
    plot = Box(left, TITLE_HEIGHT, columns * cell, rows * row_height)
    width = int(math.ceil(plot.right + RIGHT))
    legend_top = plot.bottom + AXIS_HEIGHT
    drawing = Drawing(width, int(math.ceil(legend_top + legend_height(figure.classes, plot.w) + MARGIN)))
    frame = Rect(plot.x - 1, plot.y - 1, plot.w + 2, plot.h + 2, (255.0, 255.0, 255.0), 0.0, outline=GREY)
    drawing.add("plot", Image(plot.x, plot.y, plot.w, plot.h, figure.pixels), frame)  # the frame around the cells
    time_axis(drawing, plot, figure.start, figure.stop, figure.resolution)
    row_labels(drawing, plot, figure.row_names)
    legend(drawing, plot.x, legend_top, plot.w, figure.classes, figure.colours)
    title(drawing, figure.title)
    return drawing
