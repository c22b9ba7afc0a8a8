"""EXTENSION_TABLE (spec 4.9, since 1.4): a JSON value (the definitions' ``extensions``)
as columns, so that the records that repeat per location (OTF2 definition records, Paje
containers) cost their steps, not their text.

Values are listed in pre-order by kind; integers and the numbers inside strings are
stored as steps from the previous one at the same *path* (object keys and array positions
from the root, positions at or above `POSITIONS` counting as `POSITIONS`), so that the
records of regular locations give equal steps, which zstd stores once.

Long arrays of shallow records (per-location definition records) are encoded from their
columns (`jsonflat`) instead of value by value; the result is the same bytes."""

from __future__ import annotations

import json
import struct
from typing import Any, Callable

import numpy as np

from ..errors import CorruptArchiveError
from ..model import Definitions, members_at
from . import jsonflat
from .codec import decode_stream, encode_stream, unzigzag, zigzag
from .names import NUMBERED, intern_all, split_names

#: value kinds of the ``shape`` stream
NULL, FALSE, TRUE, INTEGER, ARRAY, OBJECT, STRING, NUMBER, HIGH_INTEGER = range(9)
#: array positions from which on elements share one path
POSITIONS = 16
#: nesting deeper than this is corruption (a writer's documents are a few levels deep)
MAX_DEPTH = 256
_TEXTS_LENGTH = struct.Struct("<I")
_I64, _U64 = 1 << 63, 1 << 64
_STREAMS = ("shape", "length", "key", "integer", "prefix", "suffix", "numbered", "number")
#: array elements at one path (those from position `POSITIONS` on) from which on a run of
#: shallow records is encoded from its columns
FLAT_RUN = 32
#: shape codes of `jsonflat` kinds
_FLAT_SHAPES = np.array([INTEGER, STRING, ARRAY], np.uint64)
_DTYPES = {name: np.int64 if name in ("integer", "number") else np.uint64 for name in _STREAMS}
#: strings times the longest's characters split at once at most (else one by one)
SPLIT_CELLS = 1 << 24


def _split(text: str) -> tuple[str, int | None, str]:
    """prefix, number, suffix as LOCATION_TABLE splits names (the same rule, spec 4.7)."""
    match = NUMBERED.fullmatch(text)
    return (match[1], int(match[2]), match[3]) if match else (text, None, "")


class _Encoder:
    def __init__(self, flat: bool = True) -> None:
        self.flat = flat
        self.texts: dict[str, int] = {}
        self.columns: dict[str, list[int]] = {name: [] for name in _STREAMS}
        self.parts: dict[str, list[np.ndarray]] = {name: [] for name in _STREAMS}  # before `columns`
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

    def split(self, value: str) -> tuple[int, int, int | None]:
        """The text ids of a string's prefix and suffix (new ones in that order) and its number."""
        split = self.splits.get(value)
        if split is None:
            match = NUMBERED.fullmatch(value)
            split = self.splits[value] = (self.text(match[1] if match else value),
                                          self.text(match[3] if match else ""), int(match[2]) if match else None)
        return split

    def string(self, value: str, path: int) -> None:
        prefix, suffix, number = self.split(value)
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
            if self.flat and len(value) >= POSITIONS + FLAT_RUN:
                for position in range(POSITIONS):
                    self.value(value[position], children[position])
                self.tail(value[POSITIONS:], children[POSITIONS])
                return
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

    def tail(self, values: list, path: int) -> None:
        """Values that share one path: runs of at least `FLAT_RUN` that `jsonflat` can
        flatten from their columns, the others one by one."""
        columns = jsonflat.flatten(values, POSITIONS, self.child, path)
        ok = columns.ok if columns is not None else np.zeros(len(values), bool)
        edges = np.flatnonzero(np.diff(ok.astype(np.int8))) + 1
        bounds = [0, *edges.tolist(), len(values)]
        for start, stop in zip(bounds, bounds[1:]):
            if columns is not None and ok[start] and stop - start >= FLAT_RUN:
                self.columns_of(columns.rows(start, stop))
                continue
            for value in values[start:stop]:
                self.value(value, path)

    def columns_of(self, flat: jsonflat.Flat) -> None:
        """What `value` appends for the values of ``flat``, in bulk."""
        self.add("shape", _FLAT_SHAPES[flat.kind])
        self.add("length", flat.length)
        self.add("integer", _steps(flat.integers, flat.path[flat.kind == jsonflat.INT], self.last_integer, 0))
        if not flat.strings:
            return
        distinct = list(dict.fromkeys(flat.strings))
        prefixes, suffixes, numbers = self.splits_of(distinct)
        index = dict(zip(distinct, range(len(distinct))))
        each = np.fromiter(map(index.__getitem__, flat.strings), np.int64, len(flat.strings))
        number = numbers[each]
        numbered = number >= 0
        self.add("prefix", prefixes[each])
        self.add("suffix", suffixes[each])
        self.add("numbered", numbered)
        string_paths = flat.path[flat.kind == jsonflat.STR]
        self.add("number", _steps(number[numbered], string_paths[numbered], self.last_number, 1))

    def add(self, name: str, values: np.ndarray) -> None:
        """Append to a stream (after the values `columns` holds)."""
        held, dtype = self.columns[name], _DTYPES[name]
        if held:
            self.parts[name].append(np.array(held, dtype))
            held.clear()
        self.parts[name].append(values.astype(dtype))

    def stream(self, name: str) -> np.ndarray:
        """A whole stream."""
        return np.concatenate([*self.parts[name], np.array(self.columns[name], _DTYPES[name])])

    def splits_of(self, strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`split` of each string (new texts in the same order), the number -1 for none."""
        if len(strings) * max(map(len, strings)) > SPLIT_CELLS:   # numpy strings as wide as the longest
            prefixes, suffixes, numbers = zip(*map(self.split, strings))
            return (np.array(prefixes, np.int64), np.array(suffixes, np.int64),
                    np.array([-1 if n is None else n for n in numbers], np.int64))
        prefix, suffix, numbered, numbered_values = split_names(strings)
        texts = np.empty(2 * len(strings), dtype=prefix.dtype)
        texts[0::2], texts[1::2] = prefix, suffix
        ids = intern_all(self.texts, texts)
        numbers = np.full(len(strings), -1, np.int64)
        numbers[numbered] = numbered_values
        return ids[0::2], ids[1::2], numbers


def _steps(values: np.ndarray, paths: np.ndarray, last: list[int], extra: int) -> np.ndarray:
    """Each value minus the one before it at its path (``last[path]`` for the first) minus
    ``extra``, wrapping in int64; ``last`` then holds each path's last value."""
    if not len(values):
        return values
    order = np.argsort(paths, kind="stable")
    ordered, grouped = values[order], paths[order]
    first = np.ones(len(order), bool)
    first[1:] = grouped[1:] != grouped[:-1]
    before = np.empty_like(ordered)
    before[1:] = ordered[:-1]
    before[first] = [last[p] for p in grouped[first].tolist()]
    ends = np.flatnonzero(np.append(first[1:], True))
    for p, value in zip(grouped[ends].tolist(), ordered[ends].tolist()):
        last[p] = value
    steps = np.empty_like(ordered)
    steps[order] = ordered - before - extra
    return steps


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


def encode_json_table(document: Any, *, flat: bool = True) -> bytes:
    """The document's columns: the text list, then the eight streams of spec 4.9.
    ``flat=False``: the reference walk, value by value, also for runs of records."""
    encoder = _Encoder(flat)
    encoder.value(document, 0)
    texts = json.dumps(list(encoder.texts), ensure_ascii=False, separators=(",", ":")).encode()
    streams = [encode_stream(zigzag(encoder.stream(name)) if name in ("integer", "number") else encoder.stream(name))
               for name in _STREAMS]
    return _TEXTS_LENGTH.pack(len(texts)) + texts + b"".join(streams)


def _streams(raw: bytes, fail: Callable[[str], CorruptArchiveError]) -> tuple[list[str], dict[str, np.ndarray]]:
    """The text list and the eight streams (int64 where zigzag-coded, else uint64), each
    checked against the payload."""
    if len(raw) < _TEXTS_LENGTH.size:
        raise fail("too short for its text list")
    (length,) = _TEXTS_LENGTH.unpack_from(raw)
    position = _TEXTS_LENGTH.size + length
    if position > len(raw):
        raise fail(f"the text list of {length} bytes runs past the payload of {len(raw)} bytes")
    try:
        texts = json.loads(raw[_TEXTS_LENGTH.size:position].decode())
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
        streams[name] = unzigzag(values) if name in ("integer", "number") else values
    if position != len(raw):
        raise fail(f"{len(raw) - position} bytes follow the last stream")
    return texts, streams


def _value_decoder(texts: list[str], streams: dict[str, np.ndarray], starts: dict[str, int],
                   fail: Callable[[str], CorruptArchiveError]) -> tuple[Callable[[int, int], Any], tuple[Any, ...]]:
    """The function decoding one value (at path id ``at``, nesting ``depth``) from the
    streams read from ``starts`` on (its paths' steps starting afresh), and the streams'
    iterators in `_STREAMS` order."""
    iterators = tuple(iter(streams[n][starts.get(n, 0):].tolist()) for n in _STREAMS)
    shapes, lengths, keys, integers, prefixes, suffixes, flags, numbers = iterators
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

    return value, iterators


def _failing(path: str, offset: int) -> Callable[[str], CorruptArchiveError]:
    def fail(reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"extension table: {reason}", path=path, offset=offset)
    return fail


def decode_json_table(raw: bytes, path: str, offset: int) -> Any:
    """The value of an EXTENSION_TABLE payload; every stream must be used up exactly."""
    fail = _failing(path, offset)
    texts, streams = _streams(raw, fail)
    value, rests = _value_decoder(texts, streams, {}, fail)
    try:
        document = value(0, 0)
    except StopIteration:
        raise fail("a stream ends before the values that need it") from None
    except IndexError:
        raise fail("a text id is not in the text list") from None
    for name, rest in zip(_STREAMS, rests):
        if next(rest, None) is not None:
            raise fail(f"values of the {name} stream are left over")
    return document


def _member_starts(streams: dict[str, np.ndarray], keys: tuple[str, ...], texts: list[str],
                   wanted: tuple[str, ...]) -> dict[str, dict[str, int]] | None:
    """Per member of ``wanted`` found in the object at the object ``keys`` from the root,
    where each stream stands at its first value (the values before it counted from the
    shapes, with numpy); None when the streams do not make such an object."""
    shape = streams["shape"].astype(np.int64)
    nested = (shape == ARRAY) | (shape == OBJECT)
    if int(nested.sum()) != len(streams["length"]) or (streams["length"] > len(shape)).any():
        return None  # (left to the full decode to say what is wrong)
    children = np.zeros(len(shape), np.int64)
    children[nested] = streams["length"]
    open_after = np.cumsum(children - 1)  # values still to come of the nested ones opened, minus one
    owned = np.concatenate(([0], np.cumsum(np.where(shape == OBJECT, children, 0))))  # keys of the objects before
    before = {"length": np.cumsum(nested) - nested,
              "integer": np.cumsum((shape == INTEGER) | (shape == HIGH_INTEGER)),
              "string": np.cumsum((shape == STRING) | (shape == NUMBER))}
    before["integer"] = before["integer"] - ((shape == INTEGER) | (shape == HIGH_INTEGER))
    before["string"] = before["string"] - ((shape == STRING) | (shape == NUMBER))
    numbered = np.concatenate(([0], np.cumsum(streams["numbered"] == 1)))

    def end(i: int) -> int:  # one past the last value of the one at ``i``
        level = (int(open_after[i - 1]) if i else 0) - 1
        done = np.flatnonzero(open_after[i:] <= level)
        return i + int(done[0]) + 1 if len(done) else len(shape)

    def members(i: int, read: int) -> dict[str, tuple[int, int]] | None:
        """key -> (its value's position, the keys read before it) of the object at ``i``,
        ``read`` keys read before it: a member's key is read right before its value, the
        keys of the objects inside a member (`owned`) before the next member's."""
        if i >= len(shape) or shape[i] != OBJECT:
            return None
        found, at = {}, i + 1
        for _ in range(int(children[i])):
            if not 0 <= read < len(streams["key"]) or at >= len(shape):
                return None
            key = int(streams["key"][read])
            if not 0 <= key < len(texts):
                return None
            found[texts[key]] = (at, read + 1)
            after = end(at)
            read, at = read + 1 + int(owned[after] - owned[at]), after
        return found

    at, read = 0, 0
    for key in keys:
        found = members(at, read)
        if found is None or key not in found:
            return None
        at, read = found[key]
    found = members(at, read)
    if found is None:
        return None
    starts = {}
    for name, (i, read) in found.items():
        if name in wanted:
            strings = int(before["string"][i])
            if strings > len(streams["numbered"]):
                return None
            starts[name] = {"shape": i, "length": int(before["length"][i]), "key": read,
                            "integer": int(before["integer"][i]), "prefix": strings, "suffix": strings,
                            "numbered": strings, "number": int(numbered[strings])}
    return starts


def _integer_rows(streams: dict[str, np.ndarray], start: dict[str, int]) -> np.ndarray | None:
    """The value whose streams begin at ``start`` as int64 rows when it is an array of
    integers (one column), or of arrays of n integers each (n columns; a table of
    records): the elements at positions below `POSITIONS` have paths of their own, the
    others share one, so their steps add up column by column. None for any other value."""
    i, shape, lengths = start["shape"], streams["shape"], streams["length"]
    at = start["length"]
    if i + 1 >= len(shape) or shape[i] != ARRAY or at >= len(lengths) or not lengths[at]:
        return None
    rows = int(lengths[at])
    width = int(lengths[at + 1]) if shape[i + 1] == ARRAY and at + 1 < len(lengths) else 0
    if (shape[i + 1] != INTEGER and not width) or width > POSITIONS:  # (wider records share paths inside)
        return None
    expected = np.full((rows, width + 1), INTEGER, np.uint64)
    if width:
        expected[:, 0] = ARRAY
    expected = expected.ravel()[:rows * (width + 1) if width else rows]
    got = shape[i + 1:i + 1 + len(expected)]
    if len(got) != len(expected) or (got != expected).any() or (width and (lengths[at + 1:at + 1 + rows] != width).any()):
        return None
    steps = streams["integer"][start["integer"]:start["integer"] + rows * max(width, 1)]
    if len(steps) != rows * max(width, 1):
        return None
    table = steps.reshape(rows, max(width, 1)).copy()
    table[POSITIONS:] = np.cumsum(table[POSITIONS:], axis=0)  # int64 wraps as the decoder's values do
    return table if width else table[:, 0]


def decode_json_members(raw: bytes, path: str, offset: int, keys: tuple[str, ...],
                        wanted: tuple[str, ...]) -> dict[str, Any] | None:
    """The members ``wanted`` (those present) of the object at the object ``keys`` from
    the root of an EXTENSION_TABLE payload, decoding just them (the values before them are
    counted, not decoded); None when there is no such object. A member that is an array of
    integers, or of arrays of n <= `POSITIONS` integers, comes as an int64 array (one
    dimension, or rows x n). Damage in the values left undecoded goes unnoticed;
    `decode_json_table` checks everything."""
    fail = _failing(path, offset)
    texts, streams = _streams(raw, fail)
    starts = _member_starts(streams, keys, texts, wanted)
    if starts is None:
        document = decode_json_table(raw, path, offset)  # raises what is wrong, or finds no such object
        return members_at(document, keys, wanted)
    found = {}
    for name, start in starts.items():
        rows = _integer_rows(streams, start)
        if rows is not None:
            found[name] = rows
            continue
        try:
            found[name] = _value_decoder(texts, streams, start, fail)[0](0, len(keys) + 1)  # its paths afresh
        except StopIteration:
            raise fail("a stream ends before the values that need it") from None
        except IndexError:
            raise fail("a text id is not in the text list") from None
    return found


class StoredDefinitions(Definitions):
    """Definitions whose `extensions` an EXTENSION_TABLE holds: ``load`` decodes them when
    they are first used (queries never need them; an exporter to the source format does),
    so that opening the definitions of 10^6 locations does not walk their records."""

    load: Callable[[], dict[str, Any]] | None = None
    #: ``(keys, wanted)`` -> `decode_json_members` of the stored table
    load_members: Callable[[tuple[str, ...], tuple[str, ...]], dict[str, Any] | None] | None = None

    @property  # type: ignore[override]
    def extensions(self) -> dict[str, Any]:
        if self.load is not None:
            self._extensions = self.load()
            self.load = None
        return self._extensions

    @extensions.setter
    def extensions(self, value: dict[str, Any]) -> None:
        self._extensions = value

    def extension_members(self, keys: tuple[str, ...], wanted: tuple[str, ...]) -> dict[str, Any] | None:
        """`Definitions.extension_members`, decoding only those members while the
        extensions are stored (`decode_json_members`: the Paje layout's lifecycle and
        locations of 20,000 containers in 0.1 s, all of the layout in 0.35-0.6 s)."""
        if self.load is None or self.load_members is None:
            return super().extension_members(keys, wanted)
        decoded = self.__dict__.setdefault("_members", {})  # each asked for once decoded once
        if (keys, wanted) not in decoded:
            decoded[(keys, wanted)] = self.load_members(keys, wanted)
        found = decoded[(keys, wanted)]
        return None if found is None else dict(found)

