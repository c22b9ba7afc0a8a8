"""What the logical timeline shows (`ccgformat.figures.logical`), from a `Logical` answer.

Columns: the steps, several to a column when there are more than the width (the split
of the timeline's columns, dissertation 4.27). Rows: a location each while they fit;
with more locations than rows, each phase's locations ordered by cluster (then by
number) and spread over all rows - "clusters when locations outnumber pixel rows" - so
a row is a share of every phase's locations. A cell takes the greatest lateness of the
events it holds (an overplot that keeps a late event visible, paper 003 section 4.1),
under Ravel's scheme with the aggregate non-messaging events at the even steps. Message
lines join send and receive while every step and location has a cell of its own and
there are at most `MESSAGE_LINES` of them.
"""

from __future__ import annotations

import numpy as np

from ..figures.logical import LogicalFigure
from ..figures.scale import ramp
from ..model import EventKind
from .logical_result import Logical

__all__ = ["MESSAGE_LINES", "logical_figure"]

#: the most message lines drawn
MESSAGE_LINES = 2000
_WHITE = 255
_SENDS = (int(EventKind.SEND), int(EventKind.ISEND))


def logical_figure(result: Logical, width: int, height: int) -> LogicalFigure:
    """The figure of ``result`` in at most ``width`` columns and ``height`` rows of cells."""
    if width < 1 or height < 1:
        raise ValueError(f"a logical timeline needs at least one column and row, not {width} x {height}")
    span = max(result.steps, 1)
    columns = min(width, span)
    by_location = len(result.names) <= height
    rows = max(len(result.names), 1) if by_location else height
    row = result.location if by_location else _cluster_rows(result, height)
    column = ((result.step + 1) * columns - 1) // span
    value = result.lateness
    if result.scheme == "ravel":  # the aggregate event before each event, a step below it
        row, column = np.r_[row, row], np.r_[column, (result.step * columns - 1) // span]
        value = np.r_[value, result.aggregate_lateness]
    cell = np.full(rows * columns, -1, np.int64)
    np.maximum.at(cell, row * columns + column, value)
    high = max(int(cell.max(initial=0)), 1)
    pixels = np.where((cell >= 0)[:, None], ramp(cell / high), _WHITE).astype(np.uint8).reshape(rows, columns, 3)
    sends = np.flatnonzero(np.isin(result.kind, _SENDS) & (result.partner >= 0))
    lines = np.zeros((0, 4), np.int64)
    if by_location and columns == span and 0 < len(sends) <= MESSAGE_LINES:
        receives = result.partner[sends]
        lines = np.stack([result.step[sends], result.location[sends], result.step[receives],
                          result.location[receives]], axis=1)
    names = list(result.labels) if by_location else [f"{100 * r / rows:.0f} %" for r in range(rows)]
    scale, unit = _unit(high / result.timer_resolution)
    return LogicalFigure(result.title, 0, span, names or [""], pixels, lines, high / result.timer_resolution * scale,
                         f"lateness ({unit})", "logical step" if by_location else
                         "logical step (rows: each phase's locations by cluster)")


def _unit(seconds: float) -> tuple[float, str]:
    """The factor and name of the largest unit of time ``seconds`` is at least one of."""
    for scale, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "\u00b5s")):
        if seconds * scale >= 1:
            return scale, unit
    return 1e9, "ns"


def _cluster_rows(result: Logical, height: int) -> np.ndarray:
    """Per event its row: its location's place among its phase's locations ordered by
    (cluster, location), spread over ``height`` rows."""
    order = np.lexsort((result.location, result.cluster, result.phase))
    phase, location = result.phase[order], result.location[order]
    member = np.r_[True, (phase[1:] != phase[:-1]) | (location[1:] != location[:-1])]
    new_phase = np.r_[True, phase[1:] != phase[:-1]]
    rank = np.cumsum(member) - 1  # member number overall
    rank -= rank[np.maximum.accumulate(np.where(new_phase, np.arange(len(order)), 0))]
    members = np.zeros(result.phases, np.int64)
    np.maximum.at(members, phase, rank + 1)
    row = np.empty(len(order), np.int64)
    row[order] = rank * height // members[phase]
    return row
