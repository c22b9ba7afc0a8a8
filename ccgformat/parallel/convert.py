"""`ccg convert --mpi`: a conversion split across MPI ranks by locations, its parts
merged into one archive (dissertation 4.7: a distributed cCCG, one part per process,
united by 4.4's merge so that sub-trees repeated on several ranks are stored once) - or,
for a trace of many small locations that builds into a small graph, read by every rank
and built by rank 0 alone (the gathered way).

The locations are cut into as many consecutive ranges as there are ranks. With a format
that reads a subset of its locations (OTF2: one event file per location,
`formats.read`'s ``locations``), every rank reads the definitions and then its own
range, range k by rank k; rank 0 first chooses the way (`_read_own`): the gathered way
when the format's sample of a location's bytes (`Format.location_bytes`) is small
(`may_gather`) and a builder makes few nodes of rank 0's first locations per event
(`_probe`), the parts otherwise. With any other format, rank 0 reads the whole input and
sends the other ranges' events to their ranks (`distribute`), converting the last range
itself (range k by rank ``(k + 1) % P``, `owner_of_range`), and the parts way is taken.

**The parts way.** The ranges hold about equal shares (`world.split`). Each rank converts
its range into a part archive beside the target (``.DST.part<k>-<id>``): every defined
location is in each part, those of other ranges without events, and the definitions
without their format extensions (rank EXTENSIONS_RANK encodes those for the merged file
while rank 0 merges, `_send_extensions`). The ranks then agree on the trace's
window (spec 4.10's ``[t0, t1)``: an allgather of their parts' first and last event
times) and each computes its locations' rows of the finest aggregation and metric
levels over it from the graph it built (`query.table_rows`). The same allgather gives
each part's node count, so each rank moves its part's node ids to where the merged file
numbers them and compresses the blocks at the writer's node level itself
(`merge.write_moved` ``fresh``: the parts are stored at level 1), all ranks at once.
Rank 0 merges the parts, in location order, into the target with
those rows and blocks (`ccgformat.merge`, written atomically: the tables are the rows
side by side, the node blocks stored as moved, no event walked again) and every rank
removes its files.

**The gathered way** (`_gathered`). Rank 0 reads a smaller range than the others
(`gathered_ranges`) and builds it as it reads, then builds the other ranges' events as
their ranks send them (`gather`), with the serial writer: the file is the serial
conversion's, byte for byte. Rank EXTENSIONS_RANK encodes and compresses the
definitions' extensions (`writer.extension_table`) once it has sent its range, and rank
0's writer takes the table and its frame when it writes the definitions. Why: at 20,000
locations of 50 events, reading a location (its two files opened, its local
definitions) costs more than building it, and the merge's work per location (0.2 s at
20,000) more than the build it spreads; a trace whose build is dear (a ring of
messages: 2.4 times the nodes per event) keeps the parts (docs/parallel.md).

Why parts merged by rank 0, rather than MPI-IO at offsets from a prefix sum: a node
shared by two ranks' parts must be stored once, so what a rank writes depends on the
other ranks' nodes - a merge that sees all parts. The merge reads the parts' node blocks
and definitions, never their events; docs/parallel.md has the costs. Consecutive ranges
in location order make the merged definitions (the strings that GENERIC events intern
as they stream, in order of first use) equal to the serial conversion's.

Memory per rank: in the parts way a rank builds only its locations (the builder's pool
of its part); rank 0 also runs the merge, and with a format read by rank 0 holds the
events in flight to other ranks (`distribute.IN_FLIGHT` bytes per rank at most). In the
gathered way rank 0 builds every location (at most `GATHERED_BYTES` of events) and each
other rank holds at most `distribute.IN_FLIGHT` bytes of sent events.
"""

from __future__ import annotations

import os
from dataclasses import asdict, fields, replace
from functools import partial
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..ahead import close_items
from ..archive import merge as merge_archives, open_archive
from ..archive.writer import extension_table
from ..archive.merge import COPY_NODES, Moved, TableRows, Writes, write_moved
from ..archive.native import builder as make_builder
from ..errors import CcgError, ParallelError, ParameterError
from ..formats import (ConvertReport, LocationStreams, TraceSource, convert as convert_serial, detect, get, read,
                       write_archive)
from ..graph import Graph
from ..model import Definitions, EventBatch
from ..graph.graph import root_columns
from ..params import Params
from ..query.streaming import streamed
from ..query.table_rows import table_rows
from .distribute import Sender, receive_trace, send_trace
from .gather import Gathered, send_locations
from .world import World, split

__all__ = ["WAYS", "convert", "gathered_ranges", "may_gather", "owner_of_range", "part_ranges"]


#: how the ranks convert a format whose ranks read their own locations: chosen by the
#: trace ("auto"), or by the caller (the tests take each way)
WAYS = ("auto", "parts", "gathered")

#: the rank that encodes the definitions' format extensions while rank 0 merges: the parts
#: leave them out (OTF2's at 20,000 locations: 5 MB of table, 0.24 s of each rank's part
#: and the merge's, docs/parallel.md), and the other ranks wait idle during the merge
EXTENSIONS_RANK = 1

#: how the parts are written: they are read once, by the merge, which builds the
#: aggregation tables and the indexes of the whole anew and compresses at the asked
#: level (`archive.save_graph`): so no tables, the fastest zstd level, and never the
#: compact layout, whose trials (the primed LZMA2 body among them) cost a small part
#: 0.022 s of a 0.10 s conversion for a file the merge reads once (docs/parallel.md);
#: the other options of the conversion (blocking, gap coding, checkpoint interval) are
#: theirs, which the merge keeps where it copies their node blocks and checkpoints
PART_OPTIONS = {"aggregation": False, "level": 1, "compact": False}



#: the gathered way (`_gathered`) converts a trace whose locations' events take at most
#: this many bytes each on average (OTF2: ~13 bytes an event, so ~150 events; sampled,
#: `formats.Format.location_bytes`): below it, reading a location (its files opened, its
#: local definitions) and merging it cost more than building it (docs/parallel.md)
GATHERED_LOCATION_BYTES = 2 << 10

#: ... and at most this many bytes of events in all: rank 0 builds them all, in the
#: memory of a serial conversion (~5 M events)
GATHERED_BYTES = 64 << 20

#: ... and whose first locations (`PROBE_LOCATIONS`, at most `PROBE_EVENTS` events) a
#: builder makes at most this many new nodes of per event: the build of the whole, on rank
#: 0 alone, is then cheap (20,000 x 50 events: SPMD ranks 0.15; sending in a ring 0.36,
#: whose build and tables took twice as long and more: docs/parallel.md)
GATHERED_NEW_NODES = 0.25

PROBE_LOCATIONS = 64
PROBE_EVENTS = 1 << 16

#: in the gathered way, rank 0's share of the locations to read, against 1 for each other
#: rank: it builds every location besides (20,000 x 50 SPMD on 2 ranks: 0.5, 0.6 and 0.7
#: took 0.70, 0.685 and 0.69 of one rank; docs/parallel.md)
GATHERED_RANK0_SHARE = 0.6


def owner_of_range(k: int, size: int) -> int:
    """The rank converting range ``k`` of ``size`` ranges when rank 0 reads the input for
    every rank (`distribute`): rank 0 the last one. Where each rank reads its own range,
    rank k converts range k."""
    return (k + 1) % size


def part_ranges(count: int, size: int) -> list[tuple[int, int]]:
    """The ``size`` consecutive location ranges of ``count`` locations, in location order."""
    return split(np.ones(count), size)


def gathered_ranges(count: int, size: int) -> list[tuple[int, int]]:
    """The ``size`` consecutive location ranges of ``count`` locations that the gathered
    way reads, range k by rank k: the first `GATHERED_RANK0_SHARE` of the others'."""
    shares = np.cumsum([GATHERED_RANK0_SHARE] + [1.0] * (size - 1))
    bounds = [0, *np.rint(count * shares / shares[-1]).astype(np.int64).tolist()]
    return [(bounds[k], bounds[k + 1]) for k in range(size)]


def may_gather(location_bytes: float | None, count: int) -> bool:
    """Whether a trace of ``count`` locations of ``location_bytes`` each on average (None:
    unknown) may be converted the gathered way (`_probe` then decides)."""
    return location_bytes is not None and location_bytes <= GATHERED_LOCATION_BYTES and \
        location_bytes * count <= GATHERED_BYTES


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str], params: Params | None = None, *,
            fmt: str | None = None, world: World | None = None, way: str = "auto", **options: Any) -> ConvertReport:
    """Convert ``source`` to ``target`` on every rank of the MPI world together (called
    by every rank with the same arguments; ``options`` as for `ccgformat.convert`; ``way``
    one of `WAYS`).
    Every rank returns the same report; when any rank fails, every rank raises (its own
    error or `ParallelError`) and no file is left under the target's name or the parts'."""
    world = world or World()
    params = params or Params()
    source, target = Path(source), Path(target)
    if way not in WAYS:
        raise ParameterError(f"way must be one of {', '.join(WAYS)}, got {way!r}")
    name = world.agree(lambda: detect(source) if fmt is None else get(fmt).name)
    if world.size == 1:
        return convert_serial(source, target, params, fmt=name, **options)
    token, sampled = world.broadcast((f"{os.getpid()}", _location_bytes(source, name)) if world.rank == 0 else None)
    trace, owners = None, [owner_of_range(k, world.size) for k in range(world.size)]
    if get(name).read_locations is not None:  # every rank reads the definitions and its own range
        trace, gathered = world.agree(lambda: _read_own(world, source, name, params, sampled, way))
        if gathered:
            return _gathered(world, source, target, name, params, trace, options)
        owners = list(range(world.size))
    folder = target.parent if str(target.parent) else Path(".")

    def part_of(k: int) -> Path:
        return folder / f".{target.name}.part{k}-{token}"

    writes = Writes(**{field.name: options[field.name] for field in fields(Writes) if field.name in options})
    mine = owners.index(world.rank)  # the range this rank converts
    part = part_of(mine)
    nodes = part.with_name(f"{part.name}.nodes")  # its node blocks moved (`_moved`)
    try:
        graph, extensions = world.agree(lambda: _part(world, source, part, name, params, trace,
                                                      {**options, **PART_OPTIONS}))
        report = ConvertReport.of_graph(source, part, name, graph)
        window, counts = _window(world, graph, owners)
        walk = streamed(sum(counts), len(graph.roots))  # the rows made as the merged graph's levels are
        rows = world.agree(partial(_rows, graph, part, window, walk)) if writes.aggregation else None
        del graph  # the builder's nodes, before rank 0 merges (no closure above holds it)
        moved = world.agree(lambda: _moved(part, nodes, sum(counts[:mine]), sum(counts), writes.level))
        gathered = world.gather((report, rows, moved)) or [(report, rows, moved)] * world.size  # all on rank 0
        reports, rows_of, moved_of = zip(*(gathered[owners[k]] for k in range(world.size)))
        later = bool(extensions)  # every rank read the same definitions
        world.agree(lambda: _merge(world, [part_of(k) for k in range(world.size)], target,
                                   rows_of if writes.aggregation else None, moved_of, later, writes)
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


def _part(world: World, source: Path, part: Path, name: str, params: Params, trace: TraceSource | None,
          options: dict[str, Any]) -> tuple[Graph, dict[str, Any]]:
    """Convert this rank's range of the locations into the archive ``part``: ``trace``
    when this rank read it (a format that reads a subset of its locations), else read by
    rank 0 (`_read_by_rank0`); written without the definitions' format extensions (the
    merge gets them from `_send_extensions`). Returns the built graph and the
    extensions."""
    progress = options.pop("progress", None)
    definitions, batches = trace if trace is not None else _read_by_rank0(world, source, name)
    graph = write_archive(part, source, name, (replace(definitions, extensions={}), batches), params,
                          progress=progress, **options)
    return graph, definitions.extensions


def _read_own(world: World, source: Path, name: str, params: Params, sampled: float | None, way: str
              ) -> tuple[TraceSource, bool]:
    """Every rank's definitions and its range of the locations (a format that reads a
    subset of its locations), and which way converts them (True: gathered): ``way``, or
    with "auto" `may_gather` and then `_probe` of rank 0's first locations. Rank 0 opens
    range 0 of either way, decides, and tells the others, which then open theirs."""
    size = world.size
    if world.rank == 0:
        try:
            definitions, streams = read(source, name, lambda count: range(*part_ranges(count, size)[0]))
            count = len(definitions.locations)
            end = gathered_ranges(count, size)[0][1]
            held: list[tuple[int, list[EventBatch]]] = []
            gathered = way == "gathered"
            if way == "auto" and may_gather(sampled, count):
                held, new_nodes = _probe(params, definitions, streams, end)
                gathered = new_nodes <= GATHERED_NEW_NODES
        except BaseException as error:
            world.broadcast((None, str(error) or type(error).__name__))  # the others wait for the way
            raise
        world.broadcast((gathered, None))
        rest = _before(streams, end) if gathered else streams
        return (definitions, _chained(held, rest)), gathered

    decided: list[tuple[bool | None, str | None]] = []

    def chosen(count: int) -> range:
        decided.append(world.broadcast(None))
        gathered, failure = decided[0]
        if gathered is None:
            raise ParallelError(0, failure)
        return range(*(gathered_ranges if gathered else part_ranges)(count, size)[world.rank])
    try:
        trace = read(source, name, chosen)
    except BaseException:
        if not decided:
            world.broadcast(None)  # rank 0's, which it sends whatever happens
        raise
    return trace, bool(decided[0][0])


def _probe(params: Params, definitions: Definitions, streams: LocationStreams, end: int
           ) -> tuple[list[tuple[int, list[EventBatch]]], float]:
    """The first locations of ``streams`` (those before ``end``, up to `PROBE_LOCATIONS`
    of them or `PROBE_EVENTS` events), held, and the nodes a builder makes of them per
    event (+inf when it refuses them: the conversion reports why)."""
    builder = make_builder(params, definitions)
    held: list[tuple[int, list[EventBatch]]] = []
    events, refused = 0, False
    for location, batches in streams:
        held.append((location, list(batches)))
        try:
            for batch in held[-1][1]:
                builder.add(location, batch)
                events += len(batch)
            builder.end_location(location)
        except CcgError:
            refused = True
        if refused or len(held) >= PROBE_LOCATIONS or events >= PROBE_EVENTS or location + 1 >= end:
            break
    return held, float("inf") if refused else len(builder.pool) / max(events, 1)


def _before(streams: LocationStreams, end: int) -> LocationStreams:
    """The locations of ``streams`` before ``end`` (the one after is read, and dropped)."""
    try:
        for location, batches in streams:
            if location >= end:
                return
            yield location, batches
    finally:
        close_items(streams)


def _chained(*parts: Iterable[tuple[int, Iterable[EventBatch]]]) -> LocationStreams:
    """The locations of every part in turn (each closed with this)."""
    try:
        for part in parts:
            yield from part
    finally:
        for part in parts:
            close_items(part)


def _location_bytes(source: Path, name: str) -> float | None:
    """The format's sample of a location's bytes (`Format.location_bytes`), None without."""
    sample = get(name).location_bytes
    return None if sample is None else sample(source)


def _gathered(world: World, source: Path, target: Path, name: str, params: Params, trace: TraceSource,
              options: dict[str, Any]) -> ConvertReport:
    """The gathered way: every rank read the definitions and opened its range
    (`gathered_ranges`); rank 0 builds its own range as it reads it, then the others'
    ranges as they send them (`gather`), into the target, with the serial writer: the
    file is the serial conversion's. Rank EXTENSIONS_RANK encodes the definitions'
    extensions once it has sent its range, while rank 0 builds."""
    definitions, streams = trace
    if world.rank == 0:
        gathered = Gathered(world, range(1, world.size), definitions.strings)
        extensions = _Later(world, EXTENSIONS_RANK)

        def build() -> ConvertReport:
            try:
                graph = write_archive(target, source, name, (definitions, _chained(streams, gathered.locations())),
                                      params, encoded_extensions=extensions, **options)
            finally:
                gathered.drain()
                extensions.take()
            return ConvertReport.of_graph(source, target, name, graph)
        return world.broadcast(world.agree(build))

    def send() -> None:
        sender = Sender(world, 0)
        try:
            try:
                send_locations(sender, streams, definitions.strings)
            except BaseException:
                if world.rank == EXTENSIONS_RANK:
                    world.send((None, "its locations were not read"), 0)
                raise
            finally:
                close_items(streams)
            if world.rank == EXTENSIONS_RANK:  # before the sends complete: rank 0 takes the events meanwhile
                _send_extensions(world, definitions.extensions)  # (Open MPI: shared memory)
        finally:
            sender.wait()
    world.agree(send)
    return world.broadcast(None)


def _merge(world: World, parts: list[Path], target: Path, rows: tuple[TableRows, ...] | None,
           moved: tuple[Moved | None, ...], later: bool, writes: Writes) -> None:
    """Rank 0's merge of the ``parts`` into ``target`` with the ranks' table ``rows`` and
    ``moved`` node blocks, written as ``writes`` says; with ``later``,
    the extensions the parts leave out come from
    rank EXTENSIONS_RANK (`_send_extensions`) when the merge asks for them, and are taken
    from it whatever happens, so that it never waits for this rank."""
    extensions = _Later(world, EXTENSIONS_RANK)
    try:
        merge_archives(parts, target, rows=rows, moved=moved, extensions=extensions if later else None,
                       **asdict(writes))
    finally:
        if later:
            extensions.take()


def _send_extensions(world: World, extensions: dict[str, Any]) -> None:
    """Rank EXTENSIONS_RANK's share of the writing: the trace's format extensions as the
    written file stores them (`writer.extension_table`: encoded and compressed at the
    writer's level, the default on several ranks), sent to rank 0 - or why that failed,
    so that rank 0 does not wait for them (it takes them with `_Later`)."""
    try:
        block = extension_table(extensions)
    except Exception as error:
        world.send((None, str(error) or type(error).__name__), 0)
        raise
    world.send((block, None), 0)


class _Later:
    """On rank 0: what `_send_extensions` sends from ``rank``, taken when first asked
    for (`ParallelError` when the rank failed) - or by `take`, whatever happened, so that
    the rank never waits for rank 0."""

    def __init__(self, world: World, rank: int) -> None:
        self.world, self.rank = world, rank
        self.sent: list[tuple[Any, str | None]] = []

    def __call__(self) -> Any:
        block, failure = self.take()
        if block is None:
            raise ParallelError(self.rank, failure)
        return block

    def take(self) -> tuple[Any, str | None]:
        if not self.sent:
            self.sent.append(self.world.receive(self.rank))
        return self.sent[0]


def _window(world: World, graph: Graph, owners: list[int]) -> tuple[tuple[int, int], list[int]]:
    """The window ``[t0, t1)`` of the whole trace (spec 4.10): the first event time and
    the last + 1 of every rank's part, (0, 1) without events; and the nodes of each
    range's part, in location order (range k converted by rank ``owners[k]``)."""
    _, _, starts, ends, events = root_columns(graph.roots)
    filled = events > 0
    spans = world.allgather(((int(starts[filled].min()), int(ends[filled].max()) + 1) if filled.any() else None,
                             graph.metrics.n))
    known = [span for span, _ in spans if span is not None]
    counts = [spans[owner][1] for owner in owners]
    return ((min(s for s, _ in known), max(e for _, e in known)) if known else (0, 1)), counts


def _moved(part: Path, path: Path, base: int, total: int, level: int | None) -> Moved | None:
    """The part's node blocks moved up by ``base`` (the nodes of the ranges before it)
    and compressed at the writer's zstd ``level`` into ``path`` (`merge.write_moved`,
    ``fresh``: the part is stored at a fast level), by every rank
    at once, when the merge copies node blocks (a graph of ``total`` >= COPY_NODES nodes:
    smaller ones are hash consed, which reads the parts' nodes instead): rank 0 then only
    stores them. None for a smaller graph."""
    if total < COPY_NODES:
        return None
    with open_archive(part) as archive:
        return path, write_moved(archive, base, path, fresh=True, level=level)


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
