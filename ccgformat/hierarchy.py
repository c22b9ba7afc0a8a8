"""The resource hierarchy of a trace (paper 002): the definitions' system tree with the
locations as its leaves, as a `Hierarchy` in preorder.

Every importer records its source's hierarchy in ``Definitions.system_tree`` (OTF2 system
tree and location groups, the Paje container tree, EPILOG machine/node/process, OTF v1
processes and their threads, Chrome processes) and attaches each location to a tree node
(``Location.parent``). Tree nodes with no chosen location below them are left out; the
tops of the forest and the locations without a parent hang under one synthetic root
unless a single tree node already holds them all. Children are ordered by the smallest
location index below them, so the leaves follow the definition order wherever the tree
allows.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .aggregate_model import Hierarchy
from .model import Definitions

__all__ = ["ROOT_NAME", "hierarchy_of"]

#: The name (and kind) of the synthetic root over several tops.
ROOT_NAME = "trace"


def _tree_parents(definitions: Definitions) -> list[int]:
    """The system tree's parents (-1 for a top), checked: in range and without cycles."""
    tree = definitions.system_tree
    parents = [-1 if node.parent is None else node.parent for node in tree]
    for index, parent in enumerate(parents):
        if parent != -1 and not 0 <= parent < len(tree):
            raise ValueError(f"system tree node {index} names parent {parent} outside the {len(tree)} nodes")
    state = [0] * len(tree)  # 0 unseen, 1 on the current path, 2 done
    for index in range(len(tree)):
        path = []
        node = index
        while node != -1 and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = parents[node]
        if node != -1 and state[node] == 1:
            raise ValueError(f"system tree node {node} is its own ancestor")
        for node in path:
            state[node] = 2
    return parents


def hierarchy_of(definitions: Definitions, locations: Iterable[int]) -> Hierarchy:
    """The hierarchy over ``locations`` (archive location indexes; those beyond the
    definitions, or without a valid parent, hang under the root). Raises ValueError when
    the system tree or a location's parent is malformed."""
    chosen = sorted(set(int(location) for location in locations))
    tree = definitions.system_tree
    parents = _tree_parents(definitions)
    defined = definitions.locations
    # items: tree nodes are 0..len(tree)-1, location i is len(tree) + position in `chosen`
    children: dict[int, list[int]] = {}
    lowest = [-1] * len(tree)  # smallest location index below each tree node (-1: none)
    tops: list[int] = []
    for position, location in enumerate(chosen):
        item = len(tree) + position
        parent = defined[location].parent if location < len(defined) else None
        if parent is not None and not 0 <= parent < len(tree):
            raise ValueError(f"location {location} names parent {parent} outside the {len(tree)} "
                             f"system tree nodes")
        if parent is None:
            tops.append(item)
            continue
        children.setdefault(parent, []).append(item)
        node = parent
        while node != -1 and lowest[node] == -1:  # first location below: mark the path up
            lowest[node] = location
            grand = parents[node]
            if grand == -1:
                tops.append(node)
            else:
                children.setdefault(grand, []).append(node)
            node = grand

    def key(item: int) -> int:
        return lowest[item] if item < len(tree) else chosen[item - len(tree)]

    names: list[str] = []
    kinds: list[str] = []
    parent_out: list[int] = []
    leaf_locations: list[int] = []
    first: list[int] = []
    stop: list[int] = []
    synthetic = not (len(tops) == 1 and tops[0] < len(tree))
    stack: list[tuple[int, int]] = [(item, -1) for item in sorted(tops, key=key, reverse=True)]
    if synthetic:
        names.append(ROOT_NAME)
        kinds.append(ROOT_NAME)
        parent_out.append(-1)
        first.append(0)
        stop.append(len(chosen))
        stack = [(item, 0) for item, _ in stack]
    ends: list[tuple[int, int]] = []  # (node, depth in the stack) waiting for their stop leaf
    while stack:
        item, parent = stack.pop()
        node = len(names)
        parent_out.append(parent)
        first.append(len(leaf_locations))
        stop.append(-1)
        if item < len(tree):
            names.append(tree[item].name)
            kinds.append(tree[item].kind)
            below = sorted(children[item], key=key, reverse=True)
            stack.extend((child, node) for child in below)
            ends.append((node, len(stack) - len(below)))
        else:
            location = chosen[item - len(tree)]
            known = location < len(defined)
            names.append(defined[location].name if known else f"location {location}")
            kinds.append(defined[location].kind if known else "location")
            leaf_locations.append(location)
            stop[node] = len(leaf_locations)
        while ends and len(stack) <= ends[-1][1]:  # every child of the node was visited
            stop[ends.pop()[0]] = len(leaf_locations)
    return Hierarchy(tuple(names), tuple(kinds), np.array(parent_out, np.int64), np.array(first, np.int64),
                     np.array(stop, np.int64), np.array(leaf_locations, np.int64))
