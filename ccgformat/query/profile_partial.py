"""Partial profiles: the additive quantities of a profile as one int64 vector per tag (a
location of a query, or a sub-tree being memoized), what graph nodes add into it, and the
grouping of rows by tag."""

from __future__ import annotations

import numpy as np

from ..graph.pool import NodeKind
from ..model import EventKind
from .profile_totals import NO_SHORTEST
from .tables import NodeTables
from ..ordering import sorted_distinct


class Layout:
    """Positions of the additive quantities in a partial result's vector."""

    def __init__(self, tables: NodeTables, regions: int):
        kind = tables.kind
        calls = tables.key0[kind == NodeKind.CALL]
        self.R = max(regions, int(calls.max()) + 1 if len(calls) else 0)
        self.ops = sorted_distinct(tables.key0[kind == EventKind.COLL_END])
        self.C = len(self.ops)
        R, C = self.R, self.C
        self.calls, self.incl, self.excl = 0, R, 2 * R
        self.coll, self.coll_sent, self.coll_recv = 3 * R, 3 * R + C, 3 * R + 2 * C
        samples = tables.key0[kind == EventKind.METRIC]
        self.M = int(samples.max()) + 1 if len(samples) else 0
        self.metric = 3 * R + 3 * C
        self.size = self.metric + self.M


class Partial:
    """Per tag (a location of a query, or a sub-tree being memoized): additive sums in an
    int64 matrix, wrapping like the format's sums, and per-region minimum and maximum
    call durations."""

    __slots__ = ("vec", "lo", "hi")

    def __init__(self, layout: Layout, tags: int = 1):
        self.vec = np.zeros((tags, layout.size), dtype=np.int64)
        self.lo = np.full((tags, layout.R), NO_SHORTEST, dtype=np.int64)
        self.hi = np.full((tags, layout.R), -1, dtype=np.int64)


def add_features(t: NodeTables, layout: Layout, out: Partial, nodes: np.ndarray, tags: np.ndarray,
                 counts: np.ndarray) -> None:
    """Add what the nodes themselves hold, each ``counts`` times into its tag."""
    vec = out.vec
    kind = t.kind[nodes]
    call = kind == NodeKind.CALL
    if call.any():
        region, tag, m, total = t.key0[nodes[call]], tags[call], counts[call], t.total[nodes[call]]
        np.add.at(vec, (tag, layout.calls + region), m)
        np.add.at(vec, (tag, layout.incl + region), m * total)
        np.add.at(vec, (tag, layout.excl + region), m * (total - t.inner[nodes[call]]))
        np.minimum.at(out.lo, (tag, region), total)
        np.maximum.at(out.hi, (tag, region), total)
    chosen = kind == EventKind.METRIC
    if chosen.any():  # sums of sample differences, wrapping like the format's (records.md)
        np.add.at(vec, (tags[chosen], layout.metric + t.key0[nodes[chosen]]), counts[chosen] * t.soft0[nodes[chosen]])
    chosen = kind == EventKind.COLL_END
    if chosen.any():
        op, tag = np.searchsorted(layout.ops, t.key0[nodes[chosen]]), tags[chosen]
        m = counts[chosen]
        np.add.at(vec, (tag, layout.coll + op), m)
        np.add.at(vec, (tag, layout.coll_sent + op), m * t.soft0[nodes[chosen]])
        np.add.at(vec, (tag, layout.coll_recv + op), m * t.soft1[nodes[chosen]])


def tag_runs(tags: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order that groups equal tags, where each group starts in that order, and its
    tag (for ``np.add.reduceat`` per tag)."""
    order = np.argsort(tags, kind="stable")
    ordered = tags[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return order, starts, ordered[starts]
