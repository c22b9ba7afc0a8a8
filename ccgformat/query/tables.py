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
from functools import cached_property
from typing import Any

import numpy as np

from ..graph.pool import NodeKind


@dataclass
class NodeTables:
    """Columns of all nodes: ``kind``; ``key0``..``key3`` and ``soft0``/``soft1`` (the hard
    and soft properties in their stored order, 0 when absent); ``total`` (sub-tree
    duration) and ``events`` (sub-tree event count); children and durations in
    CSR form (``child_start[i]:child_start[i+1]`` indexes ``children``, likewise
    ``duration_start``/``durations``). Derived on first use: ``calltime`` (time covered by the calls
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
        self.child_count = np.diff(self.child_start)

    @cached_property
    def parent_of_edge(self) -> np.ndarray:
        return np.repeat(np.arange(len(self), dtype=np.int64), self.child_count)

    @cached_property
    def refcount(self) -> np.ndarray:
        return np.bincount(self.children, minlength=len(self)).astype(np.int64)

    @cached_property
    def calltime(self) -> np.ndarray:
        """Calltime, bottom-up: an artificial node sums its children's, iterated over the
        artificial nodes only (their chains are as deep as the splitting, a few levels)."""
        kind = self.kind
        calltime = np.where(kind == NodeKind.CALL, self.total, 0).astype(np.int64)
        artificial = np.flatnonzero(kind == NodeKind.ARTIFICIAL)
        if not len(artificial):
            return calltime
        kids, owner = self.expand(artificial)
        while True:
            summed = np.zeros(len(artificial), np.int64)
            np.add.at(summed, owner, calltime[kids])
            if np.array_equal(summed, calltime[artificial]):
                return calltime
            calltime[artificial] = summed

    @cached_property
    def inner(self) -> np.ndarray:
        return self.segment_sum(self.calltime[self.children])

    @cached_property
    def gap(self) -> np.ndarray:
        return self.total - self.segment_sum(self.total[self.children])

    @cached_property
    def painted(self) -> np.ndarray:
        """Per node, its total if it is a call or artificial node, else 0: a timeline paints
        the nodes where this is positive."""
        return np.where(self.kind <= NodeKind.ARTIFICIAL, self.total, 0)

    @cached_property
    def regions(self) -> int:
        """One more than the largest region id a call node names (0 without calls)."""
        calls = self.key0[self.kind == NodeKind.CALL]
        return int(calls.max()) + 1 if len(calls) else 0

    @cached_property
    def duration_prefix(self) -> np.ndarray:
        return running_sums(self.durations)

    def __len__(self) -> int:
        return len(self.kind)

    def segment_sum(self, per_edge: np.ndarray) -> np.ndarray:
        """Per node, the sum of a per-child-reference value over its children."""
        running = running_sums(per_edge)
        return running[self.child_start[1:]] - running[self.child_start[:-1]]

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

    def levels(self) -> list[np.ndarray]:
        """The nodes in rounds: every node comes after all its children (the rounds of a
        topological sort by height; memoized)."""
        memo = self.__dict__.get("_levels")
        if memo is not None:
            return memo
        n = len(self)
        waiting = self.child_count.copy()
        order = np.argsort(self.children, kind="stable")  # edges by child: who to notify
        by_child = self.parent_of_edge[order]
        first = np.searchsorted(self.children[order], np.arange(n + 1))
        ready = np.flatnonzero(waiting == 0)
        slot = np.empty(n, np.int64)  # scratch: drops repeated parents without sorting
        rounds = []
        while len(ready):
            rounds.append(ready)
            counts = first[ready + 1] - first[ready]
            edges = np.repeat(first[ready] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            parents = by_child[edges]
            np.subtract.at(waiting, parents, 1)
            done = parents[waiting[parents] == 0]
            positions = np.arange(len(done))
            slot[done] = positions  # one of a parent's repeats keeps its position
            ready = np.sort(done[slot[done] == positions])
        self.__dict__["_levels"] = rounds
        return rounds

    def bottom_up(self, own: np.ndarray) -> np.ndarray:
        """Per node, the sum of ``own`` (rows per node) over its sub-tree, every reference
        counted: ``S[v] = own[v] + sum of S[c] over the children c`` (4.26)."""
        total = own.copy()
        for nodes in self.levels()[1:]:  # every node after the first round has children
            kids, _ = self.expand(nodes)
            counts = self.child_count[nodes]
            total[nodes] += np.add.reduceat(total[kids], np.cumsum(counts) - counts, axis=0)
        return total

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


def running_sums(values: np.ndarray) -> np.ndarray:
    """0, then the running sums of ``values`` (int64, wrapping), written in place: no
    second copy of a long column."""
    out = np.zeros(len(values) + 1, np.int64)
    np.cumsum(values, dtype=np.int64, out=out[1:])
    return out


def _offsets(lengths: list[int]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(np.asarray(lengths, dtype=np.int64)))).astype(np.int64)


def _leading(values: Any, starts: Any, count: int) -> np.ndarray:
    """Per node (run ``starts[i]:starts[i+1]`` of ``values``), its first ``count`` values as
    ``count`` rows, 0 where the run is shorter."""
    values, starts = np.asarray(values, dtype=np.int64), np.asarray(starts, dtype=np.int64)
    lengths = np.diff(starts)
    out = np.zeros((count, len(lengths)), dtype=np.int64)
    for position in range(count):
        has = lengths > position
        out[position, has] = values[starts[:-1][has] + position]
    return out


def _from_runs(kind: np.ndarray, total: np.ndarray, events: np.ndarray, child_start: np.ndarray, children: np.ndarray,
               duration_start: np.ndarray, durations: np.ndarray, key_start: np.ndarray, key: np.ndarray,
               soft_start: np.ndarray, soft: np.ndarray) -> NodeTables:
    key0, key1, key2, key3 = _leading(key, key_start, 4)
    soft0, soft1 = _leading(soft, soft_start, 2)
    return NodeTables(kind=np.asarray(kind, dtype=np.int64), key0=key0, key1=key1, key2=key2, key3=key3,
                      soft0=soft0, soft1=soft1, total=np.asarray(total, dtype=np.int64),
                      events=np.asarray(events, dtype=np.int64), child_start=child_start.astype(np.int64),
                      children=np.asarray(children, dtype=np.int64), duration_start=duration_start.astype(np.int64),
                      durations=np.asarray(durations, dtype=np.int64))


def _from_blocks(pool: Any) -> NodeTables:
    """An archive pool, block by block (in id order) into columns made for all its nodes;
    of a block only its children and durations are copied until they are joined, so the
    decoded blocks are released as the scan goes."""
    size = len(pool)
    per_node = {name: np.zeros(size, np.int64) for name in
                ("kind", "total", "events", "key0", "key1", "key2", "key3", "soft0", "soft1")}
    child_start, duration_start = np.zeros(size + 1, np.int64), np.zeros(size + 1, np.int64)
    children: list[np.ndarray] = []
    durations: list[np.ndarray] = []
    edges = spans = 0
    for block in pool.blocks():
        nodes = slice(block.first, block.first + len(block))
        for name in ("kind", "total", "events"):
            per_node[name][nodes] = getattr(block, name)
        for prefix, values, start, count in (("key", block.key, block.key_start, 4),
                                             ("soft", block.soft, block.soft_start, 2)):
            for position, column in enumerate(_leading(values, start, count)):
                per_node[f"{prefix}{position}"][nodes] = column
        for starts, parts, offsets, values, shift in ((child_start, children, block.child_start, block.children, edges),
                                                      (duration_start, durations, block.duration_start,
                                                       block.durations, spans)):
            offsets = np.asarray(offsets, dtype=np.int64)
            starts[nodes] = offsets[:-1] + shift
            parts.append(np.array(values[:int(offsets[-1])], dtype=np.int64))
        edges += len(children[-1])
        spans += len(durations[-1])
    child_start[size], duration_start[size] = edges, spans
    join = lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.int64)  # noqa: E731
    return NodeTables(**per_node, child_start=child_start, children=join(children), duration_start=duration_start,
                      durations=join(durations))


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


def _from_arrays(arrays: dict[str, np.ndarray]) -> NodeTables:
    """The columns of a C-owned node table (`ccgformat._native.tables.TableView.arrays`)
    that holds every node from id 0, copied (C may move them)."""
    a = {name: np.array(values, dtype=np.int64) for name, values in arrays.items()}
    return _from_runs(a["kind"], a["total"], a["events"], a["child_start"], a["children"], a["duration_start"],
                      a["durations"], a["key_start"], a["key"], a["soft_start"], a["soft"])


_TABLES: weakref.WeakKeyDictionary[Any, NodeTables] = weakref.WeakKeyDictionary()


def tables_for(pool: Any) -> NodeTables:
    """The tables of a pool, built on first use and kept while the pool lives. A pool that
    grows (a builder's, still in use) gets fresh tables when its size changed."""
    tables = _TABLES.get(pool)
    if tables is None or len(tables) != len(pool):
        if hasattr(pool, "blocks"):
            tables = _from_blocks(pool)
        elif hasattr(pool, "arrays") and pool.arrays()[1] == 0:
            tables = _from_arrays(pool.arrays()[0])
        else:
            tables = _from_columns(pool)
        _TABLES[pool] = tables
    return tables
