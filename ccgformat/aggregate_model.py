"""The microscopic model of a trace (paper 000, section III; paper 002): resources, taken
as the leaves of a resource hierarchy, times time slices times states, each cell the
exclusive time a state holds on a resource within a slice.

`Hierarchy` is the tree over the archive's locations; `AggregateModel` is what
`Archive.aggregate` answers and what the overview's aggregation (papers 000 and 002)
reads. Both are plain arrays so that a million resources cost arrays, not objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["AggregateModel", "Hierarchy"]


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A tree whose leaves are archive locations, nodes numbered in preorder (node 0 is
    the root). Each node covers the contiguous run of leaf positions
    ``first_leaf[n] .. stop_leaf[n] - 1``, so a hierarchy-consistent part of an overview
    is a node and an interval of slices. Every node covers at least one leaf; a node
    without children is a leaf and covers exactly one.

    ``leaf_locations[i]`` is the archive location index (the index in
    ``Definitions.locations``) of leaf position ``i``.
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    parents: np.ndarray
    first_leaf: np.ndarray
    stop_leaf: np.ndarray
    leaf_locations: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    @property
    def leaves(self) -> int:
        """How many leaves (locations) the tree has."""
        return len(self.leaf_locations)

    @cached_property
    def _child_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Children of every node as a CSR pair (offsets per node, children in preorder)."""
        parents = np.asarray(self.parents, dtype=np.int64)
        children = np.flatnonzero(parents >= 0)
        order = np.argsort(parents[children], kind="stable")
        children = children[order]
        counts = np.bincount(parents[children], minlength=len(parents))
        offsets = np.zeros(len(parents) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return offsets, children

    def leaf_nodes(self) -> np.ndarray:
        """The node of each leaf position (the nodes without children)."""
        offsets, _ = self._child_index
        childless = np.flatnonzero(offsets[1:] == offsets[:-1])
        childless = childless[np.asarray(self.first_leaf)[childless] < self.leaves]  # (a bare root holds none)
        nodes = np.empty(self.leaves, np.int64)
        nodes[np.asarray(self.first_leaf)[childless]] = childless
        return nodes

    def children(self, node: int) -> np.ndarray:
        """The children of ``node`` in preorder (empty for a leaf)."""
        offsets, children = self._child_index
        return children[offsets[node]:offsets[node + 1]]

    def path(self, node: int) -> str:
        """The node's names from the root, joined by "/"."""
        names = []
        while node >= 0:
            names.append(self.names[node])
            node = int(self.parents[node])
        return "/".join(reversed(names))

    def paths(self) -> list[str]:
        """Every node's `path`, in node order (a parent comes before its children)."""
        out: list[str] = []
        for name, parent in zip(self.names, np.asarray(self.parents).tolist()):
            out.append(name if parent < 0 else f"{out[parent]}/{name}")
        return out

    def label(self, node: int) -> str:
        """The node's name for a picture: after its parent's when the parent is not the
        root and has another name (thread names repeat from process to process)."""
        parent = int(self.parents[node])
        if parent > 0 and self.names[parent] != self.names[node]:
            return f"{self.names[parent]}/{self.names[node]}"
        return self.names[node]


@dataclass(frozen=True, eq=False)
class AggregateModel:
    """The microscopic model over a window (paper 000, section III.A).

    - ``bounds``: int64, ``T + 1`` ticks; slice ``t`` is ``[bounds[t], bounds[t + 1])``.
    - ``states``: the state names (regions, or the timeline's groups).
    - ``locations``: int64, the archive location index of each row of ``values``, ascending.
    - ``values``: int64 ``[len(locations), T, len(states)]``: ``values[r, t, x]`` is the
      exclusive time in ticks that state ``x`` is the innermost open region on location
      ``locations[r]`` within slice ``t``.
    - ``hierarchy``: the resource hierarchy over exactly these locations.
    - ``resolution``: ticks per second (the trace's timer resolution).
    """

    bounds: np.ndarray
    states: tuple[str, ...]
    locations: np.ndarray
    values: np.ndarray
    hierarchy: Hierarchy
    resolution: int = 1

    def values_by_leaf(self) -> np.ndarray:
        """``values`` with its rows in the hierarchy's leaf order."""
        rows = np.searchsorted(self.locations, self.hierarchy.leaf_locations)
        return self.values[rows]

    def location_names(self) -> tuple[str, ...]:
        """The name of each row's location (its leaf's name in the hierarchy)."""
        names = np.empty(len(self.locations), object)
        names[np.searchsorted(self.locations, self.hierarchy.leaf_locations)] = \
            np.asarray(self.hierarchy.names, object)[self.hierarchy.leaf_nodes()]
        return tuple(names.tolist())

    # the conversions are registered from above (ccgformat.interop), as the archive's
    # queries are; the model sits below the archive, so it looks them up when called

    def to_xarray(self) -> xr.DataArray:
        """``values`` as an ``xarray.DataArray`` with dims location x slice x state and
        their labels: location ids and names, slice bounds in seconds, state names
        (`ccgformat.interop.labelled`; extra ``xarray``)."""
        from .archive.queries import run_query
        return run_query("model_to_xarray", self)

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        from .archive.queries import run_query
        return run_query("repr_html", self)
