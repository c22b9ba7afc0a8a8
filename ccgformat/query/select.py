"""Partial decompression: the events of chosen kinds of many locations, and only those.

Sub-trees without such an event are never entered (`NodeTables.containing`), nor, with a
time window, sub-trees that lie wholly outside it; the rest are descended a level at a
time for all frontier nodes of all locations at once, carrying each node's start time
(Lemma 1) and the index of its first event, so the result comes out in (location, event)
order. This is what the matching of 4.5.5 and the message sums of a profile need instead
of a full iteration: the cost follows the selected events and the nodes above them, with
a constant number of numpy calls per tree level whatever the number of locations.
"""

from __future__ import annotations

import numpy as np

from ..graph.pool import NodeKind
from .tables import NodeTables


def select_many(t: NodeTables, roots: np.ndarray, starts: np.ndarray, kinds: tuple[int, ...],
                lo: np.ndarray | None = None, hi: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(tag, index, time, node) of every atomic event of ``kinds`` below ``roots[tag]``
    (which begins at ``starts[tag]``), with ``lo[tag] <= time < hi[tag]`` when bounds are
    given; sorted by tag, then by the event's index in its location."""
    wanted = t.containing(kinds)
    nodes = np.asarray(roots, np.int64)
    times = np.asarray(starts, np.int64)
    tags = np.arange(len(nodes), dtype=np.int64)
    index = np.zeros(len(nodes), np.int64)
    found: list[tuple[np.ndarray, ...]] = []
    while len(nodes):
        keep = wanted[nodes]
        if lo is not None and hi is not None:  # every event of a sub-tree lies in [time, time + total]
            keep &= (times + t.total[nodes] >= lo[tags]) & (times < hi[tags])
        nodes, times, index, tags = nodes[keep], times[keep], index[keep], tags[keep]
        atomic = t.kind[nodes] > NodeKind.ARTIFICIAL
        if atomic.any():
            found.append((tags[atomic], index[atomic], times[atomic], nodes[atomic]))
        nodes, times, index, tags = nodes[~atomic], times[~atomic], index[~atomic], tags[~atomic]
        kids, owner, offset = t.child_offsets(nodes)
        # events before a child: its parent's ENTER (calls) and its earlier siblings' events
        counts = t.child_count[nodes]
        before = np.cumsum(t.events[kids]) - t.events[kids]
        first = np.repeat(np.cumsum(counts) - counts, counts)
        if len(kids):
            before -= before[first]
        own = (t.kind[nodes] == NodeKind.CALL).astype(np.int64)
        nodes, times, index, tags = kids, times[owner] + offset, index[owner] + own[owner] + before, tags[owner]
    if not found:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    tags, index, times, nodes = (np.concatenate(parts) for parts in zip(*found))
    if lo is not None and hi is not None:
        inside = (times >= lo[tags]) & (times < hi[tags])
        tags, index, times, nodes = tags[inside], index[inside], times[inside], nodes[inside]
    order = np.lexsort((index, tags))
    return tags[order], index[order], times[order], nodes[order]


def select_events(t: NodeTables, root: int, start: int, kinds: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(time, node) of every atomic event of ``kinds`` below ``root``, in event order."""
    _, _, times, nodes = select_many(t, np.array([root], np.int64), np.array([start], np.int64), kinds)
    return times, nodes
