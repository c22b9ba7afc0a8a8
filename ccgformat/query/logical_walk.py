"""The communication events logical time orders (paper 003 section 2: a message is
associated with the function that sends or receives it), read from every location's
events: each one's index in its location, its time and matching properties, and the
call that holds it - the ENTER and LEAVE of the innermost region open at the event (an
``MPI_Send`` around a SEND), whose exit time lateness compares (section 3.2).

Locations of at most `WALK_BATCH` events are walked many at once (`small_events`),
longer ones by a walker each in batches of `WALK_BATCH`, in a thread of their own
(`streaming.read_ahead`); a call that spans two batches is followed from one to the next
(`Calls`), so memory holds a few batches and the communication events found, never a
whole location.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Iterator

import numpy as np

from .. import backends
from ..archive.many import small_events
from ..graph.graph import chosen_roots
from ..model import EventBatch, EventKind
from .streaming import WALK_BATCH, read_ahead

__all__ = ["COLLECTIVE_KINDS", "EVENT_COLUMNS", "MATCHING_COLUMNS", "POINT_TO_POINT_KINDS", "Calls", "CommunicationEvents",
           "communication_events", "small_chunks"]

POINT_TO_POINT_KINDS = (int(EventKind.SEND), int(EventKind.ISEND), int(EventKind.RECV), int(EventKind.IRECV))
COLLECTIVE_KINDS = (int(EventKind.COLL_END),)
#: the events of many small locations walked together at most
EVENTS_PER_GROUP = 1 << 22
#: the columns of an event that message matching reads besides those of `CommunicationEvents`
MATCHING_COLUMNS = ("request", "size", "recv_size", "value")


@dataclass
class CommunicationEvents:
    """Communication events (and the other events message matching reads) as columns, in
    (location, index) order. ``enter`` and
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
    #: the other columns message matching reads (`MATCHING_COLUMNS`), until it has run
    matching: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.location)

    def take(self, rows: np.ndarray) -> CommunicationEvents:
        """The events ``rows`` (positions or a mask)."""
        return CommunicationEvents(*(getattr(self, name)[rows] for name in EVENT_COLUMNS),
                                   {name: column[rows] for name, column in self.matching.items()})

    def batch(self, rows: np.ndarray) -> EventBatch:
        """The events ``rows`` as an `EventBatch` (with the matching's columns)."""
        return EventBatch(time=self.time[rows], kind=self.kind[rows].astype(np.uint8), ref=self.peer[rows],
                          comm=self.comm[rows], tag=self.tag[rows],
                          **{name: self.matching[name][rows] for name in MATCHING_COLUMNS})


EVENT_COLUMNS = tuple(f.name for f in fields(CommunicationEvents))[:-1]  # all but ``matching``


def communication_events(source: Any, kinds: tuple[int, ...]) -> CommunicationEvents:
    """The events of ``kinds`` of every location of a `Graph` or `Archive`."""
    calls = Calls(np.array(kinds, np.uint8))
    for owner, batch in read_ahead(_chunks(source)):  # the blocks decoded on one core, the calls found on the other
        calls.add(owner, batch)
    return calls.finish()


def _chunks(source: Any) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """(owner, batch) of every location in increasing order, each location's events in
    order and in consecutive chunks."""
    chosen = chosen_roots(source)
    small: list[tuple[int, int]] = []
    for location, count in zip(chosen.locations, chosen.events.tolist()):
        if count <= WALK_BATCH:
            small.append((location, count))
            continue
        yield from small_chunks(source, small)
        small = []
        for batch in source.location(location).events(batch_size=WALK_BATCH):
            yield np.full(len(batch), location, np.int64), batch
    yield from small_chunks(source, small)


def small_chunks(source: Any, locations: list[tuple[int, int]]) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """(owner, batch) of these (location, event count) of at most `WALK_BATCH` events
    each, walked many at once, up to `EVENTS_PER_GROUP` events at a time."""
    group: list[int] = []
    held = 0
    for location, count in locations + [(-1, EVENTS_PER_GROUP + 1)]:
        if held + count > EVENTS_PER_GROUP and group:
            yield from small_events(source.pool, source.roots, group, None, None, WALK_BATCH,
                                    getattr(source, "path", None))[1]
            group, held = [], 0
        if location >= 0:
            group.append(location)
            held += count


class Calls:
    """Finds the wanted events of chunks and the calls that hold them, carrying what the
    location a chunk ends in has open: its depth, the ENTER time of each open level, and
    the events still waiting for their call's LEAVE. The native core scans a chunk with
    a stack of the open calls; the numpy search by (depth, position) is its reference."""

    def __init__(self, wanted: np.ndarray):
        self.wanted = wanted
        self.table = np.zeros(256, np.uint8)  #: per kind whether it is wanted
        self.table[wanted] = 1
        self.parts: list[dict[str, np.ndarray]] = []  #: the events found, a table per chunk
        self.location = -1      #: the location the last chunk ended in
        self.seen = 0           #: its events so far
        self.depth = 0          #: its open calls
        self.opened: list[int] = []  #: their ENTER times, outermost first
        #: its events whose call is still open: (their exit and leave, views into a part; the depth;
        #: the part's number)
        self.waiting: list[tuple[np.ndarray, np.ndarray, int, int]] = []
        self.released = 0       #: parts handed out by `ready`

    def add(self, owner: np.ndarray, batch: EventBatch) -> None:
        if not len(batch):
            return
        if owner[0] != self.location:
            self.waiting = []  # the location ended: calls still open hold their events to its end
        if backends.native():
            self._add_native(owner, batch)
            return
        frame = _Frame(owner, batch, self.depth, self.seen, owner[0] == self.location)
        time, index = frame.time, frame.index
        for exits, leaves, level, _ in self.waiting:  # the first LEAVE at a waiting depth closes its call
            found = frame.leave_after(np.zeros(1, np.int64), np.array([level]), np.array([-1]))[0]
            if found >= 0:
                exits[:], leaves[:] = time[found], index[found]
        self.waiting = [waiting for waiting in self.waiting if waiting[1][0] < 0]

        rows = np.flatnonzero(np.isin(batch.kind, self.wanted))
        level = frame.depth[rows]
        inside = level > 0
        opener = frame.enter_before(rows, level - 1, rows)
        enter = np.where(opener >= 0, time[opener], time[rows])
        carried = inside & (opener < 0)  # opened in an earlier chunk (the first segment only)
        if carried.any():
            enter[carried] = np.array(self.opened, np.int64)[level[carried] - 1]
        closer = np.where(inside, frame.leave_after(rows, level, rows), -1)
        part = self._keep(owner, batch, rows, index[rows], enter, np.where(closer >= 0, time[closer], time[rows]),
                          np.where(closer >= 0, index[closer], -1))
        self._carry(frame, owner, rows, part, inside & (closer < 0))

    def _add_native(self, owner: np.ndarray, batch: EventBatch) -> None:
        """`add` by the native core's scan of the chunk (`_native.logical.calls`)."""
        from .._native.logical import calls
        found = calls(owner, batch.kind, batch.time, self.table, self.location, self.seen, self.opened)
        time = np.asarray(batch.time, np.int64)
        for exits, leaves, level, _ in self.waiting:
            at = int(found.closes[level - 1]) if level <= len(found.closes) else -1
            if at >= 0:
                exits[:], leaves[:] = time[at], self.seen + at
        self.waiting = [waiting for waiting in self.waiting if waiting[1][0] < 0]
        part = self._keep(owner, batch, found.rows, found.index, found.enter, found.exit, found.leave)
        for k in np.flatnonzero(found.level).tolist():
            self.waiting.append((part["exit"][k:k + 1], part["leave"][k:k + 1], int(found.level[k]),
                                 self.released + len(self.parts) - 1))
        self.location, self.seen, self.opened, self.depth = found.location, found.seen, found.opened.tolist(), \
            len(found.opened)

    def _keep(self, owner: np.ndarray, batch: EventBatch, rows: np.ndarray, index: np.ndarray, enter: np.ndarray,
              exit_: np.ndarray, leave: np.ndarray) -> dict[str, np.ndarray]:
        """The part of the wanted events ``rows`` of a chunk, with their index and call,
        kept (and returned)."""
        part = {"location": owner[rows], "index": index, "time": np.asarray(batch.time[rows], np.int64),
                "kind": batch.kind[rows].astype(np.int64), "peer": np.asarray(batch.ref[rows], np.int64),
                **{c: np.asarray(getattr(batch, c)[rows], np.int64) for c in ("comm", "tag") + MATCHING_COLUMNS},
                "enter": enter, "exit": exit_, "leave": leave}
        self.parts.append(part)
        return part

    def _carry(self, frame: _Frame, owner: np.ndarray, rows: np.ndarray, part: dict[str, np.ndarray],
               open_: np.ndarray) -> None:
        """Keep what the last segment's location has open at the chunk's end."""
        if owner[-1] != self.location:
            self.opened = []
        self.location, self.seen, self.depth = int(owner[-1]), int(frame.index[-1]) + 1, frame.end_depth
        opened = np.zeros(self.depth, np.int64)
        kept = self.opened[:self.depth]
        opened[:len(kept)] = kept
        last = frame.segment[-1]
        mine = np.sort(frame.enters[(frame.segment[frame.enters] == last)
                                    & (frame.depth[frame.enters] < self.depth)])[::-1]
        levels, latest = np.unique(frame.depth[mine], return_index=True)  # the last ENTER at a level opened it
        opened[levels] = frame.time[mine[latest]]
        self.opened = opened.tolist()
        for k in np.flatnonzero(open_ & (frame.segment[rows] == last)).tolist():
            self.waiting.append((part["exit"][k:k + 1], part["leave"][k:k + 1], int(frame.depth[rows[k]]),
                                 self.released + len(self.parts) - 1))
        # the events of earlier segments whose call never closed keep their own time

    def ready(self) -> list[dict[str, np.ndarray]]:
        """Hand out the parts found so far whose events all know their call's LEAVE (all
        of them but those from the first part an event still waits in)."""
        held = min((waiting[3] for waiting in self.waiting), default=self.released + len(self.parts)) - self.released
        out, self.parts = self.parts[:held], self.parts[held:]
        self.released += len(out)
        return out

    def held_from(self) -> int | None:
        """The time of the first event found and not handed out yet (None: none)."""
        return next((int(part["time"][0]) for part in self.parts if len(part["time"])), None)

    def finish(self) -> CommunicationEvents:
        """The events found, their parts joined a column at a time, each column of the
        parts let go once joined (memory: the events once, and a column more)."""
        self.waiting = []
        parts, self.parts = self.parts, []

        def joined(name: str) -> np.ndarray:
            return np.concatenate([part.pop(name) for part in parts]) if parts else np.zeros(0, np.int64)

        return CommunicationEvents(*(joined(name) for name in EVENT_COLUMNS),
                                   {name: joined(name) for name in MATCHING_COLUMNS})


class _Frame:
    """One chunk's events by location segment: each one's index in its location and the
    depth before it (open calls, the carried ones included), and its ENTERs and LEAVEs by
    (segment, depth, position), to find the ENTER that opened a level before an event
    and the LEAVE that closes it after."""

    def __init__(self, owner: np.ndarray, batch: EventBatch, depth: int, seen: int, go_on: bool):
        n = self.count = len(batch)
        kind = batch.kind
        self.time = np.asarray(batch.time, np.int64)
        new = np.r_[True, owner[1:] != owner[:-1]]
        self.segment = np.cumsum(new) - 1
        first = np.flatnonzero(new)[self.segment]
        delta = (kind == EventKind.ENTER).astype(np.int64) - (kind == EventKind.LEAVE)
        before = np.cumsum(delta) - delta
        self.depth = before - before[first]
        self.index = np.arange(n, dtype=np.int64) - first
        if go_on:  # the first segment continues the location of the last chunk
            in_first = self.segment == 0
            self.depth[in_first] += depth
            self.index[in_first] += seen
        self.end_depth = int(self.depth[-1] + delta[-1])
        self.levels = int(max(self.depth.max(), depth)) + 2
        self.enters, self.enter_keys = self._sorted(np.flatnonzero(kind == EventKind.ENTER))
        self.leaves, self.leave_keys = self._sorted(np.flatnonzero(kind == EventKind.LEAVE))

    def _key(self, at: np.ndarray, level: np.ndarray, position: np.ndarray) -> np.ndarray:
        return (self.segment[at] * self.levels + level) * (self.count + 1) + position

    def _sorted(self, events: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keys = self._key(events, self.depth[events], events)
        order = np.argsort(keys, kind="stable")
        return events[order], keys[order]

    def enter_before(self, at: np.ndarray, level: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The last ENTER at ``level`` before ``position`` in ``at``'s segment, else -1."""
        j = np.searchsorted(self.enter_keys, self._key(at, level, position)) - 1
        return self._found(self.enters, self.enter_keys, j, at, level)

    def leave_after(self, at: np.ndarray, level: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The first LEAVE at ``level`` after ``position`` in ``at``'s segment, else -1."""
        j = np.searchsorted(self.leave_keys, self._key(at, level, position), side="right")
        return self._found(self.leaves, self.leave_keys, j, at, level)

    def _found(self, events: np.ndarray, keys: np.ndarray, j: np.ndarray, at: np.ndarray,
               level: np.ndarray) -> np.ndarray:
        if not len(events):
            return np.full(len(j), -1, np.int64)
        inside = (j >= 0) & (j < len(events))
        k = np.clip(j, 0, len(events) - 1)
        same = inside & (keys[k] // (self.count + 1) == self.segment[at] * self.levels + level)
        return np.where(same, events[k], -1)
