"""BUNDLE blocks (spec 2.5, format 1.4): several small sections in one zstd frame; and
DICTIONARY_BUNDLE blocks (spec 2.6, format 1.5): the same, compressed with the bundle
dictionary.

The raw payload is a member count, one entry per member (kind, flags, length, first,
count, each an unsigned LEB128 varint) and the members' raw payloads one after another.
Sharing one frame saves each member its framing, its directory entry and its own zstd
frame, and lets zstd match text across members (the provenance that DEFINITIONS and
PARAMETERS both hold). The dictionary gives a small file's JSON the words it would
otherwise spell out once: the member names of DEFINITIONS and PARAMETERS, and the records
importers keep."""

from __future__ import annotations

import functools
from importlib.resources import files

import zstandard

from ..errors import CorruptArchiveError
from .layout import BlockFlags, SectionKind
from .sections import DirectoryEntry

#: the kinds of block that hold a bundle
BUNDLE_KINDS = frozenset({SectionKind.BUNDLE, SectionKind.DICTIONARY_BUNDLE})
#: kinds that never lie inside a bundle
_NOT_MEMBERS = frozenset({SectionKind.FOOTER}) | BUNDLE_KINDS
#: the bundle dictionaries' files in this package by number: 1 that of DICTIONARY_BUNDLE
#: blocks (spec 2.6), 2 and 3 those a file in the compact layout may name (spec 2.7, 2.8);
#: the spec gives each one's size and SHA-256
DICTIONARY_FILES = {1: "bundle_dictionary_1.jsonl", 2: "bundle_dictionary_2.bin", 3: "bundle_dictionary_3.bin"}
#: the dictionaries of zstd frames; 3 is the history of the primed LZMA2 codec (spec 2.9)
ZSTD_DICTIONARIES = (1, 2)


@functools.cache
def dictionary_bytes(number: int) -> bytes:
    """The bytes of bundle dictionary ``number`` (spec 2.6, 2.8)."""
    return files(__package__).joinpath(DICTIONARY_FILES[number]).read_bytes()


@functools.cache
def bundle_dictionary(number: int = 1) -> zstandard.ZstdCompressionDict:
    """Bundle dictionary ``number`` (one of ZSTD_DICTIONARIES), as a zstd raw-content
    dictionary."""
    return zstandard.ZstdCompressionDict(dictionary_bytes(number), dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def compress_with_dictionary(raw: bytes, level: int, number: int = 1) -> bytes:
    """One zstd frame of ``raw`` (its size recorded, no dictionary id) compressed at
    ``level`` with bundle dictionary ``number``: with 1, a DICTIONARY_BUNDLE block's payload."""
    return zstandard.ZstdCompressor(level=level, dict_data=bundle_dictionary(number), write_content_size=True,
                                    write_dict_id=False).compress(raw)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_bundle(members: list[tuple[int, int, int, int, bytes]]) -> bytes:
    """The raw payload of a bundle of (kind, flags, first, count, raw payload) members."""
    head = [_varint(len(members))]
    for kind, flags, first, count, raw in members:
        head += [_varint(kind), _varint(flags), _varint(len(raw)), _varint(first), _varint(count)]
    return b"".join(head) + b"".join(member[4] for member in members)


class _Cursor:
    def __init__(self, raw: bytes, path: str, offset: int):
        self.raw, self.position, self.path, self.offset = raw, 0, path, offset

    def varint(self) -> int:
        value = shift = 0
        while True:
            if self.position >= len(self.raw):
                raise CorruptArchiveError("bundle: the member directory runs past the payload",
                                          path=self.path, offset=self.offset)
            byte = self.raw[self.position]
            self.position += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift > 63:
                raise CorruptArchiveError("bundle: a varint is longer than 10 bytes", path=self.path,
                                          offset=self.offset)
        if value >= 1 << 64:
            raise CorruptArchiveError("bundle: a varint is at or above 2^64", path=self.path, offset=self.offset)
        return value


def member_count(raw: bytes, path: str, offset: int) -> int:
    """The member count a bundle's raw payload begins with."""
    return _Cursor(raw, path, offset).varint()


def decode_bundle(raw: bytes, block: DirectoryEntry, path: str) -> list[tuple[DirectoryEntry, bytes]]:
    """The members of the bundle ``block`` (raw payload ``raw``) as directory entries of
    uncompressed sections (`DirectoryEntry.member` their position, ``offset`` the
    bundle's) with their payloads, checked against spec 2.5."""
    cursor = _Cursor(raw, path, block.offset)
    count = cursor.varint()
    if count == 0 or count != block.count:
        raise CorruptArchiveError(f"bundle holds {count} members, the directory says {block.count}",
                                  path=path, offset=block.offset)
    heads = []
    for member in range(count):
        kind, flags, length, first, nodes = (cursor.varint() for _ in range(5))
        if kind in _NOT_MEMBERS or kind > 0xFFFF:
            raise CorruptArchiveError(f"bundle: member {member} is of kind {kind}, which no bundle holds",
                                      path=path, offset=block.offset)
        if flags & ~int(BlockFlags.MUST_UNDERSTAND):
            raise CorruptArchiveError(f"bundle: member {member} has flags {flags:#x}", path=path,
                                      offset=block.offset)
        heads.append((kind, flags, length, first, nodes))
    position = cursor.position
    members = []
    for member, (kind, flags, length, first, nodes) in enumerate(heads):
        if length > len(raw) - position:
            raise CorruptArchiveError(f"bundle: member {member} of {length} bytes runs past the payload",
                                      path=path, offset=block.offset)
        members.append((DirectoryEntry(kind, flags, block.offset, length, length, first, nodes, member),
                        raw[position:position + length]))
        position += length
    if position != len(raw):
        raise CorruptArchiveError(f"bundle: {len(raw) - position} bytes after the last member",
                                  path=path, offset=block.offset)
    return members
