"""Input formats: detection from content, one reader per format, and `convert`.

A format is registered under a short name with two functions:

``sniff(path, head) -> bool``
    True when the file looks like this format. ``head`` holds the file's first
    `SNIFF_BYTES` bytes (empty for a folder or an unreadable file); sniffing must be
    cheap, must not raise and must not need optional dependencies.
``read(path) -> (Definitions, iterator of (location, iterator of EventBatch))``
    The trace, streamed one location after another in bounded batches. Bad content
    raises a `CcgError` subclass (`FormatError`, `TraceError`) naming the file and the
    position. Resources are released when the iterator is exhausted or closed. The
    returned `Definitions` object may still grow while the events stream (texts that
    GENERIC and MARKER events intern are appended to ``strings``): it is complete once
    the iterator is exhausted, which is when the archive writer stores it.

A format may also register ``read_locations(path, locations) -> TraceSource``: the same
definitions, and the events of only those locations (indexes into the definitions'
locations, or a function of their number giving them; streamed in increasing order),
the others' events never read
(`ccgformat.parallel` splits a conversion across MPI ranks this way), and with it
``location_bytes(path) -> float | None``: the mean bytes of a location's events, from a
sample of its files (`ccgformat.parallel` chooses how to split by it).

Detection tries the formats in registration order and never looks at the file name's
extension. New importers call `register` from this module (see the bottom). A format
package's ``__init__`` holds its sniffing and little else; its ``read`` and ``write`` are
`ccgformat.deferred.Deferred`, so that detecting a format or registering every one
imports no reader or writer (start-up, docs/parallel.md).
"""

from __future__ import annotations

import dataclasses
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence, Union

from ..archive import (AGGREGATION_BUDGET, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_NODES_PER_BLOCK,
                       MAGIC as CCG_MAGIC, KeptBlock, open_archive, register_exporter, write_trace)
from ..ahead import close_items
from ..errors import FormatError, InputTraceError, TraceError
from ..graph import Graph
from ..model import Definitions, EventBatch, LocationItem, Repair, location_pairs
from ..params import Params
from . import chrome as _chrome
from . import epilog as _epilog
from . import npz as _npz
from . import otf1 as _otf1
from . import otf2 as _otf2
from . import paje as _paje

__all__ = ["SNIFF_BYTES", "ConvertProgress", "ConvertReport", "Format", "TraceSource", "convert", "detect", "formats", "get",
           "read", "register", "write_archive"]

#: Bytes of the file's beginning handed to every sniff function.
SNIFF_BYTES = 4096

LocationStreams = Iterator[tuple[int, Iterable[EventBatch]]]
TraceSource = tuple[Definitions, LocationStreams]
#: what `write_archive` takes: a `TraceSource`, whose streams may hold `LocationRun` items
WrittenSource = tuple[Definitions, Iterator[LocationItem]]
#: Chosen locations: their indexes, or a function of the number of locations giving them.
Chosen = Union[Sequence[int], Callable[[int], Sequence[int]]]


@dataclass(frozen=True)
class Format:
    """A registered input format."""

    name: str
    description: str
    sniff: Callable[[Path, bytes], bool]
    read: Callable[[Path], TraceSource]
    #: the events of chosen locations only, where the format can skip the others
    read_locations: Callable[[Path, Chosen], TraceSource] | None = None
    #: the mean bytes of a location's events, from a sample (with ``read_locations``)
    location_bytes: Callable[[Path], float | None] | None = None


_FORMATS: dict[str, Format] = {}


def register(name: str, description: str, sniff: Callable[[Path, bytes], bool],
             read: Callable[[Path], TraceSource],
             read_locations: Callable[[Path, Chosen], TraceSource] | None = None,
             location_bytes: Callable[[Path], float | None] | None = None) -> Format:
    """Add a format (detection tries formats in registration order)."""
    if name in _FORMATS:
        raise ValueError(f"format {name!r} is already registered")
    fmt = _FORMATS[name] = Format(name, description, sniff, read, read_locations, location_bytes)
    return fmt


def formats() -> list[Format]:
    """The registered formats, in detection order."""
    return list(_FORMATS.values())


def get(name: str) -> Format:
    """The format registered under ``name``; `FormatError` if there is none."""
    try:
        return _FORMATS[name]
    except KeyError:
        raise FormatError(f"unknown format name {name!r}; known formats: {', '.join(_FORMATS)}") from None


def _head(path: Path) -> bytes:
    if path.is_dir():
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except OSError as error:
        raise FormatError(f"cannot read the input: {error.strerror or error}", path=str(path)) from None


def detect(path: str | os.PathLike[str]) -> str:
    """The name of the input's format, judged from its content (never its extension)."""
    path = Path(path)
    if not path.exists():
        raise FormatError("no such file", path=str(path))
    head = _head(path)
    for fmt in _FORMATS.values():
        if fmt.sniff(path, head):
            return fmt.name
    raise FormatError(f"unrecognised input format (first bytes {head[:8].hex(' ') or 'none'}); known "
                      f"formats: {', '.join(_FORMATS)}", path=str(path))


def read(path: str | os.PathLike[str], fmt: str | None = None,
         locations: Chosen | None = None) -> TraceSource:
    """Definitions and per-location event batches of the input at ``path``; the format
    is detected from the content unless ``fmt`` names it. With ``locations``, only
    those locations' events (the format must have ``read_locations``)."""
    path = Path(path)
    name = detect(path) if fmt is None else get(fmt).name
    if fmt is not None and not path.exists():
        raise FormatError("no such file", path=str(path))
    if locations is None:
        return _FORMATS[name].read(path)
    subset = _FORMATS[name].read_locations
    if subset is None:
        raise ValueError(f"format {name} cannot read a subset of its locations")
    return subset(path, locations)


# --------------------------------------------------------------------------- convert

@dataclass(frozen=True)
class ConvertReport:
    """What `convert` did."""

    source: str
    target: str
    format: str
    locations: int
    events: int
    N: int               #: nodes of the uncompressed graph
    n: int               #: nodes stored
    file_bytes: int
    repairs: tuple[Repair, ...] = ()  #: what ``repair=True`` changed in the input
    #: the deviation bounds asked for were met by the lossless archive, smaller (`convert`)
    lossless_kept: bool = False

    @classmethod
    def of_graph(cls, source: str | os.PathLike[str], target: str | os.PathLike[str], fmt: str, graph: Graph,
                 lossless_kept: bool = False) -> ConvertReport:
        """The report of ``graph`` built from ``source`` (format ``fmt``) and written to ``target``."""
        return cls(str(source), str(target), fmt, len(graph.roots), graph.event_count, graph.metrics.N,
                   graph.metrics.n, os.path.getsize(target), graph.repairs, lossless_kept)

    @property
    def r_nodes(self) -> float:
        return self.N / self.n if self.n else 1.0

    @property
    def bytes_per_event(self) -> float | None:
        return self.file_bytes / self.events if self.events else None


@dataclass(frozen=True)
class ConvertProgress:
    """Where a conversion is, handed to the ``progress`` callback after every batch."""

    location: int            #: the location being read
    location_events: int     #: its events so far
    events: int              #: events of all locations so far
    locations_done: int      #: locations finished
    locations: int           #: locations the definitions list


Progress = Callable[[ConvertProgress], None]


#: a lossy archive up to this size (64 KiB) is also converted losslessly, and the smaller
#: kept (`convert`): the bound members and rounded gaps of a small or very regular trace
#: can cost more than they save, and a lossless archive meets every bound. Such a trace
#: converts again quickly (a regular one at 20-30 times the otf2 iteration); a jittered
#: one, whose lossy archive is large, is not converted twice
LOSSLESS_TRIAL_BYTES = 1 << 16


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str], params: Params | None = None, *,
            fmt: str | None = None, repair: bool = False, level: int | None = None,
            checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
            nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, progress: Progress | None = None,
            aggregation: bool = True, gaps: str = "auto", locations: Chosen | None = None,
            **bounds: float) -> ConvertReport:
    """Convert a trace (any registered format, detected from content) to a .ccg archive.

    Compression parameters come from ``params`` or from keyword arguments naming
    `Params` fields (``abs_dev=1000, rel_dev=0.05``); unnamed ones keep their defaults
    (lossless). The target is written atomically: on any error nothing appears under its
    name. A .ccg source is rebuilt from its (possibly already lossy) events. ``repair``
    closes regions left open at a location's end and drops LEAVEs that match no open
    region (never inventing other data); the report lists each change. Events that break
    the event model otherwise (or without ``repair``) raise `InputTraceError`, a
    `FormatError` naming the source file, the location and the event. ``aggregation``
    writes the aggregation tables (spec 4.10). ``gaps``: how node blocks store their gaps,
    one of `writer.GAP_CODINGS` (spec 5.8). With deviation bounds, an archive of at most
    LOSSLESS_TRIAL_BYTES is replaced by the lossless one when that is smaller (the
    report's ``lossless_kept``): lossy is never the larger of the two there.
    With ``locations`` (a format with ``read_locations``), only those locations' events
    are converted, the other defined locations written without events, and the archive
    never replaced by a lossless trial: a part of a parallel conversion
    (`ccgformat.parallel`) that `ccgformat.merge` joins with the others.
    """
    if params is not None and bounds:
        raise TypeError("give either params or keyword bounds, not both")
    params = params if params is not None else Params(**bounds)  # type: ignore[arg-type]
    source, target = Path(source), Path(target)
    if target.exists() and source.exists() and os.path.samefile(source, target):
        raise FormatError("the target is the input file; conversion never modifies its input", path=str(target))
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "the target is a folder", str(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, "the target's folder does not exist", str(folder))
    name = detect(source) if fmt is None else get(fmt).name
    options = dict(repair=repair, level=level, checkpoint_interval=checkpoint_interval,
                   nodes_per_block=nodes_per_block, aggregation=aggregation, gaps=gaps)

    def write(path: Path, params: Params, progress: Progress | None) -> Graph:
        return write_archive(path, source, name, read(source, name, locations), params, progress=progress,
                             **options)  # type: ignore[arg-type]

    graph = write(target, params, progress)
    kept = False
    if not params.lossless and locations is None and os.path.getsize(target) <= LOSSLESS_TRIAL_BYTES:
        trial = folder / f".{target.name}.lossless-{os.getpid()}"
        try:
            lossless = write(trial, Params(branching=params.branching, search_length=params.search_length,
                                           leaf_window=params.leaf_window, epoch_nodes=params.epoch_nodes), None)
            kept = os.path.getsize(trial) < os.path.getsize(target)
            if kept:
                os.replace(trial, target)
                graph = lossless
        finally:
            if trial.exists():
                trial.unlink()
    return ConvertReport.of_graph(source, target, name, graph, kept)


def write_archive(target: Path, source: Path, name: str, trace: WrittenSource, params: Params, *,
                  repair: bool = False, level: int | None = None,
                  checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                  nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, progress: Progress | None = None,
                  aggregation: bool = True, gaps: str = "auto", compact: bool = True,
                  encoded_extensions: Callable[[], KeptBlock] | None = None) -> Graph:
    """Write ``trace`` (what `read` gave for the input ``source`` of format ``name``, or
    the same handed on from another process) to the archive ``target``, as `convert`
    does (options as there; ``compact`` and ``encoded_extensions`` as for
    `archive.write_trace`); close its streams. Returns the built graph."""
    definitions, streams = trace
    if "source_format" not in definitions.provenance:
        definitions = dataclasses.replace(definitions, provenance={**definitions.provenance, "source_format": name})
    counted = streams if progress is None else _Counter(streams, progress, len(definitions.locations))
    try:
        return write_trace(target, definitions, counted, params, repair=repair, level=level,
                           checkpoint_interval=checkpoint_interval, nodes_per_block=nodes_per_block,
                           aggregation=AGGREGATION_BUDGET if aggregation else None, gaps=gaps,
                           compact=compact, encoded_extensions=encoded_extensions)
    except TraceError as error:
        raise InputTraceError(error.reason, path=str(source), location=error.location, index=error.index,
                              time=error.time) from None
    finally:
        close_items(streams)


class _Counter:
    """Passes the location streams through, counting events for the progress callback
    (without one, the streams go to the writer as they are)."""

    def __init__(self, streams: Iterable[LocationItem], progress: Progress | None, locations: int):
        self.streams = streams
        self.progress = progress
        self.locations = locations
        self.finished = 0
        self.total = 0

    def __iter__(self) -> Iterator[tuple[int, Iterator[EventBatch]]]:
        for location, batches in location_pairs(self.streams):
            yield location, self._count(location, batches)
            self.finished += 1

    def _count(self, location: int, batches: Iterable[EventBatch]) -> Iterator[EventBatch]:
        done = 0
        self._report(location, done)
        for batch in batches:
            yield batch
            done += len(batch)
            self.total += len(batch)
            self._report(location, done)

    def _report(self, location: int, done: int) -> None:
        if self.progress is not None:
            self.progress(ConvertProgress(location, done, self.total, self.finished,
                                          max(self.locations, self.finished + 1)))


# --------------------------------------------------------------------------- built-in formats

def _sniff_ccg(path: Path, head: bytes) -> bool:
    return head.startswith(CCG_MAGIC)


def _read_ccg(path: Path) -> TraceSource:
    archive = open_archive(path)
    try:
        definitions = archive.definitions
        locations = archive.locations
    except BaseException:
        archive.close()
        raise

    def streams() -> LocationStreams:
        try:
            yield from archive.location_events(locations)
        finally:
            archive.close()

    return definitions, streams()


register("ccg", "ccgformat archive (.ccg), rebuilt with new parameters", _sniff_ccg, _read_ccg)
register("npz", "numpy zip of per-location columns, as written by tools/synth.py", _npz.sniff, _npz.read)
register("otf1", "OTF version 1 trace (VampirTrace): the .otf master control file", _otf1.sniff, _otf1.read)
register("epilog", "EPILOG trace (KOJAK, Scalasca 1.x), plain or gzip", _epilog.sniff, _epilog.read)
register("chrome", "Chrome Trace Event JSON (chrome://tracing, Perfetto), optionally gzip", _chrome.sniff, _chrome.read)
register_exporter("chrome", "Chrome Trace Event JSON (Perfetto UI, chrome://tracing)", (".json", ".json.gz"), _chrome.write)
register("paje", "Paje trace (pajeng, SimGrid, StarPU)", _paje.sniff, _paje.read)
register_exporter("paje", "Paje trace", (".trace", ".paje"), _paje.write)
register("otf2", "OTF2 archive (Score-P): the folder or its .otf2 anchor file", _otf2.sniff, _otf2.read, _otf2.read,
         _otf2.location_bytes)
register_exporter("otf2", "OTF2 archive folder (traces.otf2, traces.def, traces/)", (".otf2",), _otf2.write,
                  ("logical",))
