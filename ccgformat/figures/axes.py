"""What every figure has around its plot: the title, axes with round ticks, row labels
(`thinned` when the rows are thinner than a line of text) and the legend of colours to names."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .drawing import Drawing
from .shapes import CHAR_WIDTH, Colour, Line, Rect, Text, text_width

__all__ = ["AXIS_HEIGHT", "GREY", "MARGIN", "ROW_LINE", "TEXT_SIZE", "TICK", "TITLE_HEIGHT", "Box", "fit", "fitting_ticks",
           "label_margin", "legend", "legend_height", "nice_ticks", "row_labels", "seconds_at", "thinned", "tick_label",
           "time_axis", "title", "window_text", "x_axis", "y_axis"]

TITLE_SIZE, TEXT_SIZE = 14.0, 10.0
#: the pixels above the plot that the title takes
TITLE_HEIGHT = 32.0
#: the pixels below the plot that a horizontal axis takes (ticks, their labels, the caption)
AXIS_HEIGHT = 44.0
#: a row label needs this many pixels: labels of thinner rows are `thinned`
ROW_LINE = 12.0
MARGIN = 10.0
TICK = 4.0
#: the most characters of a row label or legend name shown (longer ones are cut)
LABEL_CHARS = 32
GREY: Colour = (90.0, 90.0, 90.0)


@dataclass(frozen=True)
class Box:
    """The plot area: ``w`` x ``h`` pixels from (``x``, ``y``)."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h


def fit(text: str, width: float, size: float = TEXT_SIZE, limit: int | None = LABEL_CHARS) -> str:
    """``text`` cut, with an ellipsis, to at most ``width`` pixels and ``limit`` characters."""
    chars = int(width // (size * CHAR_WIDTH))
    chars = chars if limit is None else min(chars, limit)
    return text if len(text) <= chars else text[:max(chars - 1, 0)] + "\u2026"


def label_margin(names: Sequence[str]) -> float:
    """The pixels left of the plot that the row labels ``names`` take (at most `LABEL_CHARS` wide)."""
    longest = max((min(len(name), LABEL_CHARS) for name in names), default=0)
    return MARGIN + text_width("x" * longest, TEXT_SIZE) + 2 * TICK + 4


def title(drawing: Drawing, text: str, x: float = MARGIN) -> None:
    """The figure's title in bold at the top left, cut to the page's width."""
    drawing.add("title", Text(x, TITLE_HEIGHT / 2, fit(text, drawing.width - x - MARGIN, TITLE_SIZE, None),
                              TITLE_SIZE, bold=True))


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """About ``count`` round values (1, 2 or 5 times a power of ten apart) in [low, high]."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def tick_label(value: float, step: float) -> str:
    """``value`` with as many decimals as ``step`` needs."""
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:.{decimals}f}"


def fitting_ticks(low: float, high: float, length: float, whole: bool = False) -> tuple[list[float], list[str]]:
    """The most round ticks over ``length`` pixels whose labels stay a gap apart (with
    ``whole``, only whole numbers)."""
    count = max(2, int(length // 60))
    while True:
        ticks = nice_ticks(low, high, count)
        if whole and len(ticks) > 1 and ticks[1] - ticks[0] < 1:
            ticks = [float(t) for t in range(math.ceil(low), math.floor(high) + 1)] or [float(round(low))]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else high - low
        labels = [tick_label(tick, step) for tick in ticks]
        spacing = step / (high - low) * length if high > low else length
        if count == 2 or spacing >= max(text_width(label, TEXT_SIZE) for label in labels) + 12:
            return ticks, labels
        count -= 1


def x_axis(drawing: Drawing, box: Box, low: float, high: float, caption: str, role: str = "x-axis",
           whole: bool = False) -> None:
    """A horizontal axis under ``box`` from ``low`` to ``high``: ticks (with ``whole``,
    at whole numbers only), their labels and a caption."""
    span = high - low if high > low else 1.0
    shapes: list = [Line(box.x, box.bottom, box.right, box.bottom)]
    for tick, label in zip(*fitting_ticks(low, high, box.w, whole)):
        x = box.x + (tick - low) / span * box.w
        shapes += [Line(x, box.bottom, x, box.bottom + TICK),
                   Text(x, box.bottom + TICK + 8, label, TEXT_SIZE, "middle")]
    shapes.append(Text(box.right, box.bottom + TICK + 26, caption, TEXT_SIZE, "end"))
    drawing.add(role, *shapes)


def y_axis(drawing: Drawing, box: Box, low: float, high: float, role: str = "y-axis") -> None:
    """A vertical axis left of ``box``, ``low`` at the bottom and ``high`` at the top."""
    span = high - low if high > low else 1.0
    shapes: list = [Line(box.x, box.y, box.x, box.bottom)]
    for tick, label in zip(*fitting_ticks(low, high, box.h * 3)):  # labels stack: a third of the room
        y = box.bottom - (tick - low) / span * box.h
        shapes += [Line(box.x - TICK, y, box.x, y), Text(box.x - TICK - 3, y, label, TEXT_SIZE, "end")]
    drawing.add(role, *shapes)


def seconds_at(tick: int, stop: int, resolution: int) -> str:
    """``tick`` in seconds (``resolution`` ticks a second), to a thousandth of the span
    from it to ``stop``."""
    resolution = max(int(resolution), 1)
    span, origin = (stop - tick) / resolution, tick / resolution
    decimals = max(0, 3 - math.floor(math.log10(span))) if span > 0 else 3
    digits = min(15, max(1, (math.floor(math.log10(abs(origin))) + 1 if origin else 1) + decimals))  # float64
    return f"{origin:.{digits}g} s"


def window_text(start: int, stop: int, resolution: int) -> str:
    """The window ``[start, stop)`` in words: its length and start in seconds."""
    span = (stop - start) / max(int(resolution), 1)
    return f"{span:.4g} s from {seconds_at(start, stop, resolution)}"


def time_axis(drawing: Drawing, box: Box, start: int, stop: int, resolution: int) -> None:
    """The time axis of the window ``[start, stop)`` ticks at ``resolution`` ticks per
    second: seconds from the window's start, the start named in the caption."""
    span = (stop - start) / max(int(resolution), 1)
    caption = "time (s)" if start == 0 else f"time (s) from {seconds_at(start, stop, resolution)}"
    x_axis(drawing, box, 0.0, span, caption)


def thinned(middles: Sequence[float], line: float = ROW_LINE) -> list[int]:
    """The rows to label, of rows whose middles are ``middles`` (top to bottom): from the
    top, each row whose middle is at least ``line`` pixels below the last labelled one's.
    Of equal rows h pixels high that is every k-th row, k = ceil(line / h)."""
    out: list[int] = []
    last = -math.inf
    for row, middle in enumerate(middles):
        if middle - last >= line - 1e-6:
            out.append(row)
            last = middle
    return out


def row_labels(drawing: Drawing, box: Box, names: Sequence[str], role: str = "row-labels") -> None:
    """Left of ``box``, the names of its rows (equal heights, top to bottom), `thinned`,
    each at a tick on its row's middle."""
    height = box.h / max(len(names), 1)
    middles = [box.y + (row + 0.5) * height for row in range(len(names))]
    room = box.x - MARGIN - 2 * TICK
    shapes: list = []
    for row in thinned(middles):
        y = middles[row]
        shapes += [Line(box.x - TICK, y, box.x, y, GREY), Text(box.x - 2 * TICK, y, fit(names[row], room), TEXT_SIZE,
                                                                 "end")]
    drawing.add(role, *shapes)


def _entries(names: Sequence[str], width: float) -> list[tuple[float, int, str]]:
    """(x offset, line, label) of each legend entry, wrapping at ``width``."""
    out, column, line = [], 0.0, 0
    for name in names:
        label = fit(name, width - TEXT_SIZE - 4)
        span = TEXT_SIZE + 4 + text_width(label, TEXT_SIZE) + 16
        if column + span > width and column > 0:
            column, line = 0.0, line + 1
        out.append((column, line, label))
        column += span
    return out


def legend_height(names: Sequence[str], width: float) -> float:
    """The pixels `legend` takes for ``names`` in ``width``."""
    entries = _entries(names, width)
    return (entries[-1][1] + 1) * (TEXT_SIZE + 6) if entries else 0.0


def legend(drawing: Drawing, x: float, y: float, width: float, names: Sequence[str], colours: np.ndarray) -> None:
    """A swatch in each colour followed by its name, from (x, y), wrapping at ``width``."""
    shapes: list = []
    for (column, line, label), colour in zip(_entries(names, width), colours):
        top = y + line * (TEXT_SIZE + 6)
        shapes += [Rect(x + column, top, TEXT_SIZE, TEXT_SIZE, tuple(colour), 1.0, outline=(0.0, 0.0, 0.0)),
                   Text(x + column + TEXT_SIZE + 4, top + TEXT_SIZE / 2, label, TEXT_SIZE)]
    drawing.add("legend", *shapes)
