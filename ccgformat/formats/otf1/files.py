"""The files of an OTF v1 trace: names, the master control file, and reading lines.

A trace named ``NAME`` is the master file ``NAME.otf`` (the input path; its ``.otf``
suffix is dropped to get ``NAME``) and per stream ``s`` (lowercase hex) the files
``NAME.s.def``, ``.events``, ``.marker``, ``.snaps``, ``.stats``; stream 0 holds the
global definitions. Any of them but the master may be compressed: the name then ends in
``.z`` and the content is one zlib (RFC 1950) stream written with full flushes, often
without a final block. The master file has one line per stream, ``s:p,p,...`` (stream
id, then the ids of the processes whose events it holds); an ``i...`` line describes an
I/O forwarding setup and is kept but not interpreted.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from ...errors import FormatError

#: Bytes read (and, for .z files, decompressed) per step; a line may not be longer.
CHUNK = 1 << 20
MAX_LINE = 64 << 20
_FLUSH_MARK = b"\x00\x00\xff\xff"  # what a zlib full (or sync) flush ends with
MASTER_LINE = re.compile(rb"[ \t]*([0-9a-f]+)[ \t]*:[ \t]*((?:[0-9a-f]+[ \t]*,[ \t]*)*[0-9a-f]+)[ \t]*\r?")
IOFSL_LINE = re.compile(rb"i[0-9a-f]+:[0-9a-f]+:[0-9a-f]+\r?")


@dataclass(frozen=True)
class Master:
    """The master control file: streams in file order with their processes."""

    streams: list[tuple[int, list[int]]]
    iofsl: list[str]


def namestub(master: Path) -> Path:
    """``NAME`` of the master file ``NAME.otf`` (the path itself without that suffix)."""
    return master.with_name(master.name[:-4]) if master.name.endswith(".otf") else master


def stream_file(stub: Path, stream: int, suffix: str) -> Path | None:
    """The existing file of ``stream`` with ``suffix`` (``def``, ``events``, ``marker``),
    plain or compressed, or None."""
    plain = stub.with_name(f"{stub.name}.{stream:x}.{suffix}")
    for candidate in (plain, plain.with_name(plain.name + ".z")):
        if candidate.is_file():
            return candidate
    return None


def expected_name(stub: Path, stream: int, suffix: str) -> str:
    return str(stub.with_name(f"{stub.name}.{stream:x}.{suffix}"))


def read_master(path: Path) -> Master:
    """Parse the master control file; `FormatError` with the line on anything else."""
    streams: list[tuple[int, list[int]]] = []
    iofsl: list[str] = []
    seen_streams: set[int] = set()
    owner: dict[int, int] = {}
    for number, line in lines(path):
        if IOFSL_LINE.fullmatch(line):
            iofsl.append(line.decode("ascii"))
            continue
        match = MASTER_LINE.fullmatch(line)
        if match is None:
            raise FormatError("not a master control line (expected 'stream:process,process,...' in hex)",
                              path=str(path), line=number)
        stream = int(match.group(1), 16)
        processes = [int(p, 16) for p in re.split(rb"[ \t]*,[ \t]*", match.group(2))]
        if stream == 0 or stream in seen_streams:
            raise FormatError(f"stream id {stream} is reserved or listed twice", path=str(path), line=number)
        for process in processes:
            if process in owner:
                raise FormatError(f"process {process} is listed for streams {owner[process]} and {stream}",
                                  path=str(path), line=number)
            owner[process] = stream
        seen_streams.add(stream)
        streams.append((stream, processes))
    if not streams:
        raise FormatError("the master control file lists no stream", path=str(path))
    return Master(streams, iofsl)


def lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a plain or ``.z`` file, without surrounding white space;
    empty lines are skipped. `FormatError` for an unreadable or truncated file."""
    number = 0
    rest = b""
    for chunk in _chunks(path):
        pieces = (rest + chunk).split(b"\n")
        rest = pieces.pop()
        if len(rest) > MAX_LINE:
            raise FormatError(f"line {number + len(pieces) + 1} is longer than {MAX_LINE} bytes", path=str(path))
        for piece in pieces:
            number += 1
            piece = piece.strip()
            if piece:
                yield number, piece
    rest = rest.strip()
    if rest:
        yield number + 1, rest


def _chunks(path: Path) -> Iterator[bytes]:
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise FormatError(f"cannot open: {error.strerror or error}", path=str(path)) from None
    with handle:
        if not path.name.endswith(".z"):
            while chunk := _read(handle, path):
                yield chunk
            return
        inflater = zlib.decompressobj()
        offset = 0
        tail = b""
        while data := _read(handle, path):
            tail = (tail + data)[-len(_FLUSH_MARK):]
            while True:
                try:
                    out = inflater.decompress(data, CHUNK)
                except zlib.error as error:
                    raise FormatError(f"corrupt zlib data: {error}", path=str(path), offset=offset) from None
                if inflater.eof and inflater.unused_data:
                    raise FormatError("data after the end of the zlib stream", path=str(path),
                                      offset=handle.tell() - len(inflater.unused_data))
                data = inflater.unconsumed_tail
                if out:
                    yield out
                if not data and len(out) < CHUNK:
                    break
            offset = handle.tell()
        if tail and not inflater.eof and tail != _FLUSH_MARK:
            raise FormatError("truncated zlib stream (it ends inside a compressed block)", path=str(path),
                              offset=offset)


def _read(handle: BinaryIO, path: Path) -> bytes:
    try:
        return handle.read(CHUNK)
    except OSError as error:
        raise FormatError(f"cannot read: {error.strerror or error}", path=str(path)) from None
