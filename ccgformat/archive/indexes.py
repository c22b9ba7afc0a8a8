"""Snapshot and summary indexes: per location, the state and cumulative statistics at
every K-th event, like OTF snapshots and statistics, so that a reader can start mid-trace
and the statistics of any window need only the events of its two end segments.

A checkpoint at event index k describes everything before event k: events ``[0, k)`` and
time ``[start, T)``, where T is the timestamp of event k (the location's end time for the
final checkpoint at k = count). Calls still open at T count with the part before T.

Two accumulators keep the running per-event state (call stack, per-region calls and
times, metric values, message and collective totals): `_Accumulator`, the reference, one
Python call per event, and its C port under the native backend. `SegmentIndex` adds, one
vectorised pass per segment between checkpoints, what a profile of a long window needs
besides (format 1.2): messages per peer, collectives per operation, the shortest and
longest call per region closed inside the segment, and the calls open at the checkpoint
with their leave times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

import numpy as np

from .. import backends
from ..model import EventBatch, EventKind
from ..ordering import stable_order


class Walker(Protocol):
    """What a checkpoint pass needs of a location: `LocationWalker` or `NativeWalker`."""

    start: int

    def __len__(self) -> int: ...

    def events(self) -> Any: ...

#: The graph size per location of a query above which reading the checkpoints of its
#: locations beats walking the graph (`query.profile.index_pays`; measured on the corpus
#: traces): a graph of at most this many nodes never needs its checkpoints, so a writer
#: leaves them out of such a file (`Writer`'s ``index``).
INDEX_NODES_PER_LOCATION = 400

#: The row lists of SNAPSHOTS and SUMMARY checkpoints (spec 4.4, 4.5) and their row widths.
ROW_WIDTHS = {"stack": 2, "metrics": 2, "regions": 4, "peers": 5, "operations": 4, "durations": 3, "open": 3}

_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)
#: Per kind code, whether it is one of _SENDS / _RECEIVES (a lookup, cheaper than np.isin per batch).
_IS_SEND, _IS_RECEIVE = (np.isin(np.arange(256), kinds) for kinds in (_SENDS, _RECEIVES))


@dataclass
class Checkpoint:
    """Snapshot and cumulative summary before event ``index`` (time ``time``)."""

    index: int
    time: int
    stack: list[list[int]]           # [region, enter time], outermost first
    metrics: list[list[int]]         # [metric, value after the samples before index]
    regions: list[list[int]]         # [region, calls, inclusive, exclusive], by region
    messages: list[int] = field(default_factory=list)  # sent, sent bytes, received, received bytes
    collectives: list[int] = field(default_factory=list)  # count, bytes sent, bytes received
    peers: list[list[int]] = field(default_factory=list)       # [peer, sent, bytes, received, bytes]
    operations: list[list[int]] = field(default_factory=list)  # [operation, count, bytes sent, received]
    durations: list[list[int]] = field(default_factory=list)   # [region, min, max] closed in the segment
    open: list[list[int]] = field(default_factory=list)        # [region, enter, leave], outermost first

    def snapshot_json(self) -> dict[str, Any]:
        return {"index": self.index, "time": self.time, "stack": self.stack, "metrics": self.metrics}

    def summary_json(self) -> dict[str, Any]:
        return {"index": self.index, "time": self.time, "regions": self.regions,
                "messages": self.messages, "collectives": self.collectives, "peers": self.peers,
                "operations": self.operations, "durations": self.durations, "open": self.open}


class _Accumulator:
    """The reference running state, one event at a time."""

    def __init__(self) -> None:
        self.stack: list[list[int]] = []    # [region, enter time, child time]
        self.calls: dict[int, list[int]] = {}  # region -> [calls, inclusive, exclusive]
        self.metrics: dict[int, int] = {}
        self.messages = [0, 0, 0, 0]
        self.collectives = [0, 0, 0]

    def add(self, batch: EventBatch) -> None:
        columns = zip(batch.time.tolist(), batch.kind.tolist(), batch.ref.tolist(), batch.size.tolist(),
                      batch.recv_size.tolist(), batch.value.tolist())
        for time, kind, ref, size, recv_size, value in columns:
            self._add(time, kind, ref, size, recv_size, value)

    def _add(self, time: int, kind: int, ref: int, size: int, recv_size: int, value: int) -> None:
        if kind == EventKind.ENTER:
            self.stack.append([ref, time, 0])
            self.calls.setdefault(ref, [0, 0, 0])[0] += 1
        elif kind == EventKind.LEAVE:
            region, enter, child_time = self.stack.pop()
            inclusive = time - enter
            entry = self.calls[region]
            entry[1] += inclusive
            entry[2] += inclusive - child_time
            if self.stack:
                self.stack[-1][2] += inclusive
        elif kind in _SENDS:
            self.messages[0] += 1
            self.messages[1] += size
        elif kind in _RECEIVES:
            self.messages[2] += 1
            self.messages[3] += size
        elif kind == EventKind.COLL_END:
            self.collectives[0] += 1
            self.collectives[1] += size
            self.collectives[2] += recv_size
        elif kind == EventKind.METRIC:
            self.metrics[ref] = value

    def snapshot(self, time: int) -> tuple[list[list[int]], list[list[int]], list[list[int]], list[int], list[int]]:
        """Stack, metrics, regions, messages and collectives so far, with open calls
        counted up to ``time``."""
        calls = {region: list(entry) for region, entry in self.calls.items()}
        for region, enter, child_time in self.stack:
            calls[region][1] += time - enter
            calls[region][2] += time - enter - child_time
        # an open call's exclusive part also excludes its open callee's elapsed time
        for (region, _, _), (_, callee_enter, _) in zip(self.stack, self.stack[1:]):
            calls[region][2] -= time - callee_enter
        return ([[r, t] for r, t, _ in self.stack], [[m, v] for m, v in sorted(self.metrics.items())],
                [[r, *calls[r]] for r in sorted(calls)], list(self.messages), list(self.collectives))


class _Cumulative:
    """Cumulative int64 sums (wrapping like the format's) per key, for peers and operations."""

    def __init__(self, width: int) -> None:
        self.rows: dict[int, np.ndarray] = {}
        self.width = width

    def add(self, keys: np.ndarray, columns: list[np.ndarray]) -> None:
        if not len(keys):
            return
        unique, inverse = np.unique(keys, return_inverse=True)
        for position, key in enumerate(unique.tolist()):
            row = self.rows.setdefault(key, np.zeros(self.width, np.int64))
            chosen = inverse == position
            for column, values in columns:
                row[column] += values[chosen].sum(dtype=np.int64)

    def listing(self) -> list[list[int]]:
        return [[key, *self.rows[key].tolist()] for key in sorted(self.rows)]


class SegmentIndex:
    """The 1.2 members of the SUMMARY checkpoints, one segment at a time: matched ENTER
    and LEAVE events by call level (an ENTER's level is the depth before it, a LEAVE's
    the depth after it; per level they alternate), so calls closed inside the segment
    give their region's shortest and longest duration, LEAVEs without an ENTER of the
    segment close the calls open at its start, and ENTERs without a LEAVE stay open.
    ``native``: the calls are matched in C (`ccgformat._native.segment_calls`) or by the
    numpy code here, the reference (default: the active backend's)."""

    def __init__(self, native: bool | None = None) -> None:
        self.native = backends.native() if native is None else native
        self.peers = _Cumulative(4)
        self.operations = _Cumulative(3)
        self.frames: list[tuple[int, int, list[list[int]]]] = []  # region, enter, rows awaiting the leave
        self.shortest: dict[int, list[int]] = {}

    def add(self, batch: EventBatch) -> None:
        kind = batch.kind
        with np.errstate(over="ignore"):
            for kinds, column in ((_IS_SEND, 0), (_IS_RECEIVE, 2)):
                chosen = kinds[kind]
                self.peers.add(batch.ref[chosen], [(column, np.ones(int(chosen.sum()), np.int64)),
                                                   (column + 1, batch.size[chosen])])
            chosen = kind == EventKind.COLL_END
            self.operations.add(batch.ref[chosen], [(0, np.ones(int(chosen.sum()), np.int64)),
                                                    (1, batch.size[chosen]), (2, batch.recv_size[chosen])])
        self._calls(batch)

    def _calls(self, batch: EventBatch) -> None:
        if self.native:
            self._native_calls(batch)
            return
        call = np.flatnonzero(batch.kind <= EventKind.LEAVE)
        if not len(call):
            return
        enter = batch.kind[call] == EventKind.ENTER
        after = len(self.frames) + np.cumsum(np.where(enter, 1, -1))
        level = np.where(enter, after - 1, after)
        order = stable_order(level)  # by level, then in event order (call increases)
        level, enter, position = level[order], enter[order], call[order]
        first = np.concatenate(([True], level[1:] != level[:-1]))
        last = np.concatenate((level[1:] != level[:-1], [True]))
        time, ref = batch.time[position], batch.ref[position]
        closes = np.flatnonzero(enter[:-1] & ~enter[1:] & ~last[:-1])  # an ENTER and the LEAVE after it
        durations, regions = [time[closes + 1] - time[closes]], [ref[closes]]
        for i in np.flatnonzero(first & ~enter).tolist():  # closes a call open when the batch began
            closed = self._close(int(level[i]), int(time[i]))
            if closed is not None:
                regions.append(np.array([closed[0]]))
                durations.append(np.array([closed[1]]))
        self._closed(np.concatenate(regions), np.concatenate(durations))
        depth = int(after[-1])
        frames: list[Any] = self.frames[:depth] + [None] * max(0, depth - len(self.frames))
        for i in np.flatnonzero(last & enter).tolist():  # opened here, still open
            frames[level[i]] = (int(ref[i]), int(time[i]), [])
        self.frames = frames

    def _native_calls(self, batch: EventBatch) -> None:
        from .._native.segment_calls import calls
        found = calls(batch.time, batch.kind, batch.ref, len(self.frames))
        # a region's shortest and longest call closed in the batch stand for all of them
        regions, durations = [found.regions, found.regions], [found.shortest, found.longest]
        for level, time in found.closed:
            closed = self._close(level, time)
            if closed is not None:
                regions.append(np.array([closed[0]]))
                durations.append(np.array([closed[1]]))
        self._closed(np.concatenate(regions), np.concatenate(durations))
        self.frames = self.frames[:found.kept] + [(region, enter, []) for region, enter in found.opened]

    def _close(self, level: int, time: int) -> tuple[int, int] | None:
        """Close the call open at ``level`` when the batch began, at ``time``: the open
        rows that wait for it get its leave time; (region, duration) when no checkpoint
        came while it was open (it closed inside the segment)."""
        region, entered, waiting = self.frames[level]
        for row in waiting:
            row[2] = time
        return None if waiting else (region, (time - entered + (1 << 63)) % (1 << 64) - (1 << 63))  # int64 wraps

    def _closed(self, region: np.ndarray, duration: np.ndarray) -> None:
        if not len(region):
            return
        regions, inverse = np.unique(region, return_inverse=True)
        low = np.full(len(regions), np.iinfo(np.int64).max)
        high = np.full(len(regions), np.iinfo(np.int64).min)
        np.minimum.at(low, inverse, duration)
        np.maximum.at(high, inverse, duration)
        for r, lo, hi in zip(regions.tolist(), low.tolist(), high.tolist()):
            entry = self.shortest.setdefault(r, [lo, hi])
            entry[0], entry[1] = min(entry[0], lo), max(entry[1], hi)

    def checkpoint(self) -> tuple[list[list[int]], list[list[int]], list[list[int]], list[list[int]]]:
        """Peers, operations, the segment's durations (then reset) and the open calls,
        whose leave times are filled in when their LEAVE comes."""
        durations = [[r, *self.shortest[r]] for r in sorted(self.shortest)]
        self.shortest = {}
        opened = []
        for region, enter, waiting in self.frames:
            row = [region, enter, None]
            waiting.append(row)
            opened.append(row)
        return self.peers.listing(), self.operations.listing(), durations, opened


def reference_checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """The reference: the running state through `_Accumulator`, one Python call per event."""
    return Recorder(interval, _Accumulator(), native=False).record(walker.events()).finish(walker.start)


def native_checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """`reference_checkpoints` with the per-event work in C: the native walk when the
    walker has one (`ccgformat._native.walk.native_walker`), a C accumulator over its
    batches in any case."""
    from .._native.walk import Checkpointer, native_walker
    return Recorder(interval, Checkpointer(), native=True).record(native_walker(walker).events()).finish(walker.start)


def checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """Walk one location and record a checkpoint every ``interval`` events and at its end
    (the per-event state in C with the native backend)."""
    if backends.native():
        return native_checkpoints(walker, interval)
    return reference_checkpoints(walker, interval)


def recorder(interval: int) -> Recorder:
    """A `Recorder` with the accumulator of the active backend."""
    if backends.native():
        from .._native.walk import Checkpointer
        return Recorder(interval, Checkpointer())
    return Recorder(interval, _Accumulator())


class Recorder:
    """The checkpoints of one location, from its events fed in batches of any size
    (``native``: `SegmentIndex`'s)."""

    def __init__(self, interval: int, accumulator: Any, native: bool | None = None) -> None:
        self.interval = interval
        self.accumulator = accumulator
        self.segments = SegmentIndex(native)
        self.result: list[Checkpoint] = []
        self.index = 0
        self.end_time: int | None = None

    def _checkpoint(self, time: int) -> Checkpoint:
        return Checkpoint(self.index, time, *self.accumulator.snapshot(time), *self.segments.checkpoint())

    def add(self, batch: EventBatch) -> None:
        interval, position, size = self.interval, 0, len(batch)
        while position < size:
            if self.index and self.index % interval == 0:
                self.result.append(self._checkpoint(int(batch.time[position])))
            take = min(size - position, interval - self.index % interval)
            part = batch[position:position + take]
            self.accumulator.add(part)
            self.segments.add(part)
            position += take
            self.index += take
        if size:
            self.end_time = int(batch.time[-1])

    def record(self, batches: Iterable[EventBatch]) -> Recorder:
        for batch in batches:
            self.add(batch)
        return self

    def finish(self, start: int) -> list[Checkpoint]:
        """Every checkpoint, the last at the end (``start`` for a location without events)."""
        self.result.append(self._checkpoint(start if self.end_time is None else self.end_time))
        return self.result
