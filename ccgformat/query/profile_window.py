"""A profile window on the graph (4.5.3): the descent from the location roots that finds
the calls cut by the window's bounds and the sub-trees wholly inside it, and the sums of
what it found. The numpy functions are the references of their C versions
(ccgformat/_native/window.c), which the native backend runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..graph.pool import NodeKind
from .profile_totals import NO_SHORTEST
from .tables import NodeTables

if TYPE_CHECKING:
    from .profile_engine import ProfileEngine

#: The bounds of an open-ended window.
NO_START = -(1 << 63)
NO_STOP = (1 << 63) - 1


def descend(t: NodeTables, root: np.ndarray, begin: np.ndarray, start: np.ndarray,
            stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The descent of window ``[start[i], stop[i])`` from ``root[i]`` (beginning at
    ``begin[i]``) for every tag i at once, one level at a time (4.5.3): a node is live when
    it ends at or after the start and begins before the stop; a live node inside the
    window is a seed, any other live one is cut and its children visited. Returns the
    cut calls as rows (tag, region, enclosing region or -1, enter, leave) and the seeds
    as rows (node, tag, depth, enclosing region or -1)."""
    nodes, times = root.astype(np.int64), begin.astype(np.int64)
    tags = np.arange(len(root), dtype=np.int64)
    enclosing = np.full(len(root), -1, np.int64)
    depth = 0
    cuts: list[np.ndarray] = [np.zeros((0, 5), np.int64)]
    seeds: list[np.ndarray] = [np.zeros((0, 4), np.int64)]
    while len(nodes):
        end = times + t.total[nodes]
        lo, hi = start[tags], stop[tags]
        live = (end >= lo) & (times < hi)
        inside = live & (times >= lo) & (end < hi)
        seeds.append(np.column_stack((nodes[inside], tags[inside], np.full(int(inside.sum()), depth),
                                      enclosing[inside])))
        cut = live & ~inside
        nodes, times, end, tags, enclosing = nodes[cut], times[cut], end[cut], tags[cut], enclosing[cut]
        call = t.kind[nodes] == NodeKind.CALL
        cuts.append(np.column_stack((tags[call], t.key0[nodes[call]], enclosing[call], times[call], end[call])))
        enclosing = np.where(call, t.key0[nodes], enclosing)
        kids, owner, offset = t.child_offsets(nodes)
        nodes, times, tags, enclosing = kids, times[owner] + offset, tags[owner], enclosing[owner]
        depth += 1
    return np.concatenate(cuts), np.concatenate(seeds)


def native_descend(t: NodeTables, root: np.ndarray, begin: np.ndarray, start: np.ndarray,
                   stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`descend` in C (ccgformat/_native/window.c): depth first per tag, the same rows in
    another order."""
    from .._native.window import window_descend
    return window_descend(t, root, begin, start, stop)


def window_sums(engine: ProfileEngine, cuts: np.ndarray, seeds: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                keep_before: np.ndarray, reach: int) -> tuple[np.ndarray, ...]:
    """The sums of a window's descent (`descend`, cut calls and memoized sub-trees) for the
    pieces ``[lo[i], hi[i])``: the additive sums of the layout over all pieces, the
    extremes of the counted calls (measured up to ``reach``) and the time of calls entered
    before a piece that ``keep_before`` (see `ProfileEngine.add_window`)."""
    t, layout = engine.tables, engine.layout
    tag, region, outer, enter, leave = cuts.T
    part = np.maximum(0, np.minimum(leave, hi[tag]) - np.maximum(enter, lo[tag]))
    counted = enter >= lo[tag]
    node, _, _, seed_outer = seeds.T
    has, seed_has = outer >= 0, seed_outer >= 0
    vec = np.zeros(layout.size, np.int64)  # summed over the pieces
    np.add.at(vec, np.concatenate((layout.incl + region, layout.excl + region, layout.excl + outer[has],
                                   layout.calls + region[counted], layout.excl + seed_outer[seed_has])),
              np.concatenate((part, part, -part[has], np.ones(int(counted.sum()), np.int64),
                              -t.calltime[node[seed_has]])))
    extent = np.minimum(leave, reach) - enter
    low, high = np.full(layout.R, NO_SHORTEST, np.int64), np.full(layout.R, -1, np.int64)
    np.minimum.at(low, region[counted], extent[counted])
    np.maximum.at(high, region[counted], extent[counted])
    early = np.zeros(layout.R, np.int64)
    kept = ~counted & keep_before[tag]
    np.add.at(early, region[kept], part[kept])
    if len(node):
        rows = engine.slot[node]
        sums, shortest, longest = engine.memo_rows()
        memo = np.take(sums, rows, axis=0)
        with np.errstate(over="ignore"):
            vec += memo.sum(axis=0)
        low = np.minimum(low, np.take(shortest, rows, axis=0).min(axis=0))
        high = np.maximum(high, np.take(longest, rows, axis=0).max(axis=0))
    return vec, low, high, early


def native_window_sums(engine: ProfileEngine, cuts: np.ndarray, seeds: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       keep_before: np.ndarray, reach: int) -> tuple[np.ndarray, ...]:
    """`window_sums` in C (ccgformat/_native/window.c)."""
    from .._native.window import window_sums as sums_in_c
    layout, rows = engine.layout, engine.memo_rows()
    return sums_in_c((engine.slot, engine.tables.calltime, *rows),
                     (layout.size, layout.R, layout.calls, layout.incl, layout.excl),
                     cuts, seeds, lo, hi, keep_before, reach)
