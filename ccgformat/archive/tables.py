"""The columnar tables of format 1.3 (spec 4.6-4.8): ROOT_TABLE, LOCATION_TABLE and
CHECKPOINT_TABLE hold, per location, what ROOTS, the DEFINITIONS lists and the JSON
SNAPSHOTS and SUMMARY blocks hold in files of 1.0-1.2, as byte-plane streams (spec 5.2)
coded so that the values of regular locations repeat and zstd stores them once."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from typing import Any, Callable, Mapping, TypeVar

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.graph import LocationRoot, RootTable, root_columns
from ..model import Communicator, Definitions, EntityList, Location, SystemTreeNode, entity_columns
from .codec import decode_stream, encode_stream, unzigzag, zigzag
from .checkpoint_columns import CheckpointColumns
from .indexes import Checkpoint
from .names import intern_all, split_names

_INT64_MAX = (1 << 63) - 1
E = TypeVar("E")
_TEXTS_LENGTH = struct.Struct("<I")
_INTERVAL = struct.Struct("<Q")


class _Reader:
    """The streams of one table payload, in order, each checked against the payload."""

    def __init__(self, raw: bytes, position: int, what: str, path: str, offset: int):
        self.raw, self.position, self.what, self.path, self.offset = raw, position, what, path, offset

    def fail(self, reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"{self.what}: {reason}", path=self.path, offset=self.offset)

    def _next(self, count: int | None, name: str) -> np.ndarray:
        try:
            values, self.position = decode_stream(self.raw, self.position)
        except ValueError as error:
            raise self.fail(f"{name}: {error}") from None
        if count is not None and len(values) != count:
            raise self.fail(f"{name} holds {len(values)} values, expected {count}")
        return values

    def unsigned(self, count: int | None = None, name: str = "stream") -> np.ndarray:
        """The next stream, whose values must lie below 2**63, as int64."""
        values = self._next(count, name)
        if len(values) and int(values.max()) > _INT64_MAX:
            raise self.fail(f"{name} holds a value of 2**63 or more")
        return values.astype(np.int64)

    def bits(self, count: int | None = None, name: str = "stream") -> np.ndarray:
        """The next stream as uint64, unchecked (float64 bits)."""
        return self._next(count, name)

    def signed(self, count: int | None = None, name: str = "stream") -> np.ndarray:
        """The next stream, zigzag-decoded."""
        return unzigzag(self._next(count, name))

    def ids(self, name: str) -> np.ndarray:
        """A delta-coded increasing id list (spec 5.2)."""
        steps = self.unsigned(name=name)
        if len(steps) > 1 and int(steps[1:].min()) < 1:
            raise self.fail(f"{name} do not increase")
        with np.errstate(over="ignore"):
            ids = np.cumsum(steps)
        if len(ids) and (int(ids.min()) < 0 or np.any(np.diff(ids) < 1)):
            raise self.fail(f"{name} reach 2**63")
        return ids

    def finish(self) -> None:
        if self.position != len(self.raw):
            raise self.fail(f"{len(self.raw) - self.position} bytes follow the last stream")


def _signed(values: Any) -> bytes:
    return encode_stream(zigzag(np.asarray(values, dtype=np.int64)))


def _unsigned(values: Any) -> bytes:
    return encode_stream(np.asarray(values, dtype=np.uint64))


def _steps(values: np.ndarray, initial: int = 0) -> np.ndarray:
    """Each value minus the one before (``initial`` before the first), wrapping."""
    with np.errstate(over="ignore"):
        return np.diff(values.astype(np.int64), prepend=np.int64(initial))


def _sums(steps: np.ndarray, initial: int = 0) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.cumsum(steps) + np.int64(initial)


# --------------------------------------------------------------------------- ROOT_TABLE

def encode_root_table(roots: Mapping[int, LocationRoot]) -> bytes:
    """Five streams: locations (delta-coded), root ids, starts and ends as signed steps
    from the previous location's (ends often align where starts do not), event counts."""
    columns = root_columns(roots)
    order = np.argsort(columns[0], kind="stable")
    locations, root, start, end, events = (column[order] for column in columns)
    return b"".join((_unsigned(_steps(locations)), *(_signed(_steps(c)) for c in (root, start, end)),
                     _unsigned(events)))


def decode_root_table(raw: bytes, path: str, offset: int) -> RootTable:
    streams = _Reader(raw, 0, "root table", path, offset)
    locations = streams.ids("locations")
    count = len(locations)
    root = _sums(streams.signed(count, "root"))
    start = _sums(streams.signed(count, "start"))
    end = _sums(streams.signed(count, "end"))
    events = streams.unsigned(count, "events")
    streams.finish()
    if count and (int(root.min()) < 0 or np.any(end < start)):
        raise streams.fail("a root id is negative or a location ends before it starts")
    return RootTable(locations, root, start, end, events)


# --------------------------------------------------------------------------- LOCATION_TABLE

def split_definitions(definitions: Definitions) -> tuple[dict[str, Any], bytes]:
    """The DEFINITIONS document without the lists that grow with the locations (the
    system tree, the locations and the communicators' members), and their table."""
    texts: dict[str, int] = {}
    streams = [stream for items in (definitions.system_tree, definitions.locations)
               for stream in _entity_streams(items, texts)]
    members = [m for c in definitions.communicators for m in c.members]
    counts = [len(c.members) for c in definitions.communicators]
    member_steps = _steps(np.array(members, np.int64), -1) - 1
    first = _firsts(np.array(counts, np.int64))
    member_steps[first] = np.array(members, np.int64)[first]  # each communicator's first: from -1
    streams += [_unsigned(counts), _signed(member_steps)]
    encoded = json.dumps(list(texts), ensure_ascii=False, separators=(",", ":")).encode()
    document = replace(definitions, system_tree=[], locations=[]).to_dict()
    for communicator in document["communicators"]:
        communicator["members"] = []
    return document, _TEXTS_LENGTH.pack(len(encoded)) + encoded + b"".join(streams)


def _entity_streams(items: list[Any], texts: dict[str, int]) -> list[bytes]:
    """prefix, suffix, numbered, number, kind, parent of system tree nodes or locations;
    texts are interned in the order prefix, suffix of each item, then the kinds (from
    their columns, `entity_columns`: an `EntityList` makes no item)."""
    parents, names, kind_names = entity_columns(items)
    prefix, suffix, numbered, numbers = split_names(names)
    strings = np.empty(2 * len(items), dtype=prefix.dtype)
    strings[0::2], strings[1::2] = prefix, suffix
    kinds = np.array(kind_names, dtype=object)  # as they are (numpy's str would drop trailing NULs)
    ids = np.concatenate((intern_all(texts, strings), intern_all(texts, kinds)))  # the ids of the two joined
    parent = parents + 1  # 0: none
    number_steps = _steps(numbers, -1) - 1
    return [_unsigned(ids[0:2 * len(items):2]), _unsigned(ids[1:2 * len(items):2]), _unsigned(numbered.astype(np.int64)),
            _signed(number_steps), _unsigned(ids[2 * len(items):]), _signed(_steps(parent))]


def join_definitions(definitions: Definitions, raw: bytes, path: str, offset: int) -> Definitions:
    """``definitions`` (from a 1.3 DEFINITIONS block) with the lists of its table."""
    streams = _Reader(raw, 0, "location table", path, offset)
    if len(raw) < _TEXTS_LENGTH.size:
        raise streams.fail("too short for its text list")
    (length,) = _TEXTS_LENGTH.unpack_from(raw)
    streams.position = _TEXTS_LENGTH.size + length
    if streams.position > len(raw):
        raise streams.fail(f"the text list of {length} bytes runs past the payload of {len(raw)} bytes")
    try:
        texts = json.loads(raw[_TEXTS_LENGTH.size:streams.position].decode())
    except (ValueError, RecursionError) as error:
        raise streams.fail(f"the text list is not valid JSON: {error}") from None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise streams.fail("the text list is not a JSON array of strings")
    system_tree = _entities(streams, texts, "system tree", SystemTreeNode)
    locations = _entities(streams, texts, "locations", Location)
    counts = streams.unsigned(len(definitions.communicators), "communicator sizes")
    if int(counts.sum()) > len(raw):
        raise streams.fail(f"{int(counts.sum())} communicator members claimed in {len(raw)} bytes")
    steps = streams.signed(int(counts.sum()), "communicator members")
    streams.finish()
    members = _segment_sums(steps + 1, _firsts(counts)) - 1
    if len(members) and int(members.min()) < 0:
        raise streams.fail("a communicator member is negative")
    split = np.split(members, np.cumsum(counts)[:-1]) if len(counts) else []
    communicators = [Communicator(c.name, tuple(m.tolist())) for c, m in zip(definitions.communicators, split)]
    # read-only stand-ins for the lists (the Definitions docstring says so)
    definitions.system_tree, definitions.locations = system_tree, locations  # type: ignore[assignment]
    definitions.communicators = communicators
    return definitions


def _entities(streams: _Reader, texts: list[str], what: str, make: Callable[[str, str, int | None], E]) -> EntityList[E]:
    """The system tree nodes or locations of the table, checked now; their names, kinds
    and the items are made on first use (a million take a second, and queries only count
    them or read their parents)."""
    prefix = streams.unsigned(name=f"{what} prefixes")
    count = len(prefix)
    suffix = streams.unsigned(count, f"{what} suffixes")
    numbered = streams.unsigned(count, f"{what} number flags")
    if count and int(numbered.max()) > 1:
        raise streams.fail(f"a {what} number flag is not 0 or 1")
    numbers = _sums(streams.signed(int(numbered.sum()), f"{what} numbers") + 1, -1)
    kind = streams.unsigned(count, f"{what} kinds")
    parent = _sums(streams.signed(count, f"{what} parents"))
    if count and max(int(prefix.max()), int(suffix.max()), int(kind.max())) >= len(texts):
        raise streams.fail(f"a {what} text id is not in the text list")
    if len(numbers) and int(numbers.min()) < 0 or count and int(parent.min()) < 0:
        raise streams.fail(f"a {what} number or parent is negative")

    def names() -> list[str]:
        digits = np.full(count, "", dtype="<U21")
        digits[numbered == 1] = numbers.astype(str)
        if any("\x00" in text for text in texts):  # numpy's strings end at trailing NULs
            return [texts[p] + n + texts[s] for p, n, s in zip(prefix.tolist(), digits.tolist(), suffix.tolist())]
        table = np.array(texts or [""], dtype=str)
        result: list[str] = np.strings.add(np.strings.add(table[prefix], digits), table[suffix]).tolist()
        return result

    return EntityList(make, parent - 1, names, lambda: [texts[k] for k in kind.tolist()])


# --------------------------------------------------------------------------- CHECKPOINT_TABLE

#: how a column of a checkpoint row list is stored: as is, as a step from the row before
#: in the same checkpoint (the first from -1, or for peers from the location), as a time
#: before or after the checkpoint's, or as a step from the column before in the row
RAW, KEY, BEFORE, AFTER, WIDER = range(5)
#: the row lists of a checkpoint in table order, whether each checkpoint has exactly one
#: row, and its columns' coding
MEMBERS: tuple[tuple[str, bool, tuple[int, ...]], ...] = (
    ("stack", False, (RAW, BEFORE)),
    ("metrics", False, (KEY, RAW)),
    ("regions", False, (KEY, RAW, RAW, RAW)),
    ("messages", True, (RAW,) * 4),
    ("collectives", True, (RAW,) * 3),
    ("peers", False, (KEY, RAW, RAW, RAW, RAW)),
    ("operations", False, (KEY, RAW, RAW, RAW)),
    ("durations", False, (KEY, RAW, WIDER)),
    ("open", False, (RAW, BEFORE, AFTER)),
)


def encode_checkpoint_table(interval: int, indexes: list[tuple[int, list[Checkpoint]]]) -> bytes:
    """The checkpoints of consecutive locations (see `encode_checkpoint_columns`)."""
    return encode_checkpoint_columns(interval, CheckpointColumns.from_checkpoints(indexes))


def encode_checkpoint_columns(interval: int, columns: CheckpointColumns) -> bytes:
    """The checkpoints of consecutive locations: per location its count, per checkpoint
    index and time as steps, then per row list the rows per checkpoint and its columns."""
    locations, counts, index, time = columns.locations, columns.counts, columns.index, columns.time
    owner = np.repeat(locations, counts)
    first = _firsts(counts)
    index_steps = _steps(index)
    index_steps[first] = index[first]
    time_steps = _steps(time)
    time_steps[first] = _steps(time[first])
    out = [_INTERVAL.pack(interval), _unsigned(_steps(locations)), _unsigned(counts), _unsigned(index_steps),
           _signed(time_steps)]
    for name, single, codings in MEMBERS:
        rows, sizes = columns.rows[name], columns.sizes[name]
        if not single:
            out.append(_unsigned(sizes))
        times, initial = np.repeat(time, sizes), np.repeat(owner if name == "peers" else np.full(len(sizes), -1), sizes)
        starts = np.cumsum(sizes) - sizes
        with np.errstate(over="ignore"):
            for column, coding in enumerate(codings):
                values = rows[:, column]
                if coding == KEY:
                    values = _steps(values)
                    heads = starts[sizes > 0]
                    values[heads] = rows[heads, column] - initial[heads]
                elif coding == BEFORE:
                    values = times - values
                elif coding == AFTER:
                    values = values - times
                elif coding == WIDER:
                    values = values - rows[:, column - 1]
                out.append(_signed(values))
    return b"".join(out)


def decode_checkpoint_table(raw: bytes, path: str, offset: int) -> tuple[int, list[tuple[int, list[dict[str, Any]]]]]:
    """The interval and, per location, its checkpoints as the dictionaries of the JSON
    indexes (spec 4.4 and 4.5 members together)."""
    interval, columns = decode_checkpoint_columns(raw, path, offset)
    points: list[dict[str, Any]] = [{"index": i, "time": t}
                                    for i, t in zip(columns.index.tolist(), columns.time.tolist())]
    for name, single, _ in MEMBERS:
        rows, sizes = columns.rows[name].tolist(), columns.sizes[name].tolist()
        position = 0
        for point, size in zip(points, sizes):
            point[name] = rows[position] if single else rows[position:position + size]
            position += size
    result, position = [], 0
    for location, count in zip(columns.locations.tolist(), columns.counts.tolist()):
        result.append((location, points[position:position + count]))
        position += count
    return interval, result


def decode_checkpoint_columns(raw: bytes, path: str, offset: int) -> tuple[int, CheckpointColumns]:
    """The interval and the checkpoints of a CHECKPOINT_TABLE block as columns (spec 4.8:
    what `encode_checkpoint_columns` stores)."""
    streams = _Reader(raw, _INTERVAL.size, "checkpoint table", path, offset)
    if len(raw) < _INTERVAL.size:
        raise streams.fail("too short for its interval")
    (interval,) = _INTERVAL.unpack_from(raw)
    locations = streams.ids("locations")
    counts = streams.unsigned(len(locations), "checkpoint counts")
    total = int(counts.sum())
    if total > len(raw):  # every checkpoint takes at least a byte of its index stream
        raise streams.fail(f"{total} checkpoints claimed in {len(raw)} bytes")
    first = _firsts(counts)
    index_steps = streams.unsigned(total, "indexes")
    time_steps = streams.signed(total, "times")
    index = _segment_sums(index_steps, first)
    time_steps[first] = _sums(time_steps[first])
    time = _segment_sums(time_steps, first)
    owner = np.repeat(locations, counts)
    sizes_of, rows_of = {}, {}
    for name, single, codings in MEMBERS:
        sizes = np.ones(total, np.int64) if single else streams.unsigned(total, f"{name} row counts")
        rows_total = int(sizes.sum())
        if rows_total > len(raw):
            raise streams.fail(f"{rows_total} {name} rows claimed in {len(raw)} bytes")
        times, initial = np.repeat(time, sizes), np.repeat(owner if name == "peers" else np.full(len(sizes), -1), sizes)
        row_first = _firsts(sizes)
        columns = []
        for coding in codings:
            values = streams.signed(rows_total, f"{name} column")
            with np.errstate(over="ignore"):
                if coding == KEY:
                    values[row_first] += initial[row_first]
                    values = _segment_sums(values, row_first)
                elif coding == BEFORE:
                    values = times - values
                elif coding == AFTER:
                    values = values + times
                elif coding == WIDER:
                    values = values + columns[-1]
            columns.append(values)
        sizes_of[name] = np.asarray(sizes, np.int64)
        rows_of[name] = np.stack(columns, axis=1).astype(np.int64, copy=False) if rows_total \
            else np.zeros((0, len(codings)), np.int64)
    streams.finish()
    return interval, CheckpointColumns(np.asarray(locations, np.int64), np.asarray(counts, np.int64),
                                       np.asarray(index, np.int64), np.asarray(time, np.int64), sizes_of, rows_of)


def _firsts(sizes: np.ndarray) -> np.ndarray:
    """Over the concatenation of groups of ``sizes`` items: True at each group's first."""
    first = np.zeros(int(sizes.sum()), bool)
    first[(np.cumsum(sizes) - sizes)[sizes > 0]] = True
    return first


def _segment_sums(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` (int64, wrapping) that restart at every ``first``
    position; position 0 must be one."""
    with np.errstate(over="ignore"):
        sums = np.cumsum(values.astype(np.int64))
        starts = np.flatnonzero(first)
        before = sums[starts] - values[starts]
        return sums - before[np.cumsum(first) - 1] if len(values) else sums
