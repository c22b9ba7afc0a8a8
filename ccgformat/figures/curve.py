"""The quality curves (Ocelotl; paper 000, section III.C): gain and loss of each distinct
optimal partition against p, both normalised by their largest values, with the chosen p
marked."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .axes import AXIS_HEIGHT, MARGIN, TITLE_HEIGHT, Box, legend, legend_height, title, x_axis, y_axis
from .drawing import Drawing
from .shapes import Colour, Line

__all__ = ["CurveFigure", "draw_curve"]

GAIN: Colour = (44.0, 160.0, 44.0)
LOSS: Colour = (214.0, 39.0, 40.0)
CHOSEN: Colour = (90.0, 90.0, 90.0)
LEFT, RIGHT = 60.0, 30.0


@dataclass(frozen=True)
class CurveFigure:
    """Optimum k holds for p in ``low[k]..high[k]`` with ``gain[k]``, ``loss[k]``, ``parts[k]``."""

    title: str
    low: np.ndarray
    high: np.ndarray
    gain: np.ndarray
    loss: np.ndarray
    parts: np.ndarray
    p: float

    def legend(self) -> list[str]:
        return ["gain / max gain", "loss / max loss", f"chosen p = {self.p:.4g}"]


def draw_curve(figure: CurveFigure, width: int = 800, height: int = 420) -> Drawing:
    """Step lines of normalised gain and loss over p in [0, 1]."""
    names = figure.legend()
    below = legend_height(names, width - LEFT - RIGHT)
    plot = Box(LEFT, TITLE_HEIGHT, width - LEFT - RIGHT, height - TITLE_HEIGHT - AXIS_HEIGHT - below - MARGIN)
    drawing = Drawing(width, height)
    x_of = lambda p: plot.x + p * plot.w  # noqa: E731
    y_of = lambda v: plot.bottom - v * plot.h  # noqa: E731
    lines = []
    for values, colour in ((figure.gain, GAIN), (figure.loss, LOSS)):
        scale = values.max() if len(values) and values.max() > 0 else 1.0
        previous = None
        for low, high, value in zip(figure.low, figure.high, values / scale):
            if previous is not None:
                lines.append(Line(x_of(low), y_of(previous), x_of(low), y_of(value), colour, 1.5))
            lines.append(Line(x_of(low), y_of(value), x_of(high), y_of(value), colour, 1.5))
            previous = value
    lines.append(Line(x_of(figure.p), plot.y, x_of(figure.p), plot.bottom, CHOSEN))
    drawing.add("plot", *lines)
    x_axis(drawing, plot, 0.0, 1.0, "p (the gain/loss ratio)")
    y_axis(drawing, plot, 0.0, 1.0)
    legend(drawing, plot.x, plot.bottom + AXIS_HEIGHT, plot.w, names, np.array([GAIN, LOSS, CHOSEN]))
    title(drawing, figure.title)
    return drawing
