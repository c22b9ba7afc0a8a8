"""The file layer: gzip wrapper, EPILOG header (version, byte order) and record framing."""

from __future__ import annotations

import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import FormatError

MAGIC = b"EPILOG\0"
GZIP_MAGIC = b"\x1f\x8b"
HEADER_SIZE = 10


@dataclass
class Source:
    """The decompressed bytes of one file and how to read them."""

    path: str
    data: bytes
    compressed: bool
    major: int = 0
    minor: int = 0
    order: str = "<"

    @property
    def version(self) -> int:
        """major * 1000 + minor, for comparisons such as ``>= 1003`` (1.3)."""
        return self.major * 1000 + self.minor

    def error(self, reason: str, offset: int | None = None) -> FormatError:
        """A `FormatError` for this file at ``offset``."""
        if self.compressed and offset is not None:
            reason += " (offset in the decompressed data)"
        return FormatError(reason, path=self.path, offset=offset)


def load(path: Path) -> Source:
    """Read and, if gzip, decompress a file; check its header."""
    name = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FormatError(f"cannot read the file: {error.strerror or error}", path=name) from None
    compressed = data.startswith(GZIP_MAGIC)
    if compressed:
        data = _gunzip(data, name)
    source = Source(name, data, compressed)
    if len(data) < HEADER_SIZE:
        raise source.error(f"file ends inside the {HEADER_SIZE}-byte EPILOG header ({len(data)} bytes)", 0)
    if not data.startswith(MAGIC):
        raise source.error(f"not an EPILOG file: bad magic {data[:7]!r}", 0)
    source.major, source.minor = data[7], data[8]
    if source.major != 1:
        raise source.error(f"unsupported EPILOG version {source.major}.{source.minor} (1.x is supported)", 7)
    if data[9] not in (1, 2):
        raise source.error(f"unknown byte order {data[9]} (1 little-endian, 2 big-endian)", 9)
    source.order = "<" if data[9] == 1 else ">"
    return source


def _gunzip(data: bytes, name: str) -> bytes:
    """The concatenated gzip members of ``data``; zero bytes after the last one are
    padding, anything else is a `FormatError` at its offset."""
    members = []
    rest = memoryview(data)
    while rest:
        offset = len(data) - len(rest)
        if rest[:2] != GZIP_MAGIC:
            if not any(rest):
                break
            raise FormatError(f"{len(rest)} byte(s) after the end of the gzip stream are not gzip data",
                              path=name, offset=offset)
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            members.append(inflater.decompress(rest))
        except zlib.error as error:
            raise FormatError(f"damaged gzip stream: {error}", path=name, offset=offset) from None
        if not inflater.eof:
            raise FormatError("the gzip stream is cut short", path=name, offset=len(data))
        rest = rest[len(rest) - len(inflater.unused_data):]
    return b"".join(members)


def scan(source: Source) -> np.ndarray:
    """Start offsets of all records; the only per-record Python loop."""
    data = source.data
    starts = array("q")
    append = starts.append
    pos, end = HEADER_SIZE, len(data)
    while pos < end:
        append(pos)
        pos += data[pos] + 2
    if pos > end:
        last = starts[-1]
        kind = f"type {data[last + 1]}" if last + 1 < end else "unknown type"
        raise source.error(f"truncated record: the record of {kind} with a {data[last]}-byte body runs past "
                           f"the end of the data ({end} bytes)", last)
    return np.frombuffer(starts, dtype=np.int64) if len(starts) else np.zeros(0, np.int64)
