"""Encoding of the small sections: JSON documents, the roots table and the directory."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import CorruptArchiveError
from ..graph.graph import LocationRoot
from .layout import DIRECTORY_ENTRY, ROOT_ENTRY


def encode_json(document: Any) -> bytes:
    """Compact, key-sorted UTF-8 JSON: the same document always gives the same bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decode_json(raw: bytes, what: str, path: str, offset: int) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # incl. bad UTF-8, bad JSON, integers over 4300 digits
        raise CorruptArchiveError(f"{what} section is not valid JSON: {error}", path=path, offset=offset) from None


def encode_roots(roots: dict[int, LocationRoot]) -> bytes:
    return b"".join(ROOT_ENTRY.pack(location, r.root, r.start, r.end, r.events)
                    for location, r in sorted(roots.items()))


def decode_roots(raw: bytes, path: str, offset: int) -> dict[int, LocationRoot]:
    if len(raw) % ROOT_ENTRY.size:
        raise CorruptArchiveError(f"roots section of {len(raw)} bytes is not a whole number of "
                                  f"{ROOT_ENTRY.size}-byte entries", path=path, offset=offset)
    roots: dict[int, LocationRoot] = {}
    previous = -1
    for location, root, start, end, events in ROOT_ENTRY.iter_unpack(raw):
        # locations are indexes (below 2**63, like every index) in increasing order (spec 4.3)
        if not previous < location < 1 << 63 or end < start:
            raise CorruptArchiveError(f"roots section: bad entry for location {location}", path=path, offset=offset)
        roots[location] = LocationRoot(root, start, end, events)
        previous = location
    return roots


@dataclass(frozen=True)
class DirectoryEntry:
    """One block as the footer lists it."""

    kind: int
    flags: int
    offset: int
    length: int       # stored payload bytes
    raw_length: int   # payload bytes after decompression
    first: int        # first node id (NODES) or location (SNAPSHOTS, SUMMARY), else 0
    count: int        # nodes, or checkpoints, else 0
    member: int = -1  # a section inside a BUNDLE block (at ``offset``): its position there

    def pack(self) -> bytes:
        return DIRECTORY_ENTRY.pack(self.kind, self.flags, 0, self.offset, self.length, self.raw_length,
                                    self.first, self.count)


def encode_directory(entries: list[DirectoryEntry]) -> bytes:
    return b"".join(entry.pack() for entry in entries)


def decode_directory(raw: bytes, path: str, offset: int) -> list[DirectoryEntry]:
    if len(raw) % DIRECTORY_ENTRY.size:
        raise CorruptArchiveError(f"footer of {len(raw)} bytes is not a whole number of "
                                  f"{DIRECTORY_ENTRY.size}-byte entries", path=path, offset=offset)
    entries = []
    for kind, flags, reserved, block_offset, length, raw_length, first, count in DIRECTORY_ENTRY.iter_unpack(raw):
        if reserved:
            raise CorruptArchiveError("reserved directory field is not zero", path=path, offset=offset)
        entries.append(DirectoryEntry(kind, flags, block_offset, length, raw_length, first, count))
    return entries
