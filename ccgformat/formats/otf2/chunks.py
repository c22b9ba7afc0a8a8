"""How many event records an OTF2 event file announces, from its chunk headers.

OTF2's buffer format: an event file is a run of chunks of the archive's event chunk size,
each opened by an 18-byte header - the record type CHUNK_HEADER (3), an endianness byte
(0x42 little, 0x23 big), then the numbers of the chunk's first and last event as full
uint64 in that byte order (the first chunk's first event is 1; a chunk without events has
last = first - 1). The OTF2 library reads a chunk into memory of the chunk size whatever
the file holds, so a file cut short leaves it reading memory it never filled; the
readers therefore read no more records than the headers announce, and fail on fewer.
A local definition file is looked at once, before the library reads it (`definition_file`).
"""

from __future__ import annotations

import os
import struct
from enum import Enum

from ...errors import FormatError

__all__ = ["DefinitionFile", "announced_records", "definition_file"]

_HEADER = 18
_CHUNK_HEADER = 3
_BYTE_ORDERS = {0x42: "<", 0x23: ">"}
#: What follows the chunk header in a file without records: END_OF_FILE (2), END_OF_BUFFER (1).
_NO_RECORDS = b"\x02\x01"


def announced_records(path: str, chunk_size: int) -> int | None:
    """The number of event records of event file ``path`` by its chunk headers (chunks of
    ``chunk_size`` bytes); None when the file does not exist (the library says so).

    Chunks are followed while the next one's header continues the event numbering, so
    bytes a writer left after the end-of-file record are never taken for a chunk."""
    try:
        descriptor = os.open(path, os.O_RDONLY)     # not open(): a buffered file object per location costs
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(descriptor).st_size
        if chunk_size < _HEADER:
            raise FormatError(f"the anchor file gives an event chunk size of {chunk_size} bytes", path=path)
        last = -1
        order = None
        for offset in range(0, size, chunk_size):
            header = os.pread(descriptor, _HEADER, offset)
            chunk_order = _BYTE_ORDERS.get(header[1]) if len(header) == _HEADER else None
            if header[0] != _CHUNK_HEADER or chunk_order is None or order not in (None, chunk_order):
                break
            first, chunk_last = struct.unpack(f"{chunk_order}QQ", header[2:])
            if (offset == 0 and first != 1) or (offset and first != last + 1) or chunk_last < first - 1:
                break
            order, last = chunk_order, chunk_last
    finally:
        os.close(descriptor)
    if last < 0:
        raise FormatError("the event file does not begin with an OTF2 chunk header", path=path, offset=0)
    if last > size:
        raise FormatError(f"the chunk headers announce {last:,} events, more than the file has bytes",
                          path=path, offset=size)
    return last


class DefinitionFile(Enum):
    """What a local definition file holds, as far as its first bytes tell."""

    NO_RECORDS = "a single chunk without records"
    CUT_SHORT = "too short for its chunk header and end, or no chunk header"
    RECORDS = "anything else, or unreadable"


def definition_file(path: str) -> DefinitionFile:
    """What definition file ``path`` holds, from one read of its first bytes.

    NO_RECORDS: a chunk header followed by END_OF_FILE and END_OF_BUFFER (an OTF2 writer's
    file of a location with nothing to define); reading it through the library, whose
    readers cost a chunk-sized buffer each, would find nothing. CUT_SHORT: shorter than
    that, or not beginning with a chunk header; the library reads such a file into memory
    it never filled, and a file cut inside its header kept it reading for ever (a file cut
    later it reports itself). RECORDS otherwise, also when the file cannot be read (the
    library then reads it and says why)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return DefinitionFile.RECORDS
    try:
        data = os.read(descriptor, _HEADER + len(_NO_RECORDS) + 1)
    except OSError:
        return DefinitionFile.RECORDS
    finally:
        os.close(descriptor)
    if len(data) < _HEADER + len(_NO_RECORDS) or data[0] != _CHUNK_HEADER or data[1] not in _BYTE_ORDERS:
        return DefinitionFile.CUT_SHORT
    return DefinitionFile.NO_RECORDS if data[_HEADER:] == _NO_RECORDS else DefinitionFile.RECORDS
