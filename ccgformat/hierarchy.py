"""The resource hierarchy of a trace (paper 002): the definitions' system tree with the
locations as its leaves, as a `Hierarchy` in preorder.

Every importer records its source's hierarchy in ``Definitions.system_tree`` (OTF2 system
tree and location groups, the Paje container tree, EPILOG machine/node/process, OTF v1
process groups, processes and their threads, Chrome processes) and attaches each location to a tree node
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
from .model import Definitions, entity_columns

__all__ = ["ROOT_NAME", "hierarchy_of"]

#: The name (and kind) of the synthetic root over several tops.
ROOT_NAME = "trace"


def _checked_tree(parents: np.ndarray) -> np.ndarray:
    """The system tree's parents (-1 for a top), checked: in range and without cycles."""
    size = len(parents)
    outside = np.flatnonzero((parents < -1) | (parents >= size))
    if len(outside):
        index = int(outside[0])
        raise ValueError(f"system tree node {index} names parent {int(parents[index])} outside the {size} nodes")
    ancestor, reach = parents.copy(), 1
    while reach < size and (ancestor != -1).any():  # after len(tree) steps up, only cycles remain
        ancestor = np.where(ancestor == -1, -1, ancestor[ancestor])
        reach *= 2
    cyclic = ancestor[ancestor != -1]
    if len(cyclic):
        raise ValueError(f"system tree node {int(cyclic.min())} is its own ancestor")
    return parents


def _reduce_up(parents: np.ndarray, values: np.ndarray, minimum: bool) -> np.ndarray:
    """Each item's minimum (or sum) of ``values`` over its subtree, by doubling: after
    step k an item holds its descendants closer than 2^k."""
    out, ancestor = values.copy(), parents.copy()
    while (ancestor != -1).any():
        below = np.flatnonzero(ancestor != -1)
        if minimum:
            np.minimum.at(out, ancestor[below], out[below])
        else:
            out = out + np.bincount(ancestor[below], out[below], len(out)).astype(out.dtype)
        ancestor = np.where(ancestor == -1, -1, ancestor[ancestor])
    return out


def _sum_down(parents: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each item's sum of ``values`` over its path up to its top, by doubling."""
    out, ancestor = values.copy(), parents.copy()
    while (ancestor != -1).any():
        below = ancestor != -1
        out[below] += out[ancestor[below]]
        ancestor = np.where(below, ancestor[ancestor], -1)
    return out


def _chosen(column: list[str], chosen: np.ndarray, known: np.ndarray, unknown: list[str]) -> list[str]:
    """``column`` at the ``chosen`` locations (increasing), the ``unknown`` texts at those
    beyond the definitions (``known`` False: the last ones, as ``chosen`` increases)."""
    picked: list[str] = np.array(column, object)[chosen[known]].tolist() if len(column) else []
    return picked + unknown


def defined_hierarchy(definitions: Definitions) -> Hierarchy:
    """The hierarchy over every location ``definitions`` define."""
    return hierarchy_of(definitions, np.arange(len(definitions.locations), dtype=np.int64))


def hierarchy_of(definitions: Definitions, locations: Iterable[int]) -> Hierarchy:
    """The hierarchy over ``locations`` (archive location indexes; those beyond the
    definitions, or without a valid parent, hang under the root). Raises ValueError when
    the system tree or a location's parent is malformed."""
    chosen = np.sort(np.asarray(locations, np.int64) if isinstance(locations, np.ndarray)
                     else np.fromiter(map(int, locations), np.int64))
    distinct = np.ones(len(chosen), bool)  # not np.unique: numpy 2.4's hashes, 100 times slower here
    distinct[1:] = chosen[1:] != chosen[:-1]
    chosen = chosen[distinct]
    tree_parents, tree_names, tree_kinds = entity_columns(definitions.system_tree)
    tree_parents = _checked_tree(tree_parents)
    defined_parents, defined_names, defined_kinds = entity_columns(definitions.locations)
    size, count = len(tree_parents), len(defined_parents)
    known = chosen < count
    location_parents = np.full(len(chosen), -1, np.int64)
    location_parents[known] = defined_parents[chosen[known]]
    outside = np.flatnonzero((location_parents < -1) | (location_parents >= size))
    if len(outside):
        position = int(outside[0])
        raise ValueError(f"location {int(chosen[position])} names parent {int(location_parents[position])} "
                         f"outside the {size} system tree nodes")
    # items: tree nodes 0..size-1, then the chosen locations, then the synthetic root
    parents = np.concatenate([tree_parents, location_parents, [-1]])
    key = np.concatenate([np.full(size, np.iinfo(np.int64).max, np.int64), chosen, [-1]])
    key = _reduce_up(parents, key, True)  # the smallest location below every item
    kept = np.flatnonzero(key[:-1] != np.iinfo(np.int64).max)
    tops = kept[parents[kept] == -1]
    if len(tops) == 1 and tops[0] < size:  # a single tree node holds every location
        root = int(tops[0])
    else:
        root = len(parents) - 1
        kept = np.append(kept, root)
        parents[tops] = root
    renumber = np.full(len(parents), -1, np.int64)
    renumber[kept] = np.arange(len(kept))
    parents, key = np.where(parents[kept] == -1, -1, renumber[parents[kept]]), key[kept]
    # preorder: an item follows its parent, after its elder siblings' subtrees
    sizes = _reduce_up(parents, np.ones(len(kept), np.int64), False)
    siblings = np.lexsort((key, parents))
    ends = np.cumsum(sizes[siblings])
    group = np.flatnonzero(np.r_[True, parents[siblings][1:] != parents[siblings][:-1]])
    before = ends - sizes[siblings] - np.repeat((ends - sizes[siblings])[group], np.diff(np.r_[group, len(kept)]))
    offset = np.empty(len(kept), np.int64)
    offset[siblings] = before + 1
    offset[parents == -1] = 0
    order = np.empty(len(kept), np.int64)
    order[_sum_down(parents, offset)] = np.arange(len(kept))
    items = kept[order]
    is_leaf = (items >= size) & (items < size + len(chosen))
    first = np.concatenate([[0], np.cumsum(is_leaf)[:-1]])
    leaf_locations = chosen[items[is_leaf] - size]
    position = np.empty(len(kept), np.int64)
    position[order] = np.arange(len(kept))
    parent_out = np.where(parents[order] == -1, -1, position[parents[order]])
    stop = first + _reduce_up(parent_out, is_leaf.astype(np.int64), False)
    # the names and kinds of the items in their numbering (tree nodes, locations, root), then in preorder
    names = np.array([*tree_names, *_chosen(defined_names, chosen, known, [f"location {location}" for location
                                                                         in chosen[~known].tolist()]), ROOT_NAME], object)
    kinds = np.array([*tree_kinds, *_chosen(defined_kinds, chosen, known, ["location"] * int((~known).sum())), ROOT_NAME],
                     object)
    return Hierarchy(tuple(names[items].tolist()), tuple(kinds[items].tolist()), parent_out, first, stop,
                     leaf_locations)
