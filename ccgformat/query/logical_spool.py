"""The streamed answer of logical time (`ccg logical`): the batches of closed phases of
`logical_stream` spooled to a temporary file as they close, and read back a location at
a time for the JSON, the summary and the picture (`logical_output`, `logical_picture`);
memory holds per phase a few numbers, per location its events while it is written, and
up to `MESSAGE_LINES` message lines.

The spool holds per batch and location its events' index, step, phase (in closing
order), lateness, aggregate lateness, cluster, place among its phase's locations by
cluster and call's LEAVE (8 numbers an event); a second file each phase's (cluster, location) pairs.
Phases are numbered at the end, by first step and first event, as `Archive.logical`
numbers them. Under Lamport's scheme the spool holds the exit times: the lateness of
the one phase (exit minus the least exit at the step) is known at the end, and its
clusters then need every event's step and lateness at once (16 bytes an event).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

import numpy as np

from .logical_query import checked_options, title_of
from .logical_clusters import cluster_locations
from .logical_output import Members, PhaseChunk, members_of, write_json
from .logical_picture import MESSAGE_LINES, Drawn
from .logical_result import SENDS
from .logical_stream import Closed, closed_batches
from .timeline_query import location_labels

__all__ = ["StreamedLogical", "streamed_logical"]

_COLUMNS = 8          #: numbers spooled per event
_WORD = 8
#: phases whose clusters are read back at once
_PHASES_AT_ONCE = 1 << 16


@contextmanager
def streamed_logical(source: Any, scheme: str = "ravel", clusters: int | None = None) -> Iterator[StreamedLogical]:
    """The logical time of a `Graph` or `Archive`, streamed (`StreamedLogical`); its
    spool goes when the block ends."""
    answer = StreamedLogical(source, *checked_options(scheme, clusters))
    try:
        yield answer
    finally:
        answer.close()


class StreamedLogical(Drawn):
    """What `Archive.logical` answers, spooled: ``location_columns``, ``phase_chunks``,
    ``write_json``, ``save`` (the picture) as `Logical` gives them."""

    def __init__(self, source: Any, scheme: str, clusters: int):
        definitions = source.definitions
        self.scheme = scheme
        self.timer_resolution = int(definitions.timer_resolution or 1)
        self.names = [location.name for location in definitions.locations]
        self.labels = location_labels(source, list(range(len(self.names))))
        self.title = title_of(source, scheme)
        self._spool = tempfile.TemporaryFile()
        self._pairs = tempfile.TemporaryFile()
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  #: per batch: locations, offsets, counts
        self._phase_columns: list[list[np.ndarray]] = []  #: per batch: first, last step, events, first location, index, size
        self._lines: list[np.ndarray] = []
        self._line_count = 0
        self._events = 0
        self._top = -1           #: the greatest step
        self._earliest = np.zeros(0, np.int64)  #: Lamport: per step the least exit time
        try:
            for batch in closed_batches(source, scheme, clusters):
                self._take(batch)
            self._finish(clusters)
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return self._events

    @property
    def steps(self) -> int:
        return self._top + 1

    @property
    def phases(self) -> int:
        return len(self._sizes)

    def close(self) -> None:
        self._spool.close()
        self._pairs.close()

    def _take(self, batch: Closed) -> None:
        events = batch.events
        count = len(events)
        self._events += count
        self._top = max(self._top, int(batch.step.max(initial=-1)))
        sends = np.flatnonzero(np.isin(events.kind, SENDS) & (batch.partner >= 0))
        self._line_count += len(sends)
        if self._line_count <= MESSAGE_LINES:
            receives = batch.partner[sends]
            self._lines.append(np.stack([batch.step[sends], events.location[sends], batch.step[receives],
                                         events.location[receives]], axis=1))
        rank = np.zeros(count, np.int64)
        value = batch.lateness
        if self.scheme == "lamport":
            value = events.exit
            grown = np.full(self._top + 1, np.iinfo(np.int64).max)
            grown[:len(self._earliest)] = self._earliest
            np.minimum.at(grown, batch.step, events.exit)
            self._earliest = grown
        else:
            base = int(batch.phase.min())
            members = members_of(batch.phase - base, events.location, batch.cluster, len(batch.first_step))
            rank = members.rank
            self._pairs.write(np.stack([members.cluster, members.location], axis=1).astype(np.int64).tobytes())
            self._phase_columns.append([batch.first_step, batch.last_step,
                                        np.bincount(batch.phase - base, minlength=len(batch.first_step)),
                                        batch.first_location, batch.first_index, members.count])
        table = np.stack([events.index, batch.step, batch.phase, value, batch.aggregate, batch.cluster, rank,
                          events.leave])
        bounds = np.flatnonzero(np.r_[True, events.location[1:] != events.location[:-1], True])
        offsets = self._spool.tell() + _COLUMNS * _WORD * bounds[:-1]
        for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            self._spool.write(np.ascontiguousarray(table[:, first:stop]).astype(np.int64).tobytes())
        self._blocks.append((events.location[bounds[:-1]], offsets, np.diff(bounds)))

    def _finish(self, clusters: int) -> None:
        self._spool.flush()
        self._pairs.flush()
        locations, offsets, counts = (np.concatenate(parts) if parts else np.zeros(0, np.int64)
                                      for parts in zip(*self._blocks)) if self._blocks else (np.zeros(0, np.int64),) * 3
        by_location = np.argsort(locations, kind="stable")
        self._locations, self._offsets, self._counts = locations[by_location], offsets[by_location], counts[by_location]
        self._blocks = []
        if self.scheme == "lamport":
            self._finish_lamport(clusters)
            return
        first, last, events, first_location, first_index, sizes = (
            np.concatenate(parts) if parts else np.zeros(0, np.int64) for parts in zip(*self._phase_columns)) \
            if self._phase_columns else (np.zeros(0, np.int64),) * 6
        self._phase_columns = []
        self._order = np.lexsort((first_index, first_location, first))  # phases by number: their closing places
        self._number = np.empty(len(self._order), np.int64)
        self._number[self._order] = np.arange(len(self._order), dtype=np.int64)
        self._first, self._last, self._phase_events = first[self._order], last[self._order], events[self._order]
        self._pair_offsets = np.r_[0, np.cumsum(sizes)]  # in closing order
        self._sizes = sizes[self._order]

    def _finish_lamport(self, clusters: int) -> None:
        """The one phase: every location's cluster and place, from every event's lateness."""
        places = len(self.names)
        self._cluster = np.zeros(places, np.int64)
        self._rank = np.zeros(places, np.int64)
        self._sizes = np.zeros(1 if self._events else 0, np.int64)
        self._first = np.zeros(len(self._sizes), np.int64)
        self._last = self._first + max(self._top, 0)
        self._phase_events = np.full(len(self._sizes), self._events, np.int64)
        self._order = self._number = np.arange(len(self._sizes), dtype=np.int64)
        if not self._events:
            return
        location, step, late = [], [], []
        for at, mine in self._read_all():
            location.append(np.full(len(mine[1]), at, np.int64))
            step.append(mine[1])
            late.append(mine[3] - self._earliest[mine[1]])
        location_, step_ = np.concatenate(location), np.concatenate(step)
        cluster = cluster_locations(np.zeros(len(location_), np.int64), location_, step_, np.concatenate(late),
                                    clusters)
        first = np.flatnonzero(np.r_[True, location_[1:] != location_[:-1]])
        members = members_of(np.zeros(len(first), np.int64), location_[first], cluster[first], 1)
        self._cluster[location_[first]] = cluster[first]
        self._rank[location_[first]] = members.rank
        self._sizes[0] = len(first)
        self._members = members

    def _read_all(self) -> Iterator[tuple[int, np.ndarray]]:
        """Per location with events its spooled table (a row per column), its blocks joined."""
        if not len(self._locations):
            return
        bounds = np.flatnonzero(np.r_[True, self._locations[1:] != self._locations[:-1], True]).tolist()
        for first, stop in zip(bounds[:-1], bounds[1:]):
            yield int(self._locations[first]), self._read(first, stop)

    def _read(self, first: int, stop: int) -> np.ndarray:
        """The spooled blocks ``first:stop`` (of one location), joined."""
        handle = self._spool.fileno()
        parts = [np.frombuffer(os.pread(handle, _COLUMNS * _WORD * count, offset), np.int64).reshape(_COLUMNS, count)
                 for offset, count in zip(self._offsets[first:stop].tolist(), self._counts[first:stop].tolist())]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)

    def location_columns(self) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        """Per location with events its `logical_output.LOCATION_COLUMNS`."""
        for location, table in self._read_all():
            yield location, self._columns(location, table)

    def columns_of(self, location: int) -> dict[str, np.ndarray] | None:
        """``location``'s `logical_output.LOCATION_COLUMNS` (None: it has no event)."""
        first, stop = np.searchsorted(self._locations, [location, location + 1]).tolist()
        return self._columns(location, self._read(first, stop)) if first < stop else None

    def _columns(self, location: int, table: np.ndarray) -> dict[str, np.ndarray]:
        event, step, phase, value, aggregate, cluster, rank, leave = table
        if self.scheme == "lamport":
            count = len(step)
            return {"event": event, "step": step, "lateness": value - self._earliest[step],
                    "phase": np.zeros(count, np.int64), "cluster": np.full(count, self._cluster[location]),
                    "aggregate_lateness": aggregate, "rank": np.full(count, self._rank[location]), "leave": leave}
        return {"event": event, "step": step, "lateness": value, "phase": self._number[phase], "cluster": cluster,
                "aggregate_lateness": aggregate, "rank": rank, "leave": leave}

    def phase_chunks(self) -> Iterator[PhaseChunk]:
        """The phases in order, `_PHASES_AT_ONCE` at a time: first and last step, events,
        members (read back)."""
        for start in range(0, self.phases, _PHASES_AT_ONCE):
            chunk = slice(start, min(start + _PHASES_AT_ONCE, self.phases))
            yield self._first[chunk], self._last[chunk], self._phase_events[chunk], self._members_of(self._order[chunk])

    def _members_of(self, phases: np.ndarray) -> Members:
        """The (cluster, location) pairs of these phases (closing places), read back."""
        if self.scheme == "lamport":
            return self._members
        low, high = int(self._pair_offsets[phases.min()]), int(self._pair_offsets[phases.max() + 1])
        pairs = np.frombuffer(os.pread(self._pairs.fileno(), 2 * _WORD * (high - low), 2 * _WORD * low),
                              np.int64).reshape(-1, 2)
        sizes = self._pair_offsets[phases + 1] - self._pair_offsets[phases]
        rows = np.repeat(self._pair_offsets[phases] - low - np.r_[0, np.cumsum(sizes)[:-1]], sizes) \
            + np.arange(int(sizes.sum()), dtype=np.int64)
        empty = np.zeros(0, np.int64)
        return Members(empty, pairs[rows, 0], pairs[rows, 1], sizes, empty)

    def phase_sizes(self) -> np.ndarray:
        """Per phase its number of locations."""
        return self._sizes

    def message_lines(self, most: int) -> np.ndarray | None:
        """(send step, send location, receive step, receive location) of every matched
        message, by sender and step; None when there are more than ``most``."""
        if self._line_count > most:
            return None
        lines = np.concatenate(self._lines) if self._lines else np.zeros((0, 4), np.int64)
        return lines[np.lexsort((lines[:, 0], lines[:, 1]))]

    def write_json(self, out: TextIO) -> None:
        """The JSON of `Logical.write_json`, a location at a time."""
        write_json(self, out)

