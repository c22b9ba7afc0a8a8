"""The result of a call-path profile (`ccgformat.query.calltree_query`): the call paths as a
tree, and per call path and location the calls, inclusive and exclusive ticks; its
assembly from the per-location paths the query interned."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..archive.queries import run_query
from ..model import Definitions
from .groups import region_name
from .timeline_walk import unique_rows

if TYPE_CHECKING:
    import hatchet
    import pandas as pd


@dataclass(eq=False)  # numpy columns: compare `to_json()` instead
class CallTree:
    """Calls, inclusive and exclusive time (ticks) per call path and location of a window.

    Paths are numbered in depth-first order, the paths continuing one ordered by region
    id: path ``i`` is path ``parent[i]`` (-1: none, a top-level call) followed by region
    ``region[i]``. Rows (``path``, ``location``, ``calls``, ``inclusive``, ``exclusive``;
    ordered by path, then by the order of ``locations``) are there for the paths listed
    at a location (see `ccgformat.query.calltree_query`)."""

    start: int | None
    stop: int | None
    locations: list[int]
    timer_resolution: int
    region_names: list[str]  #: per region id
    parent: np.ndarray
    region: np.ndarray
    path: np.ndarray
    location: np.ndarray
    calls: np.ndarray
    inclusive: np.ndarray
    exclusive: np.ndarray

    def __len__(self) -> int:
        """The number of call paths."""
        return len(self.parent)

    @cached_property
    def paths(self) -> list[tuple[int, ...]]:
        """Every call path as the tuple of its region ids, root first."""
        out: list[tuple[int, ...]] = []
        for parent, region in zip(self.parent.tolist(), self.region.tolist()):
            out.append((out[parent] if parent >= 0 else ()) + (region,))
        return out

    @cached_property
    def depth(self) -> np.ndarray:
        """Per call path, its length (1 for a top-level call)."""
        return np.array([len(path) for path in self.paths], np.int64)

    def names(self, path: int) -> tuple[str, ...]:
        """The region names of call path ``path``, root first."""
        return tuple(self.region_names[region] for region in self.paths[path])

    def totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per call path, its calls, inclusive and exclusive ticks summed over the
        locations."""
        out = np.zeros((3, len(self)), np.int64)
        for row, values in zip(out, (self.calls, self.inclusive, self.exclusive)):
            np.add.at(row, self.path, values)
        return out[0], out[1], out[2]

    def rows(self, per_location: bool = True) -> list[dict[str, Any]]:
        """One dict per call path and location (``per_location``), or per call path summed
        over the locations: ``path`` (region names), ``regions`` (ids), ``location`` (per
        location only), ``calls``, ``inclusive``, ``exclusive`` (ticks)."""
        if per_location:
            columns = (self.path.tolist(), self.location.tolist(), self.calls.tolist(), self.inclusive.tolist(),
                       self.exclusive.tolist())
            return [{"path": list(self.names(path)), "regions": list(self.paths[path]), "location": location,
                     "calls": calls, "inclusive": inclusive, "exclusive": exclusive}
                    for path, location, calls, inclusive, exclusive in zip(*columns)]
        calls, inclusive, exclusive = (column.tolist() for column in self.totals())
        return [{"path": list(self.names(path)), "regions": list(self.paths[path]), "calls": calls[path],
                 "inclusive": inclusive[path], "exclusive": exclusive[path]} for path in range(len(self))]

    def to_json(self, per_location: bool = True) -> dict[str, Any]:
        """Plain lists and numbers (``ccg calltree --json``): the window, the locations,
        the timer resolution (ticks per second) and `rows`."""
        return {"start": self.start, "stop": self.stop, "locations": self.locations,
                "timer_resolution": self.timer_resolution, "per_location": per_location,
                "paths": self.rows(per_location)}

    def to_pandas(self, per_location: bool = True) -> pd.DataFrame:
        """A pandas DataFrame, one row per call path and location or per call path
        (`ccgformat.interop.calltree`; extra ``pandas``)."""
        return run_query("calltree_to_pandas", self, per_location)

    def to_hatchet(self, per_location: bool = True) -> hatchet.GraphFrame:
        """An ``llnl-hatchet`` GraphFrame: a node per call path, the times in seconds, per
        location (index ``rank``) or summed (`ccgformat.interop.calltree`; extra
        ``hatchet``)."""
        return run_query("calltree_to_hatchet", self, per_location)


def calltree_of(definitions: Definitions, start: int | None, stop: int | None, locations: list[int],
                parent: np.ndarray, region: np.ndarray, depth: np.ndarray, owner: np.ndarray, calls: np.ndarray,
                inclusive: np.ndarray, exclusive: np.ndarray) -> CallTree:
    """The `CallTree` of the paths interned per location (ids 0 .. ``len(locations)-1``
    the locations' empty paths, a path after its ``parent``; ``owner``: its location's
    index in ``locations``) with their sums: the listed ones, merged across locations
    into one tree of call paths."""
    listed = _listed(parent, depth, (calls != 0) | (inclusive != 0) | (exclusive != 0))
    listed[:len(locations)] = False
    common, tree_parent, tree_region = _merged(parent, region, depth, listed, len(locations))
    order = _depth_first(tree_parent, tree_region)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    kept = np.flatnonzero(listed)
    rows = np.lexsort((owner[kept], rank[common[kept]]))
    kept = kept[rows]
    regions = max(len(definitions.regions), int(region.max(initial=-1)) + 1)
    return CallTree(start, stop, list(locations), definitions.timer_resolution,
                    [region_name(definitions, r) for r in range(regions)],
                    np.where(tree_parent[order] >= 0, rank[np.maximum(tree_parent[order], 0)], -1),
                    tree_region[order], rank[common[kept]], np.array(locations, np.int64)[owner[kept]],
                    calls[kept], inclusive[kept], exclusive[kept])


def _listed(parent: np.ndarray, depth: np.ndarray, listed: np.ndarray) -> np.ndarray:
    """``listed`` and every path that a listed path continues, deepest first."""
    listed = listed.copy()
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=0)) + 2))
    for level in range(len(bounds) - 2, 0, -1):
        at = order[bounds[level]:bounds[level + 1]]
        listed[parent[at[listed[at]]]] = True
    return listed


def _merged(parent: np.ndarray, region: np.ndarray, depth: np.ndarray, listed: np.ndarray,
            roots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-location paths merged into one tree: per path id its tree path (-1 unless
    listed), and the tree paths' parents (-1 at the top) and regions."""
    common = np.full(len(parent), -1, np.int64)
    tree_parent, tree_region = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    made = 0
    for level in range(1, int(depth.max(initial=0)) + 1):
        at = np.flatnonzero(listed & (depth == level))
        above = np.where(parent[at] >= roots, common[parent[at]], -1)
        (above, regions), inverse = unique_rows([above + 1, region[at]], [made + 1, int(region.max()) + 1])
        common[at] = made + inverse
        tree_parent.append(above - 1)
        tree_region.append(regions)
        made += len(above)
    return common, np.concatenate(tree_parent), np.concatenate(tree_region)


def _depth_first(parent: np.ndarray, region: np.ndarray) -> np.ndarray:
    """The tree's paths in depth-first order, siblings by region id."""
    children: dict[int, list[int]] = {}
    for path in np.lexsort((region, parent)).tolist():
        children.setdefault(int(parent[path]), []).append(path)
    order: list[int] = []
    stack = children.get(-1, [])[::-1]
    while stack:
        path = stack.pop()
        order.append(path)
        stack.extend(children.get(path, [])[::-1])
    return np.array(order, np.int64)
