"""A merge that copies node blocks (docs/merge.md, "Blocks"): archives of disjoint
locations with the same definitions - the parts of one conversion - united by
concatenation (dissertation 4.7.4).

The first archive's node blocks are copied as the file stores them; each later archive's
get their ids moved up by the nodes before (`codec.moved_block`, spec 5.3) and are
compressed again (`moved.moved_blocks`; at a fast level when that keeps a block within 1%
of its source's frame, `compression.Recompressed`) - or, given (`moved`: the ranks of an
MPI conversion move their own), stored as the frames they were moved and compressed into.
Each location's checkpoints are those of the archive
that holds it (walked there when it has none), and the aggregation and metric tables are
the sums of the rows of each archive's locations over the merged window, walked in
threads of their own while the blocks are copied (`tables.walked_rows`). No node is
decoded to be copied: sub-trees equal across archives stay apart (in a graph this large
- irregular events - they are few; smaller graphs are hash consed, `nodes`).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ...bulkstep import bulk_step
from ...graph.graph import Graph, RootTable, root_columns
from ...hierarchy import Hierarchy, defined_hierarchy
from ..aggregation import SLICES
from ..checkpoint_columns import CheckpointColumns
from ..compression import default_threads
from ..indexes import checkpoints
from ..layout import SectionKind
from ..queries import run_query
from ..reader import Archive
from ..tables import decode_checkpoint_columns
from ..writer import Writer
from .moved import Moved, SourceBlock, moved_blocks, read_moved
from .nodes import block_columns, concatenated, node_pool
from .plan import Plan
from .tables import TableRows, walked_rows

#: a merged graph of at least this many nodes is copied block by block when the archives
#: define the same (a smaller one is hash consed, `nodes`); from this size the writer's
#: tables walk the events instead of reading every node (`query.streaming.STREAM_NODES`)
COPY_NODES = 1 << 18


def way(plan: Plan) -> str:
    """How `merge` joins ``plan``: "blocks" (`write_blocks`) for disjoint locations of
    archives that define the same, a large graph and a root for every defined location
    (files of 1.0-1.2 may lack those of locations without events, spec 4.3); "nodes"
    (`nodes.merged_graph`) for other disjoint locations of a smaller graph; "events"
    (`rebuild.rebuild`) for time segments and the other large graphs (faster than hash
    consing their whole node table, docs/merge.md)."""
    large = sum(len(archive.pool) for archive in plan.archives) >= COPY_NODES
    if plan.segmented or (large and not plan.same_definitions):
        return "events"
    if not large:
        return "nodes"
    rooted = np.concatenate([root_columns(archive.roots)[0] for archive in plan.archives])
    return "blocks" if np.isin(np.arange(len(plan.definitions.locations)), rooted).all() else "events"


class JoinedPool:
    """The merged graph's nodes as the writer and its tables see them: their number at
    once; any other column of the pool (`nodes.node_pool`) made from the archives' blocks
    when first read - only a query that does not walk locations (a small graph, many
    locations) reads one."""

    def __init__(self, archives: list[Archive], bases: list[int]):
        self._archives, self._bases = archives, bases
        self._size = bases[-1] + len(archives[-1].pool)
        self._pool: Any = None

    def __len__(self) -> int:
        return self._size

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._pool is None:
            tables = []
            for archive, base in zip(self._archives, self._bases):
                table = concatenated([block_columns(block) for block in archive.pool.blocks()])
                table["children"] = table["children"] + base
                tables.append(table)
            self._pool = node_pool(concatenated(tables))
        return getattr(self._pool, name)


@dataclass
class JoinedGraph(Graph):
    """The merged graph, each location walked in the archive that holds it: its events
    are that archive's (``owners``: per merged location, in the order of ``roots``, the
    archive that holds it - under the same number: archives that define the same). Its
    resource hierarchy is made once, for every table the writer makes (at 20,000
    locations each made it again: 0.1 s)."""

    archives: list[Archive] = field(default_factory=list)
    owners: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    _hierarchy: Hierarchy | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def hierarchy(self) -> Hierarchy:
        """The hierarchy over every defined location (a merged file of this way holds a
        root of each and only of those, `way`)."""
        if self._hierarchy is None:
            self._hierarchy = defined_hierarchy(self.definitions)
        return self._hierarchy

    def location(self, location: int) -> Any:
        row = self.roots.row(location)
        if row < 0:
            raise KeyError(location)
        return self.archives[int(self.owners[row])].location(location)


def write_blocks(plan: Plan, target: Path, progress: Callable[[int], None], rows: TableRows | None = None,
                 moved: Sequence[Moved | None] | None = None) -> Graph:
    """Write the merged archive of ``plan`` to ``target`` from the archives' blocks;
    ``progress`` gets each archive's events once its blocks are written; ``rows``: the
    merged table rows, when known (`tables`), else the sources' rows are walked while the
    blocks are copied, when the writer's tables would walk the merged events; ``moved``:
    per archive, its node blocks moved and compressed already (`moved.write_moved`: the
    file and its list), or None."""
    bases = np.concatenate(([0], np.cumsum([len(a.pool) for a in plan.archives])))[:-1].tolist()
    graph = _joined_graph(plan, bases)
    window = run_query("walked_window", graph, SLICES) if rows is None else None
    # every core walks the rows (one archive each at most), the cores left compress: the
    # walks are most of the work, and most moved blocks are compressed at a fast level
    # (`Recompressed`; 2 M events on 2 cores: 0.31 s, one walker 0.39 s)
    cores = default_threads()
    walkers = min(len(plan.archives), cores) if window is not None else 0
    with bulk_step(), Writer(target, metrics=len(plan.definitions.metrics), threads=max(1, cores - walkers),
                             slices=SLICES) as writer:
        with walked_rows(plan, *window, walkers) if window is not None else nullcontext(lambda: rows) as merged_rows:
            if plan.stored_definitions is not None:
                writer.keep_definitions(plan.stored_definitions, plan.later_definitions)
            for source, (archive, base) in enumerate(zip(plan.archives, bases)):
                given = moved[source] if moved else None
                for block in _node_blocks(plan, source, base, given):
                    writer.add_node_block(block.kind, block.raw, block.first, block.count, block.frame, block.before)
                progress(sum(p.events for pieces in plan.pieces.values() for p in pieces if p.source == source))
            rows = merged_rows()
        # after the walks: they and a walk here would share a block cache
        _add_checkpoints(writer, graph)
        writer.finish(graph, rows=rows)
    return graph


def _node_blocks(plan: Plan, source: int, base: int, given: Moved | None) -> Iterator[SourceBlock]:
    """Archive ``source``'s node blocks as the merged file stores them: ``given`` moved
    ones, else `moved_blocks`."""
    archive = plan.archives[source]
    if given is None:
        yield from moved_blocks(archive, base)
        return
    if sum(block.count for block in given[1]) != len(archive.pool):
        raise ValueError(f"the moved blocks of {plan.paths[source]} do not hold its {len(archive.pool)} nodes")
    for block, raw, frame in read_moved(*given):
        yield SourceBlock(SectionKind(block.kind), raw, block.first, block.count, frame, block.length)


def _joined_graph(plan: Plan, bases: list[int]) -> JoinedGraph:
    """The merged graph of ``plan`` whose node blocks are those of its archives, the ids
    of each moved up by its ``bases`` entry: every location's root from the last archive
    that holds events of it (a location without events from the first archive that lists
    it), found column-wise (20,000 locations: 0.16 s as a loop over the roots)."""
    columns = [root_columns(archive.roots) for archive in plan.archives]
    source = np.concatenate([np.full(len(c[0]), i, np.int64) for i, c in enumerate(columns)])
    location, root, start, end, events = (np.concatenate([c[k] for c in columns]) for k in range(5))
    root = root + np.asarray(bases, np.int64)[source]
    # per location the row of highest rank: any archive with events above every empty
    # one, the last such; among empty ones the first
    rank = np.where(events > 0, source, -source - 1)
    order = np.lexsort((rank, location))
    last = np.flatnonzero(np.append(location[order][1:] != location[order][:-1], True))
    chosen = order[last]
    roots = RootTable(location[chosen], root[chosen], start[chosen], end[chosen], events[chosen])
    metrics = [archive.parameters["metrics"] for archive in plan.archives]
    unreached = len(np.setdiff1d(root[events == 0], root[chosen]))
    return JoinedGraph(JoinedPool(plan.archives, bases), roots, plan.params, plan.definitions,
                       plan.build_metrics(*(sum(int(m[key]) for m in metrics) for key in "nm"), unreached),
                       archives=plan.archives, owners=source[chosen])


def _add_checkpoints(writer: Writer, graph: JoinedGraph) -> None:
    """Every merged location's checkpoints at the writer's interval, those of the archive
    that holds it (`JoinedGraph.owners`), in the blocks `Writer.add_checkpoints` writes
    location by location."""
    locations = graph.roots.columns[0]
    held = [locations[graph.owners == source] for source in range(len(graph.archives))]
    columns = [_checkpoints(archive, wanted, writer.checkpoint_interval)
               for archive, wanted in zip(graph.archives, held) if len(wanted)]
    if columns:
        writer.add_checkpoint_columns(CheckpointColumns.concat(columns))


def _checkpoints(archive: Archive, wanted: np.ndarray, interval: int) -> CheckpointColumns:
    """The checkpoints at ``interval`` of the locations ``wanted`` (increasing, the merged
    ids are the archive's): its CHECKPOINT_TABLE blocks' columns, taken whole (20,000
    locations: decoding them to dictionaries and encoding them again took 0.2 s of CPU),
    and the locations they lack (another interval, a file without the index) walked there."""
    tables = [decode_checkpoint_columns(archive.payload(entry), archive.path, entry.offset)
              for entry in archive.sections if entry.kind == SectionKind.CHECKPOINT_TABLE]
    stored = CheckpointColumns.concat([table for kept, table in tables if kept == interval]) \
        if any(kept == interval for kept, _ in tables) else None
    found = np.zeros(len(wanted), bool)
    parts = []
    if stored is not None and len(stored):
        at = np.minimum(np.searchsorted(stored.locations, wanted), len(stored) - 1)
        found = (stored.locations[at] == wanted) & (stored.counts[at] > 0)
        parts.append(stored.take(at[found]))
    walked = wanted[~found].tolist()
    if walked:
        parts.append(CheckpointColumns.from_checkpoints(
            (location, checkpoints(archive.location(location), interval)) for location in walked))
    return CheckpointColumns.concat(parts)
