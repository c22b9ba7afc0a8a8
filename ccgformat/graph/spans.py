"""Sequential reading in bulk: a location's events as columnar batches, expanding each
shared sub-tree once.

A sub-tree's events, with times relative to its start, are the same wherever the
sub-tree is referenced: that is what the compression shares (dissertation 3.2, and the
reuse of results for shared sub-trees in 4.5). `SpanReader` expands every sub-tree of
at most `SPAN_EVENTS` events once into a *span* - a (9, events) int64 array of relative
time, kind and the seven columns, METRIC values still as differences - and copies the
span wherever the sub-tree occurs. Larger sub-trees are descended into. A batch is the
concatenation of the spans it covers, shifted by their start times; METRIC differences
are summed into values per metric at the end (3.2.1).

This is the fast path of `LocationWalker.events`; the `Cursor` walk is its reference.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..model import COLUMNS, KIND_FIELDS, EventBatch, EventKind
from .pool import NodeKind, NodePool
from ..ordering import sorted_distinct

#: Sub-trees of at most this many events are expanded once and reused.
SPAN_EVENTS = 4096
#: When the cached spans hold more events than this (72 bytes each), the cache starts over.
SPAN_CACHE_EVENTS = 1 << 19

_ROWS = ("time", "kind") + COLUMNS
_ROW = {name: i for i, name in enumerate(_ROWS)}
_ATOMIC = NodeKind.ARTIFICIAL + 1
#: Per atomic kind, the rows of its hard and of its soft properties.
_LAYOUT = {kind: (tuple(_ROW[c] for c in f.hard), tuple(_ROW[c] for c in f.soft))
           for kind, f in KIND_FIELDS.items()}


class SpanReader:
    """Reads ranges of one location's events from a node pool, reusing expanded sub-trees."""

    def __init__(self, pool: NodePool, root: int, start: int, *, span_events: int = SPAN_EVENTS,
                 cache_events: int = SPAN_CACHE_EVENTS):
        self.pool = pool
        self.root = root
        self.start = start
        self.span_events = span_events
        self.cache_events = cache_events
        self._spans: dict[int, np.ndarray] = {}
        self._cached = 0

    def batches(self, first: int, stop: int, metrics: dict[int, int], batch_size: int) -> Iterator[EventBatch]:
        """Events ``first <= i < stop`` in batches of ``batch_size``; ``metrics`` holds the
        value of every metric before event ``first`` (as a `Cursor` has it)."""
        state = {metric: np.uint64(value % (1 << 64)) for metric, value in metrics.items()}
        pieces: list[tuple[int, np.ndarray]] = []
        held = 0
        for piece in self._pieces(self.root, self.start, first, stop):
            pieces.append(piece)
            held += piece[1].shape[1]
            while held >= batch_size:
                block = _assemble(pieces)
                yield _batch(block[:, :batch_size], state)
                rest = block[:, batch_size:]
                pieces = [(0, rest)] if rest.shape[1] else []
                held = rest.shape[1]
        if held:
            yield _batch(_assemble(pieces), state)

    def _pieces(self, node: int, time: int, lo: int, hi: int) -> Iterator[tuple[int, np.ndarray]]:
        """(start time, relative span) pieces covering events ``lo <= i < hi`` of ``node``."""
        pool = self.pool
        events = pool.events[node]
        if events <= self.span_events:
            span = self.span(node)
            yield time, span if lo == 0 and hi == events else span[:, lo:hi]
            return
        kind = pool.kind[node]
        index = 0
        if kind == NodeKind.CALL:
            if lo == 0:
                yield time, _call_event(EventKind.ENTER, pool.key[node][0], 0)
            index = 1
        d = pool.durations[node]
        child_time = time + d[0]
        for j, (child, child_events) in enumerate(zip(pool.children[node], pool.child_events[node])):
            if index >= hi:
                return
            if index + child_events > lo:
                yield from self._pieces(child, child_time, max(lo - index, 0), min(hi - index, child_events))
            index += child_events
            child_time += d[2 * j + 1] + d[2 * j + 2]
        if kind == NodeKind.CALL and hi == events:
            yield time, _call_event(EventKind.LEAVE, pool.key[node][0], pool.total[node])

    def span(self, node: int) -> np.ndarray:
        """The events of ``node``'s sub-tree, times relative to its start (cached)."""
        span = self._spans.get(node)
        if span is not None:
            return span
        pool = self.pool
        kind = pool.kind[node]
        if kind >= _ATOMIC:
            span = np.zeros((len(_ROWS), 1), dtype=np.int64)
            span[1, 0] = kind
            hard, soft = _LAYOUT[EventKind(kind)]
            for row, value in zip(hard, pool.key[node]):
                span[row, 0] = value
            for row, value in zip(soft, pool.soft[node]):
                span[row, 0] = value
        else:
            d = pool.durations[node]
            pieces = []
            if kind == NodeKind.CALL:
                pieces.append((0, _call_event(EventKind.ENTER, pool.key[node][0], 0)))
            child_time = d[0]
            for j, child in enumerate(pool.children[node]):
                pieces.append((child_time, self.span(child)))
                child_time += d[2 * j + 1] + d[2 * j + 2]
            if kind == NodeKind.CALL:
                pieces.append((0, _call_event(EventKind.LEAVE, pool.key[node][0], pool.total[node])))
            span = _assemble(pieces) if pieces else np.zeros((len(_ROWS), 0), dtype=np.int64)
        if self._cached + span.shape[1] > self.cache_events:
            self._spans.clear()
            self._cached = 0
        self._spans[node] = span
        self._cached += span.shape[1]
        return span


def _call_event(kind: EventKind, region: int, time: int) -> np.ndarray:
    event = np.zeros((len(_ROWS), 1), dtype=np.int64)
    event[0, 0], event[1, 0], event[2, 0] = time, kind, region
    return event


def _assemble(pieces: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Concatenate spans, each shifted by its start time."""
    if len(pieces) == 1 and pieces[0][0] == 0:
        return pieces[0][1]
    block = np.concatenate([span for _, span in pieces], axis=1)
    lengths = [span.shape[1] for _, span in pieces]
    block[0] += np.repeat(np.array([start for start, _ in pieces], dtype=np.int64), lengths)
    return block


def _batch(block: np.ndarray, state: dict[int, np.uint64]) -> EventBatch:
    """A batch (owning its arrays: blocks may share cached spans) from a block of
    absolute-time rows; METRIC differences become values."""
    block = block.copy()
    value = block[_ROW["value"]]
    samples = block[1] == EventKind.METRIC
    if samples.any():
        metric_of = block[_ROW["ref"]]
        for metric in sorted_distinct(metric_of[samples]).tolist():
            chosen = samples & (metric_of == metric)
            running = np.cumsum(value[chosen].view(np.uint64), dtype=np.uint64) + state.get(metric, np.uint64(0))
            value[chosen] = running.view(np.int64)
            state[metric] = running[-1]
    columns = {name: block[_ROW[name]] for name in COLUMNS}
    columns["value"] = value
    return EventBatch.from_columns(block[0], block[1], **columns)
