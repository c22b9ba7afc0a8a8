"""OTF2 (Open Trace Format 2) archives: import and export, through the `otf2` package.

An OTF2 archive is a folder: the anchor file ``<name>.otf2`` (its content starts with a
two-byte buffer header and the NUL-terminated text ``OTF2``), the global definitions
``<name>.def`` and a folder ``<name>/`` with one event file (and local definitions) per
location. Either the folder or the anchor file may be given.

Mapping to the event model (docs/formats/otf2.md has the full table):

* Locations are the OTF2 locations in definition order; the system tree holds the OTF2
  system tree nodes (kind = class name) followed by the location groups (kind = their
  type, e.g. ``process``), and every location hangs below its group. Regions keep name,
  role and paradigm (lower-case OTF2 enum names) and the name of a REGIONS group that
  holds them. Communicators list their members' location indexes in rank order.
  Every metric member of every metric class or instance is one model metric.
  Timestamps stay the OTF2 ticks; ``clock_offset`` is the global offset.
* Enter/Leave -> ENTER/LEAVE; MpiSend/MpiRecv -> SEND/RECV and MpiIsend/MpiIrecv ->
  ISEND/IRECV with the peer rank turned into the peer's location index;
  MpiIrecvRequest -> IRECV_REQUEST; MpiIsendComplete -> REQUEST_COMPLETE (requests keep
  their 64 bits); MpiCollectiveBegin -> COLL_BEGIN; MpiCollectiveEnd -> COLL_END (ref =
  OTF2 collective operation, tag = root location or -1 when there is none); a Metric
  record with n values -> n METRIC events (value = the 64 bits of each value);
  ParameterInt of a parameter ``MARKER <n>`` -> MARKER, ParameterString of a parameter
  ``GENERIC <kind>`` -> GENERIC (how the exporter writes those kinds).
* Every other record, and one of the records above that the model cannot hold exactly
  (a rank outside its communicator, a size beyond int64, metric values whose types differ
  from their definition, an Enter or Leave that breaks the nesting), becomes a GENERIC
  event: ref = the string ``otf2:<Record>``, value = its fields as compact JSON with raw
  OTF2 references (``{"measurementMode":1}``). A record's attribute list becomes a
  GENERIC ``otf2:attributes`` event (``[[attribute, type, value bits], ...]``) just
  before it.
* ``extensions["otf2"]`` keeps every global definition as the writer call that restores
  it (original references), the clock properties, the anchor's creator, description and
  properties, and the OTF2 reference of every model region, location, communicator and
  metric, so that the exporter writes the same archive. Since its version 2 it leaves
  out what the model regions hold (region names, roles and paradigms, `compact`).

Events are read per location in C (`native`) when the native core is in use, else (and
for every location the native reader does not map) with ctypes callbacks that append to
plain lists. The strings
of GENERIC events are added to the returned ``Definitions.strings`` while the locations
stream. The exporter writes the inverse mapping (`plan` for the definitions, `export`
for the events); archives not from OTF2 get definitions made from the model.

Modules, each importing only those listed before it: `common` (shared constants),
`anchor` (the anchor file), `binding` (direct calls into the OTF2 C library),
`globaldefs` (global definitions as writer calls), `compact` (the fields of those the
model regions hold, left out and put back), `definitions` (those as the model),
`callbacks` (events into lists), `columns` (lists
into model columns), `native` (events into columns in C), `reader` (`read`), `plan` (definitions to write), `export` (`write`).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from ...deferred import Deferred
from .anchor import ANCHOR_MAGIC, anchors, find_anchor
from .common import GENERIC_PARAMETER, MARKER_PARAMETER, P2P_RECORDS

__all__ = ["sniff", "read", "location_bytes", "write", "write_events", "ANCHOR_MAGIC", "MARKER_PARAMETER",
           "GENERIC_PARAMETER", "P2P_RECORDS"]

#: `reader.read`, `export.write` and `export.write_events`, imported at the first call
read = Deferred("ccgformat.formats.otf2.reader", "read")
write = Deferred("ccgformat.formats.otf2.export", "write")
write_events = Deferred("ccgformat.formats.otf2.export", "write_events")


def sniff(path: Path, head: bytes) -> bool:
    """An anchor file (``OTF2\\0`` after the buffer header), or a folder holding one."""
    if path.is_dir():
        return bool(anchors(path))
    return head[2:7] == ANCHOR_MAGIC


#: event files `location_bytes` looks at
SAMPLED_EVENT_FILES = 64


def location_bytes(path: Path) -> float | None:
    """The mean size of the archive's first `SAMPLED_EVENT_FILES` event files in its
    folder's order (``<name>/<location>.evt``, an order that no location's size decides);
    None without any (or with a path that is no archive)."""
    try:
        folder = find_anchor(Path(path)).with_suffix("")
        with os.scandir(folder) as entries:
            sizes = [entry.stat().st_size for entry in itertools.islice(
                (entry for entry in entries if entry.name.endswith(".evt") and entry.is_file()), SAMPLED_EVENT_FILES)]
    except (OSError, ValueError):
        return None
    return sum(sizes) / len(sizes) if sizes else None
