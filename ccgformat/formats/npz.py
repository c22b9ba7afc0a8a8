"""numpy zip traces, as written by tools/synth.py.

The file is an ``.npz`` archive (a zip of ``.npy`` members) holding ``definitions_json``
(a 0-d string array: `Definitions.to_dict` as JSON) and, for every location ``i`` with
events, the 1-D integer columns ``loc{i}_time``, ``loc{i}_kind``, ``loc{i}_ref``,
``loc{i}_comm``, ``loc{i}_tag``, ``loc{i}_request``, ``loc{i}_size``,
``loc{i}_recv_size`` and ``loc{i}_value``, all of the same length. Locations are read
one at a time (each one's columns are loaded whole) and handed on in batches.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import FormatError
from ..model import COLUMNS, Definitions, EventBatch
from .common import batches

ZIP_MAGIC = b"PK\x03\x04"
DEFINITIONS_MEMBER = "definitions_json"
_COLUMN_NAMES = ("time", "kind") + COLUMNS
_MEMBER = re.compile(r"loc(\d+)_(\w+)")
_ERRORS = (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)
#: A zip local file header: signature, versions, flags, method, time, date, CRC-32, sizes,
#: name and extra field lengths.
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
#: An .npy member's fixed start: magic, format version, header length (version 1.0).
_NPY_PREFIX = struct.Struct("<6sBBH")
#: A 1.0 header of a C-order 1-D little-endian or byte-wide integer array, as numpy writes it.
_SIMPLE_HEADER = re.compile(rb"\{'descr': '(<[iu][248]|\|[iu]1)', 'fortran_order': False, 'shape': \((\d{1,18}),\), \} *\n")


def sniff(path: Path, head: bytes) -> bool:
    """A zip file with a ``definitions_json`` member. When it is the first member (the
    local header at byte 0 names it, as tools/synth.py writes it) the central directory,
    which lists every location's columns, is not read here: `read` reads it once."""
    if not head.startswith(ZIP_MAGIC):
        return False
    name = f"{DEFINITIONS_MEMBER}.npy".encode()
    if head[26:28] == len(name).to_bytes(2, "little") and head[30:30 + len(name)] == name:
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return f"{DEFINITIONS_MEMBER}.npy" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    name = str(path)
    try:
        handle = open(path, "rb")  # ours to close: numpy leaves a file it opened open when the zip is damaged
    except OSError as error:
        raise FormatError(f"not a readable numpy zip file: {error}", path=name) from None
    try:
        try:
            data = np.load(handle, allow_pickle=False)
        except _ERRORS as error:
            raise FormatError(f"not a readable numpy zip file: {error}", path=name) from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise FormatError("a single numpy array, not a numpy zip file", path=name)
        definitions = _definitions(data, name)
        locations = _locations(data, definitions, name)
    except BaseException:
        handle.close()
        raise

    def streams() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        try:
            for location in locations:
                yield location, _batches(data, location, name)
        finally:
            data.close()
            handle.close()

    return definitions, streams()


def _member(data: Any, member: str, path: str) -> np.ndarray:
    try:
        simple = _simple_array(data, member)
        return data[member] if simple is None else simple
    except _ERRORS as error:
        raise FormatError(f"member {member!r} cannot be read: {error}", path=path) from None


def _simple_array(data: Any, member: str) -> np.ndarray | None:
    """The member when it is a 1-D integer array under a version 1.0 header whose data
    fills the rest of the member (what numpy writes for the event columns), read without
    numpy's general header parser (a Python literal evaluation: most of the time of a
    small member); None for anything else, which ``data[member]`` then reads."""
    raw = _member_bytes(data.zip, f"{member}.npy")
    magic, major, minor, length = _NPY_PREFIX.unpack_from(raw) if len(raw) >= _NPY_PREFIX.size else (b"", 0, 0, 0)
    match = _SIMPLE_HEADER.fullmatch(raw, _NPY_PREFIX.size, _NPY_PREFIX.size + length) \
        if (magic, major, minor) == (b"\x93NUMPY", 1, 0) else None
    if match is None:
        return None
    dtype, count = np.dtype(match.group(1).decode()), int(match.group(2))
    start = _NPY_PREFIX.size + length
    if start + dtype.itemsize * count != len(raw):
        return None
    return np.frombuffer(raw, dtype, count, start).copy()


def _member_bytes(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's whole content, its CRC-32 checked. A stored or deflated member (numpy
    writes those) is read with two reads of the file and one ``zlib`` call: the zip
    module's reader costs several times as much for the small members of one location's
    columns; other members through it."""
    info = archive.getinfo(name)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 1:
        return archive.read(name)
    descriptor = archive.fp.fileno()
    local = os.pread(descriptor, _LOCAL_HEADER.size, info.header_offset)
    if len(local) < _LOCAL_HEADER.size or local[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile(f"no local header for member {name!r}")
    name_length, extra_length = _LOCAL_HEADER.unpack(local)[-2:]
    stored = os.pread(descriptor, info.compress_size, info.header_offset + _LOCAL_HEADER.size + name_length
                      + extra_length)
    if len(stored) != info.compress_size:
        raise EOFError(f"member {name!r} ends before its {info.compress_size} bytes")
    # at most one byte more than the directory says, so that a damaged member cannot demand more memory
    raw = stored if info.compress_type == zipfile.ZIP_STORED else \
        zlib.decompressobj(-zlib.MAX_WBITS).decompress(stored, info.file_size + 1)
    if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:  # what the zip module checks
        raise zipfile.BadZipFile(f"bad CRC-32 or size for member {name!r}")
    return raw


def _definitions(data: Any, path: str) -> Definitions:
    if DEFINITIONS_MEMBER not in data.files:
        raise FormatError(f"no {DEFINITIONS_MEMBER!r} member", path=path)
    text = _member(data, DEFINITIONS_MEMBER, path)
    if text.shape != () or text.dtype.kind != "U":
        raise FormatError(f"{DEFINITIONS_MEMBER!r} is not a single string", path=path)
    try:
        document = json.loads(str(text))
        if not isinstance(document, dict):
            raise TypeError("not a JSON object")
        return Definitions.from_dict(document)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
        raise FormatError(f"{DEFINITIONS_MEMBER!r} does not hold valid definitions: "
                          f"{type(error).__name__}: {error}", path=path) from None


def _locations(data: Any, definitions: Definitions, path: str) -> list[int]:
    """Locations with event columns, checking every one is defined and complete."""
    found: dict[int, set[str]] = {}
    for member in data.files:
        if member == DEFINITIONS_MEMBER:
            continue
        match = _MEMBER.fullmatch(member)
        if match is None or match.group(2) not in _COLUMN_NAMES:
            raise FormatError(f"unexpected member {member!r}", path=path)
        found.setdefault(int(match.group(1)), set()).add(match.group(2))
    for location, columns in sorted(found.items()):
        if location >= len(definitions.locations):
            raise FormatError(f"events for location {location}, but only {len(definitions.locations)} "
                              f"locations are defined", path=path)
        missing = [c for c in _COLUMN_NAMES if c not in columns]
        if missing:
            raise FormatError(f"location {location} lacks the column(s) {', '.join(missing)}", path=path)
    return sorted(found)


def _batches(data: Any, location: int, path: str) -> Iterator[EventBatch]:
    columns = {}
    for column in _COLUMN_NAMES:
        member = f"loc{location}_{column}"
        values = _member(data, member, path)
        if values.ndim != 1 or values.dtype.kind not in "iu":
            raise FormatError(f"member {member!r} is not a 1-D integer array ({values.dtype}, shape "
                              f"{values.shape})", path=path)
        if columns and len(values) != len(columns["time"]):
            raise FormatError(f"member {member!r} has {len(values)} entries, loc{location}_time has "
                              f"{len(columns['time'])}", path=path)
        if values.dtype.kind == "u" and values.dtype.itemsize == 8 and len(values) and values.max() >= 1 << 63:
            raise FormatError(f"member {member!r} holds values beyond the int64 range", path=path)
        columns[column] = values
    kind = columns["kind"]
    if len(kind) and (int(kind.min()) < 0 or int(kind.max()) > 255):
        raise FormatError(f"member 'loc{location}_kind' holds values outside 0..255", path=path)
    columns["kind"] = kind.astype(np.uint8)
    yield from batches(columns)
