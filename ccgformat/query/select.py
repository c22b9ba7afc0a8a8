"""Partial decompression: the events of chosen kinds of one location, and only those.

Sub-trees without such an event are never entered (`NodeTables.containing`); the rest
are descended a level at a time for all frontier nodes at once, carrying each node's
start time (Lemma 1) and the index of its first event, so the result comes out in the
location's event order. This is what the matching of 4.5.5 needs instead of a full
iteration: its cost follows the selected events and the nodes above them.
"""

from __future__ import annotations

import numpy as np

from ..graph.pool import NodeKind
from .tables import NodeTables


def select_events(t: NodeTables, root: int, start: int, kinds: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(time, node) of every atomic event of ``kinds`` below ``root``, in event order."""
    wanted = t.containing(kinds)
    nodes = np.array([root], np.int64)
    times = np.array([start], np.int64)
    index = np.zeros(1, np.int64)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    while len(nodes):
        keep = wanted[nodes]
        nodes, times, index = nodes[keep], times[keep], index[keep]
        atomic = t.kind[nodes] > NodeKind.ARTIFICIAL
        if atomic.any():
            found.append((index[atomic], times[atomic], nodes[atomic]))
        nodes, times, index = nodes[~atomic], times[~atomic], index[~atomic]
        kids, owner, offset = t.child_offsets(nodes)
        # events before a child: its parent's ENTER (calls) and its earlier siblings' events
        counts = t.child_count[nodes]
        before = np.cumsum(t.events[kids]) - t.events[kids]
        first = np.repeat(np.cumsum(counts) - counts, counts)
        if len(kids):
            before -= before[first]
        own = (t.kind[nodes] == NodeKind.CALL).astype(np.int64)
        nodes, times, index = kids, times[owner] + offset, index[owner] + own[owner] + before
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    index, times, nodes = (np.concatenate(parts) for parts in zip(*found))
    order = np.argsort(index, kind="stable")
    return times[order], nodes[order]
