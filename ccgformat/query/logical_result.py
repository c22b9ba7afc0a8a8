"""The answer of `Archive.logical`: a row per communication event, as columns, with each
phase's steps, and its JSON form, its picture and its pandas table."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, TextIO

import numpy as np

from ..archive.queries import run_query
from ..model import EventKind
from .logical_output import Members, PhaseChunk, members_of, write_json
from .logical_picture import Drawn

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["COLUMNS", "SENDS", "Logical"]

#: the per-event columns, in order
COLUMNS = ("location", "event", "kind", "step", "phase", "lateness", "aggregate_lateness", "cluster", "partner",
           "leave")
#: the kinds of a message's sending end
SENDS = (int(EventKind.SEND), int(EventKind.ISEND))


@dataclass(frozen=True, eq=False)
class Logical(Drawn):
    """Logical steps, phases, lateness and clusters of a trace's communication events.

    Rows are in (location, event) order. ``event``: the event's index in its location;
    ``kind``: its `EventKind`; ``step``: its logical step; ``phase``: its phase (section
    3.1; one phase 0 under Lamport's scheme); ``lateness``: ticks its call exits after the
    earliest one of its phase and step (section 3.2); ``aggregate_lateness``: the same of
    the aggregate non-messaging event before it, at the step below (Ravel's scheme; 0
    under Lamport's); ``cluster``: its location's cluster in its phase (section 3.3.1);
    ``partner``: the row of the other end of its message (-1: none); ``leave``: the event
    index of the LEAVE of the call holding it (-1: none). Per phase ``first_step`` and
    ``last_step``. ``names``: the name of every location of the trace, ``labels`` its
    name after its system tree parent's (the picture's row labels).
    """

    scheme: str
    location: np.ndarray
    event: np.ndarray
    kind: np.ndarray
    step: np.ndarray
    phase: np.ndarray
    lateness: np.ndarray
    aggregate_lateness: np.ndarray
    cluster: np.ndarray
    partner: np.ndarray
    leave: np.ndarray
    first_step: np.ndarray
    last_step: np.ndarray
    names: list[str]
    labels: list[str]
    timer_resolution: int
    title: str = "logical timeline"

    def __len__(self) -> int:
        return len(self.location)

    @property
    def phases(self) -> int:
        return len(self.first_step)

    @property
    def steps(self) -> int:
        """One more than the greatest step (0 without events)."""
        return int(self.step.max()) + 1 if len(self.step) else 0

    def columns(self) -> dict[str, np.ndarray]:
        """The per-event columns by name (`COLUMNS`)."""
        return {name: getattr(self, name) for name in COLUMNS}

    def rows_of(self, location: int) -> slice:
        """The rows of ``location``."""
        first, stop = np.searchsorted(self.location, [location, location + 1])
        return slice(int(first), int(stop))

    def location_columns(self) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        """Per location with events its `logical_output.LOCATION_COLUMNS`."""
        bounds = np.searchsorted(self.location, np.arange(len(self.names) + 1)).tolist()
        rank = self.members.rank
        for location in range(len(self.names)):
            if bounds[location] < bounds[location + 1]:
                yield location, self._columns(slice(bounds[location], bounds[location + 1]), rank)

    def columns_of(self, location: int) -> dict[str, np.ndarray] | None:
        """``location``'s `logical_output.LOCATION_COLUMNS` (None: it has no event)."""
        rows = self.rows_of(location)
        return self._columns(rows, self.members.rank) if rows.start < rows.stop else None

    def _columns(self, rows: slice, rank: np.ndarray) -> dict[str, np.ndarray]:
        return {"event": self.event[rows], "step": self.step[rows], "lateness": self.lateness[rows],
                "phase": self.phase[rows], "cluster": self.cluster[rows],
                "aggregate_lateness": self.aggregate_lateness[rows], "rank": rank[rows], "leave": self.leave[rows]}

    @cached_property
    def members(self) -> Members:
        """Each phase's locations ordered by cluster (`logical_output.Members`)."""
        return members_of(self.phase, self.location, self.cluster, self.phases)

    def phase_sizes(self) -> np.ndarray:
        """Per phase its number of locations."""
        return self.members.count

    def phase_chunks(self) -> Iterator[PhaseChunk]:
        """Every phase at once: its first and last step, events and `members`."""
        yield self.first_step, self.last_step, np.bincount(self.phase, minlength=self.phases), self.members

    def message_lines(self, most: int) -> np.ndarray | None:
        """(send step, send location, receive step, receive location) of every matched
        message, by sender and step; None when there are more than ``most``."""
        sends = np.flatnonzero(np.isin(self.kind, SENDS) & (self.partner >= 0))
        if len(sends) > most:
            return None
        receives = self.partner[sends]
        return np.stack([self.step[sends], self.location[sends], self.step[receives], self.location[receives]], axis=1)

    def to_json(self) -> dict[str, Any]:
        """``{"scheme", "timer_resolution", "locations": [{"location", "name", "events",
        "steps", "lateness", "phases", "clusters"[, "aggregate_lateness"]}], "phases":
        [{"phase", "first_step", "last_step", "events", "clusters": [[location, ...]]}]}``;
        each location's lists in trace order, lateness in ticks."""
        out = io.StringIO()
        write_json(self, out)
        return json.loads(out.getvalue())

    def write_json(self, out: TextIO) -> None:
        """Write the JSON of `to_json`, a location at a time."""
        write_json(self, out)

    def to_pandas(self) -> pd.DataFrame:
        """A row per event (`ccgformat.interop.logical`; extra ``pandas``)."""
        return run_query("logical_to_pandas", self)
