"""Chrome Trace Event JSON to the event model (the mapping is in the package docstring)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...errors import FormatError
from ...bulkstep import collector_paused
from ...model import (COLUMNS, KIND_FIELDS, PEER_KINDS, Definitions, EventBatch, EventKind, Location, Metric,
                      Region, SystemTreeNode)
from ..common import StringTable, batches
from .common import (EXTENSION, FIELDS, FLOW, GENERIC_TEXT, INT64_MAX, INT64_MIN, OWN, UINT64_END, WHOLE, Key,
                     compact, identifier)
from .nesting import ENTER, LEAVE, POINT, nest
from .parse import MAX_DIGITS, Source, Timer, decimal, fraction_digits, own_timer

_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_X_KEYS = ("ph", "name", "cat", "pid", "tid", "ts", "dur")
_X_KEYS_BUT_CAT = ("ph", "name", "pid", "tid", "ts", "dur")
_C_KEYS = ("ph", "name", "pid", "tid", "ts", "args")
_PLACE_KEYS = ("pid", "tid", "ts")

Row = tuple[int, int, int, int, int, int, int, int]   # kind and the COLUMNS


@dataclass(slots=True)
class _Span:
    """A call: X, or a matched B/E pair. ``pre``/``post``: string index of extra fields."""

    start: int
    end: int
    seq: int
    region: int
    pre: int | None
    post: int | None = None
    end_seq: int = 0
    exact: bool = False    #: a B/E pair: its order at equal timestamps is the file order


@dataclass(slots=True)
class _Point:
    """Events at one instant that stay together (a flow step, one counter event...)."""

    time: int
    seq: int
    rows: list[Row] = field(default_factory=list)


@dataclass(slots=True)
class _Edge:
    """A B (``begin``) or E event, to be paired per thread."""

    time: int
    seq: int
    event: dict[str, Any]
    begin: bool


@dataclass(slots=True)
class _Own:
    """An event of category ``ccgformat``: one model event, resolved once locations are known."""

    time: int
    seq: int
    args: dict[str, Any]


@dataclass(slots=True)
class _Flow:
    time: int
    seq: int
    key: Key
    event: dict[str, Any]


def _row(kind: EventKind, ref: int = 0, comm: int = 0, tag: int = 0, request: int = 0, size: int = 0,
         recv_size: int = 0, value: int = 0) -> Row:
    return (int(kind), ref, comm, tag, request, size, recv_size, value)


class _Series:
    """What the samples of one counter series hold, to choose the metric's value type."""

    __slots__ = ("big", "floats", "negative")

    def __init__(self) -> None:
        self.floats = self.big = self.negative = False

    def value_type(self) -> str:
        if self.floats or (self.big and self.negative):
            return "double"
        return "uint64" if self.big else "int64"


def _sample(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    return _NON_FINITE.get(value) if isinstance(value, str) else None


def _counter_samples(event: dict[str, Any]) -> list[tuple[str, int | float]] | None:
    """The (series key, value) pairs of a C event, or None when it is not a plain counter."""
    args = event.get("args")
    if not isinstance(args, dict) or not args or not isinstance(event.get("name", ""), str):
        return None
    samples = []
    for key, value in args.items():
        sample = _sample(value)
        if sample is None or (isinstance(sample, int) and not INT64_MIN <= sample < UINT64_END):
            return None
        samples.append((key, sample))
    return samples


class _Importer:
    """Builds definitions and per-location event columns from the parsed events."""

    def __init__(self, source: Source):
        self.source = source
        self.top, events, self.form = source.document()
        self.events = events
        self.strings: list[str] = []
        self.intern = StringTable(self.strings)
        self.regions: dict[tuple[str, str], int] = {}
        self.keys: dict[Key, int] = {}
        self.named: dict[Key, int] = {}
        self.process_names: dict[Any, str] = {}
        self.thread_names: dict[Key, str] = {}
        self.metadata: list[dict[str, Any]] = []
        self.series: dict[tuple[str, str], _Series] = {}
        self.timer = self._scan()

    # ----------------------------------------------------------------- helpers

    def fail(self, reason: str, number: int) -> FormatError:
        return self.source.error(f"event {number}: {reason}", self.source.position(number))

    def extra(self, event: dict[str, Any], used: tuple[str, ...]) -> int | None:
        """The string index of the event's fields outside ``used``, or None if there are none."""
        rest = {k: v for k, v in event.items() if k not in used}
        return self.intern.json(rest, ensure_ascii=False) if rest else None

    def whole(self, event: dict[str, Any]) -> int:
        return self.intern.json({k: v for k, v in event.items() if k not in _PLACE_KEYS}, ensure_ascii=False)

    def generic(self, name: str, value: int) -> Row:
        return _row(EventKind.GENERIC, ref=self.intern(name), value=value)

    # ----------------------------------------------------------------- pass 1

    def _scan(self) -> Timer:
        """Check every event's phase, place and numbers; gather names, counter series and
        the decimal digits the timestamps need."""
        digits = 0
        exporter_timer = own_timer(self.top)
        for number, event in enumerate(self.events):
            if not isinstance(event, dict):
                raise self.fail("not a JSON object", number)
            if not event:
                continue
            phase = event.get("ph")
            if not isinstance(phase, str):
                raise self.fail("no 'ph' (phase)" if phase is None else "'ph' is not a string", number)
            try:
                key = (identifier(event.get("pid")), identifier(event.get("tid")))
            except ValueError as error:
                raise self.fail(f"bad pid/tid: {error}", number) from None
            if phase == "M":
                self._metadata(event, key)
                continue
            self.keys.setdefault(key, len(self.keys))
            for name in ("ts", "dur") if phase == "X" else ("ts",):
                value = decimal(event.get(name))
                if value is None:
                    raise self.fail(f"missing or bad '{name}': {compact(event.get(name))[:40]}", number)
                if name == "dur" and value < 0:
                    raise self.fail("negative 'dur'", number)
                digits = max(digits, fraction_digits(value))
            if phase == "C":
                for series, sample in _counter_samples(event) or ():
                    seen = self.series.setdefault((event.get("name", ""), series), _Series())
                    seen.floats |= isinstance(sample, float)
                    seen.big |= sample > INT64_MAX
                    seen.negative |= sample < 0
        for key in self.named:
            self.keys.setdefault(key, len(self.keys))
        self.metric_of = {key: i for i, key in enumerate(self.series)}
        if exporter_timer is not None:
            return exporter_timer
        if digits > MAX_DIGITS:
            raise FormatError(f"timestamps need {digits} fractional digits of a microsecond; at most "
                              f"{MAX_DIGITS} fit 64-bit ticks", path=self.source.path)
        return Timer(10 ** (6 + digits), 0, digits)

    def _metadata(self, event: dict[str, Any], key: Key) -> None:
        self.metadata.append(event)
        args = event.get("args")
        name = args.get("name") if isinstance(args, dict) else None
        if not isinstance(name, str):
            return
        if event.get("name") == "process_name" and key[0] is not None:
            self.process_names[key[0]] = name
        elif event.get("name") == "thread_name":
            self.thread_names[key] = name
            self.named.setdefault(key, len(self.named))

    def time(self, event: dict[str, Any], name: str, number: int) -> int:
        ticks = self.timer.ticks(decimal(event[name]), name == "ts")  # type: ignore[arg-type]
        if ticks is None:
            raise self.fail(f"'{name}' is outside the 64-bit tick range", number)
        return ticks

    # ----------------------------------------------------------------- pass 2

    def build(self) -> tuple[Definitions, list[np.ndarray]]:
        spans: dict[Key, list[_Span]] = {}
        points: dict[Key, list[_Point]] = {}
        edges: dict[Key, list[_Edge]] = {}
        owns: dict[Key, list[_Own]] = {}
        flows: list[_Flow] = []
        for number, event in enumerate(self.events):
            if not event or event["ph"] == "M":
                continue
            phase = event["ph"]
            key = (identifier(event.get("pid")), identifier(event.get("tid")))
            time = self.time(event, "ts", number)
            if event.get("cat") == OWN and phase in ("s", "f", "i"):
                args = event.get("args")
                if not isinstance(args, dict):
                    raise self.fail("a ccgformat event without args", number)
                owns.setdefault(key, []).append(_Own(time, number, args))
            elif phase == "X":
                end = time + self.time(event, "dur", number)
                if end > INT64_MAX:
                    raise self.fail("'ts' + 'dur' is outside the 64-bit tick range", number)
                spans.setdefault(key, []).append(_Span(time, end, number, *self.call(event, number)))
            elif phase in ("B", "E"):
                edges.setdefault(key, []).append(_Edge(time, number, event, phase == "B"))
            elif phase == "C" and (rows := self.counter(event)) is not None:
                points.setdefault(key, []).append(_Point(time, number, rows))
            elif phase in ("s", "t", "f"):
                flows.append(_Flow(time, number, key, event))
            else:
                points.setdefault(key, []).append(_Point(time, number, [self.generic(WHOLE, self.whole(event))]))
        for key, items in edges.items():
            self.match(items, spans.setdefault(key, []), points.setdefault(key, []))
        for key, items in owns.items():
            points.setdefault(key, []).extend(self.own(item) for item in items)
        self.chain(flows, points)
        return self.assemble(spans, points)

    def call(self, event: dict[str, Any], number: int) -> tuple[int, int | None]:
        """The region of an X or B event (its name and category) and the string index of
        its other fields (a category that is not a string stays among them)."""
        name, group = event.get("name", ""), event.get("cat", "")
        if not isinstance(name, str):
            raise self.fail("'name' is not a string", number)
        if not isinstance(group, str):
            return self.regions.setdefault((name, ""), len(self.regions)), self.extra(event, _X_KEYS_BUT_CAT)
        return self.regions.setdefault((name, group), len(self.regions)), self.extra(event, _X_KEYS)

    def counter(self, event: dict[str, Any]) -> list[Row] | None:
        """METRIC rows of a plain counter event (None: keep it whole)."""
        samples = _counter_samples(event)
        if samples is None:
            return None
        name = event.get("name", "")
        rows = []
        for series, sample in samples:
            metric = self.metric_of[(name, series)]
            value = _metric_bits(sample, self.series[(name, series)].value_type())
            if value is None:
                return None
            rows.append(_row(EventKind.METRIC, ref=metric, value=value))
        extra = self.extra(event, _C_KEYS)
        return ([self.generic(FIELDS, extra)] if extra is not None else []) + rows

    def match(self, items: list[_Edge], spans: list[_Span], points: list[_Point]) -> None:
        """Pair B and E events of one thread in time order (E closes the latest open B);
        unpaired ones are kept whole. An E's name that repeats its B's is not kept."""
        items.sort(key=lambda item: (item.time, item.seq))
        stack: list[_Edge] = []
        for item in items:
            if item.begin:
                stack.append(item)
            elif stack:
                begin = stack.pop()
                repeated = ("name",) if item.event.get("name") == begin.event.get("name", "") else ()
                spans.append(_Span(begin.time, item.time, begin.seq, *self.call(begin.event, begin.seq),
                                   self.extra(item.event, _PLACE_KEYS + ("ph",) + repeated), item.seq, exact=True))
            else:
                points.append(_Point(item.time, item.seq, [self.generic(WHOLE, self.whole(item.event))]))
        for begin in stack:
            points.append(_Point(begin.time, begin.seq, [self.generic(WHOLE, self.whole(begin.event))]))

    def peer(self, value: Any, item: _Own) -> int:
        try:
            if not isinstance(value, list) or len(value) != 2:
                raise ValueError("not a [pid, tid] pair")
            key = (identifier(value[0]), identifier(value[1]))
        except ValueError as error:
            raise self.fail(f"bad ccgformat peer: {error}", item.seq) from None
        if key not in self.keys:
            raise self.fail(f"ccgformat peer {compact(value)} is not a thread of this trace", item.seq)
        return self.keys[key]

    def own(self, item: _Own) -> _Point:
        """The model event an exported ``ccgformat`` event carries."""
        args = item.args
        try:
            kind = EventKind[args["kind"]]
        except (KeyError, TypeError):
            raise self.fail(f"unknown ccgformat kind {compact(args.get('kind'))[:40]}", item.seq) from None
        if kind in (EventKind.ENTER, EventKind.LEAVE, EventKind.METRIC):
            raise self.fail(f"a ccgformat event may not be {kind.name}", item.seq)
        used = KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft
        columns: dict[str, int] = {}
        for name in used:
            if name == "ref" and kind in PEER_KINDS:
                columns[name] = self.peer(args.get("peer"), item)
            elif kind == EventKind.GENERIC and isinstance(text := args.get(GENERIC_TEXT[name]), str):
                columns[name] = self.intern(text)
            else:
                value = args.get(name)
                if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
                    raise self.fail(f"ccgformat {kind.name} needs an integer '{name}'", item.seq)
                columns[name] = value
        return _Point(item.time, item.seq, [_row(kind, **columns)])

    def chain(self, flows: list[_Flow], points: dict[Key, list[_Point]]) -> None:
        """Flow steps sharing (cat, id) form chains (s starts one, f ends it); consecutive
        steps become a SEND and a RECV. Steps without a partner are kept whole."""
        groups: dict[str, list[_Flow]] = {}
        for flow in flows:
            event = flow.event
            groups.setdefault(compact([event.get("cat"), event.get("id"), event.get("id2")]), []).append(flow)
        chains: list[list[_Flow]] = []
        for group in groups.values():
            group.sort(key=lambda flow: (flow.time, flow.seq))
            current: list[_Flow] = []
            for flow in group:
                phase = flow.event["ph"]
                if phase == "s" or not current:
                    if current:
                        chains.append(current)
                    current = [flow]
                else:
                    current.append(flow)
                if phase == "f":
                    chains.append(current)
                    current = []
            if current:
                chains.append(current)
        for chain in chains:
            if len(chain) == 1:
                flow = chain[0]
                points.setdefault(flow.key, []).append(
                    _Point(flow.time, flow.seq, [self.generic(WHOLE, self.whole(flow.event))]))
                continue
            for i, flow in enumerate(chain):
                rows = [self.generic(FLOW, self.whole(flow.event))]
                if i > 0:
                    rows.append(_row(EventKind.RECV, ref=self.keys[chain[i - 1].key]))
                if i + 1 < len(chain):
                    rows.append(_row(EventKind.SEND, ref=self.keys[chain[i + 1].key]))
                points.setdefault(flow.key, []).append(_Point(flow.time, flow.seq, rows))

    # ----------------------------------------------------------------- assembly

    def assemble(self, spans: dict[Key, list[_Span]], points: dict[Key, list[_Point]]
                 ) -> tuple[Definitions, list[np.ndarray]]:
        location_keys = list(self.keys)
        location_names = [self.thread_name(key) for key in location_keys]
        tables: list[np.ndarray] = []
        overlaps: list[tuple[Key, str, list[tuple[int, Any]]]] = []
        for key, name in zip(list(location_keys), list(location_names)):
            lanes = _location_tokens(spans.get(key, []), points.get(key, []))
            tables.append(self.table(lanes[0]))
            overlaps.extend((key, f"{name} (overlap {number})", lane) for number, lane in enumerate(lanes[1:], 1))
        for key, name, lane in overlaps:
            location_keys.append(key)
            location_names.append(name)
            tables.append(self.table(lane))
        pids = list(dict.fromkeys([pid for pid, _ in location_keys] + list(self.process_names)))
        system_tree = [SystemTreeNode(self.process_names.get(pid, "global" if pid is None else f"process {pid}"),
                                      "process") for pid in pids]
        node_of = {pid: i for i, pid in enumerate(pids)}
        locations = [Location(name, "process" if tid is None or tid == pid else "thread", node_of[pid])
                     for (pid, tid), name in zip(location_keys, location_names)]
        metrics = [Metric(name if series == "value" else f"{name}.{series}", "", "absolute", kind.value_type())
                   for (name, series), kind in self.series.items()]
        extension = {"locations": [list(key) for key in location_keys], "metadata": self.metadata,
                     "document": {k: v for k, v in self.top.items() if k != OWN},
                     "counters": [list(key) for key in self.series]}
        definitions = Definitions(
            regions=[Region(name, "function", "user", group) for name, group in self.regions],
            system_tree=system_tree, locations=locations, metrics=metrics, strings=self.strings,
            timer_resolution=self.timer.resolution, clock_offset=self.timer.offset,
            provenance={"chrome_form": self.form, "chrome_compression": "gzip" if self.source.gzip else "none"},
            extensions={EXTENSION: extension})
        return definitions, tables

    def thread_name(self, key: Key) -> str:
        pid, tid = key
        if key in self.thread_names:
            return self.thread_names[key]
        if tid is None:
            return "global" if pid is None else f"process {pid}"
        return f"thread {tid}"

    def table(self, tokens: list[tuple[int, Any]]) -> np.ndarray:
        """One location's events from its ordered tokens: a table whose columns are the
        time, the kind and the `COLUMNS`."""
        rows: list[tuple[int, ...]] = []
        enter, leave = int(EventKind.ENTER), int(EventKind.LEAVE)
        for token, item in tokens:
            if token == POINT:
                rows.extend((item.time,) + row for row in item.rows)
                continue
            extra, at = (item.pre, item.start) if token == ENTER else (item.post, item.end)
            if extra is not None:
                rows.append((at, int(EventKind.GENERIC), self.intern(FIELDS), 0, 0, 0, 0, 0, extra))
            rows.append((at, enter if token == ENTER else leave, item.region, 0, 0, 0, 0, 0, 0))
        return np.array(rows, dtype=np.int64).reshape(len(rows), 2 + len(COLUMNS))


def _metric_bits(sample: float, value_type: str) -> int | None:
    """The value column of a sample for a metric of ``value_type`` (None if not exact)."""
    if value_type == "double":
        number = float(sample)
        if isinstance(sample, int) and number != sample:
            return None
        return struct.unpack("<q", struct.pack("<d", number))[0]
    if isinstance(sample, float):
        return None
    return sample - UINT64_END if sample > INT64_MAX else sample


def _location_tokens(spans: list[_Span], points: list[_Point]) -> list[list[tuple[int, Any]]]:
    """Token lanes of one thread. With only B/E calls the file order at equal timestamps
    is kept exactly; with X calls the order comes from `nest`."""
    if not all(span.exact for span in spans):
        entries: list[tuple[int, int | None, int, Any]] = [(s.start, s.end, s.seq, s) for s in spans]
        entries += [(p.time, None, p.seq, p) for p in points]
        return nest(entries)
    tokens = [(s.start, s.seq, ENTER, s) for s in spans] + [(s.end, s.end_seq, LEAVE, s) for s in spans]
    tokens += [(p.time, p.seq, POINT, p) for p in points]
    tokens.sort(key=lambda t: (t[0], t[1]))
    return [[(kind, item) for _, _, kind, item in tokens]]



def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    with collector_paused():
        definitions, tables = _Importer(Source(path)).build()

    def streams() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        for location, table in enumerate(tables):
            yield location, batches({name: table[:, i] for i, name in enumerate(("time", "kind") + COLUMNS)})

    return definitions, streams()
