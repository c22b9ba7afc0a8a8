"""OTF v1 marker files (``NAME.s.marker``): marker definitions and marker spots.

``MD`` definitions (id, name, type 1 error / 2 warning / 3 hint) are listed in
``extensions["otf1"]["markers"]``; a MARKER event's ref is the index into that list. An
``MS`` spot (marker, time, process, text) becomes a MARKER event of the process's
location whose value is the string index of the text, preceded by an ``otf1:attributes``
GENERIC event when key-values were attached to it. Spots are written with their own time
stamp, in any order, so they are merged into the location's events by time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ...errors import FormatError
from ...model import Definitions
from ..common import StringTable
from .definitions import Catalog, key_value
from .events import GENERIC, MARKER, Spot
from .files import lines
from .grammar import KEY_VALUE, MARKER_FILE


def read_markers(files: Iterable[tuple[int, Path]], definitions: Definitions, catalog: Catalog,
                 strings: StringTable) -> dict[int, list[Spot]]:
    """Marker definitions into ``definitions`` and ``catalog``; spots by process id."""
    markers: list[dict[str, Any]] = []
    spots: list[tuple[dict[str, Any], str, int]] = []
    for stream, path in files:
        pending: list[list[Any]] = []
        for number, line in lines(path):
            parsed = MARKER_FILE.parse(line)
            if parsed is None:
                raise FormatError("unparseable marker record", path=str(path), line=number)
            record, fields = parsed
            if record is KEY_VALUE:
                if fields["key"] not in catalog.keys:
                    raise FormatError(f"key {fields['key']} is not defined", path=str(path), line=number)
                pending.append(key_value(fields))
                continue
            if pending:
                fields["kv"], pending = pending, []
            if record.name == "Marker":
                spots.append((fields, str(path), number))
            elif fields["marker"] in catalog.markers:
                raise FormatError(f"marker {fields['marker']} is defined twice", path=str(path), line=number)
            else:
                catalog.markers[fields["marker"]] = len(markers)
                markers.append({"stream": stream, **fields})
        if pending:
            raise FormatError("key-value lines at the end of the file belong to no record", path=str(path))
    definitions.extensions["otf1"]["markers"] = markers
    by_process: dict[int, list[Spot]] = {}
    for fields, path, number in spots:
        for ident, table, what in ((fields["marker"], catalog.markers, "marker"),
                                   (fields["process"], catalog.processes, "process")):
            if ident not in table:
                raise FormatError(f"{what} {ident} is not defined", path=path, line=number)
        if fields["time"] >> 63:
            raise FormatError(f"time stamp {fields['time']} is out of range", path=path, line=number)
        events = [(GENERIC, strings("otf1:attributes"), strings.json({"kv": fields["kv"]}, ensure_ascii=False))] if "kv" in fields else []
        events.append((MARKER, catalog.markers[fields["marker"]], strings(fields["text"])))
        by_process.setdefault(fields["process"], []).append((fields["time"], events))
    return by_process
