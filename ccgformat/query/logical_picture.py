"""What the logical timeline shows (`ccgformat.figures.logical`), from an answer: the
columns of `Logical` or the spool of the streamed one, read a location at a time.

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

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..figures.logical import LogicalFigure
from ..figures.scale import ramp
from .logical_output import Answer

if TYPE_CHECKING:
    from ..figures import Drawing

__all__ = ["MESSAGE_LINES", "Drawn", "Picturable", "logical_figure"]

#: the most message lines drawn
MESSAGE_LINES = 2000
_WHITE = 255


class Picturable(Answer, Protocol):
    """What the picture reads of an answer besides its `logical_output.Answer`."""

    labels: list[str]
    title: str

    @property
    def steps(self) -> int: ...

    def phase_sizes(self) -> np.ndarray: ...

    def message_lines(self, most: int) -> np.ndarray | None: ...




def logical_figure(result: Picturable, width: int, height: int) -> LogicalFigure:
    """The figure of ``result`` in at most ``width`` columns and ``height`` rows of cells,
    drawn a location at a time: memory holds the cells, not the events."""
    if width < 1 or height < 1:
        raise ValueError(f"a logical timeline needs at least one column and row, not {width} x {height}")
    span = max(result.steps, 1)
    columns = min(width, span)
    by_location = len(result.names) <= height
    rows = max(len(result.names), 1) if by_location else height
    members = None if by_location else result.phase_sizes()
    cell = np.full(rows * columns, -1, np.int64)
    for location, mine in result.location_columns():
        step = mine["step"]
        row = np.full(len(step), location) if by_location else mine["rank"] * height // members[mine["phase"]]
        np.maximum.at(cell, row * columns + ((step + 1) * columns - 1) // span, mine["lateness"])
        if result.scheme == "ravel":  # the aggregate event before each event, a step below it
            np.maximum.at(cell, row * columns + (step * columns - 1) // span, mine["aggregate_lateness"])
    high = max(int(cell.max(initial=0)), 1)
    pixels = np.where((cell >= 0)[:, None], ramp(cell / high), _WHITE).astype(np.uint8).reshape(rows, columns, 3)
    lines = result.message_lines(MESSAGE_LINES) if by_location and columns == span else None
    names = list(result.labels) if by_location else [f"{100 * r / rows:.0f} %" for r in range(rows)]
    scale, unit = _unit(high / result.timer_resolution)
    return LogicalFigure(result.title, 0, span, names or [""], pixels,
                         lines if lines is not None else np.zeros((0, 4), np.int64),
                         high / result.timer_resolution * scale, f"lateness ({unit})",
                         "logical step" if by_location else "logical step (rows: each phase's locations by cluster)")


def _unit(seconds: float) -> tuple[float, str]:
    """The factor and name of the largest unit of time ``seconds`` is at least one of."""
    for scale, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "\u00b5s")):
        if seconds * scale >= 1:
            return scale, unit
    return 1e9, "ns"


class Drawn:
    """The picture of an answer (a `Picturable`): ``drawing`` and ``save``."""

    def drawing(self: Picturable, width: int = 1000, height: int = 800) -> Drawing:
        """The logical timeline picture (`ccgformat.figures.logical`) at most ``width`` x
        ``height`` pixels of cells."""
        from ..figures.logical import draw_logical
        return draw_logical(logical_figure(self, width, height))

    def save(self, path: str | os.PathLike[str], width: int = 1000, height: int = 800) -> Path:
        """Write the picture as SVG or PNG, by the suffix of ``path``."""
        return self.drawing(width, height).save(path)
