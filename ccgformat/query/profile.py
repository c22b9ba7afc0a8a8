"""The cached summary query (dissertation 3.4.3, 4.5.3, 5.4.1): a profile of any time
window and any set of locations, computed on the compressed graph.

Rules for a window ``[start, stop)`` (``None`` is open-ended):

* an event counts when ``start <= time < stop``; a call is *counted* (``calls``) when
  its ENTER is in the window;
* times count the part of every call inside the window, also for calls that straddle a
  bound: ``inclusive`` is ``|[enter, leave) ∩ window|`` summed over calls, ``exclusive``
  the inclusive part minus the inclusive parts of its direct callees;
* ``min``/``max``/``mean`` are taken over the counted calls, of their inclusive part
  inside the window (the full ``leave - enter`` for calls that end inside it);
* messages count SEND/ISEND events as sent and RECV/IRECV events as received, per
  (sender, receiver) location pair; collectives count COLL_END events per operation with
  the bytes sent and received; metrics give, for every metric sampled in the trace, its
  change over the window (value after it minus value before it, summed over the
  locations: the sum of the sample differences inside it, or for ``double`` metrics the
  difference of the two floating-point values; integer sums wrap to 64 bits like every
  sum of the format).

All sums are additive over adjacent windows (the additivity of 4.26). A sub-tree lying
wholly inside the window contributes its partial profile, which is the same wherever the
sub-tree is referenced - within one location, across locations and across queries. The
window's bounds cut at most b nodes per level along two paths; those are evaluated
directly, all locations descending together. The sub-trees taken whole (also at most b
per level and bound) are memoized; each is computed by a vectorised pass over the
distinct nodes below it that counts how often each is reached, and in that pass the
nodes chosen by the partial caching policy of 5.4.1 (depth below the location root a
multiple of ``cache_modulus``, or more than ``cache_references`` references) are
memoized too and end the descent of later passes. A successive query therefore costs
the two boundary paths plus one memo lookup per whole sub-tree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

import numpy as np

from .. import backends
from ..graph.pool import NodeKind, wrap64
from ..model import EventKind
from .groups import group_name
from .interior import Cut, SummaryIndex
from .tables import NodeTables, tables_for

#: Sub-trees below this many events are not memoized inside a pass (5.4.1's policy is
#: applied to the larger ones); the sub-trees a window takes whole always are.
MEMO_MIN_EVENTS = 256
#: The graph size per location of a query above which the summary index answers the
#: interior of long windows by default (`index_pays`; measured on the corpus traces).
INDEX_NODES_PER_LOCATION = 400
NO_START = -(1 << 63)
NO_STOP = (1 << 63) - 1
_BIG = np.iinfo(np.int64).max
_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)


# --------------------------------------------------------------------------- results

@dataclass(slots=True)
class RegionProfile:
    region: int
    name: str
    group: str
    calls: int
    inclusive: int
    exclusive: int
    min: int | None
    max: int | None
    mean: float | None


@dataclass(slots=True)
class GroupProfile:
    group: str
    calls: int
    inclusive: int  #: the sum of its regions' inclusive times (nested calls count again)
    exclusive: int


@dataclass(slots=True)
class PairProfile:
    sender: int
    receiver: int
    sent: int
    sent_bytes: int
    received: int
    received_bytes: int


@dataclass(slots=True)
class CollectiveProfile:
    operation: int
    count: int
    bytes_sent: int
    bytes_received: int


@dataclass
class Profile:
    """The summary of a window over a set of locations (see the module docstring)."""

    start: int | None
    stop: int | None
    locations: list[int]
    regions: list[RegionProfile]
    groups: list[GroupProfile]
    messages: list[PairProfile]
    collectives: list[CollectiveProfile]
    metrics: dict[str, int | float] = field(default_factory=dict)

    def region(self, name: str) -> RegionProfile:
        """The row of the region called ``name``."""
        for row in self.regions:
            if row.name == name:
                return row
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """Plain lists and numbers (``ccg profile --json``); a region row names the region
        in ``region`` and gives its definition index in ``id``."""
        def rows(items: Iterable[Any]) -> list[dict[str, Any]]:
            return [asdict(item) for item in items]
        regions = [{"region": r.name, "id": r.region, "group": r.group, "calls": r.calls, "inclusive": r.inclusive,
                    "exclusive": r.exclusive, "min": r.min, "max": r.max, "mean": r.mean} for r in self.regions]
        return {"start": self.start, "stop": self.stop, "locations": self.locations, "regions": regions, "groups": rows(self.groups), "messages": rows(self.messages),
                "collectives": rows(self.collectives), "metrics": dict(self.metrics)}


# --------------------------------------------------------------------------- partial results

class _Layout:
    """Positions of the additive quantities in a partial result's vector."""

    def __init__(self, tables: NodeTables, regions: int, peers: int):
        kind = tables.kind
        calls = tables.key0[kind == NodeKind.CALL]
        self.R = max(regions, int(calls.max()) + 1 if len(calls) else 0)
        peer_kinds = np.isin(kind, _SENDS + _RECEIVES)
        self.P = max(peers, int(tables.key0[peer_kinds].max()) + 1 if peer_kinds.any() else 0) + 1
        self.ops = np.unique(tables.key0[kind == EventKind.COLL_END])
        self.C = len(self.ops)
        R, P, C = self.R, self.P, self.C
        self.calls, self.incl, self.excl = 0, R, 2 * R
        self.sent, self.sent_bytes, self.recv, self.recv_bytes = 3 * R, 3 * R + P, 3 * R + 2 * P, 3 * R + 3 * P
        self.coll, self.coll_sent, self.coll_recv = 3 * R + 4 * P, 3 * R + 4 * P + C, 3 * R + 4 * P + 2 * C
        samples = tables.key0[kind == EventKind.METRIC]
        self.M = int(samples.max()) + 1 if len(samples) else 0
        self.metric = 3 * R + 4 * P + 3 * C
        self.size = self.metric + self.M

    def peer(self, values: np.ndarray) -> np.ndarray:
        """Peer location ids; anything outside the definitions goes to the last slot."""
        return np.where((values >= 0) & (values < self.P - 1), values, self.P - 1)


class Partial:
    """Per tag (a location of a query, or a sub-tree being memoized): additive sums in an
    int64 matrix, wrapping like the format's sums, and per-region minimum and maximum
    call durations."""

    __slots__ = ("vec", "lo", "hi")

    def __init__(self, layout: _Layout, tags: int = 1):
        self.vec = np.zeros((tags, layout.size), dtype=np.int64)
        self.lo = np.full((tags, layout.R), _BIG, dtype=np.int64)
        self.hi = np.full((tags, layout.R), -1, dtype=np.int64)


def _aggregate(nodes: np.ndarray, tags: np.ndarray, weights: np.ndarray, tag_count: int,
               depth: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct (node, tag) pairs with their summed weights (reference multiplicities) and
    the smallest depth they were reached at."""
    if len(nodes) <= 1:
        return nodes, tags, weights, depth
    key = nodes * tag_count + tags
    unique, inverse = np.unique(key, return_inverse=True)
    summed = np.zeros(len(unique), dtype=np.int64)
    np.add.at(summed, inverse, weights)
    shallowest = np.full(len(unique), np.iinfo(np.int64).max)
    np.minimum.at(shallowest, inverse, depth)
    return unique // tag_count, unique % tag_count, summed, shallowest


class ProfileEngine:
    """Profiles of one graph or archive, with the memo of partial results (one per node
    pool, shared by every query on it)."""

    def __init__(self, source: Any, cache_modulus: int = 10, cache_references: int = 5):
        _check_policy(cache_modulus, cache_references)
        self.source = source
        self.definitions = source.definitions
        self.tables = tables_for(source.pool)
        self.layout = _Layout(self.tables, len(self.definitions.regions), len(self.definitions.locations))
        self.cache_modulus = cache_modulus
        #: the metrics sampled anywhere in the graph
        self.sampled = set(np.unique(self.tables.key0[self.tables.kind == EventKind.METRIC]).tolist())
        self.cache_references = cache_references
        #: the memo: per node its row in the stacked partial results, or -1
        self.slot = np.full(len(self.tables), -1, dtype=np.int64)
        self._rows = 0
        self._vec = np.zeros((16, self.layout.size), dtype=np.int64)
        self._lo = np.zeros((16, self.layout.R), dtype=np.int64)
        self._hi = np.zeros((16, self.layout.R), dtype=np.int64)

    # ------------------------------------------------------------------ sub-trees

    def eligible(self, nodes: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """The caching policy of 5.4.1: nodes at a depth (below their location's root)
        that is a multiple of ``cache_modulus``, or referenced more than
        ``cache_references`` times - among the sub-trees of at least `MEMO_MIN_EVENTS`
        events, since a smaller one costs less to walk again than its memo row (one
        value per region, peer, operation and metric) costs to store and add."""
        t = self.tables
        return (t.events[nodes] >= MEMO_MIN_EVENTS) & (
            (depth % self.cache_modulus == 0) | (t.refcount[nodes] > self.cache_references))

    def memoize(self, nodes: np.ndarray, depth: np.ndarray) -> None:
        """Put the partial profiles of these whole sub-trees (found at ``depth``) into the
        memo, all in one pass tagged by sub-tree."""
        new = self.slot[nodes] < 0
        if not new.any():
            return
        nodes, where = np.unique(nodes[new], return_index=True)
        k = len(nodes)
        partial = self.propagate(nodes, np.arange(k, dtype=np.int64), np.ones(k, np.int64), k, depth[new][where])
        while self._rows + k > len(self._vec):
            self._vec, self._lo, self._hi = (np.concatenate([a, np.zeros_like(a)])
                                             for a in (self._vec, self._lo, self._hi))
        rows = np.arange(self._rows, self._rows + k)
        self._vec[rows], self._lo[rows], self._hi[rows] = partial.vec, partial.lo, partial.hi
        self.slot[nodes] = rows
        self._rows += k

    def memo_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The memo's rows so far (``slot`` indexes them): the sums of the layout, and per
        region the shortest and longest call."""
        return self._vec[:self._rows], self._lo[:self._rows], self._hi[:self._rows]

    def _recall(self, out: Partial, nodes: np.ndarray, tags: np.ndarray, counts: np.ndarray) -> None:
        """Add memoized sub-trees, each ``counts`` times to its tag, in one step."""
        order, starts, into = _tag_runs(tags)
        rows, counts = self.slot[nodes][order], counts[order]
        out.vec[into] += np.add.reduceat(self._vec[rows] * counts[:, None], starts, axis=0)
        out.lo[into] = np.minimum(out.lo[into], np.minimum.reduceat(self._lo[rows], starts, axis=0))
        out.hi[into] = np.maximum(out.hi[into], np.maximum.reduceat(self._hi[rows], starts, axis=0))

    def propagate(self, seeds: np.ndarray, tags: np.ndarray, weights: np.ndarray, tag_count: int,
                  depth: np.ndarray) -> Partial:
        """The sum of the sub-trees of ``seeds`` (found at ``depth``), each ``weights`` times
        into its tag: walk the distinct (node, tag) pairs level by level with their
        multiplicities; below the seeds, nodes the caching policy picks are memoized first
        (a tagged pass per level that has some, recursively), and every memoized node ends
        the descent."""
        t, layout = self.tables, self.layout
        result = Partial(layout, tag_count)
        reached: list[tuple[np.ndarray, ...]] = []
        nodes, tags, counts, depth = _aggregate(seeds, tags, weights, tag_count, depth)
        below = False  # the seeds themselves are what is being computed
        while len(nodes):
            if below:
                pick = self.eligible(nodes, depth)
                if pick.any():
                    self.memoize(nodes[pick], depth[pick])
            below = True
            if self._rows:
                hit = self.slot[nodes] >= 0
                if hit.any():
                    self._recall(result, nodes[hit], tags[hit], counts[hit])
                    miss = ~hit
                    nodes, tags, counts, depth = nodes[miss], tags[miss], counts[miss], depth[miss]
            reached.append((nodes, tags, counts))
            inner = t.kind[nodes] <= NodeKind.ARTIFICIAL
            kids, owner = t.expand(nodes[inner])
            nodes, tags, counts, depth = _aggregate(kids, tags[inner][owner], counts[inner][owner], tag_count,
                                                    depth[inner][owner] + 1)
        if reached:
            self._features(result, *(np.concatenate(parts) for parts in zip(*reached)))
        return result

    def _features(self, out: Partial, nodes: np.ndarray, tags: np.ndarray, counts: np.ndarray) -> None:
        """Add what the nodes themselves hold, each ``counts`` times into its tag."""
        t, layout, vec = self.tables, self.layout, out.vec
        kind = t.kind[nodes]
        call = kind == NodeKind.CALL
        if call.any():
            region, tag, m, total = t.key0[nodes[call]], tags[call], counts[call], t.total[nodes[call]]
            np.add.at(vec, (tag, layout.calls + region), m)
            np.add.at(vec, (tag, layout.incl + region), m * total)
            np.add.at(vec, (tag, layout.excl + region), m * (total - t.inner[nodes[call]]))
            np.minimum.at(out.lo, (tag, region), total)
            np.maximum.at(out.hi, (tag, region), total)
        for kinds, number, size in ((_SENDS, layout.sent, layout.sent_bytes),
                                    (_RECEIVES, layout.recv, layout.recv_bytes)):
            chosen = np.isin(kind, kinds)
            if chosen.any():
                peer, tag = layout.peer(t.key0[nodes[chosen]]), tags[chosen]
                np.add.at(vec, (tag, number + peer), counts[chosen])
                np.add.at(vec, (tag, size + peer), counts[chosen] * t.soft0[nodes[chosen]])
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

    # ------------------------------------------------------------------ windows

    def add_window(self, totals: Totals, locations: list[int], start: list[int], stop: list[int],
                   reach: int, keep_before: list[bool]) -> None:
        """Add the pieces ``[start[i], stop[i])`` of ``locations[i]`` (a location may be
        listed more than once) to ``totals``, with the extremes of the calls entered there
        measured up to the window's stop ``reach >= stop[i]``; the time of calls entered before a piece's
        start (not counted, so left out of the mean) is kept only where ``keep_before[i]``
        (a piece that begins the window). The descent (`descend`, in C with the native
        backend) lists the calls cut by a bound and the sub-trees inside: a cut call adds
        its part inside, is counted when entered inside, and the enclosing call loses it,
        and the calltime of the sub-trees inside, from its exclusive time; a sub-tree
        inside adds its memoized partial profile."""
        lo, hi = np.array(start, dtype=np.int64), np.array(stop, dtype=np.int64)
        cuts, seeds = self._descend(locations, lo, hi)
        if len(seeds):  # the sub-trees taken whole: few (b per level and bound), all memoized
            self.memoize(seeds[:, 0], seeds[:, 2])
        sums = native_window_sums if backends.native() else window_sums
        self._add(totals, locations, *sums(self, cuts, seeds, lo, hi, np.array(keep_before, dtype=bool), reach))

    def metric_bits(self, locations: list[int], times: list[int]) -> np.ndarray:
        """Per ``locations[i]``, the raw 64 bits of every metric's value before
        ``times[i]``: the wrapping sum of its sample differences (records.md), which are
        all in the sub-trees wholly before that time (seeds of the window from the
        beginning)."""
        _, seeds = self._descend(locations, np.full(len(locations), NO_START, np.int64), np.array(times, np.int64))
        node, tag, at, _ = seeds.T
        out = np.zeros((len(locations), self.layout.M), np.int64)
        if len(node):
            self.memoize(node, at)
            order, starts, into = _tag_runs(tag)
            with np.errstate(over="ignore"):
                out[into] = np.add.reduceat(self._vec[self.slot[node[order]], self.layout.metric:], starts)
        return out

    def _descend(self, locations: list[int], start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`descend` (in C with the native backend) from the roots of ``locations``."""
        roots = [self.source.roots[location] for location in locations]
        return (native_descend if backends.native() else descend)(
            self.tables, np.array([r.root for r in roots], np.int64), np.array([r.start for r in roots], np.int64),
            start, stop)

    def _add(self, totals: Totals, locations: list[int], vec: np.ndarray, low: np.ndarray, high: np.ndarray,
             early: np.ndarray, messages: np.ndarray) -> None:
        """Move a window's sums from the vector layout into ``totals``."""
        layout = self.layout
        R, P = layout.R, layout.P
        regions = slice(0, R)
        totals.add_regions(regions, vec[layout.calls:layout.calls + R], vec[layout.incl:layout.incl + R],
                           vec[layout.excl:layout.excl + R], early)
        totals.extremes(regions, low, high)
        tag, peer = np.nonzero(messages[:, :P] | messages[:, 2 * P:3 * P])
        sums = messages.reshape(len(locations), 4, P)[tag, :, peer]  # (sent, bytes, received, bytes) per pair
        totals.add_pairs(np.asarray(locations, np.int64)[tag], np.where(peer < P - 1, peer, -1), sums)
        for i, op in enumerate(layout.ops.tolist()):
            if vec[layout.coll + i]:
                totals.add_collective(op, int(vec[layout.coll + i]), int(vec[layout.coll_sent + i]),
                                      int(vec[layout.coll_recv + i]))
        sums = vec[layout.metric:]
        for metric in np.flatnonzero(sums).tolist():
            totals.add_metric(metric, int(sums[metric]))


def _tag_runs(tags: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order that groups equal tags, where each group starts in that order, and its
    tag (for ``np.add.reduceat`` per tag)."""
    order = np.argsort(tags, kind="stable")
    ordered = tags[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return order, starts, ordered[starts]


def window_sums(engine: ProfileEngine, cuts: np.ndarray, seeds: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                keep_before: np.ndarray, reach: int) -> tuple[np.ndarray, ...]:
    """The sums of a window's descent (`descend`, cut calls and memoized sub-trees) for the
    pieces ``[lo[i], hi[i])``: the additive sums of the layout over all pieces, the
    extremes of the counted calls (measured up to ``reach``), the time of calls entered
    before a piece that ``keep_before``, and per piece its message sums (see
    `ProfileEngine.add_window`)."""
    t, layout = engine.tables, engine.layout
    tag, region, outer, enter, leave = cuts.T
    part = np.maximum(0, np.minimum(leave, hi[tag]) - np.maximum(enter, lo[tag]))
    counted = enter >= lo[tag]
    node, seed_tag, _, seed_outer = seeds.T
    has, seed_has = outer >= 0, seed_outer >= 0
    vec = np.zeros(layout.size, np.int64)  # summed over the pieces; messages per piece below
    np.add.at(vec, np.concatenate((layout.incl + region, layout.excl + region, layout.excl + outer[has],
                                   layout.calls + region[counted], layout.excl + seed_outer[seed_has])),
              np.concatenate((part, part, -part[has], np.ones(int(counted.sum()), np.int64),
                              -t.calltime[node[seed_has]])))
    extent = np.minimum(leave, reach) - enter
    low, high = np.full(layout.R, _BIG, np.int64), np.full(layout.R, -1, np.int64)
    np.minimum.at(low, region[counted], extent[counted])
    np.maximum.at(high, region[counted], extent[counted])
    early = np.zeros(layout.R, np.int64)
    kept = ~counted & keep_before[tag]
    np.add.at(early, region[kept], part[kept])
    messages = np.zeros((len(lo), 4 * layout.P), np.int64)
    if len(node):
        rows = engine.slot[node]
        sums, shortest, longest = engine.memo_rows()
        memo = np.take(sums, rows, axis=0)
        with np.errstate(over="ignore"):
            vec += memo.sum(axis=0)
        low = np.minimum(low, np.take(shortest, rows, axis=0).min(axis=0))
        high = np.maximum(high, np.take(longest, rows, axis=0).max(axis=0))
        talking = memo[:, layout.sent:layout.sent + 4 * layout.P]
        talks = talking.any(axis=1)  # only seeds holding messages are split by location
        if talks.any():
            order, starts, into = _tag_runs(seed_tag[talks])
            messages[into] = np.add.reduceat(talking[talks][order], starts)
    return vec, low, high, early, messages


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


def native_window_sums(engine: ProfileEngine, cuts: np.ndarray, seeds: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       keep_before: np.ndarray, reach: int) -> tuple[np.ndarray, ...]:
    """`window_sums` in C (ccgformat/_native/window.c)."""
    from .._native.window import window_sums as sums_in_c
    layout, rows = engine.layout, engine.memo_rows()
    return sums_in_c((engine.slot, engine.tables.calltime, *rows),
                     (layout.size, layout.R, layout.calls, layout.incl, layout.excl, layout.sent, 4 * layout.P),
                     cuts, seeds, lo, hi, keep_before, reach)


def native_descend(t: NodeTables, root: np.ndarray, begin: np.ndarray, start: np.ndarray,
                   stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`descend` in C (ccgformat/_native/window.c): depth first per tag, the same rows in
    another order."""
    from .._native.window import window_descend
    return window_descend(t, root, begin, start, stop)


class Totals:
    """A profile being summed up from pieces: per region (columns of ``regions`` slots)
    calls, inclusive, exclusive, extremes and the time of calls entered before the
    window; per (sender, receiver) messages; per operation collectives; per integer
    metric its summed change. Sums wrap like the format's."""

    def __init__(self, regions: int) -> None:
        self.calls, self.inclusive, self.exclusive, self.before = (np.zeros(regions, np.int64) for _ in range(4))
        self.low, self.high = np.full(regions, _BIG, np.int64), np.full(regions, -1, np.int64)
        self.pairs: list[np.ndarray] = [np.zeros((0, 6), np.int64)]  # sender, receiver, 4 sums
        self.collectives: dict[int, list[int]] = {}
        self.metrics: dict[int, int] = {}

    def add_regions(self, region: np.ndarray | slice, calls: np.ndarray, inclusive: np.ndarray,
                    exclusive: np.ndarray, before: np.ndarray | int = 0) -> None:
        """Sums of the regions ``region`` (an array, repeats allowed, or a slice of them)."""
        columns = ((self.calls, calls), (self.inclusive, inclusive), (self.exclusive, exclusive),
                   (self.before, before))
        for column, values in columns:  # array sums wrap without a warning
            if isinstance(region, slice):
                column[region] += values
            else:
                np.add.at(column, region, values)

    def extremes(self, region: np.ndarray | slice, low: np.ndarray, high: np.ndarray) -> None:
        if isinstance(region, slice):
            np.minimum(self.low[region], low, out=self.low[region])
            np.maximum(self.high[region], high, out=self.high[region])
        else:
            np.minimum.at(self.low, region, low)
            np.maximum.at(self.high, region, high)

    def add_pairs(self, location: np.ndarray, peer: np.ndarray, sums: np.ndarray) -> None:
        """Messages of ``location[i]`` with ``peer[i]`` (any negative peer counts as -1),
        ``sums[i]`` = (sent, sent bytes, received, received bytes): sent ones for the pair
        (location, peer), received ones for (peer, location)."""
        n = len(peer)
        if not n:
            return
        peer = np.maximum(peer, -1)
        rows = np.zeros((2 * n, 6), np.int64)
        rows[:n, 0], rows[:n, 1], rows[:n, 2:4] = location, peer, sums[:, :2]
        rows[n:, 0], rows[n:, 1], rows[n:, 4:6] = peer, location, sums[:, 2:]
        self.pairs.append(rows)

    def add_collective(self, operation: int, count: int, sent: int, received: int) -> None:
        row = self.collectives.setdefault(operation, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + count, row[1] + sent, row[2] + received

    def add_metric(self, metric: int, change: int) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + change


def _double_changes(index: SummaryIndex | None, engine: ProfileEngine | None, cuts: dict[int, Cut | None],
                    lo: int, hi: int, doubles: list[int]) -> dict[int, float]:
    """Per floating-point metric, the change of its value over the window summed over the
    locations (a difference of floats, so it needs the values at both ends, not the sum
    of differences inside): at an end that is a checkpoint from the snapshot, else from
    the graph (`ProfileEngine.metric_bits`)."""
    values: dict[tuple[int, int], np.ndarray] = {}  # (location, 0 before / 1 after) -> bits per double
    asked: list[tuple[int, int, int]] = []
    for location, cut in cuts.items():
        for side, time, at_checkpoint, point in ((0, lo, cut is not None and cut.starts_window, cut and cut.a),
                                                 (1, hi, cut is not None and cut.ends_window, cut and cut.b)):
            if at_checkpoint:
                values[location, side] = index.metric_bits(location, point, doubles)
            elif time == NO_START:
                values[location, side] = np.zeros(len(doubles), np.int64)
            else:
                asked.append((location, side, time))
    if asked:
        bits = engine.metric_bits([location for location, _, _ in asked], [time for _, _, time in asked])
        for (location, side, _), row in zip(asked, bits):
            values[location, side] = row[doubles]
    floats = {key: row.view(np.float64) for key, row in values.items()}
    change = sum((floats[location, 1] - floats[location, 0] for location in cuts), np.zeros(len(doubles)))
    return dict(zip(doubles, change.tolist()))


def _sampled(source: Any, index: SummaryIndex | None, engine: ProfileEngine | None) -> set[int]:
    """The metrics sampled anywhere in the trace: from the graph when it is at hand, else
    from the index."""
    if engine is not None or index is None:
        return (engine or engine_for(source)).sampled
    return index.sampled_metrics()


def _value_type(definitions: Any, metric: int) -> str:
    metrics = definitions.metrics
    return metrics[metric].value_type if 0 <= metric < len(metrics) else "int64"


def _change(value_type: str, first: int, last: int) -> int:
    """An integer metric's change (floating-point ones: `_double_changes`)."""
    change = wrap64(last - first)
    return change % (1 << 64) if value_type == "uint64" else change


def _result(definitions: Any, start: int | None, stop: int | None, chosen: list[int], totals: Totals,
            metrics: dict[int, int | float]) -> Profile:
    shown = np.flatnonzero(totals.calls | totals.inclusive | totals.exclusive)
    counted_times = totals.inclusive[shown] - totals.before[shown]  # array sums wrap, like the format's
    columns = (shown.tolist(), *(column[shown].tolist() for column in (
        totals.calls, totals.inclusive, totals.exclusive, totals.low, totals.high)), counted_times.tolist())
    regions, groups = [], {}
    defined = definitions.regions
    for region, count, inclusive, exclusive, low, high, counted_time in zip(*columns):
        name = defined[region].name if region < len(defined) else f"region {region}"
        group = group_name(definitions, region)
        row = (RegionProfile(region, name, group, count, inclusive, exclusive, low, high, counted_time / count)
               if count > 0 else RegionProfile(region, name, group, count, inclusive, exclusive, None, None, None))
        regions.append(row)
        entry = groups.get(group)
        if entry is None:
            groups[group] = [count, inclusive, exclusive]
        else:
            entry[0] += count
            entry[1] += inclusive
            entry[2] += exclusive
    collectives = [CollectiveProfile(op, *(wrap64(v) for v in values))
                   for op, values in sorted(totals.collectives.items()) if values[0]]
    names = {i: m.name for i, m in enumerate(definitions.metrics)}
    return Profile(start, stop, chosen, regions, [GroupProfile(g, *v) for g, v in groups.items()],
                   _pair_rows(totals.pairs), collectives,
                   {names.get(m, f"metric {m}"): v for m, v in sorted(metrics.items())})


def _pair_rows(parts: list[np.ndarray]) -> list[PairProfile]:
    """Rows (sender, receiver, 4 sums) summed per (sender, receiver), wrapping."""
    rows = np.concatenate(parts)
    rows = rows[rows[:, 2:].any(axis=1)]
    if not len(rows):
        return []
    rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
    first = np.flatnonzero(np.concatenate(([True], np.any(rows[1:, :2] != rows[:-1, :2], axis=1))))
    sums = np.add.reduceat(rows[:, 2:], first)
    return [PairProfile(*key, *values) for key, values in zip(rows[first, :2].tolist(), sums.tolist())]


def _check_policy(cache_modulus: int, cache_references: int) -> None:
    if cache_modulus < 1 or cache_references < 0:
        raise ValueError("cache_modulus must be >= 1 and cache_references >= 0")


def index_pays(source: Any, locations: int) -> bool:
    """Whether the summary index is worth reading for a window over ``locations``: when
    the graph has more than `INDEX_NODES_PER_LOCATION` nodes per location. Below that,
    building and walking the node tables (about a microsecond a node, once) costs less
    than reading each location's checkpoints (about 0.3 ms a location)."""
    return len(source.pool) > INDEX_NODES_PER_LOCATION * locations


def engine_for(source: Any, cache_modulus: int = 10, cache_references: int = 5) -> ProfileEngine:
    """The engine (and its memo) of a graph or archive for a caching policy, kept on the
    source object itself so that it lives exactly as long."""
    engines = source.__dict__.setdefault("_query_engines", {})
    key = (cache_modulus, cache_references)
    engine = engines.get(key)
    if engine is None or engine.tables is not tables_for(source.pool):
        engine = engines[key] = ProfileEngine(source, cache_modulus, cache_references)
    return engine


def profile(source: Any, start: int | None = None, stop: int | None = None,
            locations: Iterable[int] | None = None, *, cache_modulus: int = 10,
            cache_references: int = 5, summary_index: bool | None = None) -> Profile:
    """The profile of ``[start, stop)`` over ``locations`` (default all) of a `Graph` or
    an `Archive` (see the module docstring for what counts where). An archive's SUMMARY
    index can answer the interior of windows that hold whole checkpoint segments
    (`ccgformat.query.interior`), the graph the rest: with ``summary_index=True``
    wherever it applies, with False never, and with None (the default) when the graph
    is large for the query (`index_pays`). The answers are the same."""
    _check_policy(cache_modulus, cache_references)
    lo = NO_START if start is None else int(start)
    hi = NO_STOP if stop is None else int(stop)
    if lo > hi:
        raise ValueError(f"the window starts at {start}, after its stop {stop}")
    chosen = sorted(source.roots) if locations is None else list(dict.fromkeys(locations))
    for location in chosen:
        if location not in source.roots:
            raise KeyError(f"no location {location}")
    definitions = source.definitions
    if not (lo < hi and chosen):
        return _result(definitions, start, stop, chosen, Totals(0), {})
    wanted = index_pays(source, len(chosen)) if summary_index is None else summary_index
    index = SummaryIndex.of(source) if wanted else None
    if index is not None and hi - lo <= index.shortest_segment():
        index = None  # too short to hold a whole segment anywhere
    cuts = {location: index.cut(location, lo, hi) if index else None for location in chosen}
    pieces: list[tuple[int, int, int, bool]] = []  # location, start, stop, whether it begins the window
    for location, cut in cuts.items():
        if cut is None:
            pieces.append((location, lo, hi, True))
            continue
        if not cut.starts_window:
            pieces.append((location, lo, cut.low, True))
        if not cut.ends_window:
            pieces.append((location, cut.high, hi, False))
    engine = engine_for(source, cache_modulus, cache_references) if pieces else None
    sampled = _sampled(source, index, engine)
    doubles = {m for m in sampled if _value_type(definitions, m) == "double"}
    totals = Totals(max(len(definitions.regions), engine.layout.R if engine else 0))
    if pieces:
        where, starts, stops, begins = (list(column) for column in zip(*pieces))
        engine.add_window(totals, where, starts, stops, hi, begins)
    inner = [cut for cut in cuts.values() if cut is not None]
    if inner:
        index.add_interiors(totals, inner, lo, hi, doubles)
    metrics: dict[int, int | float] = {m: _change(_value_type(definitions, m), 0, totals.metrics.get(m, 0))
                                       for m in sampled - doubles}
    if doubles:
        metrics.update(_double_changes(index, engine, cuts, lo, hi, sorted(doubles)))
    return _result(definitions, start, stop, chosen, totals, metrics)
