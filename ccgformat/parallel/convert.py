"""`ccg convert --mpi`: a conversion split across MPI ranks by locations, its parts
merged into one archive (dissertation 4.7: a distributed cCCG, one part per process,
united by 4.4's merge so that sub-trees repeated on several ranks are stored once).

The locations are cut into as many consecutive ranges as there are ranks, each about an
equal share of them (`world.split`). Range k is converted by rank ``(k + 1) % P`` into
a part archive beside the target (``.DST.part<k>-<id>``): every defined location is in
each part, those of other ranges without events, and the definitions without their
format extensions (rank EXTENSIONS_RANK encodes those for the merged file while rank 0
merges, `_send_extensions`). With a format that reads a subset of
its locations (OTF2: one event file per location, `formats.read`'s ``locations``),
every rank reads its own range; with any other, rank 0 reads the whole input and sends
the other ranges' events to their ranks (`distribute`), then converts the last range
itself - which is why rank 0 holds the last range. The ranks then agree on the trace's
window (spec 4.10's ``[t0, t1)``: an allgather of their parts' first and last event
times) and each computes its locations' rows of the finest aggregation and metric
levels over it from the graph it built (`query.table_rows`). The same allgather gives
each part's node count, so each rank moves its part's node ids to where the merged file
numbers them and compresses the blocks at the writer's node level itself
(`merge.write_moved` ``fresh``: the parts are stored at level 1), all ranks at once. Rank 0 merges the parts, in location order, into the target with
those rows and blocks (`ccgformat.merge`, written atomically: the tables are the rows
side by side, the node blocks stored as moved, no event walked again) and every rank
removes its files.

Why parts merged by rank 0, rather than MPI-IO at offsets from a prefix sum: a node
shared by two ranks' parts must be stored once, so what a rank writes depends on the
other ranks' nodes - a merge that sees all parts. The merge reads the parts' node blocks
and definitions, never their events; docs/parallel.md has the costs. Consecutive ranges
in location order make the merged definitions (the strings that GENERIC events intern
as they stream, in order of first use) equal to the serial conversion's.

Memory per rank: a rank builds only its locations (the builder's pool of its part);
rank 0 also runs the merge, and with a format read by rank 0 holds the events in flight
to other ranks (`distribute.IN_FLIGHT` bytes per rank at most).
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..archive import merge as merge_archives, open_archive
from ..archive import DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_NODES_PER_BLOCK
from ..archive.writer import KeptBlock, extension_table
from ..archive.merge import COPY_NODES, Moved, TableRows, write_moved
from ..errors import ParallelError, ParameterError
from ..formats import ConvertReport, convert as convert_serial, detect, get, read, write_archive
from ..graph import Graph
from ..graph.graph import root_columns
from ..params import Params
from ..query.streaming import streamed
from ..query.table_rows import table_rows
from .distribute import receive_trace, send_trace
from .world import World, split

__all__ = ["convert", "owner_of_range", "part_ranges"]


#: the rank that encodes the definitions' format extensions while rank 0 merges: the parts
#: leave them out (OTF2's at 20,000 locations: 5 MB of table, 0.24 s of each rank's part
#: and the merge's, docs/parallel.md), and the other ranks wait idle during the merge
EXTENSIONS_RANK = 1

#: how the parts are written: they are read once, by the merge, which builds the
#: aggregation tables and the indexes of the whole anew and compresses at the asked
#: level (`archive.save_graph`): so no tables, and the fastest zstd level
PART_OPTIONS = {"aggregation": False, "level": 1}


def owner_of_range(k: int, size: int) -> int:
    """The rank converting range ``k`` of ``size`` ranges (rank 0 the last one)."""
    return (k + 1) % size


def part_ranges(count: int, size: int) -> list[tuple[int, int]]:
    """The ``size`` consecutive location ranges of ``count`` locations, in location order."""
    return split(np.ones(count), size)


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str], params: Params | None = None, *,
            fmt: str | None = None, world: World | None = None, **options: Any) -> ConvertReport:
    """Convert ``source`` to ``target`` on every rank of the MPI world together (called
    by every rank with the same arguments; ``options`` as for `ccgformat.convert`).
    Every rank returns the same report; when any rank fails, every rank raises (its own
    error or `ParallelError`) and no file is left under the target's name or the parts'."""
    world = world or World()
    params = params or Params()
    source, target = Path(source), Path(target)
    if world.size > 1:
        _check_merge_writes(options)
    name = world.agree(lambda: detect(source) if fmt is None else get(fmt).name)
    if world.size == 1:
        return convert_serial(source, target, params, fmt=name, **options)
    token = world.broadcast(f"{os.getpid()}")
    folder = target.parent if str(target.parent) else Path(".")

    def part_of(k: int) -> Path:
        return folder / f".{target.name}.part{k}-{token}"

    mine = (world.rank - 1) % world.size  # the range this rank converts
    part = part_of(mine)
    nodes = part.with_name(f"{part.name}.nodes")  # its node blocks moved (`_moved`)
    try:
        graph, extensions = world.agree(lambda: _part(world, source, part, name, params, mine,
                                                      {**options, **PART_OPTIONS}))
        report = ConvertReport(str(source), str(part), name, len(graph.roots), graph.event_count, graph.metrics.N,
                               graph.metrics.n, os.path.getsize(part), graph.repairs)
        window, counts = _window(world, graph)
        walk = streamed(sum(counts), len(graph.roots))  # the rows made as the merged graph's levels are
        rows = world.agree(partial(_rows, graph, part, window, walk))  # no closure over the graph let go below
        del graph  # the builder's nodes, before rank 0 merges
        moved = world.agree(lambda: _moved(part, nodes, sum(counts[:mine]), sum(counts)))
        gathered = world.gather((report, rows, moved)) or [(report, rows, moved)] * world.size  # all on rank 0
        reports, rows_of, moved_of = zip(*(gathered[owner_of_range(k, world.size)] for k in range(world.size)))
        later = bool(extensions)  # every rank read the same definitions
        world.agree(lambda: _merge(world, [part_of(k) for k in range(world.size)], target, rows_of, moved_of, later)
                    if world.rank == 0 else _send_extensions(world, extensions) if later and
                    world.rank == EXTENSIONS_RANK else None)
        result = None
        if world.rank == 0:
            with open_archive(target) as archive:
                stats = archive.stats
            result = ConvertReport(str(source), str(target), name, reports[0].locations, stats.events, stats.N,
                                   stats.n, os.path.getsize(target), tuple(r for p in reports for r in p.repairs))
        return world.broadcast(result)
    finally:
        for path in (part, nodes):
            if path.exists():
                path.unlink()


def _part(world: World, source: Path, part: Path, name: str, params: Params, mine: int,
          options: dict[str, Any]) -> tuple[Graph, dict[str, Any]]:
    """Convert range ``mine`` of the locations into the archive ``part``: read by this
    rank when the format reads a subset of its locations, else by rank 0
    (`_read_by_rank0`), and written without the definitions' format extensions (the
    merge gets them from `_send_extensions`). Returns the built graph and the
    extensions."""
    progress = options.pop("progress", None)
    if get(name).read_locations is not None:
        def chosen(count: int) -> range:
            return range(*part_ranges(count, world.size)[mine])
        trace = read(source, name, chosen)
    else:
        trace = _read_by_rank0(world, source, name)
    definitions, batches = trace
    graph = write_archive(part, source, name, (replace(definitions, extensions={}), batches), params,
                          progress=progress, **options)
    return graph, definitions.extensions


def _merge(world: World, parts: list[Path], target: Path, rows: tuple[TableRows, ...],
           moved: tuple[Moved | None, ...], later: bool) -> None:
    """Rank 0's merge of the ``parts`` into ``target`` with the ranks' table ``rows`` and
    ``moved`` node blocks; with ``later``, the extensions the parts leave out come from
    rank EXTENSIONS_RANK (`_send_extensions`) when the merge asks for them, and are taken
    from it whatever happens, so that it never waits for this rank."""
    sent: list[Any] = []

    def extensions() -> KeptBlock:
        if not sent:
            sent.append(world.receive(EXTENSIONS_RANK))
        block, failure = sent[0]
        if block is None:
            raise ParallelError(EXTENSIONS_RANK, failure)
        return block

    try:
        merge_archives(parts, target, rows=rows, moved=moved, extensions=extensions if later else None)
    finally:
        if later and not sent:
            sent.append(world.receive(EXTENSIONS_RANK))


def _send_extensions(world: World, extensions: dict[str, Any]) -> None:
    """Rank EXTENSIONS_RANK's share of the merge: the trace's format extensions as the
    merged file stores them (`writer.extension_table`, at the merge's level), sent to
    rank 0 - or why that failed, so that rank 0 does not wait for them."""
    try:
        block = extension_table(extensions)
    except Exception as error:
        world.send((None, str(error) or type(error).__name__), 0)
        raise
    world.send((block, None), 0)


def _window(world: World, graph: Graph) -> tuple[tuple[int, int], list[int]]:
    """The window ``[t0, t1)`` of the whole trace (spec 4.10): the first event time and
    the last + 1 of every rank's part, (0, 1) without events; and the nodes of each
    range's part, in location order."""
    _, _, starts, ends, events = root_columns(graph.roots)
    filled = events > 0
    spans = world.allgather(((int(starts[filled].min()), int(ends[filled].max()) + 1) if filled.any() else None,
                             graph.metrics.n))
    known = [span for span, _ in spans if span is not None]
    counts = [spans[owner_of_range(k, world.size)][1] for k in range(world.size)]
    return ((min(s for s, _ in known), max(e for _, e in known)) if known else (0, 1)), counts


def _moved(part: Path, path: Path, base: int, total: int) -> Moved | None:
    """The part's node blocks moved up by ``base`` (the nodes of the ranges before it)
    and compressed at the writer's level into ``path`` (`merge.write_moved`, ``fresh``: the
    part is stored at a fast level), by every rank
    at once, when the merge copies node blocks (a graph of ``total`` >= COPY_NODES nodes:
    smaller ones are hash consed, which reads the parts' nodes instead): rank 0 then only
    stores them. None for a smaller graph."""
    if total < COPY_NODES:
        return None
    with open_archive(part) as archive:
        return path, write_moved(archive, base, path, fresh=True)


def _rows(graph: Graph, part: Path, window: tuple[int, int], walk: bool) -> TableRows:
    """The part's table rows over ``window`` (`query.table_rows`, walked with ``walk``):
    from the built graph while it holds its nodes, else (a graph whose builder let
    written nodes go, docs/scale.md) from the part's file."""
    if not graph.epochs:
        return table_rows(graph, *window, walk)
    with open_archive(part) as archive:
        return table_rows(archive, *window, walk)


def _read_by_rank0(world: World, source: Path, name: str) -> Any:
    """This rank's locations' trace, read by rank 0 (`distribute`)."""
    if world.rank == 0:
        try:
            trace = read(source, name)
        except Exception as error:
            world.broadcast((None, str(error) or type(error).__name__))  # the others wait for the definitions
            raise
        definitions = world.broadcast((trace[0], None))[0]
        ranges = part_ranges(len(definitions.locations), world.size)
        owners = [owner_of_range(k, world.size) for k in range(world.size)]
        trace = (definitions, send_trace(world, trace[1], definitions, ranges, owners))
    else:
        definitions, failure = world.broadcast(None)
        if definitions is None:
            raise ParallelError(0, failure)
        trace = (definitions, receive_trace(world, definitions))
    return trace


#: the writer's options and their defaults, which the merge writes with
_MERGE_WRITES = {"level": None, "checkpoint_interval": DEFAULT_CHECKPOINT_INTERVAL,
                 "nodes_per_block": DEFAULT_NODES_PER_BLOCK, "gaps": "auto", "aggregation": True}


def _check_merge_writes(options: dict[str, Any]) -> None:
    """The merge writes the archive with the writer's defaults: other values are refused
    rather than ignored."""
    changed = [name for name, default in _MERGE_WRITES.items() if options.get(name, default) != default]
    if changed:
        raise ParameterError(f"a conversion on several MPI ranks writes with the default {', '.join(changed)} "
                             f"(ccgformat.merge takes no writer options yet)")


