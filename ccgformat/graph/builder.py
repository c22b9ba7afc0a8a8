"""The streaming cCCG builder: construction and compression in one pass (dissertation 4.3).

Events arrive per location as columnar batches. Each location keeps a stack of open
construction nodes (4.1.3): its root, then one node per open call. A node is finalized
when it closes (4.1.1), after its children, so compression works bottom-up: the
replacement search (4.2.1, 4.2.2) compares a node with earlier ones by its child
references and its own properties only (3.3.2), and either replaces it by an earlier
compatible node or stores it in the pool. No uncompressed tree is ever held: wide nodes
are split while they grow (4.1.2), so an open node has at most b entries per child level.

Time. A construction node records the original start and end of each child entry and
the duration of the node that now represents the child. When a child is replaced by a
node with a slightly different total duration (lossy mode), the parent adopts that
duration and keeps the original gap after it, so parent and child always agree and the
rebuilt timestamps stay monotone; the shift this causes is a *drift* carried as a point
deviation to every later timestamp of the parent. Deviation intervals are propagated
bottom-up on the child edges with interval arithmetic (Lemmas 3-5): a candidate P may
replace node C when every gap of P is within the relative bound of C's gap (3.6; the
child durations are equal because the child references are) and every deviation of a
timestamp of C's sub-tree - its own drift, the shift s_k of P's durations (4.14), and
the edge intervals of its children (4.16, 4.17) - plus the drift D of C's start lies in
T = [-abs, abs], i.e. within T (-) [D, D] (4.8, 4.10). An S-list searched so that holds
``Params.representatives`` nodes and still finds none for a new node is closed: its key's
durations are jitter, whose representatives cost their parents more references than the
rounded gaps of nodes stored as they come (docs/compression.md), so that node and every
later one of its key are stored, and the S-list is no longer searched.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from ..model import KIND_FIELDS, Definitions, EventBatch, EventKind, LocationValidator, Repair
from ..params import REL_SCALE_BITS, Params, rel_numerator, within_rel
from .graph import BuildMetrics, Graph, LocationRoot
from .intervals import Interval
from .pool import NodeKind, NodePool, node_bytes, wrap64
from .rounding import INT64_MAX, grid, round_to_grid
from .slist import ReplacementIndex, SList


class Entry(NamedTuple):
    """A finalized child as its parent sees it.

    ``start``/``end``: original timestamps; ``total``: the duration of the node that now
    represents it; ``deviation``: the deviations of its sub-tree's timestamps relative
    to its (rebuilt) start; ``level``: its child level for splitting (4.1.2).
    """

    node: int
    level: int
    start: int
    end: int
    total: int
    deviation: Interval

    @property
    def drift(self) -> int:
        """How much later the rebuilt end is than the original end, given the start."""
        return self.total - (self.end - self.start)


_ZERO = Interval(0, 0)


class _Open:
    """A construction node: a call (or a location's root) still receiving children."""

    __slots__ = ("kind", "key", "start", "start_drift", "entries", "level_counts", "drift")

    def __init__(self, kind: NodeKind, key: tuple[int, ...], start: int, start_drift: int):
        self.kind = kind
        self.key = key
        self.start = start
        self.start_drift = start_drift  # absolute deviation of the rebuilt start
        self.entries: list[Entry] = []
        self.level_counts: list[int] = [0]
        self.drift = 0  # deviation of the rebuilt end of the last entry, from ``start``

    def append(self, entry: Entry) -> None:
        self.entries.append(entry)
        while len(self.level_counts) <= entry.level:
            self.level_counts.append(0)
        self.level_counts[entry.level] += 1
        self.drift += entry.drift

    def child_drift(self) -> int:
        """Absolute deviation of a child appended now."""
        return self.start_drift + self.drift


def whole_locations(locations: np.ndarray, offsets: np.ndarray, events: int,
                    finished: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """``locations`` and ``offsets`` of `Builder.add_locations` as int64 arrays, checked:
    one offset more than locations, rising from 0 to ``events``, no location twice or
    among the ``finished`` ones."""
    locations = np.ascontiguousarray(locations, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if offsets.shape != (len(locations) + 1,) or offsets[0] != 0 or offsets[-1] != events \
            or np.any(np.diff(offsets) < 0):
        raise ValueError(f"offsets must rise from 0 to the {events} events, one more than the "
                         f"{len(locations)} locations")
    repeated = set(locations.tolist()) & set(finished) if finished else set()
    if len(locations) > 1 and not np.all(locations[1:] > locations[:-1]):
        values, counts = np.unique(locations, return_counts=True)
        repeated |= set(values[counts > 1].tolist())
    if repeated:
        raise ValueError(f"location {min(repeated)} has already been finished")
    return locations, offsets


class _LocationState:
    __slots__ = ("validator", "stack", "previous_metric", "start", "last_time")

    def __init__(self, validator: LocationValidator):
        self.validator = validator
        self.stack: list[_Open] = []
        self.previous_metric: dict[int, int] = {}
        self.start = 0
        self.last_time = 0


class Builder:
    """Builds one cCCG for all locations of a trace into a shared node pool (Fig. 4.19).

    Feed each location's events in time order with `add` (locations may interleave;
    the result depends on the order of the calls, so converters feed one location after
    another), then call `finish`. With ``repair``, regions still open at the end of a
    location are closed at its last timestamp and unmatched LEAVEs are dropped; both
    are listed in `repairs`.
    """

    def __init__(self, params: Params = Params(), definitions: Definitions | None = None, *,
                 repair: bool = False):
        self.params = params
        self.definitions = definitions if definitions is not None else Definitions()
        self.repair = repair
        self.repairs: list[Repair] = []
        self.pool = NodePool()
        self.index = ReplacementIndex(params.search_length, self.pool.soft_key)
        self._locations: dict[int, _LocationState] = {}
        self._roots: dict[int, LocationRoot] = {}
        self._time_bound = Interval(-params.abs_dev, params.abs_dev)
        self._rel_time = rel_numerator(params.rel_dev)
        self._grid = grid(self._rel_time, params.abs_dev)
        self._rel_size = rel_numerator(params.rel_size)
        self._rel_metric = rel_numerator(params.rel_metric)
        self._double_metrics = frozenset(i for i, m in enumerate(self.definitions.metrics)
                                         if m.value_type == "double")
        self.N = self.n = self.M = self.m = 0
        self._validate = definitions is not None
        self._leaf_used: dict[int, int] = {}  # leaf call -> pool size when it was last shared
        self._epoch_first = 0  # the pool size when the replacement index last started empty
        self.epochs = 0  # how many times it did (`_next_epoch`)

    # ------------------------------------------------------------------ public API

    def add(self, location: int, batch: EventBatch) -> None:
        """Append the next events of ``location``; raises `TraceError` on invalid input."""
        if location in self._roots:
            raise ValueError(f"location {location} has already been finished")
        state = self._locations.get(location)
        if state is None:
            validator = LocationValidator(location, self.definitions if self._validate else None, self.repair)
            state = self._locations[location] = _LocationState(validator)
        batch = state.validator.check(batch)
        if len(batch) == 0:
            return
        times = batch.time.tolist()
        if not state.stack:
            state.start = times[0]
            state.stack.append(_Open(NodeKind.ARTIFICIAL, (), times[0], 0))
        stack = state.stack
        kinds = batch.kind.tolist()
        refs = batch.ref.tolist()
        columns = {name: getattr(batch, name).tolist() for name in ("comm", "tag", "request", "size",
                                                                     "recv_size", "value")}
        columns["ref"] = refs
        for i, (kind, time) in enumerate(zip(kinds, times)):
            if kind == EventKind.ENTER:
                parent = stack[-1]
                self._make_room(parent)
                stack.append(_Open(NodeKind.CALL, (refs[i],), time, parent.child_drift()))
            elif kind == EventKind.LEAVE:
                node = stack.pop()
                stack[-1].append(self._close(node, time))
            else:
                parent = stack[-1]
                self._make_room(parent)
                parent.append(self._atomic(state, kind, time, {name: col[i] for name, col in columns.items()}))
        state.last_time = times[-1]

    def add_locations(self, locations: np.ndarray, batch: EventBatch, offsets: np.ndarray) -> np.ndarray:
        """`add` and `end_location` for whole locations: ``locations[i]`` holds the events
        ``offsets[i]:offsets[i + 1]`` of ``batch``. Returns their roots as rows (root,
        start, end, events)."""
        locations, offsets = whole_locations(locations, offsets, len(batch), self._roots)
        roots = []
        for location, first, stop in zip(locations.tolist(), offsets[:-1].tolist(), offsets[1:].tolist()):
            self.add(location, batch[first:stop])
            roots.append(self.end_location(location))
        return np.array(roots, np.int64).reshape(-1, 4)

    def end_location(self, location: int) -> LocationRoot:
        """Finish one location: close (or, repairing, report) open regions, finalize its root."""
        state = self._locations.pop(location, None)
        if state is None:
            state = _LocationState(LocationValidator(location))
        repairs = state.validator.finish()
        self.repairs.extend(state.validator.repairs)
        stack = state.stack
        for repair in repairs:
            node = stack.pop()
            stack[-1].append(self._close(node, repair.time))
        if not stack:  # a location without events
            stack.append(_Open(NodeKind.ARTIFICIAL, (), 0, 0))
        entry = self._close(stack.pop(), state.last_time)
        root = LocationRoot(entry.node, state.start, state.start + entry.total, self.pool.events[entry.node])
        self._roots[location] = root
        return root

    def finish(self) -> Graph:
        """Finish every location still open, give every defined location never fed an
        empty root (spec 4.3: the roots list every defined location) and return the graph."""
        for location in sorted(self._locations):
            self.end_location(location)
        for location in range(len(self.definitions.locations)):
            if location not in self._roots:
                self.end_location(location)
        return Graph(self.pool, dict(sorted(self._roots.items())), self.params, self.definitions,
                     self.metrics, tuple(self.repairs), self.epochs)

    @property
    def metrics(self) -> BuildMetrics:
        return BuildMetrics(self.N, self.n, self.M, self.m)

    # ------------------------------------------------------------------ splitting (4.1.2)

    def _make_room(self, node: _Open) -> None:
        """Early stage: before a child is appended, every child level that holds b
        entries becomes one artificial node on the next level, lowest level first."""
        b = self.params.branching
        level = 0
        while level < len(node.level_counts) and node.level_counts[level] == b:
            self._group(node, level, b)
            level += 1

    def _late_stage(self, node: _Open) -> None:
        """Late stage: before a node with more than b children is finalized, every
        pending level below the top becomes one artificial node on the next level."""
        top = max(level for level, count in enumerate(node.level_counts) if count)
        for level in range(top):
            if node.level_counts[level]:
                self._group(node, level, node.level_counts[level])

    def _group(self, node: _Open, level: int, count: int) -> None:
        """Replace the last ``count`` entries (all on ``level``) by an artificial node."""
        group = node.entries[-count:]
        del node.entries[-count:]
        node.level_counts[level] -= count
        node.drift -= sum(entry.drift for entry in group)
        artificial = _Open(NodeKind.ARTIFICIAL, (), group[0].start, node.child_drift())
        artificial.entries = group
        entry = self._finalize(artificial, group[-1].end)
        node.append(entry._replace(level=level + 1))

    # ------------------------------------------------------------------ compression (4.2)

    def _close(self, node: _Open, end: int) -> Entry:
        if len(node.entries) > self.params.branching:
            self._late_stage(node)
        return self._finalize(node, end)

    def _next_epoch(self) -> None:
        """Dissertation 4.7.2: once ``epoch_nodes`` nodes were stored since the last reset,
        the replacement index (every S-list, and the leaves' last uses) starts empty, so
        that it holds the nodes of one epoch only; the nodes stored before stay in the
        pool, but no later node is compared with them."""
        bound = self.params.epoch_nodes
        if bound and len(self.pool) - self._epoch_first >= bound:
            self.index = ReplacementIndex(self.params.search_length, self.pool.soft_key)
            self._leaf_used.clear()
            self._epoch_first = len(self.pool)
            self.epochs += 1

    def _finalize(self, node: _Open, end: int) -> Entry:
        """Turn a construction node into durations (4.3) and find it a replacement."""
        self._next_epoch()
        durations: list[int] = []
        edges: list[Interval] = []
        time, drift = node.start, 0
        if self.params.exact_time:  # nothing deviates: no intervals to carry (all are [0, 0])
            for entry in node.entries:
                durations.append(entry.start - time)
                durations.append(entry.total)
                time = entry.end
        else:
            for entry in node.entries:
                durations.append(entry.start - time)
                durations.append(entry.total)
                edges.append(entry.deviation + drift)
                drift += entry.drift
                time = entry.end
        durations.append(end - time)
        children = tuple(entry.node for entry in node.entries)
        own = tuple(durations)
        size = node_bytes(node.kind, len(children), own)
        self.N += 1
        self.M += size
        slist = self.index.slist((node.kind, node.key, children), self.params.exact_time)
        far = None  # an equal leaf call not worth sharing (`_share_leaf`), replaced in its S-list
        if slist.exact is not None:
            found = slist.find_equal(own)
            if found is not None:
                slist.hits += 1
                if children or self._share_leaf(slist, found):
                    return Entry(found, 0, node.start, end, self.pool.total[found], self._hull(edges))
                far = found
        else:
            bound = self._time_bound.ominus(Interval.point(node.start_drift))
            if not slist.closed:
                match = slist.search(lambda candidate: self._time_deviation(
                    self.pool.durations[candidate], own, edges, drift, bound))
                if match is not None:
                    found, deviation = match
                    return Entry(found, 0, node.start, end, self.pool.total[found], deviation)
                # as many representatives as allowed and none fits: jitter, stored from now on
                slist.closed = 0 < self.params.representatives <= len(slist.entries)
        deviation = self._hull(edges)
        if not self.params.exact_time:
            rounded = self._round_gaps(own, node.entries, edges, node.start_drift, bound)
            kept = None if rounded is None else self._time_deviation(rounded, own, edges, drift, bound)
            if rounded is not None and kept is not None:
                own, deviation = rounded, kept
                size = node_bytes(node.kind, len(children), own)
        created = self.pool.add_inner(node.kind, node.key, children, own)
        slist.misses += 1
        if far is not None:
            slist.replace(far, created, own)
        elif not slist.closed:
            self.index.insert(slist, created, own)
        self.n += 1
        self.m += size
        return Entry(created, 0, node.start, end, sum(own), deviation)

    def _share_leaf(self, slist: SList, found: int) -> bool:
        """Whether a leaf call (a CALL without children) is shared with the equal cached
        node ``found`` of ``slist``: when the S-list has had at least as many hits as
        misses (its durations repeat: its matches are structure that parents share too),
        else only when ``found`` was made or last shared at most ``leaf_window`` nodes
        ago (0: always). The cache area of 3.3 trades search time for compression; here
        a far match also costs bytes: its child reference (spec 5.7) is an import row or
        a long distance, dearer than the leaf's one gap stored fresh
        (docs/compression.md). Records a use decided by the window."""
        if slist.hits >= slist.misses:
            return True
        now = len(self.pool)
        window = self.params.leaf_window
        if window and now - self._leaf_used.get(found, found) > window:
            return False
        self._leaf_used[found] = now
        return True

    def _round_gaps(self, own: tuple[int, ...], entries: list[Entry], edges: list[Interval], start_drift: int,
                    bound: Interval) -> tuple[int, ...] | None:
        """The durations of a node about to be stored, each gap moved within the relative
        bound onto the coarse grid of `round_to_grid` (few distinct values: they compress
        towards the information floor of 3.6), by error diffusion: a gap aims at the
        original time of its end, taking back the deviation accumulated before it (the
        drift of the node's start, of the children before it and of the gaps rounded
        before it), and keeps every timestamp of the node's sub-tree inside ``bound``
        (its child's edge interval moved by the sum of the rounding shifts). None when
        no gap moves or one cannot stay inside the bounds."""
        rounded = list(own)
        shift = drift = 0
        for j in range(len(edges) + 1):
            gap = own[2 * j]
            tolerance = (self._rel_time * gap) >> REL_SCALE_BITS
            edge = Interval.point(drift) if j == len(edges) else edges[j]
            # gap q: |q - gap| <= tolerance, 0 <= q < 2**63, edge + shift + q - gap within bound
            lo = max(0, gap - tolerance, gap - shift + bound.lo - edge.lo)
            hi = min(gap + tolerance, gap - shift + bound.hi - edge.hi, INT64_MAX)
            if lo > hi:
                return None
            value = round_to_grid(gap - start_drift - drift - shift, lo, hi, self._grid)
            rounded[2 * j] = value
            shift += value - gap
            if j < len(edges):
                drift += entries[j].drift
        return tuple(rounded) if rounded != list(own) else None

    @staticmethod
    def _hull(edges: list[Interval]) -> Interval:
        """Lemma 5 for a node kept as it is (s = 0): 0 and every child edge interval."""
        deviation = _ZERO
        for edge in edges:
            deviation = deviation.hull(edge)
        return deviation

    def _time_deviation(self, candidate: tuple[int, ...], own: tuple[int, ...], edges: list[Interval],
                        end_drift: int, bound: Interval) -> Interval | None:
        """Lemmas 4 and 5: the deviation interval of the node if ``candidate``'s durations
        replace ``own``, or None when a gap breaks the relative bound or a timestamp of
        the sub-tree would leave ``bound`` (T shifted by the drift of the node's start)."""
        shift = 0  # s_k of (4.14): only gaps can differ, child durations are equal
        deviation = _ZERO
        for j in range(len(edges) + 1):
            gap = 2 * j
            if candidate[gap] != own[gap]:
                if not within_rel(candidate[gap], own[gap], self._rel_time):
                    return None
                shift += candidate[gap] - own[gap]
            moved = Interval.point(shift + end_drift) if j == len(edges) else edges[j] + shift
            if not moved.within(bound):
                return None
            deviation = deviation.hull(moved)
        return deviation

    def _atomic(self, state: _LocationState, kind: int, time: int, columns: dict[str, int]) -> Entry:
        """Create, compare and keep or replace an atomic node (4.1.1, 4.2.1)."""
        self._next_epoch()
        fields = KIND_FIELDS[EventKind(kind)]
        key = tuple(columns[name] for name in fields.hard)
        soft = tuple(columns[name] for name in fields.soft)
        numerator = self._rel_size
        if kind == EventKind.METRIC:
            metric = key[0]
            value = columns["value"]
            soft = (wrap64(value - state.previous_metric.get(metric, 0)),)
            state.previous_metric[metric] = value
            numerator = 0 if metric in self._double_metrics else self._rel_metric
        size = node_bytes(kind, 0, ())
        self.N += 1
        self.M += size
        slist = self.index.slist((kind, key, ()), numerator == 0)
        if slist.exact is not None:
            found = slist.find_equal(soft)
        else:
            match = slist.search(lambda candidate: True if all(
                within_rel(a, b, numerator) for a, b in zip(self.pool.soft[candidate], soft)) else None)
            found = None if match is None else match[0]
        if found is None:
            found = self.pool.add_atomic(kind, key, soft)
            self.index.insert(slist, found, soft)
            self.n += 1
            self.m += size
        return Entry(found, 0, time, time, 0, _ZERO)
