"""The profile engine of a graph or archive: the memo of partial profiles of whole
sub-trees (the partial caching of 5.4.1, one memo per node pool, shared by every query on
it) and the evaluation of windows on the graph with it (see `ccgformat.query.profile_query`)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import backends
from ..graph.graph import roots_at
from ..graph.pool import NodeKind
from ..model import EventKind
from .profile_pairs import PairMemo
from .profile_partial import Layout, Partial, add_features, tag_runs
from .profile_totals import Totals
from .profile_window import NO_START, descend, native_descend, native_window_sums, window_sums
from .tables import tables_for
from ..ordering import sorted_distinct

#: Sub-trees below this many events are not memoized inside a pass (5.4.1's policy is
#: applied to the larger ones); the sub-trees a window takes whole always are.
MEMO_MIN_EVENTS = 256


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
        check_policy(cache_modulus, cache_references)
        #: weakly: the source keeps its engines (`engine_for`), and a cycle would keep an
        #: archive's map and decoded blocks until the garbage collector's next full pass
        self.source = weakref.proxy(source)
        self.definitions = source.definitions
        self.tables = tables_for(source.pool)
        self.layout = Layout(self.tables, len(self.definitions.regions))
        self.cache_modulus = cache_modulus
        #: the metrics sampled anywhere in the graph
        self.sampled = set(sorted_distinct(self.tables.key0[self.tables.kind == EventKind.METRIC]).tolist())
        self.cache_references = cache_references
        #: the memo: per node its row in the stacked partial results, or -1
        self.slot = np.full(len(self.tables), -1, dtype=np.int64)
        self._rows = 0
        self._vec = np.zeros((16, self.layout.size), dtype=np.int64)
        self._lo = np.zeros((16, self.layout.R), dtype=np.int64)
        self._hi = np.zeros((16, self.layout.R), dtype=np.int64)
        #: the message sums by peer of sub-trees, memoized sparsely
        self.pairs = PairMemo(self.tables)

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
        order, starts, into = tag_runs(tags)
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
            add_features(t, layout, result, *(np.concatenate(parts) for parts in zip(*reached)))
        return result

    # ------------------------------------------------------------------ windows

    def add_window(self, totals: Totals, locations: list[int], start: np.ndarray, stop: np.ndarray,
                   reach: int, keep_before: np.ndarray) -> None:
        """Add the pieces ``[start[i], stop[i])`` of ``locations[i]`` (a location may be
        listed more than once) to ``totals``, with the extremes of the calls entered there
        measured up to the window's stop ``reach >= stop[i]``; the time of calls entered before a piece's
        start (not counted, so left out of the mean) is kept only where ``keep_before[i]``
        (a piece that begins the window). The descent (`descend`, in C with the native
        backend) lists the calls cut by a bound and the sub-trees inside: a cut call adds
        its part inside, is counted when entered inside, and the enclosing call loses it,
        and the calltime of the sub-trees inside, from its exclusive time; a sub-tree
        inside adds its memoized partial profile. The messages per location pair come from
        the seeds' sparse memo (`PairMemo`), not from the memo rows: a column per peer in
        every memo row would cost a row per pair of locations."""
        lo, hi = np.array(start, dtype=np.int64), np.array(stop, dtype=np.int64)
        roots, begins = self._roots(locations)
        cuts, seeds = self._descend(roots, begins, lo, hi)
        if len(seeds):  # the sub-trees taken whole: few (b per level and bound), all memoized
            self.memoize(seeds[:, 0], seeds[:, 2])
        sums = native_window_sums if backends.native() else window_sums
        self._add(totals, *sums(self, cuts, seeds, lo, hi, np.array(keep_before, dtype=bool), reach))
        totals.add_pairs(*self.pairs.window(np.asarray(locations, np.int64), seeds))

    def metric_bits(self, locations: list[int], times: list[int]) -> np.ndarray:
        """Per ``locations[i]``, the raw 64 bits of every metric's value before
        ``times[i]``: the wrapping sum of its sample differences (records.md), which are
        all in the sub-trees wholly before that time (seeds of the window from the
        beginning)."""
        _, seeds = self._descend(*self._roots(locations), np.full(len(locations), NO_START, np.int64),
                                 np.array(times, np.int64))
        node, tag, at, _ = seeds.T
        out = np.zeros((len(locations), self.layout.M), np.int64)
        if len(node):
            self.memoize(node, at)
            order, starts, into = tag_runs(tag)
            with np.errstate(over="ignore"):
                out[into] = np.add.reduceat(self._vec[self.slot[node[order]], self.layout.metric:], starts)
        return out

    def _roots(self, locations: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The root nodes of ``locations`` and their start times."""
        root, start, _, _ = roots_at(self.source, locations)
        return root, start

    def _descend(self, roots: np.ndarray, begins: np.ndarray, start: np.ndarray,
                 stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`descend` (in C with the native backend) from ``roots``."""
        return (native_descend if backends.native() else descend)(self.tables, roots, begins, start, stop)

    def _add(self, totals: Totals, vec: np.ndarray, low: np.ndarray, high: np.ndarray, early: np.ndarray) -> None:
        """Move a window's sums from the vector layout into ``totals``."""
        layout = self.layout
        R = layout.R
        regions = slice(0, R)
        totals.add_regions(regions, vec[layout.calls:layout.calls + R], vec[layout.incl:layout.incl + R],
                           vec[layout.excl:layout.excl + R], early)
        totals.extremes(regions, low, high)
        for i, op in enumerate(layout.ops.tolist()):
            if vec[layout.coll + i]:
                totals.add_collective(op, int(vec[layout.coll + i]), int(vec[layout.coll_sent + i]),
                                      int(vec[layout.coll_recv + i]))
        sums = vec[layout.metric:]
        for metric in np.flatnonzero(sums).tolist():
            totals.add_metric(metric, int(sums[metric]))


def check_policy(cache_modulus: int, cache_references: int) -> None:
    """Refuse a caching policy (5.4.1) outside its range."""
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
