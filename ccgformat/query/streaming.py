"""When a query walks events in batches instead of reading columns over every node.

The node tables (`tables.tables_for`) answer every node at once and reuse the results of
shared sub-trees (dissertation 4.5.3), at a few hundred bytes per node: a large graph's
tables take gigabytes. Such a graph's aggregation levels, microscopic model and timeline
by location walk its events instead (`slice_stream`), and so does its call tree
(`calltree_stream`), in memory set by their answer; so does message matching
(`messages_events`), its walks running ahead in a thread of their own
(`ahead.read_ahead_each`). `ahead.read_ahead` is re-exported here for the other walks.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..ahead import read_ahead
from ..model import EventBatch

__all__ = ["STREAM_LOCATIONS", "STREAM_NODES", "WALK_BATCH", "kept_events", "read_ahead", "streamed", "streams",
           "window_events"]

#: A graph is large from this many nodes (the tables: about 300 MB per 10^6 nodes) ...
STREAM_NODES = 1 << 18
#: ... when it has at most this many locations, each walked by a walker of its own
#: (beyond, the node tables' walk is faster)
STREAM_LOCATIONS = 4096
#: events per batch of such a walk: its working columns (about 200 bytes an event) are
#: what the walk holds beside its answer
WALK_BATCH = 65536


def streams(source: Any) -> bool:
    """Whether the queries of a `Graph` or `Archive` walk its events in batches."""
    return streamed(len(source.pool), len(source.roots))


def streamed(nodes: int, locations: int) -> bool:
    """Whether the queries of a graph of ``nodes`` nodes and ``locations`` locations walk
    its events in batches (`streams`)."""
    return nodes >= STREAM_NODES and locations <= STREAM_LOCATIONS


def kept_events(source: Any, location: int, kinds: tuple[int, ...],
                batch_size: int | None = None) -> Iterator[tuple[EventBatch, np.ndarray]]:
    """Each batch of ``location``'s events (``batch_size`` at a time, default `WALK_BATCH`)
    that holds events of ``kinds``, with their indexes in it."""
    wanted = np.zeros(256, bool)
    wanted[list(kinds)] = True
    for batch in source.location(location).events(batch_size=batch_size or WALK_BATCH):
        keep = np.flatnonzero(wanted[batch.kind])
        if len(keep):
            yield batch, keep


def window_events(walker: Any, start: int | None, stop: int | None) -> tuple[list[int], Iterator[EventBatch]]:
    """A location's window ``[start, stop)`` (``None``: open-ended) entered with a time
    search (4.5.2): the regions open just before ``start`` (entered before it and left at
    or after it; outermost first), and the batches (`WALK_BATCH` events) of the events at
    or after ``start`` and before ``stop``."""
    first = 0 if start is None else walker.find(start)
    last = len(walker) if stop is None else walker.find(stop)
    stack = [] if start is None else walker.call_stack(start - 1)
    return stack, walker.events(first, last, batch_size=WALK_BATCH)
