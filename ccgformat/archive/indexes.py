"""Snapshot and summary indexes: per location, the state and cumulative statistics at
every K-th event, like OTF snapshots and statistics, so that a reader can start mid-trace
and the statistics of any window need only the events of its two end segments.

A checkpoint at event index k describes everything before event k: events ``[0, k)`` and
time ``[start, T)``, where T is the timestamp of event k (the location's end time for the
final checkpoint at k = count). Calls still open at T count with the part before T.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import backends
from ..model import EventKind


class Walker(Protocol):
    """What a checkpoint pass needs of a location: `LocationWalker` or `NativeWalker`."""

    start: int

    def __len__(self) -> int: ...

    def events(self) -> Any: ...

_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)


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

    def snapshot_json(self) -> dict[str, Any]:
        return {"index": self.index, "time": self.time, "stack": self.stack, "metrics": self.metrics}

    def summary_json(self) -> dict[str, Any]:
        return {"index": self.index, "time": self.time, "regions": self.regions,
                "messages": self.messages, "collectives": self.collectives}


class _Accumulator:
    def __init__(self) -> None:
        self.stack: list[list[int]] = []    # [region, enter time, child time]
        self.calls: dict[int, list[int]] = {}  # region -> [calls, inclusive, exclusive]
        self.metrics: dict[int, int] = {}
        self.messages = [0, 0, 0, 0]
        self.collectives = [0, 0, 0]

    def add(self, time: int, kind: int, ref: int, size: int, recv_size: int, value: int) -> None:
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

    def checkpoint(self, index: int, time: int) -> Checkpoint:
        """The state so far, with open calls counted up to ``time``."""
        calls = {region: list(entry) for region, entry in self.calls.items()}
        for region, enter, child_time in self.stack:
            calls[region][1] += time - enter
            calls[region][2] += time - enter - child_time
        # an open call's exclusive part also excludes its open callee's elapsed time
        for (region, _, _), (_, callee_enter, _) in zip(self.stack, self.stack[1:]):
            calls[region][2] -= time - callee_enter
        return Checkpoint(index, time, [[r, t] for r, t, _ in self.stack],
                          [[m, v] for m, v in sorted(self.metrics.items())],
                          [[r, *calls[r]] for r in sorted(calls)], list(self.messages), list(self.collectives))


def checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """Walk one location and record a checkpoint every ``interval`` events and at its end
    (in C with the native backend, else by `reference_checkpoints`)."""
    if backends.native():
        return native_checkpoints(walker, interval)
    return reference_checkpoints(walker, interval)


def native_checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """`reference_checkpoints` with the per-event work in C: the native walk when the
    walker has one (`ccgformat._native.walk.native_walker`), a C accumulator over its
    batches in any case."""
    from .._native.walk import Checkpointer, native_walker

    accumulator = Checkpointer()
    result: list[Checkpoint] = []
    index = 0
    end_time = walker.start

    def checkpoint(time: int) -> Checkpoint:
        return Checkpoint(index, time, *accumulator.snapshot(time))

    for batch in native_walker(walker).events():
        position, size = 0, len(batch)
        while position < size:
            if index and index % interval == 0:
                result.append(checkpoint(int(batch.time[position])))
            take = min(size - position, interval - index % interval)
            accumulator.add(batch[position:position + take])
            position += take
            index += take
        if size:
            end_time = int(batch.time[-1])
    result.append(checkpoint(end_time))
    return result


def reference_checkpoints(walker: Walker, interval: int) -> list[Checkpoint]:
    """The reference: every event through `_Accumulator`, one Python call each."""
    count = len(walker)
    result: list[Checkpoint] = []
    accumulator = _Accumulator()
    index = 0
    end_time = walker.start
    for batch in walker.events():
        columns = zip(batch.time.tolist(), batch.kind.tolist(), batch.ref.tolist(), batch.size.tolist(),
                      batch.recv_size.tolist(), batch.value.tolist())
        for time, kind, ref, size, recv_size, value in columns:
            if index and index % interval == 0:
                result.append(accumulator.checkpoint(index, time))
            accumulator.add(time, kind, ref, size, recv_size, value)
            index += 1
            end_time = time
    result.append(accumulator.checkpoint(count, end_time))
    return result
