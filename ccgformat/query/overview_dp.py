"""The optimal hierarchy-and-order-consistent partition (paper 000, section III.E;
paper 002, Algorithm 1 when there is one slice).

For every node, from the leaves up, and every interval ``(i, j)`` by growing length, the
best partition of the area ``(node, i..j)`` is the best of: the area as one part (pIC
``p gain - (1 - p) loss``), a spatial cut (the children's best partitions over the same
interval, for a node with children) and every temporal cut ``(i..c), (c + 1..j)`` - for
leaves too (the extracted pseudo-code of paper 000 nests the temporal loop under "if the
node has children"; it must not). The cost is O(|S| |T|^3).

Ties go to the coarser choice, so the result is deterministic: of the candidates - in the
order one part, spatial cut, temporal cuts by ascending ``c`` - whose pIC is within
``TOLERANCE * max(1, |top|)`` of the highest, the one with the fewest parts wins, then the
first. ``cut[node, (i, j)]`` records the choice as paper 000 does: ``j`` for one part,
``-1`` for a spatial cut, ``c`` for a temporal cut.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import backends
from ..aggregate_model import Hierarchy
from .overview_measures import Measures, interval_index

__all__ = ["TOLERANCE", "Partition", "Solution", "depths", "partition", "solve", "solve_reference",
           "parts_reference"]

#: Relative tolerance under which two pIC values tie (then the fewer parts win).
TOLERANCE = 1e-9
SPATIAL = -1


@dataclass(frozen=True, eq=False)
class Solution:
    """The DP tables: best pIC, its part count and the cut, each ``[nodes, T (T + 1) / 2]``."""

    measures: Measures
    p: float
    pic: np.ndarray
    parts: np.ndarray
    cut: np.ndarray


@dataclass(frozen=True, eq=False)
class Partition:
    """An optimal partition: parts ``(node[k], first[k]..last[k])`` and their totals."""

    p: float
    pic: float
    gain: float
    loss: float
    node: np.ndarray
    first: np.ndarray
    last: np.ndarray

    def __len__(self) -> int:
        return len(self.node)

    def same_parts(self, other: Partition) -> bool:
        """True when both partitions have the same parts (the DP lists them in a fixed order)."""
        return (len(self) == len(other) and bool(np.array_equal(self.node, other.node))
                and bool(np.array_equal(self.first, other.first)) and bool(np.array_equal(self.last, other.last)))


def depths(hierarchy: Hierarchy) -> np.ndarray:
    """The depth of every node (root 0); nodes are in preorder, parents first."""
    parents = np.asarray(hierarchy.parents, dtype=np.int64)
    depth = np.zeros(len(parents), dtype=np.int64)
    for node in range(1, len(parents)):
        depth[node] = depth[parents[node]] + 1
    return depth


def _choose(values: np.ndarray, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of candidates (last axis, in order), the one chosen: the fewest parts among
    those within the tolerance of the highest value, then the first. Returns the chosen
    value, parts and position."""
    top = values.max(axis=-1, keepdims=True)
    tied = values >= top - TOLERANCE * np.maximum(1.0, np.abs(top))
    position = np.argmin(np.where(tied, parts, np.iinfo(np.int64).max), axis=-1)[..., None]
    return (np.take_along_axis(values, position, -1)[..., 0], np.take_along_axis(parts, position, -1)[..., 0],
            position[..., 0])


def solve_reference(measures: Measures, p: float) -> Solution:
    """The DP in numpy: node by node from the deepest level, vectorized over the nodes of a
    level and the intervals of one length."""
    hierarchy, slices = measures.hierarchy, measures.slices
    keep = p * measures.gain - (1.0 - p) * measures.loss
    nodes, columns = keep.shape
    pic, parts = np.zeros((nodes, columns)), np.zeros((nodes, columns), dtype=np.int64)
    cut = np.zeros((nodes, columns), dtype=np.int32)
    child_pic, child_parts = np.zeros((nodes, columns)), np.zeros((nodes, columns), dtype=np.int64)
    parents = np.asarray(hierarchy.parents, dtype=np.int64)
    has_children = np.bincount(parents[parents >= 0], minlength=nodes) > 0
    depth = depths(hierarchy)
    for level_depth in range(int(depth.max()), -1, -1):
        level = np.flatnonzero(depth == level_depth)
        for length in range(1, slices + 1):
            first = np.arange(slices - length + 1)
            last = first + length - 1
            column = interval_index(first, last)
            middle = first[:, None] + np.arange(length - 1)[None, :]                  # [m, length - 1]
            left, right = interval_index(first[:, None], middle), interval_index(middle + 1, last[:, None])
            spatial = np.where(has_children[level][:, None], child_pic[level][:, column], -np.inf)
            values = np.concatenate((keep[level][:, column, None], spatial[..., None],
                                     pic[level][:, left] + pic[level][:, right]), axis=-1)
            counts = np.concatenate((np.ones((len(level), len(column), 1), dtype=np.int64),
                                     child_parts[level][:, column, None],
                                     parts[level][:, left] + parts[level][:, right]), axis=-1)
            best, best_parts, position = _choose(values, counts)
            where = np.ix_(level, column)
            pic[where], parts[where] = best, best_parts
            cut[where] = np.where(position == 0, last, np.where(position == 1, SPATIAL, first + position - 2))
        for node in level[parents[level] >= 0]:  # children in preorder, as the C kernel sums them
            child_pic[parents[node]] += pic[node]
            child_parts[parents[node]] += parts[node]
    return Solution(measures, p, pic, parts, cut)


def parts_reference(hierarchy: Hierarchy, slices: int, cut: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parts ``(node, first, last)`` the cuts give from ``(root, 0..T-1)``, depth first
    (children in order, earlier interval first)."""
    found: list[tuple[int, int, int]] = []
    stack = [(0, 0, slices - 1)]
    while stack:
        node, first, last = stack.pop()
        choice = int(cut[node, interval_index(first, last)])
        if choice == last:
            found.append((node, first, last))
        elif choice == SPATIAL:
            stack.extend((int(child), first, last) for child in hierarchy.children(node)[::-1])
        else:
            stack.extend(((node, choice + 1, last), (node, first, choice)))
    array = np.array(found, dtype=np.int64).reshape(-1, 3)
    return array[:, 0], array[:, 1], array[:, 2]


def solve(measures: Measures, p: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The optimal pIC at ``p`` and its parts (node, first, last), with the active backend."""
    if backends.native():
        from .._native import overview as native
        return native.solve(measures, p, TOLERANCE)
    solution = solve_reference(measures, p)
    whole = interval_index(0, measures.slices - 1)
    return (float(solution.pic[0, whole]),
            *parts_reference(measures.hierarchy, measures.slices, solution.cut))


def partition(measures: Measures, p: float) -> Partition:
    """The optimal partition at ``p`` with its pIC, gain and loss (sums over its parts)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], not {p}")
    pic, node, first, last = solve(measures, p)
    column = interval_index(first, last)
    return Partition(p, pic, float(measures.gain[node, column].sum()), float(measures.loss[node, column].sum()),
                     node, first, last)
