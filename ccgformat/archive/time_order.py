"""Merging per-location event batches into one stream in global time order.

Ties are broken by location, then by position within the location. Every stream holds
one buffered batch (the events of it not emitted yet); the *horizon* is the smallest
last-buffered time of the streams that may have more batches: no later batch of any
location holds an event before it, so every buffered event earlier than it can go out.
Two heaps keep this in O(N log L) for N events of L locations: the streams holding
events by their first one (a round takes from those earlier than the horizon, at most
one slice each, sorted together in one numpy call) and the streams that may have more by
their last buffered time (a round refills those at the horizon). A stream that says how
many events it holds is known to be finished with its last batch, so locations of a
single batch never hold the horizon back; those are joined into one stream at once.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

import numpy as np

from ..model import COLUMNS, EventBatch

_NAMES = ("time", "kind") + COLUMNS


class _Stream:
    """One location's batches with the not yet emitted part (from ``cursor``) of the
    buffered events ``held``; ``location`` is the location, or the array of each held
    event's location for the stream of the locations read whole (`_Whole`)."""

    __slots__ = ("location", "batches", "remaining", "held", "cursor")

    def __init__(self, location: int | np.ndarray, batches: Iterable[EventBatch], remaining: int | None):
        self.location = location
        self.batches = iter(batches)
        self.remaining = remaining  #: events still to come, None when not known
        self.held = EventBatch.empty()
        self.cursor = 0

    @property
    def finished(self) -> bool:
        """No batch is left to read."""
        return self.remaining == 0

    def refill(self) -> bool:
        """Append the next non-empty batch to the events not emitted; False (and finished)
        when there is none."""
        if not self.finished:
            for batch in self.batches:
                if len(batch):
                    rest = self.held[self.cursor:]
                    self.held = EventBatch.concat([rest, batch]) if len(rest) else batch
                    self.cursor = 0
                    if self.remaining is not None:
                        self.remaining = max(0, self.remaining - len(batch))
                        if self.finished:
                            self._release()
                    return True
        self.remaining = 0
        self._release()
        return False

    def _release(self) -> None:
        """Let go of the batches' source (a location's walk and its buffers) once read."""
        self.batches = iter(())


class _Whole:
    """The locations read whole with their first batch (most of them, in a trace of many
    small locations), joined into one finished stream sorted by (time, location): the
    merge then holds a few arrays for them instead of a batch and a walk each. Joined
    every `JOIN` locations, so that their batches are let go of as the reading goes."""

    JOIN = 1024

    def __init__(self) -> None:
        self.pending: list[tuple[int, EventBatch]] = []
        self.parts: list[tuple[np.ndarray, EventBatch]] = []

    def add(self, location: int, batch: EventBatch) -> None:
        self.pending.append((location, batch))
        if len(self.pending) >= self.JOIN:
            self._join()

    def _join(self) -> None:
        if self.pending:
            self.parts.append(_ordered([(location, batch, 0, len(batch)) for location, batch in self.pending]))
            self.pending = []

    def stream(self) -> _Stream:
        self._join()
        locations, batch = _joined(self.parts)
        self.parts = []  # the sorted copy below replaces them
        order = np.lexsort((np.arange(len(locations)), locations, batch.time))
        stream = _Stream(locations[order], (), 0)
        stream.held = EventBatch(**{name: getattr(batch, name)[order] for name in _NAMES})
        return stream


def merge_by_time(streams: Iterable[tuple[int, Iterable[EventBatch]] | tuple[int, Iterable[EventBatch], int]],
                  batch_size: int, joined: Iterable[tuple[np.ndarray, EventBatch]] = ()
                  ) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """Batches of at most ``batch_size`` events of all streams in (time, location, position)
    order, each paired with the array of its events' locations. A stream is (location,
    batches) or (location, batches, the number of events they hold); ``joined`` are
    parts holding the whole events of other locations (each location's in one part, in
    its order) with each event's location."""
    ready: list[tuple[int, int, _Stream]] = []    # (first held time, order, stream)
    waiting: list[tuple[int, int, _Stream]] = []  # (last held time, order, stream) of unfinished ones
    whole = _Whole()
    whole.parts.extend(part for part in joined if len(part[0]))
    joined = ()  # held by the whole stream alone
    for order, (location, batches, *count) in enumerate(streams):
        stream = _Stream(location, batches, count[0] if count else None)
        if not stream.refill():
            continue
        if stream.finished:
            whole.add(location, stream.held)
            continue
        ready.append((int(stream.held.time[0]), order, stream))
        waiting.append((int(stream.held.time[-1]), order, stream))
    if whole.parts or whole.pending:
        stream = whole.stream()
        ready.append((int(stream.held.time[0]), -1, stream))
    heapq.heapify(ready)
    heapq.heapify(waiting)
    pending: list[tuple[np.ndarray, EventBatch]] = []
    held = 0
    while ready or waiting:
        horizon = waiting[0][0] if waiting else None
        pieces = []
        while ready and (horizon is None or ready[0][0] < horizon):
            _, order, stream = heapq.heappop(ready)
            times = stream.held.time
            cut = len(times) if horizon is None else int(np.searchsorted(times, horizon, side="left"))
            pieces.append((stream.location, stream.held, stream.cursor, cut))
            stream.cursor = cut
            if cut < len(times):
                heapq.heappush(ready, (int(times[cut]), order, stream))
        if pieces:
            pending.append(_ordered(pieces))
            held += len(pending[-1][0])
        while waiting and waiting[0][0] == horizon:
            _, order, stream = heapq.heappop(waiting)
            emptied = stream.cursor == len(stream.held)
            if stream.refill():
                if emptied:
                    heapq.heappush(ready, (int(stream.held.time[0]), order, stream))
                if not stream.finished:
                    heapq.heappush(waiting, (int(stream.held.time[-1]), order, stream))
        while held >= batch_size:
            locations, batch = _joined(pending)
            yield locations[:batch_size], batch[:batch_size]
            held -= batch_size
            pending = [(locations[batch_size:], batch[batch_size:])] if held else []
    if held:
        yield _joined(pending)


def _ordered(pieces: list[tuple[int | np.ndarray, EventBatch, int, int]]) -> tuple[np.ndarray, EventBatch]:
    """The events ``batch[start:stop]`` of several streams (one piece each), sorted by
    time, then location, then position."""
    locations = np.concatenate([np.full(stop - start, location, np.int64) if np.ndim(location) == 0
                                else location[start:stop] for location, _, start, stop in pieces])
    columns = {name: np.concatenate([getattr(batch, name)[start:stop] for _, batch, start, stop in pieces])
               for name in _NAMES}
    order = np.lexsort((np.arange(len(locations)), locations, columns["time"]))
    return locations[order], EventBatch(**{name: column[order] for name, column in columns.items()})


def _joined(parts: list[tuple[np.ndarray, EventBatch]]) -> tuple[np.ndarray, EventBatch]:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([locations for locations, _ in parts]), EventBatch.concat([batch for _, batch in parts])
