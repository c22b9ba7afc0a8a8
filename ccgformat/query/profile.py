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
  difference of the two floating-point values).

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

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ..graph.pool import NodeKind, wrap64
from ..model import EventKind
from .groups import group_name
from .interior import SummaryIndex
from .tables import NodeTables, tables_for

#: Sub-trees below this many events are not memoized inside a pass (5.4.1's policy is
#: applied to the larger ones); the sub-trees a window takes whole always are.
MEMO_MIN_EVENTS = 256
NO_START = -(1 << 63)
NO_STOP = (1 << 63) - 1
_BIG = np.iinfo(np.int64).max
_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
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


@dataclass(frozen=True)
class GroupProfile:
    group: str
    calls: int
    inclusive: int  #: the sum of its regions' inclusive times (nested calls count again)
    exclusive: int


@dataclass(frozen=True)
class PairProfile:
    sender: int
    receiver: int
    sent: int
    sent_bytes: int
    received: int
    received_bytes: int


@dataclass(frozen=True)
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
            return [dict(item.__dict__) for item in items]
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

    def _recall(self, out: Partial, nodes: np.ndarray, tags: np.ndarray, counts: np.ndarray) -> None:
        """Add memoized sub-trees, each ``counts`` times to its tag, in one step."""
        order = np.argsort(tags, kind="stable")
        rows, tags, counts = self.slot[nodes][order], tags[order], counts[order]
        starts = np.flatnonzero(np.concatenate(([True], tags[1:] != tags[:-1])))
        into = tags[starts]
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

    def window(self, locations: list[int], start: np.ndarray, stop: np.ndarray,
               reach: np.ndarray) -> tuple[Partial, np.ndarray]:
        """The partial profile of ``[start[i], stop[i])`` of ``locations[i]`` (tag i; a
        location may be listed more than once), with the extremes of the calls entered
        there measured up to ``reach[i] >= stop[i]``, and per tag and region the time of
        the calls entered before ``start[i]`` (not counted, so left out of the mean). All
        tags descend together, one level of their boundary paths at a time; the sums are
        added at the end in one step."""
        t, layout = self.tables, self.layout
        L = len(locations)
        acc = Partial(layout, L)
        roots = [self.source.roots[location] for location in locations]
        nodes = np.array([root.root for root in roots], np.int64)
        times = np.array([root.start for root in roots], np.int64)
        tags = np.arange(L, dtype=np.int64)
        enclosing = np.full(L, -1, np.int64)
        depth = 0
        seeds: list[tuple[np.ndarray, ...]] = []
        sums: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (tag, column, ticks or count)
        counted_calls: list[tuple[np.ndarray, ...]] = []            # (tag, region, part) of counted calls
        early: list[tuple[np.ndarray, ...]] = []                    # (tag, region, part) of calls entered before
        while len(nodes):
            end = times + t.total[nodes]
            lo, hi = start[tags], stop[tags]
            live = (end >= lo) & (times < hi)
            inside = live & (times >= lo) & (end < hi)
            if inside.any():  # wholly inside: sub-tree partials; the enclosing call loses their calltime
                node, tag, outer = nodes[inside], tags[inside], enclosing[inside]
                has = outer >= 0
                sums.append((tag[has], layout.excl + outer[has], -t.calltime[node[has]]))
                seeds.append((node, tag, np.full(len(node), depth)))
            cut = live & ~inside
            nodes, times, end, tags, enclosing = nodes[cut], times[cut], end[cut], tags[cut], enclosing[cut]
            lo, hi = lo[cut], hi[cut]
            call = t.kind[nodes] == NodeKind.CALL
            if call.any():  # calls cut by a bound: their part inside
                region, tag, outer = t.key0[nodes[call]], tags[call], enclosing[call]
                enter, leave, lo, hi = times[call], end[call], lo[call], hi[call]
                part = np.maximum(0, np.minimum(leave, hi) - np.maximum(enter, lo))
                has = outer >= 0
                counted = enter >= lo
                sums += [(tag, layout.incl + region, part), (tag, layout.excl + region, part),
                         (tag[has], layout.excl + outer[has], -part[has]),
                         (tag[counted], layout.calls + region[counted], np.ones(int(counted.sum()), np.int64))]
                extent = np.minimum(leave, reach[tag]) - enter
                counted_calls.append((tag[counted], region[counted], extent[counted]))
                early.append((tag[~counted], region[~counted], part[~counted]))
                enclosing = np.where(call, t.key0[nodes], enclosing)
            kids, owner, offset = t.child_offsets(nodes)
            nodes, times, tags, enclosing = kids, times[owner] + offset, tags[owner], enclosing[owner]
            depth += 1
        if sums:
            tag, column, value = (np.concatenate(parts) for parts in zip(*sums))
            np.add.at(acc.vec, (tag, column), value)
        before = np.zeros((L, layout.R), dtype=np.int64)
        if counted_calls:
            tag, region, part = (np.concatenate(parts) for parts in zip(*counted_calls))
            np.minimum.at(acc.lo, (tag, region), part)
            np.maximum.at(acc.hi, (tag, region), part)
            tag, region, part = (np.concatenate(parts) for parts in zip(*early))
            np.add.at(before, (tag, region), part)
        if seeds:  # the sub-trees taken whole: few (b per level and bound), all memoized
            node, tag, at = (np.concatenate(parts) for parts in zip(*seeds))
            self.memoize(node, at)
            self._recall(acc, node, tag, np.ones(len(node), np.int64))
        return acc, before

    def add_window(self, totals: Totals, locations: list[int], start: list[int], stop: list[int],
                   reach: list[int], keep_before: list[bool]) -> None:
        """Add the pieces ``[start[i], stop[i])`` of ``locations[i]`` to ``totals`` (see
        `window`); the time of calls entered before a piece's start is kept only where
        ``keep_before[i]`` (a piece that begins the window)."""
        as_array = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
        partial, before = self.window(locations, as_array(start), as_array(stop), as_array(reach))
        layout = self.layout
        vec = partial.vec.sum(axis=0)
        low, high = partial.lo.min(axis=0), partial.hi.max(axis=0)
        early = before[np.array(keep_before, dtype=bool)].sum(axis=0)
        for region in np.flatnonzero(vec[layout.calls:layout.calls + layout.R] | vec[layout.incl:layout.incl + layout.R]
                                     | vec[layout.excl:layout.excl + layout.R] | early).tolist():
            totals.add_region(region, *(int(vec[o + region]) for o in (layout.calls, layout.incl, layout.excl)))
            totals.add_before(region, int(early[region]))
        for region in np.flatnonzero(high >= 0).tolist():
            totals.extremes(region, int(low[region]), int(high[region]))
        for tag, location in enumerate(locations):
            for offset, outgoing in ((layout.sent, True), (layout.recv, False)):
                counts = partial.vec[tag, offset:offset + layout.P]
                size = partial.vec[tag, offset + layout.P:offset + 2 * layout.P]
                for peer in np.flatnonzero(counts).tolist():
                    peer_id = peer if peer < layout.P - 1 else -1
                    pair = (int(counts[peer]), int(size[peer]))
                    totals.add_pair(location, peer_id, *(pair + (0, 0) if outgoing else (0, 0) + pair))
        for i, op in enumerate(layout.ops.tolist()):
            if vec[layout.coll + i]:
                totals.add_collective(op, int(vec[layout.coll + i]), int(vec[layout.coll_sent + i]),
                                      int(vec[layout.coll_recv + i]))
        sums = vec[layout.metric:]
        for metric in np.flatnonzero(sums).tolist():
            totals.add_metric(metric, int(sums[metric]))

class Totals:
    """A profile being summed up from pieces: per region calls, inclusive, exclusive,
    extremes and the time of calls entered before the window; per (sender, receiver)
    messages; per operation collectives; per integer metric its summed change. Sums wrap
    like the format's."""

    def __init__(self) -> None:
        self.regions: dict[int, list[int]] = {}  # calls, inclusive, exclusive, min, max, before
        self.pairs: dict[tuple[int, int], list[int]] = {}
        self.collectives: dict[int, list[int]] = {}
        self.metrics: dict[int, int] = {}

    def _region(self, region: int) -> list[int]:
        row = self.regions.get(region)
        if row is None:
            row = self.regions[region] = [0, 0, 0, _BIG, -1, 0]
        return row

    def add_region(self, region: int, calls: int, inclusive: int, exclusive: int) -> None:
        row = self._region(region)
        row[0], row[1], row[2] = row[0] + calls, row[1] + inclusive, row[2] + exclusive

    def add_before(self, region: int, ticks: int) -> None:
        if ticks:
            self._region(region)[5] += ticks

    def extremes(self, region: int, low: int, high: int) -> None:
        row = self._region(region)
        row[3], row[4] = min(row[3], low), max(row[4], high)

    def add_pair(self, location: int, peer: int, sent: int, sent_bytes: int, received: int,
                 received_bytes: int) -> None:
        peer = peer if peer >= 0 else -1
        for key, column, count, size in (((location, peer), 0, sent, sent_bytes),
                                         ((peer, location), 2, received, received_bytes)):
            if count or size:
                row = self.pairs.setdefault(key, [0, 0, 0, 0])
                row[column] += count
                row[column + 1] += size

    def add_collective(self, operation: int, count: int, sent: int, received: int) -> None:
        row = self.collectives.setdefault(operation, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + count, row[1] + sent, row[2] + received

    def add_metric(self, metric: int, change: int) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + change


def metric_values(source: Any, location: int, start: int, stop: int, doubles: set[int]) -> dict[int, tuple[int, int]]:
    """Per floating-point metric of a location, its value (raw 64 bits) before and after
    the window (the change of an integer metric is the sum of its differences, in the
    partial results; a floating-point one needs both values), found by the walker."""
    walker = source.location(location)

    def value_at(time: int) -> dict[int, int]:
        index = 0 if time == NO_START else len(walker) if time == NO_STOP else walker.find(time)
        if index >= len(walker):
            return dict(source.pool.metric_sums[walker.root])
        return dict(walker.cursor(index).metrics) if index else {}
    before, after = value_at(start), value_at(stop)
    return {m: (before.get(m, 0), after.get(m, 0)) for m in (set(before) | set(after)) & doubles}


def _sampled(source: Any, index: SummaryIndex | None, engine: ProfileEngine | None) -> set[int]:
    """The metrics sampled anywhere in the trace: from the graph when it is at hand, else
    from the final snapshot of every location."""
    if engine is not None or index is None:
        return (engine or engine_for(source)).sampled
    sampled: set[int] = set()
    for location in source.roots:
        _, _, snapshots = index.points(location)
        sampled.update(int(metric) for metric, _ in index._rows(location, snapshots[-1], "metrics", 2).tolist())
    return sampled


def _value_type(definitions: Any, metric: int) -> str:
    metrics = definitions.metrics
    return metrics[metric].value_type if 0 <= metric < len(metrics) else "int64"


def _change(value_type: str, first: int, last: int) -> int | float:
    if value_type == "double":
        as_float = lambda bits: float(np.int64(bits).view(np.float64))  # noqa: E731
        return as_float(last) - as_float(first)
    change = wrap64(last - first)
    return change % (1 << 64) if value_type == "uint64" else change


def _result(definitions: Any, start: int | None, stop: int | None, chosen: list[int], totals: Totals,
            metrics: dict[int, int | float]) -> Profile:
    regions = []
    for region in sorted(totals.regions):
        calls, incl, excl, low, high, before = totals.regions[region]
        calls, incl, excl = wrap64(calls), wrap64(incl), wrap64(excl)
        if not (calls or incl or excl):
            continue
        name = definitions.regions[region].name if 0 <= region < len(definitions.regions) else f"region {region}"
        counted = calls > 0
        regions.append(RegionProfile(region, name, group_name(definitions, region), calls, incl, excl,
                                     low if counted else None, high if counted else None,
                                     (incl - before) / calls if counted else None))
    groups: dict[str, list[int]] = {}
    for row in regions:
        entry = groups.setdefault(row.group, [0, 0, 0])
        entry[0] += row.calls
        entry[1] += row.inclusive
        entry[2] += row.exclusive
    pairs = [PairProfile(s, r, *(wrap64(v) for v in values)) for (s, r), values in sorted(totals.pairs.items())
             if any(values)]
    collectives = [CollectiveProfile(op, *(wrap64(v) for v in values))
                   for op, values in sorted(totals.collectives.items()) if values[0]]
    names = {i: m.name for i, m in enumerate(definitions.metrics)}
    return Profile(start, stop, chosen, regions, [GroupProfile(g, *v) for g, v in groups.items()], pairs,
                   collectives, {names.get(m, f"metric {m}"): v for m, v in sorted(metrics.items())})


def _check_policy(cache_modulus: int, cache_references: int) -> None:
    if cache_modulus < 1 or cache_references < 0:
        raise ValueError("cache_modulus must be >= 1 and cache_references >= 0")


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
            cache_references: int = 5, summary_index: bool = True) -> Profile:
    """The profile of ``[start, stop)`` over ``locations`` (default all) of a `Graph` or
    an `Archive` (see the module docstring for what counts where). With
    ``summary_index`` (the default) an archive's SUMMARY index answers the interior of
    windows that hold whole checkpoint segments (`ccgformat.query.interior`); the graph
    answers the rest."""
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
        return _result(definitions, start, stop, chosen, Totals(), {})
    index = SummaryIndex.of(source) if summary_index else None
    cuts = {location: index.cut(location, lo, hi) if index else None for location in chosen}
    pieces: list[tuple[int, int, int, bool]] = []  # location, start, stop, whether it begins the window
    for location, cut in cuts.items():
        if cut is None:
            pieces.append((location, lo, hi, True))
            continue
        if lo < cut.low and cut.a > 0:
            pieces.append((location, lo, cut.low, True))
        if cut.b < len(index.points(location)[0]) - 1:
            pieces.append((location, cut.high, hi, False))
    engine = engine_for(source, cache_modulus, cache_references) if pieces else None
    sampled = _sampled(source, index, engine)
    doubles = {m for m in sampled if _value_type(definitions, m) == "double"}
    totals = Totals()
    if pieces:
        where, starts, stops, begins = (list(column) for column in zip(*pieces))
        engine.add_window(totals, where, starts, stops, [hi] * len(pieces), begins)
    for cut in cuts.values():
        if cut is not None:
            index.add_interior(totals, cut, lo, hi, doubles)
    metrics: dict[int, int | float] = {m: _change(_value_type(definitions, m), 0, totals.metrics.get(m, 0))
                                       for m in sampled - doubles}
    if doubles:
        for location in chosen:
            for metric, (first, last) in metric_values(source, location, lo, hi, doubles).items():
                metrics[metric] = metrics.get(metric, 0) + _change("double", first, last)
    return _result(definitions, start, stop, chosen, totals, metrics)
