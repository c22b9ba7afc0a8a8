"""A merge that copies node blocks (docs/merge.md, "Blocks"): archives of disjoint
locations with the same definitions - the parts of one conversion - united by
concatenation (dissertation 4.7.4).

The first archive's node blocks are copied as the file stores them; each later archive's
get their ids moved up by the nodes before (`codec.moved_block`, spec 5.3) and are
compressed again (`moved.moved_blocks`; at a fast level when that keeps a block within 1%
of its source's frame, `compression.Recompressed`) - or, given (`moved`: the ranks of an
MPI conversion move their own), stored as the frames they were moved and compressed into.
With a zstd level asked for (`writes.Writes`) every block not given is compressed anew at
it; blocks keep the blocking and gap coding of their source. Each location's checkpoints
are those of the archive that holds it (walked there when it has none), and the
aggregation and metric tables are
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
from ...graph.graph import Graph, root_columns, root_rows
from ...ordering import sorted_distinct
from ..aggregation import SLICES
from ..compression import default_threads
from ..layout import SectionKind
from ..queries import run_query
from ..reader import Archive
from ..writer import Writer
from .checkpoints import held_checkpoints
from .moved import Moved, SourceBlock, moved_blocks, read_moved
from .nodes import block_columns, concatenated, merged_roots, node_pool
from .plan import Plan, copied
from .tables import TableRows, walked_rows
from .writes import Writes


def way(plan: Plan) -> str:
    """How `merge` joins ``plan``: "blocks" (`write_blocks`) for disjoint locations of
    archives that define the same, a large graph and a root for every defined location
    (files of 1.0-1.2 may lack those of locations without events, spec 4.3); "nodes"
    (`nodes.merged_graph`) for other disjoint locations of a smaller graph; "events"
    (`rebuild.rebuild`) for time segments and the other large graphs (faster than hash
    consing their whole node table, docs/merge.md)."""
    large = copied(plan.archives)
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
    archive that holds it - under the same number: archives that define the same). The
    writer's tables are summed from the merged rows over the plan's resource hierarchy
    (`tables.plan_rows`), so none is made for it."""

    archives: list[Archive] = field(default_factory=list)
    owners: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def location(self, location: int) -> Any:
        row = self.roots.row(location)
        if row < 0:
            raise KeyError(location)
        return self.archives[int(self.owners[row])].location(location)


def write_blocks(plan: Plan, target: Path, progress: Callable[[int], None], writes: Writes,
                 rows: TableRows | None = None, moved: Sequence[Moved | None] | None = None) -> Graph:
    """Write the merged archive of ``plan`` to ``target`` from the archives' blocks, as
    ``writes`` says; ``progress`` gets each archive's events once its blocks are written;
    ``rows``: the merged table rows, when known (`tables`), else the sources' rows are
    walked while the blocks are copied, when the file has aggregation tables and the
    writer's tables would walk the merged events; ``moved``: per archive, its node blocks
    moved and compressed already as ``writes`` says (`moved.write_moved`: the file and its
    list), or None."""
    bases = np.concatenate(([0], np.cumsum([len(a.pool) for a in plan.archives])))[:-1].tolist()
    graph = _joined_graph(plan, bases)
    window = run_query("walked_window", graph, SLICES) if rows is None and writes.aggregation else None
    # every core walks the rows (one archive each at most), the cores left compress: the
    # walks are most of the work, and most moved blocks are compressed at a fast level
    # (`Recompressed`; 2 M events on 2 cores: 0.31 s, one walker 0.39 s)
    cores = default_threads()
    walkers = min(len(plan.archives), cores) if window is not None else 0
    with bulk_step(), Writer(target, metrics=len(plan.definitions.metrics), threads=max(1, cores - walkers),
                             slices=SLICES, **writes.writer()) as writer:
        with walked_rows(plan, *window, walkers) if window is not None else nullcontext(lambda: rows) as merged_rows:
            if plan.stored_definitions is not None:
                writer.keep_definitions(plan.stored_definitions, plan.later_definitions)
            for source, (archive, base) in enumerate(zip(plan.archives, bases)):
                given = moved[source] if moved else None
                for block in _node_blocks(plan, source, base, given, writes.level is None):
                    writer.add_node_block(block.kind, block.raw, block.first, block.count, block.frame, block.before)
                progress(plan.source_events(source))
            rows = merged_rows()
        # after the walks: they and a walk here would share a block cache
        writer.add_checkpoint_columns(held_checkpoints(graph.archives, graph.roots.columns[0], graph.owners,
                                                       writer.checkpoint_interval))
        writer.finish(graph, rows=rows)
    return graph


def _node_blocks(plan: Plan, source: int, base: int, given: Moved | None, as_stored: bool
                 ) -> Iterator[SourceBlock]:
    """Archive ``source``'s node blocks as the merged file stores them: ``given`` moved
    ones, else `moved_blocks` (compressed anew at the writer's level unless ``as_stored``)."""
    archive = plan.archives[source]
    if given is None:
        for block in moved_blocks(archive, base):
            yield block if as_stored else block._replace(frame=None, before=None)
        return
    if sum(block.count for block in given[1]) != len(archive.pool):
        raise ValueError(f"the moved blocks of {plan.paths[source]} do not hold its {len(archive.pool)} nodes")
    for block, raw, frame in read_moved(*given):
        yield SourceBlock(SectionKind(block.kind), raw, block.first, block.count, frame, block.length)


def _joined_graph(plan: Plan, bases: list[int]) -> JoinedGraph:
    """The merged graph of ``plan`` whose node blocks are those of its archives, the ids
    of each moved up by its ``bases`` entry, and their roots (`nodes.merged_roots`)."""
    roots, owners = merged_roots(plan, bases)
    empty = []  # the archives' empty roots, some perhaps of no merged location
    for archive, base in zip(plan.archives, bases):
        _, root, _, _, events = root_columns(archive.roots)
        empty.append(root[events == 0] + base)
    metrics = [archive.parameters["metrics"] for archive in plan.archives]
    return JoinedGraph(JoinedPool(plan.archives, bases), roots, plan.params, plan.definitions,
                       plan.build_metrics(*(sum(int(m[key]) for m in metrics) for key in "nm"),
                                          _count_missing(np.concatenate(empty), roots.columns[1])),
                       archives=plan.archives, owners=owners)


def _count_missing(values: np.ndarray, among: np.ndarray) -> int:
    """How many distinct ``values`` are not in ``among`` (`sorted_distinct`, not
    `np.setdiff1d`, which imports numpy.ma)."""
    return int(np.count_nonzero(~root_rows(among, sorted_distinct(values))[1]))
