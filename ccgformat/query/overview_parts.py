"""What the overview draws from a partition: each part's state sums, mode and share, the
visual aggregates of parts too thin to draw (paper 000, section IV) and the node labels."""

from __future__ import annotations

import numpy as np

from ..aggregate_model import Hierarchy
from .overview_dp import depths

__all__ = ["cell_prefix", "label_nodes", "part_sums", "visual_aggregates"]

DIAGONAL, CROSS = 1, 2


def cell_prefix(r: np.ndarray) -> np.ndarray:
    """2-D prefix sums of ``r[leaf, t, x]`` over leaves and slices: ``[L + 1, T + 1, X]``."""
    out = np.zeros((r.shape[0] + 1, r.shape[1] + 1, r.shape[2]))
    np.cumsum(np.cumsum(r, axis=0), axis=1, out=out[1:, 1:])
    return out


def part_sums(prefix: np.ndarray, row: np.ndarray, stop: np.ndarray, first: np.ndarray,
              last: np.ndarray) -> np.ndarray:
    """``V_x`` of each area (rows ``row..stop-1``, slices ``first..last``): ``[parts, X]``."""
    out = np.empty((len(row), prefix.shape[2]))
    step = 1 << 16
    for k in range(0, len(row), step):
        a, b, f, l = (v[k:k + step] for v in (row, stop, first, last + 1))
        out[k:k + step] = prefix[b, l] - prefix[a, l] - prefix[b, f] + prefix[a, f]
    return out


def mode_of(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mode state of each row of sums and its share of the states' total (paper 000,
    section IV: alpha = rho_max / sum rho; 0 where nothing is attributed)."""
    mode = np.argmax(sums, axis=1) if sums.shape[1] else np.zeros(len(sums), dtype=np.int64)
    total = sums.sum(axis=1)
    top = sums[np.arange(len(sums)), mode] if sums.shape[1] else np.zeros(len(sums))
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, top / np.where(total > 0, total, 1.0), 0.0)
    return mode, share


def visual_nodes(hierarchy: Hierarchy, big: np.ndarray) -> np.ndarray:
    """For every node, its lowest ancestor-or-self that is ``big`` (the root when none is)."""
    parents = np.asarray(hierarchy.parents, dtype=np.int64)
    depth = depths(hierarchy)
    out = np.arange(len(parents))
    for level in range(1, int(depth.max()) + 1 if len(depth) else 1):
        nodes = np.flatnonzero(depth == level)
        out[nodes] = np.where(big[nodes], nodes, out[parents[nodes]])
    return out


def visual_aggregates(hierarchy: Hierarchy, prefix: np.ndarray, node: np.ndarray, first: np.ndarray,
                      last: np.ndarray, thin: np.ndarray, big: np.ndarray) -> dict[str, np.ndarray]:
    """The rectangles that replace the ``thin`` parts: grouped by the lowest ancestor that
    is ``big`` (tall enough), each group drawn over its rows as one rectangle per interval
    marked by a diagonal when all its resources share the same temporal partition, else as
    one rectangle over its whole time span marked by a cross. Arrays row, stop, first,
    last, sums ([n, X]) and mark."""
    group = visual_nodes(hierarchy, big)[node[thin]]
    f, l = first[thin], last[thin]
    lo, hi = hierarchy.first_leaf[node[thin]], hierarchy.stop_leaf[node[thin]]
    sums = part_sums(prefix, lo, hi, f, l)
    out: dict[str, list] = {"row": [], "stop": [], "first": [], "last": [], "sums": [], "mark": []}
    order = np.lexsort((f, group))
    for members in np.split(order, np.flatnonzero(np.diff(group[order])) + 1) if len(order) else []:
        intervals, inverse = np.unique(np.stack((f[members], l[members]), axis=1), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        leaves = np.bincount(inverse, weights=(hi - lo)[members], minlength=len(intervals))
        disjoint = bool(np.all(intervals[1:, 0] > intervals[:-1, 1]))
        row, stop = int(lo[members].min()), int(hi[members].max())
        if disjoint and np.all(leaves == leaves[0]):
            for k, (a, b) in enumerate(intervals):
                out["row"].append(row), out["stop"].append(stop), out["first"].append(a), out["last"].append(b)
                out["sums"].append(sums[members][inverse == k].sum(axis=0)), out["mark"].append(DIAGONAL)
        else:
            out["row"].append(row), out["stop"].append(stop)
            out["first"].append(int(f[members].min())), out["last"].append(int(l[members].max()))
            out["sums"].append(sums[members].sum(axis=0)), out["mark"].append(CROSS)
    states = prefix.shape[2]
    return {key: (np.array(value, dtype=np.float64).reshape(-1, states) if key == "sums"
                  else np.array(value, dtype=np.int64)) for key, value in out.items()}


def label_nodes(hierarchy: Hierarchy, row_height: float, minimum: float = 10.0) -> list[int]:
    """The nodes to label, top to bottom: the deepest level whose nodes (with the leaves
    above it, which stand for themselves) are all at least ``minimum`` pixels tall, else
    every leaf (the picture thins their labels: `ccgformat.figures.axes.thinned`)."""
    depth = depths(hierarchy)
    height = (np.asarray(hierarchy.stop_leaf) - np.asarray(hierarchy.first_leaf)) * row_height
    is_leaf = np.diff(hierarchy._child_index[0]) == 0
    for level in range(int(depth.max()), 0, -1):
        chosen = np.flatnonzero((depth == level) | (is_leaf & (depth < level)))  # these tile the leaves
        if len(chosen) and height[chosen].min() >= minimum:
            return sorted(chosen.tolist(), key=lambda n: hierarchy.first_leaf[n])
    leaves = np.flatnonzero(is_leaf)
    return leaves[np.argsort(np.asarray(hierarchy.first_leaf)[leaves], kind="stable")].tolist()
