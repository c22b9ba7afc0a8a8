"""The quality curves (Ocelotl): gain and loss of each distinct optimal partition against
p, both normalised by their largest values, with the chosen p marked."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .axes import legend, nice_ticks, seconds_label
from .drawing import Drawing

__all__ = ["CurveFigure", "draw_curve"]

GAIN, LOSS, CHOSEN = (44.0, 160.0, 44.0), (214.0, 39.0, 40.0), (90.0, 90.0, 90.0)


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


def draw_curve(figure: CurveFigure, width: int = 800, height: int = 420) -> Drawing:
    """Step lines of normalised gain and loss over p in [0, 1]."""
    left, top, right, bottom = 60, 30, 20, 60
    w, h = width - left - right, height - top - bottom
    drawing = Drawing(width, height)
    drawing.text(left, 8, f"{figure.title}: {len(figure.gain)} distinct optima, chosen p = {figure.p:.4g}", 12)
    x_of = lambda p: left + p * w  # noqa: E731
    y_of = lambda v: top + (1 - v) * h  # noqa: E731
    for values, colour in ((figure.gain, GAIN), (figure.loss, LOSS)):
        scale = values.max() if len(values) and values.max() > 0 else 1.0
        previous = None
        for low, high, value in zip(figure.low, figure.high, values / scale):
            if previous is not None:
                drawing.line(x_of(low), y_of(previous), x_of(low), y_of(value), colour)
            drawing.line(x_of(low), y_of(value), x_of(high), y_of(value), colour)
            previous = value
    drawing.line(x_of(figure.p), top, x_of(figure.p), top + h, CHOSEN)
    drawing.line(left, top + h, left + w, top + h)
    drawing.line(left, top, left, top + h)
    for tick in nice_ticks(0.0, 1.0, 10):
        drawing.line(x_of(tick), top + h, x_of(tick), top + h + 4)
        drawing.text(x_of(tick), top + h + 6, seconds_label(tick, 0.1), 10, "middle")
    for tick in nice_ticks(0.0, 1.0, 4):
        drawing.line(left - 4, y_of(tick), left, y_of(tick))
        drawing.text(left - 6, y_of(tick) - 5, seconds_label(tick, 0.1), 10, "end")
    drawing.text(left + w, top + h + 18, "p (gain/loss ratio)", 10, "end")
    legend(drawing, left, height - 20, ["gain / max gain", "loss / max loss", "chosen p"],
           np.array([GAIN, LOSS, CHOSEN]), 10, w)
    return drawing
