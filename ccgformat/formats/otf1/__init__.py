"""OTF version 1 (Open Trace Format, VampirTrace) import.

The input is the master control file ``NAME.otf``; the other files are found next to it
by name (see `files`): the global definitions ``NAME.0.def`` (required), local
definitions ``NAME.s.def``, the event streams ``NAME.s.events`` of every stream the
master lists (required) and marker files ``NAME.0.marker``/``NAME.s.marker``, each
plain or zlib-compressed (``.z``), in the short or the long record form (`grammar`).
Snapshot (``.snaps``) and statistics (``.stats``) files are summaries derived from the
events (``otfaux`` writes them) and are not read.

Mapping to the event model: definitions as described in `definitions` (processes ->
locations and a system tree following ``PT`` parents, functions -> regions, process
groups -> communicators and, those that describe the machine (`groups`), system-tree
levels above the processes, counters -> metrics, ``DTR`` -> timer resolution; time
stamps are OTF ticks, clock offset 0), events as described in `events`, markers in `markers`.
Everything the common model has no place for is kept for a lossless export: all
definition records, the master's stream table and the marker definitions in
``extensions["otf1"]``, per-event extras (source locations, key-values, durations,
matching ids) in GENERIC ``otf1:attributes`` events before the event they belong to, and
records without an event kind as GENERIC ``otf1:<Record>`` events. GENERIC and MARKER
texts are interned into ``Definitions.strings`` while the events are read, so the
strings table is complete once every location has been read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator

from ...errors import FormatError
from ...model import Definitions, EventBatch
from ..common import StringTable, batches
from .definitions import Catalog, read_definitions
from .events import Buffer, Spot, StreamReader, merge_spots
from .files import IOFSL_LINE, MASTER_LINE, Master, expected_name, namestub, read_master, stream_file
from .markers import read_markers

__all__ = ["read", "sniff"]

_MASTER_START = re.compile(rb"([0-9a-f]+)(?:[ \t]*:[ \t]*(?:[0-9a-f]+[ \t]*,[ \t]*)*[0-9a-f]*)?")


def sniff(path: Path, head: bytes) -> bool:
    """A master control file (every line ``stream:process,...`` in hex; a line cut off at
    the end of ``head`` only has to start like one) with the global definition file or
    the event file of its first stream next to it."""
    try:
        if not head or not path.is_file():
            return False
        pieces = head.split(b"\n")
        cut = pieces.pop().strip() if path.stat().st_size > len(head) else b""
        entries = [piece.strip() for piece in pieces if piece.strip()]
        streams = [MASTER_LINE.fullmatch(line) for line in entries if not IOFSL_LINE.fullmatch(line)]
        if cut:
            streams.append(_MASTER_START.fullmatch(cut))
        if not streams or not all(streams):
            return False
        stub = namestub(path)
        first = int(streams[0].group(1), 16)  # type: ignore[union-attr]
        return stream_file(stub, 0, "def") is not None or stream_file(stub, first, "events") is not None
    except (OSError, ValueError):
        return False


def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterable[EventBatch]]]]:
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
