"""Random hierarchies and microscopic models for the overview tests."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from hypothesis import strategies as st

from ccgformat.aggregate_model import AggregateModel, Hierarchy

#: A tree as nested lists: a leaf is ``None``, a node the list of its subtrees.
Tree = Any


def hierarchy_of(tree: Tree, locations: Sequence[int] | None = None) -> Hierarchy:
    """The `Hierarchy` of a nested-list tree, nodes in preorder, leaves numbered in order
    (or mapped to ``locations``)."""
    names: list[str] = []
    parents: list[int] = []
    first: list[int] = []
    stop: list[int] = []
    leaves = [0]

    def visit(subtree: Tree, parent: int) -> None:
        node = len(names)
        names.append(f"n{node}")
        parents.append(parent)
        first.append(leaves[0])
        stop.append(-1)
        if subtree is None:
            leaves[0] += 1
        else:
            for child in subtree:
                visit(child, node)
        stop[node] = leaves[0]
    visit(tree, -1)
    count = leaves[0]
    order = np.arange(count) if locations is None else np.asarray(locations)
    return Hierarchy(tuple(names), tuple("node" for _ in names), np.array(parents, np.int64),
                     np.array(first, np.int64), np.array(stop, np.int64), order.astype(np.int64))


def trees(max_leaves: int) -> st.SearchStrategy[Tree]:
    """Nested-list trees with 1 to ``max_leaves`` leaves (nodes with children have 1-3)."""
    leaf = st.none()
    return st.recursive(leaf, lambda inner: st.lists(inner, min_size=1, max_size=3),
                        max_leaves=max_leaves).filter(lambda tree: 1 <= count_leaves(tree) <= max_leaves)


def count_leaves(tree: Tree) -> int:
    return 1 if tree is None else sum(count_leaves(child) for child in tree)


def model_of(hierarchy: Hierarchy, values: np.ndarray, bounds: np.ndarray | None = None) -> AggregateModel:
    """A model whose rows are the leaves in order (``values[leaf, t, x]`` ticks)."""
    leaves, slices, states = values.shape
    if bounds is None:
        bounds = np.arange(slices + 1, dtype=np.int64) * 100
    locations = np.sort(np.asarray(hierarchy.leaf_locations))
    rows = np.searchsorted(locations, hierarchy.leaf_locations)
    ordered = np.empty_like(values)
    ordered[rows] = values
    return AggregateModel(np.asarray(bounds, np.int64), tuple(f"s{x}" for x in range(states)), locations,
                          ordered.astype(np.int64), hierarchy)


def random_model(rng: np.random.Generator, leaves: int, slices: int, states: int, fanout: int = 4,
                 sparse: float = 0.3) -> AggregateModel:
    """A random balanced-ish hierarchy of ``leaves`` leaves under groups of ``fanout``, with
    values in ticks of slices 100 ticks long (a fraction ``sparse`` of the cells idle)."""
    tree: Tree = [None] * leaves
    while len(tree) > fanout:
        tree = [tree[k:k + fanout] for k in range(0, len(tree), fanout)]
    hierarchy = hierarchy_of(tree)
    shares = rng.dirichlet(np.ones(states) * 0.5, size=(leaves, slices))
    busy = rng.random((leaves, slices, 1)) >= sparse
    values = np.floor(shares * 100 * busy).astype(np.int64)
    return model_of(hierarchy, values)


def perturbed_model(leaves: int = 64) -> AggregateModel:
    """Leaves (under groups of 4) in state 0, except leaves 16-31 in state 1 during slices 4-7 of 12."""
    model = random_model(np.random.default_rng(0), leaves, 12, 2, fanout=4)
    values = np.zeros_like(model.values)
    values[:, :, 0] = 90
    values[16:32, 4:8, 0], values[16:32, 4:8, 1] = 0, 60
    return AggregateModel(model.bounds, model.states, model.locations, values, model.hierarchy)
