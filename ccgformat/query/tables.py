"""Flat numpy columns of a whole node pool, and per-node values derived from them.

The queries of this package work on every node at once where they can (the sharing of
sub-trees makes a node's partial result the same wherever it is referenced,
dissertation 4.5.3), so they read the pool into columns once: from an archive's decoded
node blocks, from the lists of an in-memory `NodePool`, or node by node through the
column interface any pool offers. Only the columns the queries need are kept.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..graph.pool import NodeKind

ATOMIC = NodeKind.ARTIFICIAL + 1  #: node kinds from here on are atomic (one event)


@dataclass
class NodeTables:
    """Columns of all nodes: ``kind``; ``key0``..``key3`` and ``soft0``/``soft1`` (the hard
    and soft properties in their stored order, 0 when absent); ``total`` (sub-tree
    duration) and ``events`` (sub-tree event count); children and durations in
    CSR form (``child_start[i]:child_start[i+1]`` indexes ``children``, likewise
    ``duration_start``/``durations``). Derived: ``calltime`` (time covered by the calls
    of a sub-tree's top level: a call's total, the sum over an artificial node's
    children), ``inner`` (the calltime of a node's children: a call's exclusive time is
    ``total - inner``), ``gap`` (a node's own gaps: ``total`` minus its children's
    totals) and ``refcount`` (references from parents)."""

    kind: np.ndarray
    key0: np.ndarray
    key1: np.ndarray
    key2: np.ndarray
    key3: np.ndarray
    soft0: np.ndarray
    soft1: np.ndarray
    total: np.ndarray
    events: np.ndarray
    child_start: np.ndarray
    children: np.ndarray
    duration_start: np.ndarray
    durations: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.kind)
        starts = self.child_start
        self.child_count = np.diff(starts)
        self.parent_of_edge = np.repeat(np.arange(n, dtype=np.int64), self.child_count)
        self.refcount = np.bincount(self.children, minlength=n).astype(np.int64)
        self.calltime = self._calltime()
        self.inner = self.segment_sum(self.calltime[self.children])
        self.gap = self.total - self.segment_sum(self.total[self.children])
        self.duration_prefix = np.concatenate(([0], np.cumsum(self.durations, dtype=np.int64)))

    def __len__(self) -> int:
        return len(self.kind)

    def segment_sum(self, per_edge: np.ndarray) -> np.ndarray:
        """Per node, the sum of a per-child-reference value over its children."""
        running = np.concatenate(([0], np.cumsum(per_edge, dtype=np.int64)))
        return running[self.child_start[1:]] - running[self.child_start[:-1]]

    def _calltime(self) -> np.ndarray:
        """Calltime, bottom-up: artificial nodes sum their children's (iterated to the
        fixpoint; artificial chains are as deep as the splitting, a few levels)."""
        kind = self.kind
        calltime = np.where(kind == NodeKind.CALL, self.total, 0).astype(np.int64)
        artificial = kind == NodeKind.ARTIFICIAL
        if not artificial.any():
            return calltime
        while True:
            summed = self.segment_sum(calltime[self.children])
            updated = np.where(artificial, summed, calltime)
            if np.array_equal(updated, calltime):
                return calltime
            calltime = updated

    def containing(self, kinds: tuple[int, ...]) -> np.ndarray:
        """Per node, whether its sub-tree holds an atomic node of one of ``kinds``
        (bottom-up to the fixpoint; memoized per set of kinds)."""
        memo = self.__dict__.setdefault("_containing", {})
        found = memo.get(kinds)
        if found is None:
            found = np.isin(self.kind, kinds)
            inner = self.kind <= NodeKind.ARTIFICIAL
            while True:
                below = self.segment_sum(found[self.children].astype(np.int64)) > 0
                updated = found | (inner & below)
                if np.array_equal(updated, found):
                    break
                found = updated
            memo[kinds] = found
        return found

    def expand(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The children of ``nodes`` (concatenated) and, for each, its position in ``nodes``."""
        counts = self.child_count[nodes]
        owner = np.repeat(np.arange(len(nodes)), counts)
        first = np.repeat(self.child_start[nodes] - np.cumsum(counts) + counts, counts)
        return self.children[first + np.arange(len(owner))], owner

    def child_offsets(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the children of ``nodes``: child ids, owner position, and the child's start
        relative to its parent's start (the durations before it, Lemma 1)."""
        kids, owner = self.expand(nodes)
        if not len(kids):
            return kids, owner, np.zeros(0, np.int64)
        # the durations of node v are d[0], then per child j: d[2j+1] (its total), d[2j+2]
        counts = self.child_count[nodes]
        base = np.repeat(self.duration_start[nodes], counts)
        j = np.arange(len(kids)) - np.repeat(np.cumsum(counts) - counts, counts)
        # offset of child j = d[0] + sum_{i<j} (d[2i+1] + d[2i+2]) = prefix of the node's durations up to 2j
        prefix = self.duration_prefix
        offset = prefix[base + 2 * j + 1] - prefix[base]
        return kids, owner, offset


def _offsets(lengths: list[int]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(np.asarray(lengths, dtype=np.int64)))).astype(np.int64)


def _first(values: np.ndarray, starts: np.ndarray, position: int) -> np.ndarray:
    """Per node, ``values[starts[i] + position]`` where the run is long enough, else 0."""
    lengths = np.diff(starts)
    out = np.zeros(len(lengths), dtype=np.int64)
    has = lengths > position
    out[has] = values[starts[:-1][has] + position]
    return out


def _from_runs(kind: np.ndarray, total: np.ndarray, events: np.ndarray, child_start: np.ndarray, children: np.ndarray,
               duration_start: np.ndarray, durations: np.ndarray, key_start: np.ndarray, key: np.ndarray,
               soft_start: np.ndarray, soft: np.ndarray) -> NodeTables:
    return NodeTables(kind=np.asarray(kind, dtype=np.int64), key0=_first(key, key_start, 0),
                      key1=_first(key, key_start, 1), key2=_first(key, key_start, 2), key3=_first(key, key_start, 3),
                      soft0=_first(soft, soft_start, 0), soft1=_first(soft, soft_start, 1),
                      total=np.asarray(total, dtype=np.int64), events=np.asarray(events, dtype=np.int64),
                      child_start=child_start.astype(np.int64),
                      children=np.asarray(children, dtype=np.int64), duration_start=duration_start.astype(np.int64),
                      durations=np.asarray(durations, dtype=np.int64))


def _from_blocks(pool: Any) -> NodeTables:
    """An archive pool: concatenate the columns of its decoded node blocks."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in
                                          ("kind", "total", "events", "children", "durations", "key", "soft")}
    starts: dict[str, list[np.ndarray]] = {"child_start": [], "duration_start": [], "key_start": [],
                                           "soft_start": []}
    shift = {name: 0 for name in starts}
    node = 0
    while node < len(pool):
        block = pool.block_of(node)
        node = block.first + len(block)
        parts["kind"].append(np.asarray(block.kind))
        parts["total"].append(np.asarray(block.total, dtype=np.int64))
        parts["events"].append(np.asarray(block.events, dtype=np.int64))
        for start, values in (("child_start", "children"), ("duration_start", "durations"),
                              ("key_start", "key"), ("soft_start", "soft")):
            offsets = np.asarray(getattr(block, start), dtype=np.int64)
            starts[start].append(offsets[:-1] + shift[start])
            shift[start] += int(offsets[-1])
            parts[values].append(np.asarray(getattr(block, values), dtype=np.int64)[: int(offsets[-1])])
    cat = {name: np.concatenate(arrays) if arrays else np.zeros(0, np.int64) for name, arrays in parts.items()}
    run = {name: np.concatenate(arrays + [np.array([shift[name]], np.int64)]) for name, arrays in starts.items()}
    return _from_runs(cat["kind"], cat["total"], cat["events"], run["child_start"], cat["children"], run["duration_start"],
                      cat["durations"], run["key_start"], cat["key"], run["soft_start"], cat["soft"])


def _from_columns(pool: Any) -> NodeTables:
    """Any pool with the `NodePool` column interface, node by node."""
    ids = range(len(pool))
    children = [pool.children[i] for i in ids]
    durations = [pool.durations[i] for i in ids]
    key = [pool.key[i] for i in ids]
    soft = [pool.soft[i] for i in ids]
    flat = lambda rows: np.array([v for row in rows for v in row], dtype=np.int64)  # noqa: E731
    return _from_runs(np.array([pool.kind[i] for i in ids], dtype=np.int64),
                      np.array([pool.total[i] for i in ids], dtype=np.int64),
                      np.array([pool.events[i] for i in ids], dtype=np.int64),
                      _offsets([len(c) for c in children]), flat(children),
                      _offsets([len(d) for d in durations]), flat(durations),
                      _offsets([len(k) for k in key]), flat(key), _offsets([len(s) for s in soft]), flat(soft))


_TABLES: weakref.WeakKeyDictionary[Any, NodeTables] = weakref.WeakKeyDictionary()


def tables_for(pool: Any) -> NodeTables:
    """The tables of a pool, built on first use and kept while the pool lives. A pool that
    grows (a builder's, still in use) gets fresh tables when its size changed."""
    tables = _TABLES.get(pool)
    if tables is None or len(tables) != len(pool):
        tables = _from_blocks(pool) if hasattr(pool, "block_of") else _from_columns(pool)
        _TABLES[pool] = tables
    return tables
