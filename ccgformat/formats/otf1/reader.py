"""Reading an OTF1 trace: the master control file, the definition files, the marker
files and every stream's events, into the event model (the package's `read`)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from ...errors import FormatError
from ...model import Definitions, EventBatch
from ..common import StringTable, batches
from .definitions import Catalog, read_definitions
from .events import Buffer, Spot, StreamReader, merge_spots
from .files import Master, expected_name, namestub, read_master, stream_file
from .markers import read_markers

__all__ = ["read"]


def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterable[EventBatch]]]]:
    """Definitions and per-location event batches of the trace whose master control file
    is ``path``."""
    master = read_master(path)
    stub = namestub(path)
    global_definitions = stream_file(stub, 0, "def")
    if global_definitions is None:
        raise FormatError("the global definition file (plain or .z) is missing", path=expected_name(stub, 0, "def"))
    streams = [stream for stream, _ in master.streams]
    definition_files = [(0, global_definitions)] + _existing(stub, streams, "def")
    definitions, catalog = read_definitions(definition_files)
    definitions.extensions["otf1"]["master"] = {"streams": master.streams, "iofsl": master.iofsl}
    strings = StringTable(definitions.strings)
    spots = read_markers(_existing(stub, [0] + streams, "marker"), definitions, catalog, strings)
    return definitions, _locations(stub, master, catalog, strings, spots)


def _existing(stub: Path, streams: list[int], suffix: str) -> list[tuple[int, Path]]:
    found = [(stream, stream_file(stub, stream, suffix)) for stream in streams]
    return [(stream, file) for stream, file in found if file is not None]


def _locations(stub: Path, master: Master, catalog: Catalog, strings: StringTable,
               spots: dict[int, list[Spot]]) -> Iterator[tuple[int, Iterable[EventBatch]]]:
    claimed: set[int] = set()
    for stream, _ in master.streams:
        events = stream_file(stub, stream, "events")
        if events is None:
            raise FormatError(f"the event file of stream {stream} is missing",
                              path=expected_name(stub, stream, "events"))
        buffers = StreamReader(events, catalog, strings, claimed).read()
        for process in sorted(buffers, key=catalog.processes.__getitem__):
            columns = merge_spots(buffers.pop(process).columns(), spots.pop(process, []))
            yield catalog.processes[process], batches(columns)
    for process in sorted(spots, key=catalog.processes.__getitem__):
        yield catalog.processes[process], batches(merge_spots(Buffer().columns(), spots[process]))
