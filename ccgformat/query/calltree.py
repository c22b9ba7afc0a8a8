"""Call-path profiles (the calling context tree) on the compressed graph: inclusive and
exclusive time and calls per call path - the regions open from a location's root down to
the call, a region appearing twice (recursion) being two entries - per location.

Rules for a window ``[start, stop)`` (``None`` is open-ended), those of
`ccgformat.query.profile` per call path:

* a call is *counted* (``calls``) when its ENTER is in the window;
* ``inclusive`` is the part of every call inside the window, ``|[enter, leave) ∩
  window|``, also for calls cut by a bound; ``exclusive`` is that part minus the parts
  inside the window of its direct callees;
* a call path is listed for a location when it has a counted call or time there, or
  when a listed path continues it (so every location's paths form a tree).

Summed over the paths that end in one region, these are the region's calls, inclusive and
exclusive time of `profile` (nested calls count again, there as here).

Algorithm (dissertation 4.5.3). The window is descended level by level from the roots of
all locations at once, nodes carrying their start times (Lemma 1): a node cut by a bound
is evaluated directly (its clipped time, whether its ENTER counts) and its children are
visited; a node wholly inside the window is a *seed* and needs no times any more. Below
the seeds, the distinct (node, call path) pairs are walked a level at a time, each with
its multiplicity: a sub-tree referenced many times under one call path - the sharing of
the cCCG, within and across locations' repeats - is evaluated once and its call rows are
added that many times, as the summary query reuses the partial result of a shared
sub-tree. A call path of a location is interned once, as (enclosing path, region).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..graph.graph import chosen_roots
from ..graph.pool import NodeKind
from .calltree_result import CallTree, calltree_of
from .profile_window import NO_START, NO_STOP
from .tables import NodeTables, tables_for
from .timeline_walk import unique_rows

__all__ = ["calltree"]


def calltree(source: Any, start: int | None = None, stop: int | None = None,
             locations: Iterable[int] | None = None) -> CallTree:
    """The call-path profile of ``[start, stop)`` over ``locations`` (default all) of a
    `Graph` or an `Archive`, per location (see the module docstring for what counts
    where)."""
    lo = NO_START if start is None else int(start)
    hi = NO_STOP if stop is None else int(stop)
    if lo > hi:
        raise ValueError(f"the window starts at {start}, after its stop {stop}")
    chosen = chosen_roots(source, locations)
    t = tables_for(source.pool)
    paths = _Paths(len(chosen.locations), max(len(source.definitions.regions), t.regions, 1))
    sums = _Sums()
    if lo < hi and chosen.locations:
        seeds, seed_paths = _descend(t, paths, sums, chosen.root, chosen.start, lo, hi)
        _below_seeds(t, paths, sums, seeds, seed_paths)
    calls, inclusive, exclusive = sums.totals(paths.count)
    return calltree_of(source.definitions, start, stop, chosen.locations, *paths.columns(), calls, inclusive,
                       exclusive)


class _Paths:
    """Call paths of the query's locations, interned top-down: path ``i`` of location
    ``location[i]`` (an index into the query's locations) is ``parent[i]`` followed by
    region ``region[i]``, at ``depth[i]``; the first ``roots`` ids are the locations' empty
    paths. Columns grow by doubling; the keys ``parent * regions + region`` of the paths
    made are kept sorted, with their ids, for the lookups."""

    def __init__(self, roots: int, regions: int):
        self.roots, self.regions, self.count = roots, regions, roots
        self._columns = np.zeros((4, max(16, 2 * roots)), np.int64)  # parent, region, depth, location
        self._columns[:2, :roots] = -1
        self._columns[3, :roots] = np.arange(roots)
        self._keys = np.zeros(0, np.int64)
        self._ids = np.zeros(0, np.int64)

    def extend(self, parents: np.ndarray, regions: np.ndarray) -> np.ndarray:
        """The ids of the paths ``parents[i]`` followed by ``regions[i]``, made on first use."""
        unique, inverse = np.unique(parents * self.regions + regions, return_inverse=True)
        at = np.searchsorted(self._keys, unique)
        known = np.zeros(len(unique), bool)
        inside = at < len(self._keys)
        known[inside] = self._keys[at[inside]] == unique[inside]
        ids = np.zeros(len(unique), np.int64)
        ids[known] = self._ids[at[known]]
        new = unique[~known]
        made = self.count + np.arange(len(new), dtype=np.int64)
        ids[~known] = made
        self._keys = np.insert(self._keys, at[~known], new)  # ``new`` is sorted: the keys stay sorted
        self._ids = np.insert(self._ids, at[~known], made)
        self._append(new // self.regions, new % self.regions)
        return ids[inverse.ravel()]

    def _append(self, parent: np.ndarray, region: np.ndarray) -> None:
        end = self.count + len(parent)
        if end > self._columns.shape[1]:
            grown = np.zeros((4, 2 * end), np.int64)
            grown[:, :self.count] = self._columns[:, :self.count]
            self._columns = grown
        depth, location = self._columns[2:, parent]
        self._columns[:, self.count:end] = (parent, region, depth + 1, location)
        self.count = end

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``parent``, ``region``, ``depth`` and ``location`` per path id (ids increase
        from a path to the paths that continue it)."""
        parent, region, depth, location = self._columns[:, :self.count]
        return parent, region, depth, location


class _Sums:
    """Calls, inclusive and exclusive ticks added per path id, summed at the end (int64,
    wrapping like every sum of the format)."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, path: np.ndarray, calls: np.ndarray | int, inclusive: np.ndarray | int,
            exclusive: np.ndarray) -> None:
        self._parts.append(tuple(np.broadcast_to(np.asarray(v, np.int64), path.shape)
                                 for v in (path, calls, inclusive, exclusive)))

    def totals(self, paths: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.zeros((3, paths), np.int64)
        if self._parts:
            path, *values = (np.concatenate(column) for column in zip(*self._parts))
            for row, value in zip(out, values):
                np.add.at(row, path, value)
        return out[0], out[1], out[2]


def _descend(t: NodeTables, paths: _Paths, sums: _Sums, roots: np.ndarray, begins: np.ndarray, lo: int,
             hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The window's descent (4.5.3) from ``roots`` (root i begins at ``begins[i]`` and is
    location i's empty path): a node is live when it ends at or after ``lo`` and begins
    before ``hi``, a seed when live and inside, else cut. A cut call adds its part inside
    (and a call when entered inside) to its path and takes the part from its enclosing
    call's exclusive time. Returns the seeds and their (enclosing) paths."""
    nodes, times = np.asarray(roots, np.int64), np.asarray(begins, np.int64)
    path = np.arange(len(nodes), dtype=np.int64)
    seeds: list[tuple[np.ndarray, np.ndarray]] = []
    while len(nodes):
        end = times + t.total[nodes]
        live = (end >= lo) & (times < hi)
        inside = live & (times >= lo) & (end < hi)
        seeds.append((nodes[inside], path[inside]))
        cut = live & ~inside
        nodes, times, end, path = nodes[cut], times[cut], end[cut], path[cut]
        call = t.kind[nodes] == NodeKind.CALL
        own = path.copy()
        if call.any():
            own[call] = paths.extend(path[call], t.key0[nodes[call]])
            part = np.maximum(0, np.minimum(end[call], hi) - np.maximum(times[call], lo))
            sums.add(own[call], times[call] >= lo, part, part)
            _take_from_enclosing(paths, sums, path[call], part)
        kids, owner, offset = t.child_offsets(nodes)
        nodes, times, path = kids, times[owner] + offset, own[owner]
    found, found_paths = (np.concatenate(column) for column in zip(*seeds))
    return found, found_paths


def _below_seeds(t: NodeTables, paths: _Paths, sums: _Sums, nodes: np.ndarray, path: np.ndarray) -> None:
    """Add the sub-trees of the seeds ``nodes`` (each under ``path``): their top-level
    calls' time leaves the enclosing call's exclusive time; then the distinct (node, path)
    pairs a level at a time with their multiplicities, each call adding ``weight`` calls,
    ``weight * total`` inclusive and ``weight * (total - callees' time)`` exclusive ticks
    to its path."""
    _take_from_enclosing(paths, sums, path, t.calltime[nodes])
    weight = np.ones(len(nodes), np.int64)
    while len(nodes):
        (nodes, path), inverse = unique_rows([nodes, path], [len(t), paths.count])
        summed = np.zeros(len(nodes), np.int64)
        np.add.at(summed, inverse, weight)
        weight = summed
        call = t.kind[nodes] == NodeKind.CALL
        if call.any():
            path = path.copy()
            path[call] = paths.extend(path[call], t.key0[nodes[call]])
            called, times = weight[call], t.total[nodes[call]]
            sums.add(path[call], called, called * times, called * (times - t.inner[nodes[call]]))
        kids, owner = t.expand(nodes)
        inner = t.kind[kids] <= NodeKind.ARTIFICIAL  # atomic nodes hold no call
        kids, owner = kids[inner], owner[inner]
        nodes, path, weight = kids, path[owner], weight[owner]


def _take_from_enclosing(paths: _Paths, sums: _Sums, path: np.ndarray, ticks: np.ndarray) -> None:
    """Subtract ``ticks`` from the exclusive time of the calls at ``path`` (not from a
    location's empty path, which is no call)."""
    enclosed = path >= paths.roots
    sums.add(path[enclosed], 0, 0, -ticks[enclosed])
