"""Paje traces (pajeng, SimGrid, StarPU, JRastro...): import and export.

Written from the Paje trace file format description 1.3 (``schnorr/pajeng``
``doc/lang-paje``) and the original Paje documentation; docs/formats/paje.md gives the
mapping field by field. In short:

* Containers become system tree nodes (kind = container type name, the root ``0`` is
  implicit); a container with events becomes a location. A container's first state type
  shares its location; every further state type gets a location of its own, since the
  stacks of two state types need not nest.
* PajePushState / PajeSetState -> ENTER of the region (state type, value); PajePopState
  -> LEAVE; PajeSetState and PajeResetState LEAVE everything open first; a container's
  destruction (or the trace's end) LEAVEs what is still open.
* PajeStartLink / PajeEndLink -> SEND / RECV on the start and end containers (matched by
  type, container, value and key in either order; ref = the peer location, comm = a
  communicator per link type).
* PajeSetVariable / PajeAddVariable / PajeSubVariable -> METRIC (one double metric per
  variable type) holding the variable's new value as IEEE bits.
* PajeNewEvent -> MARKER (ref = the event type name, value = the value, both in strings).
* Dates become integer ticks at ``10**k`` per second, k = the most decimals any date has,
  parsed exactly; the export writes them back with k decimals.
* Everything else a lossless export needs goes to ``extensions["paje"]`` (event
  definitions, type definitions, container records, references) or to GENERIC
  ``paje:fields`` hints right before the event they complete (definition, user fields,
  way of writing); a reset of an empty stack is a GENERIC ``paje:record``.
* PajeTraceFile records and container Filename fields include other files (each file is
  read once, so a file naming itself or any cycle is skipped); the export writes one file.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...deferred import Deferred

__all__ = ["read", "sniff", "write"]

_HEADER = re.compile(rb"(?:^(?:\xef\xbb\xbf)?|[\r\n])[ \t]*%[ \t]*EventDef[ \t]")


def sniff(path: Path, head: bytes) -> bool:
    """A text whose first bytes hold a ``%EventDef`` header line (after an optional UTF-8
    byte order mark; lines may end in LF, CRLF or CR)."""
    return _HEADER.search(head) is not None


#: `reader.read` and `writer.write`, imported at the first call
read = Deferred("ccgformat.formats.paje.reader", "read")
write = Deferred("ccgformat.formats.paje.writer", "write")
