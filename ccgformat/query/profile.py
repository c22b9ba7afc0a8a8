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
  the bytes sent and received; metrics give each metric's change over the window
  (value after it minus value before it, summed over the locations).

All sums are additive over adjacent windows (the additivity of 4.26). A sub-tree lying
wholly inside the window contributes its partial profile, which is the same wherever the
sub-tree is referenced, within one location, across locations and across queries: it is
computed once, by a vectorised pass over the distinct nodes below it that counts how
often each is reached, and memoized under the partial caching policy of 5.4.1 (node
depth mod ``cache_modulus`` = 0 or more than ``cache_references`` references). The nodes
the two window bounds cut - at most b per level along two paths - are evaluated directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ..graph.pool import NodeKind, wrap64
from ..model import EventKind
from .groups import group_name
from .tables import NodeTables, tables_for

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
        self.size = 3 * R + 4 * P + 3 * C

    def peer(self, values: np.ndarray) -> np.ndarray:
        """Peer location ids; anything outside the definitions goes to the last slot."""
        return np.where((values >= 0) & (values < self.P - 1), values, self.P - 1)


class Partial:
    """Additive sums in one int64 vector (wrapping like the format's sums) plus the
    per-region minimum and maximum call durations."""

    __slots__ = ("vec", "lo", "hi")

    def __init__(self, layout: _Layout):
        self.vec = np.zeros(layout.size, dtype=np.int64)
        self.lo = np.full(layout.R, _BIG, dtype=np.int64)
        self.hi = np.full(layout.R, -1, dtype=np.int64)

    def add(self, other: Partial, times: int = 1) -> None:
        self.vec += other.vec * times
        np.minimum(self.lo, other.lo, out=self.lo)
        np.maximum(self.hi, other.hi, out=self.hi)


def _aggregate(nodes: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct nodes with their summed weights (reference multiplicities)."""
    if len(nodes) <= 1:
        return nodes, weights
    unique, inverse = np.unique(nodes, return_inverse=True)
    if len(unique) == len(nodes):
        order = np.argsort(nodes, kind="stable")
        return nodes[order], weights[order]
    summed = np.zeros(len(unique), dtype=np.int64)
    np.add.at(summed, inverse, weights)
    return unique, summed


class ProfileEngine:
    """Profiles of one graph or archive, with the memo of partial results (one per node
    pool, shared by every query on it)."""

    def __init__(self, source: Any, cache_modulus: int = 10, cache_references: int = 5):
        if cache_modulus < 1 or cache_references < 0:
            raise ValueError("cache_modulus must be >= 1 and cache_references >= 0")
        self.source = source
        self.definitions = source.definitions
        self.tables = tables_for(source.pool)
        self.layout = _Layout(self.tables, len(self.definitions.regions), len(self.definitions.locations))
        self.cache_modulus = cache_modulus
        self.has_metrics = bool((self.tables.kind == EventKind.METRIC).any())
        self.cache_references = cache_references
        #: the memo: per node its row in the stacked partial results, or -1
        self.slot = np.full(len(self.tables), -1, dtype=np.int64)
        self._rows = 0
        self._vec = np.zeros((16, self.layout.size), dtype=np.int64)
        self._lo = np.zeros((16, self.layout.R), dtype=np.int64)
        self._hi = np.zeros((16, self.layout.R), dtype=np.int64)

    # ------------------------------------------------------------------ sub-trees

    def subtree(self, node: int) -> None:
        """Make sure the partial profile of a whole sub-tree is in the memo."""
        if self.slot[node] >= 0:
            return
        partial = self.propagate(np.array([node], np.int64), np.ones(1, np.int64))
        if self._rows == len(self._vec):
            self._vec, self._lo, self._hi = (np.concatenate([a, np.zeros_like(a)]) for a in (self._vec, self._lo, self._hi))
        row = self._rows
        self._vec[row], self._lo[row], self._hi[row] = partial.vec, partial.lo, partial.hi
        self.slot[node] = row
        self._rows += 1

    def _recall(self, out: Partial, nodes: np.ndarray, counts: np.ndarray) -> None:
        """Add memoized sub-trees, each ``counts`` times, in one step."""
        rows = self.slot[nodes]
        out.vec += (self._vec[rows] * counts[:, None]).sum(axis=0)
        np.minimum(out.lo, self._lo[rows].min(axis=0), out=out.lo)
        np.maximum(out.hi, self._hi[rows].max(axis=0), out=out.hi)

    def propagate(self, seeds: np.ndarray, weights: np.ndarray) -> Partial:
        """The sum of the sub-trees of ``seeds`` (each ``weights`` times): walk the distinct
        nodes level by level with their multiplicities, stopping at memoized nodes."""
        t, layout = self.tables, self.layout
        result = Partial(layout)
        reached: list[tuple[np.ndarray, np.ndarray]] = []
        nodes, counts = _aggregate(seeds, weights)
        while len(nodes):
            if self._rows:
                hit = self.slot[nodes] >= 0
                if hit.any():
                    self._recall(result, nodes[hit], counts[hit])
                    nodes, counts = nodes[~hit], counts[~hit]
            reached.append((nodes, counts))
            inner = t.kind[nodes] <= NodeKind.ARTIFICIAL
            kids, owner = t.expand(nodes[inner])
            nodes, counts = _aggregate(kids, counts[inner][owner])
        if reached:
            self._features(result, np.concatenate([n for n, _ in reached]),
                           np.concatenate([c for _, c in reached]))
        return result

    def _features(self, out: Partial, nodes: np.ndarray, counts: np.ndarray) -> None:
        """Add what the nodes themselves hold, each ``counts`` times."""
        t, layout, vec = self.tables, self.layout, out.vec
        kind = t.kind[nodes]
        call = kind == NodeKind.CALL
        if call.any():
            region, m, total = t.key0[nodes[call]], counts[call], t.total[nodes[call]]
            np.add.at(vec, layout.calls + region, m)
            np.add.at(vec, layout.incl + region, m * total)
            np.add.at(vec, layout.excl + region, m * (total - t.inner[nodes[call]]))
            np.minimum.at(out.lo, region, total)
            np.maximum.at(out.hi, region, total)
        for kinds, number, size in ((_SENDS, layout.sent, layout.sent_bytes),
                                    (_RECEIVES, layout.recv, layout.recv_bytes)):
            chosen = np.isin(kind, kinds)
            if chosen.any():
                peer = layout.peer(t.key0[nodes[chosen]])
                np.add.at(vec, number + peer, counts[chosen])
                np.add.at(vec, size + peer, counts[chosen] * t.soft0[nodes[chosen]])
        chosen = kind == EventKind.COLL_END
        if chosen.any():
            op = np.searchsorted(layout.ops, t.key0[nodes[chosen]])
            m = counts[chosen]
            np.add.at(vec, layout.coll + op, m)
            np.add.at(vec, layout.coll_sent + op, m * t.soft0[nodes[chosen]])
            np.add.at(vec, layout.coll_recv + op, m * t.soft1[nodes[chosen]])

    # ------------------------------------------------------------------ windows

    def location(self, location: int, start: int, stop: int) -> tuple[Partial, np.ndarray]:
        """One location's partial profile of ``[start, stop)``, and per region the time of
        the calls entered before ``start`` (not counted calls, left out of the mean)."""
        root = self.source.roots[location]
        t, layout = self.tables, self.layout
        acc = Partial(layout)
        before = np.zeros(layout.R, dtype=np.int64)
        plain: list[int] = []
        memoized: list[int] = []
        kind, total, calltime = t.kind, t.total, t.calltime
        stack = [(root.root, root.start, -1, 0)]
        while stack:
            node, s, enclosing, depth = stack.pop()
            e = s + int(total[node])
            if e < start or s >= stop:
                continue
            if s >= start and e < stop:  # wholly inside: a sub-tree partial
                if enclosing >= 0:
                    acc.vec[layout.excl + enclosing] -= calltime[node]
                if depth % self.cache_modulus == 0 or t.refcount[node] > self.cache_references:
                    self.subtree(node)
                    memoized.append(node)
                else:
                    plain.append(node)
                continue
            if kind[node] == NodeKind.CALL:
                region = int(t.key0[node])
                part = max(0, min(e, stop) - max(s, start))
                acc.vec[layout.incl + region] += part
                acc.vec[layout.excl + region] += part
                if enclosing >= 0:
                    acc.vec[layout.excl + enclosing] -= part
                if s >= start:
                    acc.vec[layout.calls + region] += 1
                    acc.lo[region] = min(acc.lo[region], part)
                    acc.hi[region] = max(acc.hi[region], part)
                else:
                    before[region] += part
                enclosing = region
            first, last = t.child_start[node], t.child_start[node + 1]
            if first == last:
                continue
            d = t.durations[t.duration_start[node]:t.duration_start[node + 1]].tolist()
            child_start = s + d[0]
            for j, child in enumerate(t.children[first:last].tolist()):
                stack.append((child, child_start, enclosing, depth + 1))
                child_start += d[2 * j + 1] + d[2 * j + 2]
        if memoized:
            self._recall(acc, np.array(memoized, np.int64), np.ones(len(memoized), np.int64))
        if plain:
            acc.add(self.propagate(np.array(plain, np.int64), np.ones(len(plain), np.int64)))
        return acc, before

    def metric_changes(self, location: int, start: int, stop: int) -> dict[int, tuple[int, int]]:
        """Per metric, its value (raw 64 bits) before and after the window."""
        if not self.has_metrics:
            return {}
        walker = self.source.location(location)

        def value_at(time: int) -> dict[int, int]:
            index = 0 if time == NO_START else len(walker) if time == NO_STOP else walker.find(time)
            if index >= len(walker):
                return dict(self.source.pool.metric_sums[walker.root])
            return dict(walker.cursor(index).metrics) if index else {}
        before, after = value_at(start), value_at(stop)
        return {m: (before.get(m, 0), after.get(m, 0)) for m in set(before) | set(after)}

    def profile(self, start: int | None = None, stop: int | None = None,
                locations: Iterable[int] | None = None) -> Profile:
        lo = NO_START if start is None else int(start)
        hi = NO_STOP if stop is None else int(stop)
        if lo > hi:
            raise ValueError(f"the window starts at {start}, after its stop {stop}")
        chosen = sorted(self.source.roots) if locations is None else list(dict.fromkeys(locations))
        for location in chosen:
            if location not in self.source.roots:
                raise KeyError(f"no location {location}")
        layout, definitions = self.layout, self.definitions
        total = Partial(layout)
        before = np.zeros(layout.R, dtype=np.int64)
        pairs: dict[tuple[int, int], list[int]] = {}
        metrics: dict[int, int | float] = {}
        for location in chosen:
            if lo >= hi:
                break
            partial, early = self.location(location, lo, hi)
            total.add(partial)
            before += early
            self._pairs(pairs, location, partial.vec)
            for metric, (first, last) in self.metric_changes(location, lo, hi).items():
                metrics[metric] = metrics.get(metric, 0) + self._change(metric, first, last)
        return self._result(start, stop, chosen, total, before, pairs, metrics)

    def _pairs(self, pairs: dict[tuple[int, int], list[int]], location: int, vec: np.ndarray) -> None:
        layout = self.layout
        for offset, column, outgoing in ((layout.sent, 0, True), (layout.recv, 2, False)):
            counts = vec[offset:offset + layout.P]
            size = vec[offset + layout.P:offset + 2 * layout.P]
            for peer in np.flatnonzero(counts).tolist():
                peer_id = peer if peer < layout.P - 1 else -1
                key = (location, peer_id) if outgoing else (peer_id, location)
                row = pairs.setdefault(key, [0, 0, 0, 0])
                row[column] += int(counts[peer])
                row[column + 1] += int(size[peer])

    def _change(self, metric: int, first: int, last: int) -> int | float:
        metrics = self.definitions.metrics
        value_type = metrics[metric].value_type if 0 <= metric < len(metrics) else "int64"
        if value_type == "double":
            as_float = lambda bits: float(np.int64(bits).view(np.float64))  # noqa: E731
            return as_float(last) - as_float(first)
        change = wrap64(last - first)
        return change % (1 << 64) if value_type == "uint64" else change

    def _result(self, start: int | None, stop: int | None, chosen: list[int], total: Partial,
                before: np.ndarray, pairs: dict[tuple[int, int], list[int]], metrics: dict[int, int | float]) -> Profile:
        layout, definitions, vec = self.layout, self.definitions, total.vec
        regions = []
        for region in range(layout.R):
            calls, incl, excl = (int(vec[o + region]) for o in (layout.calls, layout.incl, layout.excl))
            if not (calls or incl or excl):
                continue
            name = definitions.regions[region].name if region < len(definitions.regions) else f"region {region}"
            counted = calls > 0
            regions.append(RegionProfile(
                region, name, group_name(definitions, region), calls, incl, excl,
                int(total.lo[region]) if counted else None, int(total.hi[region]) if counted else None,
                (incl - int(before[region])) / calls if counted else None))
        groups: dict[str, list[int]] = {}
        for row in regions:
            entry = groups.setdefault(row.group, [0, 0, 0])
            entry[0] += row.calls
            entry[1] += row.inclusive
            entry[2] += row.exclusive
        collectives = [CollectiveProfile(int(op), int(vec[layout.coll + i]), int(vec[layout.coll_sent + i]),
                                         int(vec[layout.coll_recv + i]))
                       for i, op in enumerate(layout.ops.tolist()) if vec[layout.coll + i]]
        names = {i: m.name for i, m in enumerate(definitions.metrics)}
        return Profile(start, stop, chosen, regions, [GroupProfile(g, *v) for g, v in groups.items()],
                       [PairProfile(s, r, *v) for (s, r), v in sorted(pairs.items())], collectives,
                       {names.get(m, f"metric {m}"): v for m, v in sorted(metrics.items())})


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
            cache_references: int = 5) -> Profile:
    """The profile of ``[start, stop)`` over ``locations`` (default all) of a `Graph` or
    an `Archive` (see the module docstring for what counts where)."""
    return engine_for(source, cache_modulus, cache_references).profile(start, stop, locations)
