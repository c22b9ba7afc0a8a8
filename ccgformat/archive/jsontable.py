"""DEFINITION_TABLE (spec 4.9, since 1.4): any JSON document as columns, so that the
records that repeat per location (the importers' ``extensions``: OTF2 definition
records, Paje containers) cost their steps, not their text.

Values are listed in pre-order by kind; integers and the numbers inside strings are
stored as steps from the previous one at the same *path* (object keys and array positions
from the root, positions at or above `POSITIONS` counting as `POSITIONS`), so that the
records of regular locations give equal steps, which zstd stores once."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from .codec import decode_stream, encode_stream, unzigzag, zigzag
from .tables import _NUMBERED

#: value kinds of the ``shape`` stream
NULL, FALSE, TRUE, INTEGER, ARRAY, OBJECT, STRING, NUMBER, HIGH_INTEGER = range(9)
#: array positions from which on elements share one path
POSITIONS = 16
#: nesting deeper than this is corruption (a writer's documents are a few levels deep)
MAX_DEPTH = 256
_TEXTS_LENGTH = struct.Struct("<I")
_I64, _U64 = 1 << 63, 1 << 64
_STREAMS = ("shape", "length", "key", "integer", "prefix", "suffix", "numbered", "number")


def _split(text: str) -> tuple[str, int | None, str]:
    """prefix, number, suffix as LOCATION_TABLE splits names (the same rule, spec 4.7)."""
    match = _NUMBERED.fullmatch(text)
    return (match[1], int(match[2]), match[3]) if match else (text, None, "")


class _Encoder:
    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.columns: dict[str, list[int]] = {name: [] for name in _STREAMS}
        self.last_integer: dict[tuple[Any, ...], int] = {}
        self.last_number: dict[tuple[Any, ...], int] = {}

    def text(self, value: str) -> int:
        return self.texts.setdefault(value, len(self.texts))

    def string(self, value: str, path: tuple[Any, ...]) -> None:
        prefix, number, suffix = _split(value)
        c = self.columns
        c["prefix"].append(self.text(prefix))
        c["suffix"].append(self.text(suffix))
        c["numbered"].append(0 if number is None else 1)
        if number is not None:
            c["number"].append(number - self.last_number.get(path, -1) - 1)
            self.last_number[path] = number

    def value(self, value: Any, path: tuple[Any, ...]) -> None:
        c = self.columns
        if value is None or isinstance(value, bool):
            c["shape"].append(NULL if value is None else TRUE if value else FALSE)
        elif isinstance(value, int) and -_I64 <= value < _U64:
            c["shape"].append(INTEGER if value < _I64 else HIGH_INTEGER)
            stored = value - _U64 if value >= _I64 else value
            step = stored - self.last_integer.get(path, 0)
            c["integer"].append((step + _I64) % _U64 - _I64)
            self.last_integer[path] = stored
        elif isinstance(value, (int, float)):
            c["shape"].append(NUMBER)
            self.string(json.dumps(value), path)
        elif isinstance(value, str):
            c["shape"].append(STRING)
            self.string(value, path)
        elif isinstance(value, (list, tuple)):
            c["shape"].append(ARRAY)
            c["length"].append(len(value))
            for position, item in enumerate(value):
                self.value(item, path + (min(position, POSITIONS),))
        elif isinstance(value, dict):
            c["shape"].append(OBJECT)
            c["length"].append(len(value))
            for key in sorted(value):
                c["key"].append(self.text(key))
                self.value(value[key], path + (key,))
        else:
            raise TypeError(f"not a JSON value: {value!r}")


def encode_json_table(document: Any) -> bytes:
    """The document's columns: the text list, then the eight streams of spec 4.9."""
    encoder = _Encoder()
    encoder.value(document, ())
    c = encoder.columns
    texts = json.dumps(list(encoder.texts), ensure_ascii=False, separators=(",", ":")).encode()
    streams = [encode_stream(np.array(c[name], np.uint64)) for name in ("shape", "length", "key")]
    streams.append(encode_stream(zigzag(np.array(c["integer"], np.int64))))
    streams += [encode_stream(np.array(c[name], np.uint64)) for name in ("prefix", "suffix", "numbered")]
    streams.append(encode_stream(zigzag(np.array(c["number"], np.int64))))
    return _TEXTS_LENGTH.pack(len(texts)) + texts + b"".join(streams)


class _Decoder:
    def __init__(self, raw: bytes, path: str, offset: int):
        self.path, self.offset = path, offset
        if len(raw) < _TEXTS_LENGTH.size:
            raise self.fail("too short for its text list")
        (length,) = _TEXTS_LENGTH.unpack_from(raw)
        position = _TEXTS_LENGTH.size + length
        try:
            self.texts = json.loads(raw[_TEXTS_LENGTH.size:position].decode()) if position <= len(raw) else None
        except (ValueError, RecursionError) as error:
            raise self.fail(f"the text list is not valid JSON: {error}") from None
        if not isinstance(self.texts, list) or not all(isinstance(t, str) for t in self.texts):
            raise self.fail("the text list is not a JSON array of strings")
        self.streams: dict[str, list[int]] = {}
        for name in _STREAMS:
            try:
                values, position = decode_stream(raw, position)
            except ValueError as error:
                raise self.fail(f"{name}: {error}") from None
            self.streams[name] = (unzigzag(values) if name in ("integer", "number") else values).tolist()
        if position != len(raw):
            raise self.fail(f"{len(raw) - position} bytes follow the last stream")
        self.next = dict.fromkeys(_STREAMS, 0)
        self.last_integer: dict[tuple[Any, ...], int] = {}
        self.last_number: dict[tuple[Any, ...], int] = {}

    def fail(self, reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"definition table: {reason}", path=self.path, offset=self.offset)

    def take(self, name: str) -> int:
        position = self.next[name]
        if position >= len(self.streams[name]):
            raise self.fail(f"the {name} stream ends early")
        self.next[name] = position + 1
        return self.streams[name][position]

    def text(self, name: str) -> str:
        index = self.take(name)
        if index >= len(self.texts):
            raise self.fail(f"{name} text id {index} is not in the text list")
        return self.texts[index]

    def string(self, path: tuple[Any, ...]) -> str:
        prefix, suffix, numbered = self.text("prefix"), self.text("suffix"), self.take("numbered")
        if numbered > 1:
            raise self.fail("a numbered flag is not 0 or 1")
        if not numbered:
            return prefix + suffix
        number = self.last_number.get(path, -1) + 1 + self.take("number")
        if number < 0:
            raise self.fail("a number inside a string is negative")
        self.last_number[path] = number
        return f"{prefix}{number}{suffix}"

    def value(self, path: tuple[Any, ...], depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(f"values nest deeper than {MAX_DEPTH} levels")
        shape = self.take("shape")
        if shape in (NULL, FALSE, TRUE):
            return None if shape == NULL else shape == TRUE
        if shape in (INTEGER, HIGH_INTEGER):
            stored = (self.last_integer.get(path, 0) + self.take("integer") + _I64) % _U64 - _I64
            self.last_integer[path] = stored
            if shape == HIGH_INTEGER and stored >= 0:
                raise self.fail("a high integer is below 2**63")
            return stored + _U64 if shape == HIGH_INTEGER else stored
        if shape == STRING:
            return self.string(path)
        if shape == NUMBER:
            text = self.string(path)
            try:
                number = json.loads(text)
            except ValueError:
                number = None
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                raise self.fail(f"number {text[:40]!r} is not a JSON number")
            return number
        if shape not in (ARRAY, OBJECT):
            raise self.fail(f"value kind {shape} is unknown")
        length = self.take("length")
        if length > len(self.streams["shape"]):
            raise self.fail(f"{length} members claimed, more than the table has values")
        if shape == ARRAY:
            return [self.value(path + (min(position, POSITIONS),), depth + 1) for position in range(length)]
        members: dict[str, Any] = {}
        for _ in range(length):
            key = self.text("key")
            if key in members:
                raise self.fail(f"an object repeats the key {key[:40]!r}")
            members[key] = self.value(path + (key,), depth + 1)
        return members


def decode_json_table(raw: bytes, path: str, offset: int) -> Any:
    """The document of a DEFINITION_TABLE payload; every stream must be used up exactly."""
    decoder = _Decoder(raw, path, offset)
    document = decoder.value((), 0)
    for name in _STREAMS:
        if decoder.next[name] != len(decoder.streams[name]):
            raise decoder.fail(f"{len(decoder.streams[name]) - decoder.next[name]} values of the {name} "
                               f"stream are not used")
    return document
