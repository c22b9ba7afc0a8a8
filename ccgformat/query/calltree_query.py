"""Call-path profiles (the calling context tree) on the compressed graph: inclusive and
exclusive time and calls per call path - the regions open from a location's root down to
the call, a region appearing twice (recursion) being two entries - per location.

Rules for a window ``[start, stop)`` (``None`` is open-ended), those of
`ccgformat.query.profile_query` per call path:

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

A large graph (`streaming.streams`), whose node tables would take gigabytes, replays its
locations' events in the window instead (`calltree_stream`): the same paths and sums.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..graph.graph import chosen_roots
from ..graph.pool import NodeKind
from .calltree_paths import CallPaths, PathSums, take_from_enclosing
from .calltree_result import CallTree, calltree_of
from .calltree_stream import replayed_calls
from .profile_window import NO_START, NO_STOP
from .streaming import streams
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
    sums = PathSums()
    if streams(source):
        paths = CallPaths(len(chosen.locations), len(source.definitions.regions))
        if lo < hi:
            replayed_calls(source, chosen, paths, sums, lo, hi)
    else:
        t = tables_for(source.pool)
        paths = CallPaths(len(chosen.locations), max(len(source.definitions.regions), t.regions))
        if lo < hi and chosen.locations:
            seeds, seed_paths = _descend(t, paths, sums, chosen.root, chosen.start, lo, hi)
            _below_seeds(t, paths, sums, seeds, seed_paths)
    calls, inclusive, exclusive = sums.totals(paths.count)
    return calltree_of(source.definitions, start, stop, chosen.locations, *paths.columns(), calls, inclusive,
                       exclusive)


def _descend(t: NodeTables, paths: CallPaths, sums: PathSums, roots: np.ndarray, begins: np.ndarray, lo: int,
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
            take_from_enclosing(paths, sums, path[call], part)
        kids, owner, offset = t.child_offsets(nodes)
        nodes, times, path = kids, times[owner] + offset, own[owner]
    found, found_paths = (np.concatenate(column) for column in zip(*seeds))
    return found, found_paths


def _below_seeds(t: NodeTables, paths: CallPaths, sums: PathSums, nodes: np.ndarray, path: np.ndarray) -> None:
    """Add the sub-trees of the seeds ``nodes`` (each under ``path``): their top-level
    calls' time leaves the enclosing call's exclusive time; then the distinct (node, path)
    pairs a level at a time with their multiplicities, each call adding ``weight`` calls,
    ``weight * total`` inclusive and ``weight * (total - callees' time)`` exclusive ticks
    to its path."""
    take_from_enclosing(paths, sums, path, t.calltime[nodes])
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

