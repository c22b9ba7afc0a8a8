"""EXTENSION_TABLE (spec 4.9, since 1.4): a JSON value (the definitions' ``extensions``)
as columns, so that the records that repeat per location (OTF2 definition records, Paje
containers) cost their steps, not their text.

Values are listed in pre-order by kind; integers and the numbers inside strings are
stored as steps from the previous one at the same *path* (object keys and array positions
from the root, positions at or above `POSITIONS` counting as `POSITIONS`), so that the
records of regular locations give equal steps, which zstd stores once."""

from __future__ import annotations

import json
import struct
from typing import Any, Callable

import numpy as np

from ..errors import CorruptArchiveError
from ..model import Definitions
from .codec import decode_stream, encode_stream, unzigzag, zigzag
from .names import NUMBERED

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
    match = NUMBERED.fullmatch(text)
    return (match[1], int(match[2]), match[3]) if match else (text, None, "")


class _Encoder:
    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.columns: dict[str, list[int]] = {name: [] for name in _STREAMS}
        self.paths = _Paths()
        self.last_integer: list[int] = [0]
        self.last_number: list[int] = [-1]
        self.splits: dict[str, tuple[int, int, int | None]] = {}  # string -> prefix, suffix, number

    def text(self, value: str) -> int:
        return self.texts.setdefault(value, len(self.texts))

    def child(self, path: int, step: Any) -> int:
        child = self.paths.child(path, step)
        if child == len(self.last_integer):
            self.last_integer.append(0)
            self.last_number.append(-1)
        return child

    def string(self, value: str, path: int) -> None:
        split = self.splits.get(value)
        if split is None:
            match = NUMBERED.fullmatch(value)
            split = self.splits[value] = (self.text(match[1] if match else value),
                                          self.text(match[3] if match else ""), int(match[2]) if match else None)
        prefix, suffix, number = split
        c = self.columns
        c["prefix"].append(prefix)
        c["suffix"].append(suffix)
        c["numbered"].append(0 if number is None else 1)
        if number is not None:
            c["number"].append(number - self.last_number[path] - 1)
            self.last_number[path] = number

    def value(self, value: Any, path: int) -> None:
        c = self.columns
        kind = type(value)
        if kind is int and -_I64 <= value < _I64:
            c["shape"].append(INTEGER)
            step = value - self.last_integer[path]
            c["integer"].append(step if -_I64 <= step < _I64 else (step + _I64) % _U64 - _I64)
            self.last_integer[path] = value
        elif kind is list or kind is tuple:
            c["shape"].append(ARRAY)
            c["length"].append(len(value))
            children = self.paths.positions(path, len(value), self.child)
            for position, item in enumerate(value):
                self.value(item, children[position] if position < POSITIONS else children[POSITIONS])
        elif kind is str:
            c["shape"].append(STRING)
            self.string(value, path)
        elif value is None or kind is bool:
            c["shape"].append(NULL if value is None else TRUE if value else FALSE)
        elif isinstance(value, int) and _I64 <= value < _U64:
            c["shape"].append(HIGH_INTEGER)
            c["integer"].append((value - _U64 - self.last_integer[path] + _I64) % _U64 - _I64)
            self.last_integer[path] = value - _U64
        elif isinstance(value, (int, float)):
            c["shape"].append(NUMBER)
            self.string(json.dumps(value), path)
        elif isinstance(value, dict):
            c["shape"].append(OBJECT)
            c["length"].append(len(value))
            for key in sorted(value):
                c["key"].append(self.text(key))
                self.value(value[key], self.child(path, key))
        else:
            raise TypeError(f"not a JSON value: {value!r}")


class _Paths:
    """Path ids: 0 for the root, then one per (parent path, key or capped position)."""

    def __init__(self) -> None:
        self.children: list[dict[Any, int]] = [{}]
        self.elements: dict[int, list[int]] = {}  # per path, its elements' paths so far

    def child(self, path: int, step: Any) -> int:
        found = self.children[path].get(step)
        if found is None:
            found = self.children[path][step] = len(self.children)
            self.children.append({})
        return found

    def positions(self, path: int, length: int, child: Callable[[int, Any], int]) -> list[int]:
        """The paths of an array's first `POSITIONS` + 1 elements (``child`` makes new ones)."""
        known = self.elements.setdefault(path, [])
        while len(known) < min(length, POSITIONS + 1):
            known.append(child(path, len(known)))
        return known


def encode_json_table(document: Any) -> bytes:
    """The document's columns: the text list, then the eight streams of spec 4.9."""
    encoder = _Encoder()
    encoder.value(document, 0)
    c = encoder.columns
    texts = json.dumps(list(encoder.texts), ensure_ascii=False, separators=(",", ":")).encode()
    streams = [encode_stream(np.array(c[name], np.uint64)) for name in ("shape", "length", "key")]
    streams.append(encode_stream(zigzag(np.array(c["integer"], np.int64))))
    streams += [encode_stream(np.array(c[name], np.uint64)) for name in ("prefix", "suffix", "numbered")]
    streams.append(encode_stream(zigzag(np.array(c["number"], np.int64))))
    return _TEXTS_LENGTH.pack(len(texts)) + texts + b"".join(streams)


def _streams(raw: bytes, fail: Callable[[str], CorruptArchiveError]) -> tuple[list[str], dict[str, list[int]]]:
    """The text list and the eight streams, each checked against the payload."""
    if len(raw) < _TEXTS_LENGTH.size:
        raise fail("too short for its text list")
    (length,) = _TEXTS_LENGTH.unpack_from(raw)
    position = _TEXTS_LENGTH.size + length
    try:
        texts = json.loads(raw[_TEXTS_LENGTH.size:position].decode()) if position <= len(raw) else None
    except (ValueError, RecursionError) as error:
        raise fail(f"the text list is not valid JSON: {error}") from None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise fail("the text list is not a JSON array of strings")
    streams: dict[str, list[int]] = {}
    for name in _STREAMS:
        try:
            values, position = decode_stream(raw, position)
        except ValueError as error:
            raise fail(f"{name}: {error}") from None
        streams[name] = (unzigzag(values) if name in ("integer", "number") else values).tolist()
    if position != len(raw):
        raise fail(f"{len(raw) - position} bytes follow the last stream")
    return texts, streams


def decode_json_table(raw: bytes, path: str, offset: int) -> Any:
    """The value of an EXTENSION_TABLE payload; every stream must be used up exactly."""
    def fail(reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"extension table: {reason}", path=path, offset=offset)

    texts, streams = _streams(raw, fail)
    shapes, lengths, keys, integers, prefixes, suffixes, flags, numbers = (iter(streams[n]) for n in _STREAMS)
    values = len(streams["shape"])
    paths = _Paths()
    last_integer, last_number = [0], [-1]

    def child(parent: int, step: Any) -> int:
        found = paths.child(parent, step)
        if found == len(last_integer):
            last_integer.append(0)
            last_number.append(-1)
        return found

    def string(at: int) -> str:
        prefix, suffix, flag = texts[next(prefixes)], texts[next(suffixes)], next(flags)
        if not flag:
            return prefix + suffix
        if flag != 1:
            raise fail("a numbered flag is not 0 or 1")
        number = last_number[at] + 1 + next(numbers)
        if number < 0:
            raise fail("a number inside a string is negative")
        last_number[at] = number
        return f"{prefix}{number}{suffix}"

    def value(at: int, depth: int) -> Any:
        shape = next(shapes)
        if shape == INTEGER or shape == HIGH_INTEGER:
            stored = last_integer[at] + next(integers)
            if not -_I64 <= stored < _I64:
                stored = (stored + _I64) % _U64 - _I64
            last_integer[at] = stored
            if shape == INTEGER:
                return stored
            if stored >= 0:
                raise fail("a high integer is below 2**63")
            return stored + _U64
        if shape == STRING:
            return string(at)
        if shape <= TRUE:
            return None if shape == NULL else shape == TRUE
        if shape == NUMBER:
            text = string(at)
            try:
                number = json.loads(text)
            except ValueError:
                number = None
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                raise fail(f"number {text[:40]!r} is not a JSON number")
            return number
        if shape != ARRAY and shape != OBJECT:
            raise fail(f"value kind {shape} is unknown")
        if depth >= MAX_DEPTH:
            raise fail(f"values nest deeper than {MAX_DEPTH} levels")
        length = next(lengths)
        if length > values:
            raise fail(f"{length} members claimed, more than the table has values")
        if shape == ARRAY:
            children = paths.positions(at, length, child)
            if length <= POSITIONS:
                return [value(children[position], depth + 1) for position in range(length)]
            tail = children[POSITIONS]
            return [value(children[position] if position < POSITIONS else tail, depth + 1)
                    for position in range(length)]
        members: dict[str, Any] = {}
        for _ in range(length):
            key = texts[next(keys)]
            if key in members:
                raise fail(f"an object repeats the key {key[:40]!r}")
            members[key] = value(child(at, key), depth + 1)
        return members

    try:
        document = value(0, 0)
    except StopIteration:
        raise fail("a stream ends before the values that need it") from None
    except IndexError:
        raise fail("a text id is not in the text list") from None
    for name, rest in zip(_STREAMS, (shapes, lengths, keys, integers, prefixes, suffixes, flags, numbers)):
        if next(rest, None) is not None:
            raise fail(f"values of the {name} stream are left over")
    return document


class StoredDefinitions(Definitions):
    """Definitions whose `extensions` an EXTENSION_TABLE holds: ``load`` decodes them when
    they are first used (queries never need them; an exporter to the source format does),
    so that opening the definitions of 10^6 locations does not walk their records."""

    load: Callable[[], dict[str, Any]] | None = None

    @property  # type: ignore[override]
    def extensions(self) -> dict[str, Any]:
        if self.load is not None:
            self._extensions = self.load()
            self.load = None
        return self._extensions

    @extensions.setter
    def extensions(self, value: dict[str, Any]) -> None:
        self._extensions = value
