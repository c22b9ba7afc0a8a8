"""Axis ticks and the legend shared by the figures."""

from __future__ import annotations

import math

import numpy as np

from .drawing import Drawing

__all__ = ["legend", "legend_height", "nice_ticks", "seconds_label"]


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """About ``count`` round values (1, 2 or 5 times a power of ten apart) in [low, high]."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def seconds_label(value: float, step: float) -> str:
    """``value`` seconds with as many decimals as ``step`` needs."""
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:.{decimals}f}"


def _entries(names: list[str], width: float, size: int) -> list[tuple[float, int, str]]:
    """(x offset, row, label) of each legend entry, wrapping at ``width``."""
    out, column, row = [], 0.0, 0
    for name in names:
        label = name if len(name) <= 24 else name[:23] + "~"
        span = size + 6 + len(label) * size * 0.8 + 14
        if column + span > width and column > 0:
            column, row = 0.0, row + 1
        out.append((column, row, label))
        column += span
    return out


def legend_height(names: list[str], width: float, size: int = 10) -> int:
    """The pixels `legend` takes for ``names`` in ``width``."""
    entries = _entries(names, width, size)
    return (entries[-1][1] + 1) * (size + 6) if entries else 0


def legend(drawing: Drawing, x: float, y: float, names: list[str], colours: np.ndarray, size: int = 10,
           width: float | None = None) -> float:
    """Colour swatches with names from (x, y), wrapping at ``width``; returns the y below it."""
    entries = _entries(names, drawing.width - x if width is None else width, size)
    for (column, row, label), colour in zip(entries, colours):
        top = y + row * (size + 6)
        drawing.rect(x + column, top, size, size, tuple(colour), 1.0, outline=(0, 0, 0))
        drawing.text(x + column + size + 4, top, label, size)
    return y + legend_height(names, drawing.width - x if width is None else width, size)
