"""Merging per-location event batches into one stream in global time order.

Ties are broken by location, then by position within the location. The merge holds one
buffered batch per location and emits, in bulk, every buffered event earlier than the
*horizon*: the smallest last-buffered time of the locations not yet exhausted (no later
batch of any location can hold an event before it).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from ..model import COLUMNS, EventBatch

_NAMES = ("time", "kind") + COLUMNS


class _Stream:
    """One location's batches with the not yet emitted part of the current one."""

    def __init__(self, location: int, batches: Iterable[EventBatch]):
        self.location = location
        self.batches = iter(batches)
        self.held = EventBatch.empty()
        self.done = False

    def refill(self) -> None:
        """Append the next non-empty batch, or mark the stream done."""
        for batch in self.batches:
            if len(batch):
                self.held = EventBatch.concat([self.held, batch]) if len(self.held) else batch
                return
        self.done = True

    def take_before(self, horizon: int | None) -> EventBatch:
        """Remove and return the held events earlier than ``horizon`` (all if None)."""
        cut = len(self.held) if horizon is None else int(np.searchsorted(self.held.time, horizon, side="left"))
        taken, self.held = self.held[:cut], self.held[cut:]
        return taken


def merge_by_time(streams: Iterable[tuple[int, Iterable[EventBatch]]],
                  batch_size: int) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """Batches of at most ``batch_size`` events of all streams in (time, location, position)
    order, each paired with the array of its events' locations."""
    active = [_Stream(location, batches) for location, batches in streams]
    for stream in active:
        stream.refill()
    pending: list[tuple[np.ndarray, EventBatch]] = []
    held = 0
    while True:
        active = [s for s in active if len(s.held) or not s.done]
        if not active:
            break
        open_streams = [s for s in active if not s.done]
        horizon = min(int(s.held.time[-1]) for s in open_streams) if open_streams else None
        taken = [(s.location, s.take_before(horizon)) for s in active]
        taken = [(location, batch) for location, batch in taken if len(batch)]
        if taken:
            pending.append(_ordered(taken))
            held += len(pending[-1][1])
        for stream in open_streams:
            if not len(stream.held) or int(stream.held.time[-1]) == horizon:
                stream.refill()
        while held >= batch_size:
            locations, batch = _joined(pending)
            yield locations[:batch_size], batch[:batch_size]
            held -= batch_size
            pending = [(locations[batch_size:], batch[batch_size:])] if held else []
    if held:
        yield _joined(pending)


def _ordered(taken: list[tuple[int, EventBatch]]) -> tuple[np.ndarray, EventBatch]:
    """The events of several locations, sorted by time, then location, then position."""
    locations = np.concatenate([np.full(len(batch), location, dtype=np.int64) for location, batch in taken])
    batch = EventBatch.concat([batch for _, batch in taken])
    order = np.lexsort((np.arange(len(batch)), locations, batch.time))
    return locations[order], EventBatch(**{name: getattr(batch, name)[order] for name in _NAMES})


def _joined(parts: list[tuple[np.ndarray, EventBatch]]) -> tuple[np.ndarray, EventBatch]:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([locations for locations, _ in parts]), EventBatch.concat([batch for _, batch in parts])
