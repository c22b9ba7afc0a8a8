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

from ...deferred import Deferred
from .files import IOFSL_LINE, MASTER_LINE, namestub, stream_file

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


#: `reader.read`, imported at the first call
read = Deferred("ccgformat.formats.otf1.reader", "read")
