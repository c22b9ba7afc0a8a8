"""The nodes of a topology graph (paper 001, section 3.2.2): the resource hierarchy cut at a
depth, each node standing for its sub-tree, and the sums (or means, or maxima) of their
leaves' values.

The containers are the hierarchy's nodes (`ccgformat.hierarchy`), with one change: a
location that is the only child of its tree node is that node (a Paje container and the
location of its events, an MPI rank and its one thread), so that every container is drawn
once. Cut at depth ``D`` (the root is depth 0), the nodes are the containers of depth
``D`` and the leaves above it; they partition the leaves, each a run of leaf positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..aggregate_model import Hierarchy
from ..ordering import sorted_distinct

__all__ = ["AGGREGATES", "Cut", "cut_hierarchy", "aggregate_runs", "node_depths"]

#: How a node's value comes from its leaves': their sum, their mean or their maximum
#: (mean and maximum over the leaves that carry the metric).
AGGREGATES = ("sum", "mean", "max")


@dataclass(frozen=True, eq=False)
class Cut:
    """The nodes of a cut, in preorder: ``nodes`` (hierarchy node ids), ``depths``, and the
    leaf positions each covers, ``first_leaf[i] .. stop_leaf[i] - 1`` (consecutive runs)."""

    nodes: np.ndarray
    depths: np.ndarray
    first_leaf: np.ndarray
    stop_leaf: np.ndarray


def node_depths(hierarchy: Hierarchy) -> np.ndarray:
    """The depth of every hierarchy node (the root 0): one step up per level, all nodes at once."""
    parents = np.asarray(hierarchy.parents, np.int64)
    depth = np.zeros(len(parents), np.int64)
    ancestor = parents.copy()
    while (ancestor >= 0).any():
        above = ancestor >= 0
        depth[above] += 1
        ancestor[above] = parents[ancestor[above]]
    return depth


def _folded_leaves(hierarchy: Hierarchy) -> np.ndarray:
    """Per leaf position, the container that stands for it: its parent when it is that
    parent's only child, else itself."""
    parents = np.asarray(hierarchy.parents, np.int64)
    leaves = hierarchy.leaf_nodes()
    parent = parents[leaves]
    children = np.bincount(parents[parents >= 0], minlength=len(parents))
    only = (parent >= 0) & (children[np.maximum(parent, 0)] == 1)
    return np.where(only, parent, leaves)


def cut_hierarchy(hierarchy: Hierarchy, depth: int | None = None, within: int = 0) -> Cut:
    """The containers of ``depth`` (None: the leaves' containers) and the leaves above it,
    in the sub-tree of node ``within`` (a cut above that node gives the node itself)."""
    parents = np.asarray(hierarchy.parents, np.int64)
    depths = node_depths(hierarchy)
    lo, hi = int(hierarchy.first_leaf[within]), int(hierarchy.stop_leaf[within])
    chosen = _folded_leaves(hierarchy)[lo:hi]
    if depth is not None:
        floor = max(int(depth), int(depths[within]))
        while (depths[chosen] > floor).any():
            chosen = np.where(depths[chosen] > floor, parents[chosen], chosen)
    nodes = sorted_distinct(chosen)
    return Cut(nodes, depths[nodes], np.asarray(hierarchy.first_leaf)[nodes].astype(np.int64),
               np.asarray(hierarchy.stop_leaf)[nodes].astype(np.int64))


def aggregate_runs(values: np.ndarray, carried: np.ndarray, cut: Cut, how: str) -> np.ndarray:
    """Per node of ``cut`` and column, the ``how`` (one of `AGGREGATES`) of the leaves'
    ``values`` over its run of leaves (``values``, ``carried``: ``[leaves, columns]`` in
    leaf order), among the leaves that carry the column; NaN where none does."""
    out = np.full((len(cut.nodes), values.shape[1]), np.nan)
    if not len(cut.nodes) or not values.shape[1]:
        return out
    span = slice(int(cut.first_leaf[0]), int(cut.stop_leaf[-1]))
    values, carried, starts = values[span], carried[span], cut.first_leaf - cut.first_leaf[0]
    count = np.add.reduceat(carried.astype(np.int64), starts, axis=0)
    if how == "max":
        total = np.maximum.reduceat(np.where(carried, values, -np.inf), starts, axis=0)
    else:
        total = np.add.reduceat(np.where(carried, values, 0.0), starts, axis=0)
        if how == "mean":
            total = total / np.maximum(count, 1)
    return np.where(count > 0, total, out)
