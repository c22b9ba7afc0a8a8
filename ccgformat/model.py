"""The event model: event kinds, trace definitions and columnar event batches.

A trace is, per location (a process or thread), a time-ordered sequence of events with
integer timestamps in ticks. Events are held column-wise: an `EventBatch` is a struct of
numpy arrays, one entry per event. Every kind uses a fixed subset of the columns; the
other columns must be zero. Which columns are *hard* properties (equal for two sub-trees
to be merged) and which are *soft* (may deviate within a bound) is given by `KIND_FIELDS`
(dissertation 3.3.1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence, TypeVar, Union, overload

import numpy as np

from .errors import TraceError
from .ordering import sorted_distinct

T = TypeVar("T")


class EventKind(IntEnum):
    """What happened. Stable numbers: they are stored in archives."""

    ENTER = 0             #: a region (function) is entered; ref = region
    LEAVE = 1             #: the innermost open region is left; ref = region
    SEND = 2              #: blocking send; ref = receiver location, comm, tag, size
    RECV = 3              #: blocking receive; ref = sender location, comm, tag, size
    ISEND = 4             #: non-blocking send posted; as SEND plus request
    IRECV = 5             #: non-blocking receive completed; as RECV plus request
    IRECV_REQUEST = 6     #: non-blocking receive posted; request
    REQUEST_COMPLETE = 7  #: a non-blocking send request completed; request
    COLL_BEGIN = 8        #: a collective operation begins (no properties)
    COLL_END = 9          #: it ends; ref = operation, comm, tag = root, size, recv_size
    METRIC = 10           #: a metric sample; ref = metric, value
    MARKER = 11           #: an instant event; ref = marker type, value
    GENERIC = 12          #: any other record; ref = record kind, value = its interned fields


#: All columns of an EventBatch besides ``time`` and ``kind``, in storage order.
COLUMNS: tuple[str, ...] = ("ref", "comm", "tag", "request", "size", "recv_size", "value")

_P2P_HARD = ("ref", "comm", "tag")


class KindFields(NamedTuple):
    """The columns a kind uses: hard ones must be equal to merge, soft ones may deviate."""

    hard: tuple[str, ...]
    soft: tuple[str, ...]


KIND_FIELDS: dict[EventKind, KindFields] = {
    EventKind.ENTER: KindFields(("ref",), ()),
    EventKind.LEAVE: KindFields(("ref",), ()),
    EventKind.SEND: KindFields(_P2P_HARD, ("size",)),
    EventKind.RECV: KindFields(_P2P_HARD, ("size",)),
    EventKind.ISEND: KindFields(_P2P_HARD + ("request",), ("size",)),
    EventKind.IRECV: KindFields(_P2P_HARD + ("request",), ("size",)),
    EventKind.IRECV_REQUEST: KindFields(("request",), ()),
    EventKind.REQUEST_COMPLETE: KindFields(("request",), ()),
    EventKind.COLL_BEGIN: KindFields((), ()),
    EventKind.COLL_END: KindFields(("ref", "comm", "tag"), ("size", "recv_size")),
    EventKind.METRIC: KindFields(("ref",), ("value",)),
    EventKind.MARKER: KindFields(("ref", "value"), ()),
    EventKind.GENERIC: KindFields(("ref", "value"), ()),
}

#: Kinds whose ``ref`` names another location (checked against the definitions).
PEER_KINDS = frozenset({EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV})
#: Kinds that become leaf ("atomic") nodes of the graph (4.1.1).
ATOMIC_KINDS = frozenset(k for k in EventKind if k not in (EventKind.ENTER, EventKind.LEAVE))


class Event(NamedTuple):
    """One event as a row: convenient for tests, printing and small traces."""

    time: int
    kind: int
    ref: int = 0
    comm: int = 0
    tag: int = 0
    request: int = 0
    size: int = 0
    recv_size: int = 0
    value: int = 0

    def describe(self) -> str:
        """A short human-readable form naming only the columns the kind uses."""
        kind = EventKind(self.kind)
        used = KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft
        fields = " ".join(f"{name}={getattr(self, name)}" for name in used)
        return f"{self.time} {kind.name} {fields}".rstrip()


@dataclass
class EventBatch:
    """A run of consecutive events of one location, one numpy array per column."""

    time: np.ndarray
    kind: np.ndarray
    ref: np.ndarray
    comm: np.ndarray
    tag: np.ndarray
    request: np.ndarray
    size: np.ndarray
    recv_size: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.time)
        # one comparison chain: a batch is made per location and per slice (20,000 x 50 events)
        if not n == len(self.kind) == len(self.ref) == len(self.comm) == len(self.tag) == len(self.request) \
                == len(self.size) == len(self.recv_size) == len(self.value):
            for name in ("kind",) + COLUMNS:
                if len(getattr(self, name)) != n:
                    raise ValueError(f"column {name!r} has {len(getattr(self, name))} entries, expected {n}")

    @classmethod
    def from_columns(cls, time: Sequence[int] | np.ndarray, kind: Sequence[int] | np.ndarray,
                     **columns: Sequence[int] | np.ndarray) -> EventBatch:
        """Build a batch from the given columns; missing columns are zero."""
        unknown = set(columns) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown columns: {sorted(unknown)}")
        t = np.ascontiguousarray(time, dtype=np.int64)
        n = len(t)
        values = {name: np.ascontiguousarray(columns[name], dtype=np.int64) if name in columns
                  else np.zeros(n, dtype=np.int64) for name in COLUMNS}
        return cls(time=t, kind=np.ascontiguousarray(kind, dtype=np.uint8), **values)

    @classmethod
    def from_events(cls, events: Iterable[Event | Sequence[int]]) -> EventBatch:
        """Build a batch from rows (`Event` tuples or plain sequences in `Event` order)."""
        rows = [tuple(e) + (0,) * (len(Event._fields) - len(e)) for e in events]
        if not rows:
            return cls.empty()
        table = np.array(rows, dtype=np.int64).reshape(len(rows), len(Event._fields))
        return cls.from_columns(table[:, 0], table[:, 1],
                                **{name: table[:, 2 + i] for i, name in enumerate(COLUMNS)})

    @classmethod
    def empty(cls) -> EventBatch:
        return cls.from_columns(np.zeros(0, np.int64), np.zeros(0, np.uint8))

    @classmethod
    def concat(cls, batches: Sequence[EventBatch]) -> EventBatch:
        if not batches:
            return cls.empty()
        return cls(**{name: np.concatenate([getattr(b, name) for b in batches])
                      for name in ("time", "kind") + COLUMNS})

    def __len__(self) -> int:
        return len(self.time)

    def __getitem__(self, index: slice) -> EventBatch:
        if not isinstance(index, slice):
            raise TypeError("EventBatch supports slices only; use .event(i) for one event")
        return EventBatch(**{name: getattr(self, name)[index] for name in ("time", "kind") + COLUMNS})

    def event(self, i: int) -> Event:
        return Event(*(int(getattr(self, name)[i]) for name in ("time", "kind") + COLUMNS))

    def rows(self) -> Iterator[Event]:
        columns = [getattr(self, name).tolist() for name in ("time", "kind") + COLUMNS]
        return (Event(*row) for row in zip(*columns))

    def equals(self, other: EventBatch) -> bool:
        return all(np.array_equal(getattr(self, name), getattr(other, name))
                   for name in ("time", "kind") + COLUMNS)


@dataclass(frozen=True)
class LocationRun:
    """Consecutive whole locations in one batch: ``locations[i]``'s ``counts[i]`` events
    follow ``locations[i - 1]``'s in ``events``. A stream of ``(location, batches)``
    pairs may hold runs in their place (`location_pairs` gives the pairs back): the
    gathered MPI conversion hands a reading rank's message of many small locations to
    the writer's small-location groups this way, without a batch per location."""

    locations: np.ndarray
    counts: np.ndarray
    events: EventBatch

    def pairs(self) -> Iterator[tuple[int, list[EventBatch]]]:
        """Each location and its events."""
        ends = np.cumsum(self.counts).tolist()
        for location, end, count in zip(self.locations.tolist(), ends, self.counts.tolist()):
            yield location, [self.events[end - count:end]]


#: an item of a location stream: ``(location, batches)``, or a run of whole locations
LocationItem = Union[tuple[int, Iterable[EventBatch]], LocationRun]


def location_pairs(items: Iterable[LocationItem]) -> Iterator[tuple[int, Iterable[EventBatch]]]:
    """``items`` with every `LocationRun` given as its pairs."""
    for item in items:
        if isinstance(item, LocationRun):
            yield from item.pairs()
        else:
            yield item


# --------------------------------------------------------------------------- definitions

@dataclass(frozen=True)
class Region:
    """A code region (function, loop, MPI call...). ``group`` is the colouring group."""

    name: str
    role: str = "function"
    paradigm: str = "user"
    group: str = ""


@dataclass(frozen=True)
class SystemTreeNode:
    """A node of the location hierarchy (machine, node, process, or a Paje container)."""

    name: str
    kind: str
    parent: int | None = None


@dataclass(frozen=True)
class Location:
    """A location (process or thread) that records events, attached to a system tree node."""

    name: str
    kind: str = "process"
    parent: int | None = None


@dataclass(frozen=True)
class Communicator:
    """An MPI communicator (or any group of locations communicating)."""

    name: str
    members: tuple[int, ...] = ()


@dataclass(frozen=True)
class Metric:
    """A metric. Samples of ``double`` metrics hold the IEEE-754 bits in the value column."""

    name: str
    unit: str = ""
    mode: str = "accumulated"
    value_type: str = "int64"

    def __post_init__(self) -> None:
        if self.value_type not in ("int64", "uint64", "double"):
            raise ValueError(f"metric value_type must be int64, uint64 or double, got {self.value_type!r}")


class EntityList(Sequence[T]):
    """System tree nodes or locations held as columns, a read-only list (an archive's
    LOCATION_TABLE, spec 4.7): their parents (-1: none) at once, their names and kinds as
    lists on first use, the items, made of the three, on first read - queries count them
    or read their columns (`entity_columns`), and a million `Location` objects take a
    second. Compares equal to a list of the same items; pickles and copies as that list."""

    def __init__(self, make: Callable[[str, str, int | None], T], parents: np.ndarray,
                 names: Callable[[], list[str]], kinds: Callable[[], list[str]]):
        self.parents = parents
        self._entity, self._names, self._kinds = make, names, kinds
        self._columns: tuple[list[str], list[str]] | None = None
        self._items: list[T] | None = None

    def columns(self) -> tuple[list[str], list[str]]:
        """The names and the kinds, made once."""
        if self._columns is None:
            self._columns = (self._names(), self._kinds())
        return self._columns

    def _list(self) -> list[T]:
        if self._items is None:
            names, kinds = self.columns()
            self._items = list(map(self._entity, names, kinds,
                                   [None if up < 0 else up for up in self.parents.tolist()]))
        return self._items

    def __len__(self) -> int:
        return len(self.parents)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        return self._list()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, EntityList)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._list())

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (self._list(),))


def entity_columns(items: Sequence[Any]) -> tuple[np.ndarray, list[str], list[str]]:
    """Parents (-1: none), names and kinds of system tree nodes or locations: from the
    columns of an `EntityList` without making its items, else one pass over them."""
    if isinstance(items, EntityList):
        return (items.parents, *items.columns())
    parents = np.array([-1 if item.parent is None else item.parent for item in items], np.int64)
    return parents, [item.name for item in items], [item.kind for item in items]


#: The `Definitions` fields that are lists of definition records.
_TABLES = ("regions", "system_tree", "locations", "communicators", "metrics")


def members_at(document: Any, keys: tuple[str, ...], wanted: tuple[str, ...]) -> dict[str, Any] | None:
    """The members ``wanted`` (those present) of the object at the object ``keys`` of a
    JSON ``document``; None when there is no such object."""
    for key in keys:
        document = document.get(key) if isinstance(document, dict) else None
    return {name: document[name] for name in wanted if name in document} if isinstance(document, dict) else None


@dataclass
class Definitions:
    """Everything events refer to by number, plus the timer and where the trace came from.

    ``timer_resolution`` is the number of ticks per second; ``clock_offset`` the tick
    value of the trace's time zero. ``strings`` holds interned texts that markers and
    generic records refer to through their ``value`` column. ``extensions`` keeps, per
    source format name, the definitions the common model has no field for (JSON values
    only), so that an exporter to the same format can restore them. An archive's
    definitions hold ``system_tree`` and ``locations`` as `EntityList` (read-only,
    items made on first use).
    """

    regions: list[Region] = field(default_factory=list)
    system_tree: list[SystemTreeNode] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)
    communicators: list[Communicator] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    timer_resolution: int = 1_000_000_000
    clock_offset: int = 0
    provenance: dict[str, str] = field(default_factory=dict)
    extensions: dict[str, Any] = field(default_factory=dict)

    def extension_members(self, keys: tuple[str, ...], wanted: tuple[str, ...]) -> dict[str, Any] | None:
        """The members ``wanted`` (those present) of the object at the object ``keys``
        of `extensions`; None when there is no such object. An archive's definitions
        decode just those while the extensions are still stored (`archive.jsontable`),
        an integer table (an array of integers, or of arrays of n integers) then coming
        as an int64 numpy array."""
        return members_at(self.extensions, keys, wanted)

    def to_dict(self) -> dict[str, Any]:
        """Plain lists, dicts, strings and integers: ready for JSON. ``extensions`` is
        left out when empty (format 1.0 files have none)."""
        # what dataclasses.asdict gives, without its deep copy of every row (per location)
        document: dict[str, Any] = {name: [dict(vars(row)) for row in getattr(self, name)] for name in _TABLES}
        document["strings"] = list(self.strings)
        document["timer_resolution"], document["clock_offset"] = self.timer_resolution, self.clock_offset
        document["provenance"] = dict(self.provenance)
        if self.extensions:  # JSON values: copied through JSON (copy.deepcopy takes ~10 times as long)
            document["extensions"] = json.loads(json.dumps(self.extensions))
        return document

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Definitions:
        """The inverse of `to_dict`; raises TypeError, KeyError or ValueError on bad data."""
        def text(value: Any) -> str:
            if not isinstance(value, str):
                raise TypeError(f"expected a string, got {type(value).__name__}")
            return value

        def integer(value: Any) -> int:
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"expected an integer, got {type(value).__name__}")
            return value

        def optional(value: Any) -> int | None:
            return None if value is None else integer(value)

        def array(name: str, of: type = dict) -> list[Any]:
            """The member ``name``, an array of objects (or of ``of``)."""
            value = data[name]
            if not isinstance(value, list) or not all(isinstance(item, of) for item in value):
                raise TypeError(f"{name} must be an array of {'objects' if of is dict else 'strings'}, got "
                                f"{type(value).__name__}{'' if not isinstance(value, list) else ' of other items'}")
            return value

        def members(name: str, default: Any = None) -> dict[str, Any]:
            """The member ``name``, an object (``default`` when absent and one is given)."""
            value = data[name] if default is None else data.get(name, default)
            if not isinstance(value, dict):
                raise TypeError(f"{name} must be an object, got {type(value).__name__}")
            return value

        if not isinstance(data, dict):
            raise TypeError(f"the definitions must be a JSON object, got {type(data).__name__}")
        return cls(
            regions=[Region(text(r["name"]), text(r["role"]), text(r["paradigm"]), text(r["group"]))
                     for r in array("regions")],
            system_tree=[SystemTreeNode(text(n["name"]), text(n["kind"]), optional(n["parent"]))
                         for n in array("system_tree")],
            locations=[Location(text(loc["name"]), text(loc["kind"]), optional(loc["parent"]))
                       for loc in array("locations")],
            communicators=[Communicator(text(c["name"]), tuple(integer(m) for m in c["members"]))
                           for c in array("communicators")],
            metrics=[Metric(text(m["name"]), text(m["unit"]), text(m["mode"]), text(m["value_type"]))
                     for m in array("metrics")],
            strings=list(array("strings", str)),
            timer_resolution=integer(data["timer_resolution"]),
            clock_offset=integer(data["clock_offset"]),
            provenance={text(k): text(v) for k, v in members("provenance").items()},
            extensions={text(k): v for k, v in members("extensions", {}).items()},
        )


# --------------------------------------------------------------------------- validation

class Repair(NamedTuple):
    """What repair mode changed: a LEAVE of ``region`` added at ``time`` to close a
    region left open at the end (``action`` "closed"), or an unmatched LEAVE dropped
    (``action`` "dropped")."""

    location: int
    region: int
    time: int
    action: str = "closed"

    def describe(self, region_name: str | None = None) -> str:
        name = region_name if region_name is not None else f"region {self.region}"
        what = "closed open" if self.action == "closed" else "dropped the unmatched LEAVE of"
        return f"location {self.location}: {what} {name} at time {self.time}"


_KIND_COUNT = len(EventKind)


class LocationValidator:
    """Checks one location's event stream batch by batch against the event model.

    Raises `TraceError` for an unknown kind, a non-zero column the kind does not use,
    decreasing timestamps, a LEAVE with nothing open, a LEAVE whose region differs from
    the open ENTER, references outside the definitions, and (in `finish`) regions still
    open at the end. With ``repair``, a LEAVE whose region is not open at all (or with
    nothing open) is dropped instead and listed in `repairs`; nothing is invented, so a
    LEAVE of a region open further out (which would need LEAVEs added) still fails.
    """

    def __init__(self, location: int, definitions: Definitions | None = None, repair: bool = False):
        self.location = location
        self.definitions = definitions
        self.repair = repair
        self.repairs: list[Repair] = []
        self.count = 0
        self.last_time: int | None = None
        self.open_regions: list[int] = []

    def _fail(self, reason: str, batch: EventBatch, i: int) -> TraceError:
        return TraceError(reason, location=self.location, index=self.count + i, time=int(batch.time[i]))

    def check(self, batch: EventBatch) -> EventBatch:
        """Validate the next batch of this location (vectorised, then the nesting); returns
        it, without the LEAVEs repair mode dropped."""
        n = len(batch)
        if n == 0:
            return batch
        bad = np.flatnonzero(batch.kind >= _KIND_COUNT)
        if len(bad):
            raise self._fail(f"unknown event kind {int(batch.kind[bad[0]])}", batch, int(bad[0]))
        for kind in sorted_distinct(batch.kind).tolist():
            used = KIND_FIELDS[EventKind(kind)]
            of_kind = batch.kind == kind
            for name in COLUMNS:
                if name not in used.hard and name not in used.soft:
                    nonzero = np.flatnonzero(of_kind & (getattr(batch, name) != 0))
                    if len(nonzero):
                        raise self._fail(f"column {name!r} must be 0 for {EventKind(kind).name}",
                                         batch, int(nonzero[0]))
        if self.last_time is not None and batch.time[0] < self.last_time:
            raise self._fail(f"timestamp decreases (previous event at {self.last_time})", batch, 0)
        down = np.flatnonzero(batch.time[1:] < batch.time[:-1])
        if len(down):
            i = int(down[0]) + 1
            raise self._fail(f"timestamp decreases (previous event at {int(batch.time[i - 1])})", batch, i)
        for name in ("size", "recv_size"):
            negative = np.flatnonzero(getattr(batch, name) < 0)
            if len(negative):
                raise self._fail(f"{name} must not be negative", batch, int(negative[0]))
        self._check_references(batch)
        dropped = self._check_nesting(batch)
        self.count += n
        self.last_time = int(batch.time[-1])
        if dropped:
            keep = np.ones(n, dtype=bool)
            keep[dropped] = False
            batch = EventBatch(**{name: getattr(batch, name)[keep] for name in ("time", "kind") + COLUMNS})
        return batch

    def _check_references(self, batch: EventBatch) -> None:
        defs = self.definitions
        if defs is None:
            return
        checks = (
            (np.isin(batch.kind, (EventKind.ENTER, EventKind.LEAVE)), len(defs.regions), "region"),
            (np.isin(batch.kind, list(PEER_KINDS)), len(defs.locations), "peer location"),
            (batch.kind == EventKind.METRIC, len(defs.metrics), "metric"),
        )
        for selected, count, what in checks:
            bad = np.flatnonzero(selected & ((batch.ref < 0) | (batch.ref >= count)))
            if len(bad):
                i = int(bad[0])
                raise self._fail(f"{what} {int(batch.ref[i])} is not defined ({count} defined)", batch, i)

    def _check_nesting(self, batch: EventBatch) -> list[int]:
        """Follow ENTER/LEAVE; returns the positions of the LEAVEs repair mode drops."""
        calls = np.flatnonzero(batch.kind <= EventKind.LEAVE)
        kinds = batch.kind[calls].tolist()
        regions = batch.ref[calls].tolist()
        stack = self.open_regions
        dropped: list[int] = []
        for i, kind, region in zip(calls.tolist(), kinds, regions):
            if kind == EventKind.ENTER:
                stack.append(region)
            elif stack and stack[-1] == region:
                stack.pop()
            elif self.repair and region not in stack:
                dropped.append(i)
                self.repairs.append(Repair(self.location, region, int(batch.time[i]), "dropped"))
            elif not stack:
                raise self._fail(f"LEAVE of region {region} with no region open", batch, i)
            else:
                raise self._fail(f"LEAVE of region {region} but region {stack[-1]} is open", batch, i)
        return dropped

    def finish(self) -> list[Repair]:
        """End of the stream: regions still open are an error, or closed when repairing.

        Repair mode closes every open region, innermost first, at the last timestamp and
        returns what it added; the caller appends those LEAVE events.
        """
        if not self.open_regions:
            return []
        if not self.repair:
            raise TraceError(
                f"{len(self.open_regions)} region(s) still open at the end (innermost: "
                f"region {self.open_regions[-1]}); use repair mode to close them",
                location=self.location, index=self.count, time=self.last_time)
        assert self.last_time is not None
        repairs = [Repair(self.location, region, self.last_time) for region in reversed(self.open_regions)]
        self.open_regions.clear()
        self.repairs.extend(repairs)
        return repairs
