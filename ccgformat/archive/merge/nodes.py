"""A merge of archives of disjoint locations at node speed (docs/merge.md, "Nodes").

Dissertation 4.7.4: parts numbered disjointly are united nearly by concatenation. Every
archive's nodes are read block by block as columns and put one archive after another
into one table, their keys renumbered into the merged definitions (`events.remap_keys`)
and their child ids moved by the nodes of the archives before. Then the table is hash
consed bottom-up (`canonical_ids`): a node equal to an earlier one - kind, key, soft
values, durations and children, the children compared by their canonical ids - is
dropped and its parents refer to the earlier one, so sub-trees shared across archives
are stored once (4.4.2 combines merging with this re-compression). Nothing is rebuilt
from events: the result's nodes are its inputs' nodes, never less exact.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...backends import native
from ...graph.graph import Graph, RootTable, root_columns
from ...graph.pool import NodeKind, NodePool
from .events import remap_keys
from .plan import Plan

#: the value columns of a node table and the offsets column each is cut by
RUNS = (("children", "child_start"), ("durations", "duration_start"), ("key", "key_start"), ("soft", "soft_start"),
        ("metric_id", "metric_start"), ("metric_sum", "metric_start"))
STARTS = ("child_start", "duration_start", "key_start", "soft_start", "metric_start")
PER_NODE = ("kind", "events", "total")

Columns = dict[str, np.ndarray]
#: the leaf calls of a region with at most this many different ones in an archive are
#: shared with equal ones of the other archives (`shared_nodes`)
LEAF_VARIANTS = 16


def block_columns(block: Any) -> Columns:
    """A decoded node block (a `NodeBlock` or its native twin) as flat columns: per node
    kind, events and total, and the runs of `RUNS` with their offsets (metric sums as
    (metric, sum) pairs per node in increasing metric order)."""
    columns = {name: np.asarray(getattr(block, name)) for name in ("kind", "child_start", "children", "duration_start",
                                                                    "durations", "key_start", "key", "soft_start",
                                                                    "soft")}
    columns["events"] = np.asarray(block.events, np.int64)
    columns["total"] = np.asarray(block.total, np.int64)
    if hasattr(block, "metric_start"):  # native: already flat
        for name in ("metric_start", "metric_id", "metric_sum"):
            columns[name] = np.asarray(getattr(block, name))
    else:  # the reference's (metric, node) matrices
        node, row = np.nonzero(np.asarray(block.metric_seen, bool).T)
        columns["metric_id"] = np.asarray(block.metrics, np.int64)[row] if len(row) else np.zeros(0, np.int64)
        columns["metric_sum"] = np.asarray(block.metric_sum, np.int64)[row, node]
        columns["metric_start"] = _offsets(np.bincount(node, minlength=len(block)))
    return columns


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64)


def concatenated(tables: list[Columns]) -> Columns:
    """Node tables one after another (their child ids taken as they are)."""
    joined = {name: np.concatenate([t[name] for t in tables]) if tables else np.zeros(0, np.uint8 if name == "kind"
                                                                                         else np.int64)
              for name in PER_NODE + tuple(value for value, _ in RUNS)}
    for start in STARTS:
        joined[start] = _offsets(np.concatenate([np.diff(t[start]) for t in tables]) if tables
                                 else np.zeros(0, np.int64))
    return joined


def _lengths(columns: Columns, start: str) -> np.ndarray:
    return np.diff(columns[start])


def renumbered(columns: Columns, plan: Plan, source: int, base: int) -> Columns:
    """An archive's node table with its keys and metric ids renumbered into the merged
    definitions and its child ids moved up by ``base``."""
    maps, path = plan.maps[source], plan.paths[source]
    columns = dict(columns)
    columns["children"] = columns["children"] + base
    if not maps.identity:
        columns["key"] = remap_keys(columns["kind"], columns["key_start"], columns["key"], maps, path)
        metric_id = maps.metrics[columns["metric_id"]]
        if np.any(np.diff(maps.metrics) < 0):  # pairs stay in increasing metric order per node
            node = np.repeat(np.arange(len(columns["kind"])), _lengths(columns, "metric_start"))
            order = np.lexsort((metric_id, node))
            columns["metric_sum"] = columns["metric_sum"][order]
            metric_id = metric_id[order]
        columns["metric_id"] = metric_id
    return columns


def canonical_ids(columns: Columns, shared: np.ndarray) -> np.ndarray:
    """Per node of a table (ids from 0, children below their parents), the first node
    equal to it among those ``shared`` marks (a node it does not mark is its own; the
    Python reference of the C ``ccg_merge_canonical``)."""
    if native():
        from ..._native.merge import canonical_ids as native_canonical
        return native_canonical(columns, shared)
    canon = np.arange(len(columns["kind"]), dtype=np.int64)
    seen: dict[tuple, int] = {}
    rows = [_rows(columns, name, start) for name, start in (("key", "key_start"), ("soft", "soft_start"),
                                                           ("durations", "duration_start"), ("children", "child_start"))]
    for node, (kind, key, soft, durations, children, share) in enumerate(zip(columns["kind"].tolist(), *rows,
                                                                              shared.tolist())):
        if any(not 0 <= child < node for child in children):
            raise ValueError(f"node {node} refers to a child that is not below it")
        if share:
            signature = (kind, key, soft, durations, tuple(int(canon[child]) for child in children))
            canon[node] = seen.setdefault(signature, node)
    return canon


def shared_nodes(tables: list[Columns]) -> np.ndarray:
    """Which nodes of the archives' tables, one after another, may be shared with an equal
    node: all but the leaf calls (CALL nodes without children) of a region that has more
    than `LEAF_VARIANTS` of them in its archive. The builder shares such a leaf with a far
    equal node only when its durations repeat (`Builder._share_leaf`, docs/compression.md):
    a far reference costs more than the leaf's one gap stored again."""
    marks = []
    for table in tables:
        leaf = (table["kind"] == NodeKind.CALL) & (_lengths(table, "child_start") == 0)
        region = table["key"][table["key_start"][:-1][leaf]]
        values, counts = np.unique(region, return_counts=True)
        shared = np.ones(len(leaf), bool)
        shared[np.flatnonzero(leaf)] = counts[np.searchsorted(values, region)] <= LEAF_VARIANTS
        marks.append(shared)
    return np.concatenate(marks) if marks else np.zeros(0, bool)


def _rows(columns: Columns, name: str, start: str) -> list[tuple[int, ...]]:
    values, offsets = columns[name].tolist(), columns[start].tolist()
    return [tuple(values[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]


def kept_table(columns: Columns, canon: np.ndarray, roots: np.ndarray) -> tuple[Columns, np.ndarray]:
    """The table of the canonical nodes that ``roots`` reach (in id order; a root an
    archive gave a location that another archive's events replace is dropped with the
    nodes below it) and every reached node's id in it."""
    kept = _reached(columns, canon, roots) & (canon == np.arange(len(canon)))
    new_id = np.cumsum(kept, dtype=np.int64) - 1
    ids = new_id[canon]
    table = {name: columns[name][kept] for name in PER_NODE}
    for value, start in RUNS:
        lengths = _lengths(columns, start)
        table[value] = columns[value][np.repeat(kept, lengths)]
        table[start] = _offsets(lengths[kept])
    table["children"] = ids[table["children"]]
    return table, ids


def _reached(columns: Columns, canon: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Which canonical nodes lie below ``roots`` (one pass over the child references per
    level of the graph)."""
    children = canon[columns["children"]]
    parent = np.repeat(np.arange(len(canon)), _lengths(columns, "child_start"))
    reached = np.zeros(len(canon), bool)
    reached[canon[roots]] = True
    while True:
        below = children[reached[parent]]
        if reached[below].all():
            return reached
        reached[below] = True


def stored_bytes(table: Columns) -> int:
    """m, the memory size of the table's nodes (`pool.node_bytes`, dissertation 4.2.5)."""
    durations = _lengths(table, "duration_start")
    top = np.zeros(len(durations), np.int64)
    inner = durations > 0
    if inner.any():
        top[inner] = np.maximum.reduceat(table["durations"], table["duration_start"][:-1][inner])
    width = np.select([top < 1 << 8, top < 1 << 16, top < 1 << 32], [1, 2, 4], 8)
    return int(np.sum(4 + 4 * _lengths(table, "child_start") + 8 * (_lengths(table, "key_start")
                                                                     + _lengths(table, "soft_start"))
                      + width * durations))


def node_pool(table: Columns) -> Any:
    """The table as the writer's pool: under the native core a view of the table itself
    (the encoder and the walkers read it in C), else a `NodePool`."""
    if native():
        from ..._native.tables import NodeTable, TableView
        nodes = NodeTable(table)
        return TableView(lambda: nodes.struct)
    pool = NodePool()
    pool.kind.extend(table["kind"].tolist())
    for column, (name, start) in ((pool.children, ("children", "child_start")),
                                  (pool.durations, ("durations", "duration_start")),
                                  (pool.key, ("key", "key_start")), (pool.soft, ("soft", "soft_start"))):
        column.extend(_rows(table, name, start))
    pool.events.extend(table["events"].tolist())
    pool.total.extend(table["total"].tolist())
    pool.metric_sums.extend(tuple(zip(ids, sums)) for ids, sums in zip(_rows(table, "metric_id", "metric_start"),
                                                                       _rows(table, "metric_sum", "metric_start")))
    return pool


def merged_graph(plan: Plan, progress: Callable[[int], None]) -> tuple[Graph, np.ndarray]:
    """The merged graph: its pool, every merged location's root and the build metrics (N
    and M the sums of the archives', n and m the nodes kept), and per location (in root
    order) the archive whose root it has (`merged_roots`; -1: an empty root made here);
    ``progress`` gets each archive's events once its nodes are read."""
    tables, bases, base = [], [], 0
    for source, archive in enumerate(plan.archives):
        blocks = [block_columns(block) for block in archive.pool.blocks()]
        tables.append(renumbered(concatenated(blocks), plan, source, base))
        bases.append(base)
        base += len(archive.pool)
        progress(plan.source_events(source))
    roots, owners = merged_roots(plan, bases)
    locations, nodes, starts, ends, events = roots.columns
    defined = np.ones(len(plan.definitions.locations), bool)
    defined[locations] = False
    missing = np.flatnonzero(defined)
    if len(missing):
        tables.append(_empty_root())
        empty = np.zeros(len(missing), np.int64)
        order = np.argsort(np.concatenate((locations, missing)), kind="stable")
        locations, nodes, starts, ends, events, owners = (np.concatenate(pair)[order] for pair in (
            (locations, missing), (nodes, empty + base), (starts, empty), (ends, empty), (events, empty),
            (owners, empty - 1)))
    columns = concatenated(tables)
    canon = canonical_ids(columns, shared_nodes(tables))
    table, ids = kept_table(columns, canon, nodes)
    roots = RootTable(locations, ids[nodes], starts, ends, events)
    metrics = plan.build_metrics(len(table["kind"]), stored_bytes(table))
    if native():  # walked in C
        from ..._native.builder import NativeGraph
        return NativeGraph(node_pool(table), roots, plan.params, plan.definitions, metrics), owners
    return Graph(node_pool(table), roots, plan.params, plan.definitions, metrics), owners


def merged_roots(plan: Plan, bases: Sequence[int]) -> tuple[RootTable, np.ndarray]:
    """Every merged location's root that an archive gives, its node id in the table of
    all archives (``bases``: where each archive's nodes begin), and the archive it is
    from: a location with events its piece's, one without
    the empty root of the first archive that defines it. Column-wise: at 20,000
    locations a root at a time took 0.18 s."""
    columns = []
    for source, (archive, maps, base) in enumerate(zip(plan.archives, plan.maps, bases)):
        location, root, start, end, events = root_columns(archive.roots)
        mapped = np.full(len(location), -1, np.int64)
        known = location < len(maps.locations)
        mapped[known] = np.asarray(maps.locations, np.int64)[location[known]]
        kept = mapped >= 0
        columns.append((mapped[kept], root[kept] + base, start[kept], end[kept], events[kept],
                        np.full(int(kept.sum()), source, np.int64)))
    location, root, start, end, events, source = (np.concatenate(column) for column in zip(*columns))
    # per location the row of highest rank: any archive with events above every empty
    # one, the last such; among empty ones the first
    rank = np.where(events > 0, source, -source - 1)
    order = np.lexsort((rank, location))
    ordered = location[order]
    chosen = order[np.flatnonzero(np.append(ordered[1:] != ordered[:-1], len(order) > 0))]
    return RootTable(location[chosen], root[chosen], start[chosen], end[chosen], events[chosen]), source[chosen]


def _empty_root() -> Columns:
    """A table of one node: the root of a location without events (spec 4.3)."""
    zero = np.zeros(1, np.int64)
    return {"kind": np.array([NodeKind.ARTIFICIAL], np.uint8), "events": zero, "total": zero, "children": zero[:0],
            "durations": zero, "key": zero[:0], "soft": zero[:0], "metric_id": zero[:0], "metric_sum": zero[:0],
            "child_start": np.zeros(2, np.int64), "duration_start": np.array([0, 1], np.int64),
            "key_start": np.zeros(2, np.int64), "soft_start": np.zeros(2, np.int64),
            "metric_start": np.zeros(2, np.int64)}
