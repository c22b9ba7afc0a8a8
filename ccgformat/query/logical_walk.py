"""The communication events logical time orders (paper 003 section 2: a message is
associated with the function that sends or receives it), read from every location's
events: each one's index in its location, its time and matching properties, and the
call that holds it - the ENTER and LEAVE of the innermost region open at the event (an
``MPI_Send`` around a SEND), whose exit time lateness compares (section 3.2).

Locations of at most `WALK_BATCH` events are walked many at once (`small_events`),
longer ones by a walker each in batches of `WALK_BATCH`; a call that spans two batches
is followed from one to the next (`_Calls`), so memory holds a batch and the
communication events found, never a whole location.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Iterator

import numpy as np

from ..archive.many import small_events
from ..graph.graph import chosen_roots
from ..model import EventBatch, EventKind
from .streaming import WALK_BATCH

__all__ = ["COLLECTIVE_KINDS", "POINT_TO_POINT_KINDS", "CommunicationEvents", "communication_events"]

POINT_TO_POINT_KINDS = (int(EventKind.SEND), int(EventKind.ISEND), int(EventKind.RECV), int(EventKind.IRECV))
COLLECTIVE_KINDS = (int(EventKind.COLL_END),)
#: the events of many small locations walked together at most
EVENTS_PER_GROUP = 1 << 22


@dataclass
class CommunicationEvents:
    """Communication events as columns, in (location, index) order. ``enter`` and
    ``exit`` are the times of the ENTER and LEAVE of the innermost call open at the event
    and ``leave`` that LEAVE's event index; outside any call (or in one left open at the
    location's end) the event's own time and -1."""

    location: np.ndarray
    index: np.ndarray
    time: np.ndarray
    kind: np.ndarray
    peer: np.ndarray   #: the ``ref`` column: the peer location of a message, a collective's operation
    comm: np.ndarray
    tag: np.ndarray
    enter: np.ndarray
    exit: np.ndarray
    leave: np.ndarray

    def __len__(self) -> int:
        return len(self.location)

    def take(self, rows: np.ndarray) -> CommunicationEvents:
        """The events at ``rows`` (positions or a mask)."""
        return CommunicationEvents(*(getattr(self, f.name)[rows] for f in fields(self)))


def communication_events(source: Any, kinds: tuple[int, ...]) -> CommunicationEvents:
    """The events of ``kinds`` of every location of a `Graph` or `Archive`."""
    calls = _Calls(np.array(kinds, np.uint8))
    for owner, batch in _chunks(source):
        calls.add(owner, batch)
    return calls.finish()


def _chunks(source: Any) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """(owner, batch) of every location in increasing order, each location's events in
    order and in consecutive chunks."""
    chosen = chosen_roots(source)
    group: list[int] = []
    held = 0

    def flush() -> Iterator[tuple[np.ndarray, EventBatch]]:
        if group:
            _, parts = small_events(source.pool, source.roots, group, None, None, WALK_BATCH,
                                    getattr(source, "path", None))
            yield from parts
            group.clear()

    for location, count in zip(chosen.locations, chosen.events.tolist()):
        if count <= WALK_BATCH:
            if held + count > EVENTS_PER_GROUP:
                yield from flush()
                held = 0
            group.append(location)
            held += count
            continue
        yield from flush()
        held = 0
        for batch in source.location(location).events(batch_size=WALK_BATCH):
            yield np.full(len(batch), location, np.int64), batch
    yield from flush()


class _Calls:
    """Finds the wanted events of chunks and the calls that hold them, carrying what the
    location a chunk ends in has open: its depth, the ENTER time of each open level, and
    the events still waiting for their call's LEAVE."""

    def __init__(self, wanted: np.ndarray):
        self.wanted = wanted
        self.parts: list[list[np.ndarray]] = []
        self.location = -1      #: the location the last chunk ended in
        self.seen = 0           #: its events so far
        self.depth = 0          #: its open calls
        self.opened: list[int] = []                           #: their ENTER times, outermost first
        self.waiting: list[tuple[np.ndarray, np.ndarray, int]] = []  #: (exit, leave, row) waiting, per depth

    def add(self, owner: np.ndarray, batch: EventBatch) -> None:
        n = len(batch)
        if not n:
            return
        kind = batch.kind
        time = np.asarray(batch.time, np.int64)
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        segment = np.cumsum(np.r_[True, owner[1:] != owner[:-1]]) - 1
        first = starts[segment]
        go_on = owner[0] == self.location  # the first segment continues the last chunk's location
        if not go_on:
            self._close_waiting()
        delta = (kind == EventKind.ENTER).astype(np.int64) - (kind == EventKind.LEAVE)
        before = np.cumsum(delta) - delta
        depth = before - before[first]
        index = np.arange(n, dtype=np.int64) - first
        if go_on:
            in_first = segment == 0
            depth[in_first] += self.depth
            index[in_first] += self.seen
        levels = int(max(depth.max(), self.depth)) + 2
        enters, leaves = (np.flatnonzero(kind == k) for k in (EventKind.ENTER, EventKind.LEAVE))

        def keyed(at: np.ndarray, level: np.ndarray, position: np.ndarray) -> np.ndarray:
            return (segment[at] * levels + level) * (n + 1) + position

        enter_keys, leave_keys = keyed(enters, depth[enters], enters), keyed(leaves, depth[leaves], leaves)
        by_key = np.argsort(enter_keys, kind="stable")
        enters, enter_keys = enters[by_key], enter_keys[by_key]
        by_key = np.argsort(leave_keys, kind="stable")
        leaves, leave_keys = leaves[by_key], leave_keys[by_key]
        if go_on and self.waiting:  # the first LEAVE at a waiting depth closes its call
            for exits, leave_index, level in self.waiting:
                j = np.searchsorted(leave_keys, keyed(np.zeros(1, np.int64), np.array([level]), np.array([-1])))[0]
                if j < len(leaves) and leave_keys[j] // (n + 1) == level:
                    exits[:], leave_index[:] = time[leaves[j]], index[leaves[j]]
            self.waiting = [w for w in self.waiting if w[1][0] < 0]

        rows = np.flatnonzero(np.isin(kind, self.wanted))
        level = depth[rows]
        inside = level > 0
        j = np.searchsorted(enter_keys, keyed(rows, level - 1, rows)) - 1
        found = inside & (j >= 0) & (enter_keys[np.maximum(j, 0)] // (n + 1) == segment[rows] * levels + level - 1) \
            if len(enters) else np.zeros(len(rows), bool)
        enter = time[rows].copy()
        enter[found] = time[enters[j[found]]]
        carried = inside & ~found  # an ENTER in an earlier chunk: the first segment only
        enter[carried] = np.array(self.opened, np.int64)[level[carried] - 1] if carried.any() else 0
        j = np.searchsorted(leave_keys, keyed(rows, level, rows), side="right")
        closed = inside & (j < len(leaves)) & (leave_keys[np.minimum(j, len(leaves) - 1)] // (n + 1)
                                               == segment[rows] * levels + level) \
            if len(leaves) else np.zeros(len(rows), bool)
        exit_ = time[rows].copy()
        leave = np.full(len(rows), -1, np.int64)
        exit_[closed] = time[leaves[j[closed]]]
        leave[closed] = index[leaves[j[closed]]]
        part = [owner[rows], index[rows], time[rows], kind[rows].astype(np.int64), batch.ref[rows], batch.comm[rows],
                batch.tag[rows], enter, exit_, leave]
        self.parts.append([np.asarray(c, np.int64) for c in part])
        self._carry(owner, segment, depth, delta, index, time, enters, rows, inside & ~closed)

    def _carry(self, owner: np.ndarray, segment: np.ndarray, depth: np.ndarray, delta: np.ndarray,
               index: np.ndarray, time: np.ndarray, enters: np.ndarray, rows: np.ndarray, open_: np.ndarray) -> None:
        """Keep what the last segment's location has open at the chunk's end."""
        last = segment[-1]
        if owner[-1] != self.location:
            self.opened = []
        self.location, self.seen = int(owner[-1]), int(index[-1]) + 1
        self.depth = int(depth[-1] + delta[-1])
        opened = np.zeros(self.depth, np.int64)
        kept = self.opened[:self.depth]
        opened[:len(kept)] = kept
        mine = np.sort(enters[(segment[enters] == last) & (depth[enters] < self.depth)])[::-1]
        levels, latest = np.unique(depth[mine], return_index=True)  # the last ENTER at a level opened it
        opened[levels] = time[mine[latest]]
        self.opened = opened.tolist()
        part = self.parts[-1]
        for k in np.flatnonzero(open_ & (segment[rows] == last)).tolist():
            self.waiting.append((part[8][k:k + 1], part[9][k:k + 1], int(depth[rows[k]])))
        # events of earlier segments whose call never closed keep their own time

    def _close_waiting(self) -> None:
        """The location ended: calls still open hold their events to the end (own time)."""
        self.waiting = []

    def finish(self) -> CommunicationEvents:
        self._close_waiting()
        columns = [np.concatenate(c) if c else np.zeros(0, np.int64) for c in zip(*self.parts)] \
            if self.parts else [np.zeros(0, np.int64)] * 10
        self.parts = []
        return CommunicationEvents(*columns)
