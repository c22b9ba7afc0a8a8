"""Archives joined into one (docs/merge.md): archives of disjoint locations (per-rank or
per-node conversions) or of consecutive time segments of the same locations.

The definitions are unified by name and structure (`definitions`), each merged location
takes its pieces from the archives in time order (`plan`), and the result is written
atomically, one of three ways (`way`): large graphs of archives that define the same are
united by copying their node blocks (`blocks`, dissertation 4.7.4), smaller ones by
hash consing their nodes (`nodes`, 4.4.2: merging with re-compression), time segments
and large graphs of differing definitions by rebuilding from the events (`rebuild`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ...bulkstep import bulk_step
from ..writer import DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_NODES_PER_BLOCK, KeptBlock, save_graph
from .blocks import way, write_blocks
from .checkpoints import held_checkpoints
from .moved import Moved, MovedBlock, write_moved
from .nodes import merged_graph
from .plan import COPY_NODES, plan as make_plan
from .rebuild import rebuild
from .tables import TableRows, plan_rows
from .writes import Writes

__all__ = ["COPY_NODES", "MergeProgress", "MergeReport", "Moved", "MovedBlock", "TableRows", "Writes", "merge",
           "write_moved"]


@dataclass(frozen=True)
class MergeReport:
    """What `merge` wrote."""

    sources: tuple[str, ...]
    target: str
    locations: int       #: locations the merged definitions define
    events: int
    nodes: int           #: nodes stored
    file_bytes: int
    segmented: bool      #: some location had events in several archives (time segments)
    extensions_kept: bool  #: the format extensions of the definitions were kept (all archives agreed)
    way: str             #: how: "blocks", "nodes" or "events" (docs/merge.md)


@dataclass(frozen=True)
class MergeProgress:
    """Where a merge is, handed to the ``progress`` callback after every batch."""

    events: int   #: events written so far
    total: int    #: events of every archive


def merge(sources: Sequence[str | os.PathLike[str]], target: str | os.PathLike[str], *,
          progress: Callable[[MergeProgress], None] | None = None,
          rows: Sequence[TableRows] | None = None, moved: Sequence[Moved | None] | None = None,
          extensions: Callable[[], KeptBlock] | None = None, level: int | None = None,
          checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL, nodes_per_block: int = DEFAULT_NODES_PER_BLOCK,
          gaps: str = "auto", aggregation: bool = True) -> MergeReport:
    """Merge the archives ``sources`` into one archive ``target`` (written atomically:
    nothing appears under its name on an error; the sources are never modified).

    Archives of disjoint locations give the union of their locations; archives holding
    the same location give it their events one after another, which must not overlap in
    time (consecutive segments of a run). Definitions are matched by name and structure;
    a conflict raises `MergeConflictError` naming both files and the definition. The
    result's events are the sources' events (never less exact); its PARAMETERS record
    the loosest bounds of the sources.

    ``level``, ``checkpoint_interval``, ``nodes_per_block``, ``gaps`` and ``aggregation``:
    how the merged file is written, as for `ccgformat.convert` (`writes.Writes`: node
    blocks copied from a source keep their blocking and gap coding; with a ``level`` they
    are compressed again at it).

    ``rows``: per source, its locations' rows of the finest table levels over the merged
    window (`TableRows`, e.g. computed by the ranks of an MPI conversion): the merged
    aggregation and metric tables are then put together from them (`tables`) instead of
    walked from the events. Used for sources of disjoint locations; ignored otherwise.

    ``moved``: per source, its node blocks with their ids moved to the merged numbering and
    compressed (`moved.write_moved`, by the ranks of an MPI conversion at once), or None:
    stored as they are when the merge copies node blocks (`blocks`); ignored otherwise.

    ``extensions``: the definitions' format extensions, which every source leaves out
    (the parts of an MPI conversion: one rank encodes them while rank 0 merges), as the
    EXTENSION_TABLE block `writer.extension_table` makes; called once - when the merged
    file's definitions are written if the sources store the same definitions bytes, else
    before the definitions are matched (each source's then hold them).
    """
    target = Path(target)
    if target.is_dir():
        raise IsADirectoryError(21, "the target is a folder", str(target))
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "the target's folder does not exist", str(target.parent))
    writes = Writes(level, checkpoint_interval, nodes_per_block, gaps, aggregation)
    joined = make_plan(sources, target, extensions)
    try:
        total, done = joined.events, [0]

        def advance(count: int) -> None:
            done[0] += count
            if progress is not None:
                progress(MergeProgress(done[0], total))

        chosen = way(joined)
        known = plan_rows(joined, rows) if rows is not None and chosen != "events" and aggregation else None
        if chosen == "events":
            joined.with_extensions()
            graph = rebuild(joined, target, advance, writes)
        elif chosen == "blocks":
            graph = write_blocks(joined, target, advance, writes, known, moved)
        else:
            graph, owners = merged_graph(joined, advance)
            held = partial(held_checkpoints, joined.archives, graph.roots.columns[0], owners) \
                if joined.same_definitions and np.all(owners >= 0) else None
            with bulk_step():
                save_graph(graph, target, streamed=True, rows=known, stored_definitions=joined.stored_definitions,
                           later_definitions=joined.later_definitions, checkpoints=held, **writes.writer())
        return MergeReport(tuple(joined.paths), str(target), len(joined.definitions.locations), graph.event_count,
                           graph.metrics.n, target.stat().st_size, joined.segmented, joined.extensions_kept, chosen)
    finally:
        joined.close()

