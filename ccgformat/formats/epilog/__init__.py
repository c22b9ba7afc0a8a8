"""EPILOG traces (KOJAK, Scalasca 1.x): merged and per-rank ``.elg`` files, plain or gzip.

Written from the Scalasca 1.4 EPILOG headers (``elg_defs.h``, ``elg_impl.h``, ``elg_rw.c``,
``elg_readcb.c[.gen]``). A file is ``"EPILOG\\0"``, major, minor and byte order (1 little,
2 big) bytes, then records ``[body length u1][type u1][body]``; types below 100 define,
the others are events. docs/formats/epilog.md gives the field-by-field mapping:

* MACHINE > NODE > PROCESS become system tree nodes; each LOCATION a location named
  after its THREAD, under its process. REGION -> regions (role from the region type,
  group and paradigm from the description string), METRIC -> metrics, MPI_COMM (or
  MPI_COMM_REF + MPI_GROUP) -> communicators of the ranks' locations. Every definition
  record, parsed, is kept in ``extensions["epilog"]`` without the texts the model holds,
  with the original ids.
* ENTER and ENTER_CS -> ENTER; EXIT -> LEAVE; MPI_SEND / MPI_RECV -> SEND / RECV, or
  ISEND / IRECV when an ATTR_UI4 REQUEST record comes right before them; MPI_COLLEXIT and
  COLLEXIT -> COLL_END (ref = the collective's region, tag = root location or -1) then
  LEAVE; MPI_SEND_COMPLETE -> REQUEST_COMPLETE; MPI_RECV_REQUEST -> IRECV_REQUEST; the
  metric values of a record -> METRIC events right before its event. Every other record
  (OpenMP, RMA, tracing on/off, attributes, unknown event types) -> GENERIC
  ``epilog:<RECORD>`` with its remaining fields as compact JSON; OMP_COLLEXIT,
  MPI_WINEXIT and MPI_WINCOLLEXIT add the LEAVE they imply, ENTER_CS keeps its call site
  in a GENERIC before the ENTER, and COLLEXIT a GENERIC marking it apart from MPI_COLLEXIT.
* Whether an event carries a location id is decided by its length. A file whose events
  carry none (or 0xFFFFFFFF) and that defines one LOCATION is a per-rank trace: its
  events belong to that location, its OFFSET records map local to global time, and the
  peers, roots and communicators it names are ranks and ids of the whole run, so those
  it does not define become placeholder locations ("rank N") and communicators.
* Times (double seconds) become integer ticks at the smallest resolution 10**k per
  second (k <= 9) that reproduces every timestamp exactly, else at 1 ns, rounded.

Modules, each importing only those listed after it: `reader` (`read`), `events` (records -> model
events), `times` (seconds -> ticks), `model` (definitions -> model, id lookups),
`records` (event records, column-wise), `definitions` (definition records), `source`
(gzip, header, record framing), `layouts` (event record layouts).
"""

from __future__ import annotations

import zlib
from pathlib import Path

from ...deferred import Deferred
from .source import GZIP_MAGIC, MAGIC

__all__ = ["MAGIC", "read", "sniff"]


def sniff(path: Path, head: bytes) -> bool:
    """The EPILOG magic, directly or at the start of a gzip stream."""
    if head.startswith(MAGIC):
        return True
    if not head.startswith(GZIP_MAGIC):
        return False
    try:
        return zlib.decompressobj(wbits=31).decompress(head, len(MAGIC)) == MAGIC
    except zlib.error:
        return False


#: `reader.read`, imported at the first call
read = Deferred("ccgformat.formats.epilog.reader", "read")
