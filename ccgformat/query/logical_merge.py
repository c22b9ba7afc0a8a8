"""The walked events of `logical_walk` in the stream order of message matching - by time,
then location, then position - as they are walked, for the streamed logical time
(`logical_stream`): memory holds a few batches per location, not the trace's events.

Locations of at most `WALK_BATCH` events are walked whole first (many at once, as
`logical_walk` does) and sorted once. Longer ones are walked a batch at a time, always
the one whose walk is furthest behind in time next, each with a `Calls` of its own. An
event leaves once every location still walking is past its time: its own held events
(waiting for their call's LEAVE) and its walk. The block cache is held to `WALK_CACHE` meanwhile. Times rise along a location (as OTF2
requires); an archive whose times fall along one is refused (`TraceError`).
"""

from __future__ import annotations

import heapq
from typing import Any, Iterator

import numpy as np

from ..errors import TraceError
from ..graph.graph import chosen_roots
from ..model import EventBatch
from .logical_walk import EVENT_COLUMNS, Calls, small_chunks
from .streaming import WALK_BATCH, read_ahead

__all__ = ["merged_events"]

Part = dict[str, np.ndarray]
#: the archive's block cache while the long locations are walked side by side, a batch of
#: each in turn: it must keep, from one batch of a location to its next, the blocks of its
#: tree's top levels and the one it stopped in, while the others walk theirs. 16 long
#: locations (10 M and 100 M events) decode each block once from about 176 MiB; at 128
#: MiB, 2.2 times (the walk's thread decoding 1.2 s more at 10 M events, 20 s at 100 M),
#: 512 MiB holds more memory for nothing
WALK_CACHE = 192 << 20


def merged_events(source: Any, kinds: tuple[int, ...], window: int) -> Iterator[Part]:
    """The events of ``kinds`` of every location with their calls (`logical_walk` columns),
    in parts of ``window`` events (but the last), in stream order."""
    return _windows(_merged(source, kinds, window), window)


def _merged(source: Any, kinds: tuple[int, ...], window: int) -> Iterator[Part]:
    """`merged_events` in parts of any length."""
    chosen = chosen_roots(source)
    counts = chosen.events.tolist()
    small = [(location, count) for location, count in zip(chosen.locations, counts) if count <= WALK_BATCH]
    long = [location for location, count in zip(chosen.locations, counts) if count > WALK_BATCH]
    wanted = np.array(kinds, np.uint8)
    whole = Calls(wanted)
    for owner, batch in read_ahead(small_chunks(source, small)):
        whole.add(owner, batch)
    found = whole.finish()
    rest = {name: getattr(found, name) for name in EVENT_COLUMNS} | found.matching
    order = np.lexsort((rest["index"], rest["location"], rest["time"]))
    rest = {name: column[order] for name, column in rest.items()}
    merge = _Merge(rest, {location: Calls(wanted) for location in long})
    pool = source.pool
    held = getattr(pool, "cache_limit", None)
    if hasattr(pool, "cache_limit"):
        pool.cache_limit = WALK_CACHE
    try:
        for location, batch in read_ahead(_lagging(source, long)):
            merge.add(location, batch)
            if merge.waiting >= window:
                yield from merge.flush()
    finally:
        if hasattr(pool, "cache_limit"):
            pool.cache_limit = held
    yield from merge.flush(last=True)


def _windows(parts: Iterator[Part], window: int) -> Iterator[Part]:
    """``parts`` joined and cut into parts of ``window`` events (but the last)."""
    held: list[Part] = []
    count = 0
    for part in parts:
        held.append(part)
        count += len(part["time"])
        if count >= window:
            joined = _joined(held)
            cut = count - count % window
            for first in range(0, cut, window):
                yield {name: column[first:first + window] for name, column in joined.items()}
            held = [{name: column[cut:] for name, column in joined.items()}]
            count -= cut
    if count:
        yield _joined(held)


def _lagging(source: Any, locations: list[int]) -> Iterator[tuple[int, EventBatch | None]]:
    """(location, batch) of these locations, always of the one walked least far in time;
    (location, None) when a location ends."""
    walkers = {location: iter(source.location(location).events(batch_size=WALK_BATCH)) for location in locations}
    behind = [(-(1 << 63), location) for location in locations]
    while behind:
        _, location = heapq.heappop(behind)
        batch = next(walkers[location], None)
        if batch is None or not len(batch):
            del walkers[location]
            yield location, None
            continue
        yield location, batch
        heapq.heappush(behind, (int(batch.time[-1]), location))


class _Merge:
    """The events found and not yet handed out: those of the small locations (``rest``, in
    stream order) and per long location its parts ready in order; per long location still
    walking, the time before which it has nothing more to give."""

    def __init__(self, rest: Part, calls: dict[int, Calls]):
        self.rest = rest
        self.calls = calls
        self.ready: dict[int, list[Part]] = {location: [] for location in calls}
        #: per location still walking, the time it has walked to
        self.walked: dict[int, int] = {location: -(1 << 63) for location in calls}
        self.waiting = 0

    def add(self, location: int, batch: EventBatch | None) -> None:
        calls = self.calls[location]
        if batch is None:
            calls.waiting = []  # calls still open at the location's end hold their events to it
            self.walked.pop(location, None)
        else:
            if int(batch.time[0]) < self.walked[location] or np.any(batch.time[1:] < batch.time[:-1]):
                raise TraceError("the times of this location fall: logical time streams events in time order",
                                 location=location)
            self.walked[location] = int(batch.time[-1])
            calls.add(np.full(len(batch), location, np.int64), batch)
        parts = calls.ready()
        self.ready[location] += parts
        self.waiting += sum(len(part["time"]) for part in parts)

    def _bound(self) -> float:
        """Events before this time can go: no walk will find another one before it."""
        bound = float("inf")
        for location, walked in self.walked.items():
            held = self.calls[location].held_from()
            bound = min(bound, walked if held is None else min(held, walked))
        return bound

    def flush(self, last: bool = False) -> Iterator[Part]:
        """The events that can go, in stream order."""
        bound = float("inf") if last else self._bound()
        out: list[Part] = []
        for location, parts in self.ready.items():
            if not parts:
                continue
            joined = _joined(parts)
            cut = int(np.searchsorted(joined["time"], bound)) if bound != float("inf") else len(joined["time"])
            out.append({name: column[:cut] for name, column in joined.items()})
            self.ready[location] = [{name: column[cut:] for name, column in joined.items()}] if cut < len(
                joined["time"]) else []
        cut = int(np.searchsorted(self.rest["time"], bound)) if bound != float("inf") else len(self.rest["time"])
        out.append({name: column[:cut] for name, column in self.rest.items()})
        self.rest = {name: column[cut:] for name, column in self.rest.items()}
        events = _joined(out)
        self.waiting -= len(events["time"]) - (len(out[-1]["time"]))
        if len(events["time"]):
            order = np.lexsort((events["index"], events["location"], events["time"]))
            yield {name: column[order] for name, column in events.items()}


def _joined(parts: list[Part]) -> Part:
    if len(parts) == 1:
        return parts[0]
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
