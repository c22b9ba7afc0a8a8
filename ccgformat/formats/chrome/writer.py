"""The event model to Chrome Trace Event JSON (the mapping is in the package docstring)."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ...archive import Archive, ExportProgress
from ...atomic import atomic_output
from ...errors import FormatError
from ...model import COLUMNS, KIND_FIELDS, PEER_KINDS, Definitions, EventBatch, EventKind
from .common import EXTENSION, FIELDS, FLOW, GENERIC_TEXT, OWN, UINT64_END, WHOLE, Key, compact, identifier
from .nesting import ENTER, LEAVE, POINT, nest

#: Events an export keeps in memory between its two readings of the archive.
CACHED_EVENTS = 1 << 22
_MESSAGES = (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV)
_SENDS = (EventKind.SEND, EventKind.ISEND)


@dataclass(slots=True)
class _Call:
    """A call being exported; ``pre``/``post`` are extra fields of its begin and end."""

    region: int
    start: int
    end: int = 0
    pre: dict[str, Any] | None = None
    post: dict[str, Any] | None = None


@dataclass(slots=True)
class _Instant:
    """An exported event that is not a call: its fields (without pid, tid and ts). A plain
    message also records ``(kind, peer, comm, tag)`` and its event index for pairing."""

    time: int
    event: dict[str, Any]
    index: int = -1
    message: tuple[int, int, int, int] | None = None


class _Clock:
    """Ticks to microsecond text: exact where a few decimals can be, else with enough
    decimals that every tick has its own text (rounding back gives the same tick)."""

    def __init__(self, resolution: int, offset: int):
        self.resolution = resolution
        self.offset = offset
        rounded = next(d for d in itertools.count() if 10 ** (6 + d) > 2 * resolution)
        exact = [d for d in range(rounded + 1) if 10 ** (6 + d) % resolution == 0]
        self.digits = exact[0] if exact else rounded
        self.scale = 10 ** (6 + self.digits) // resolution if exact else 0
        self.numerator = 10 ** (6 + self.digits)

    def scaled(self, time: int) -> int:
        """The timestamp ``time`` in units of the last decimal written."""
        ticks = time - self.offset
        if self.scale:
            return ticks * self.scale
        quotient, remainder = divmod(ticks * self.numerator, self.resolution)
        twice = 2 * remainder
        return quotient + (twice > self.resolution or (twice == self.resolution and quotient % 2))

    def text(self, scaled: int) -> str:
        if not self.digits:
            return str(scaled)
        whole, fraction = divmod(abs(scaled), 10 ** self.digits)
        decimals = str(fraction).rjust(self.digits, "0").rstrip("0")
        return ("-" if scaled < 0 else "") + str(whole) + ("." + decimals if decimals else "")


class _Placement:
    """Where each location goes (pid, tid), the metadata events, and each metric's counter
    name and series. Archives imported from Chrome keep theirs (extensions); others get a
    pid per process location (a location of kind "process", or without a parent) or per
    parent system-tree node of the other locations, and a tid per location."""

    def __init__(self, definitions: Definitions):
        self.document: dict[str, Any] = {}
        if not self._restore(definitions.extensions.get(EXTENSION), definitions):
            self._synthesise(definitions)

    def _restore(self, extension: Any, definitions: Definitions) -> bool:
        if not isinstance(extension, dict):
            return False
        places, metadata = extension.get("locations"), extension.get("metadata")
        counters, document = extension.get("counters"), extension.get("document")
        if not (isinstance(places, list) and len(places) == len(definitions.locations)
                and all(isinstance(p, list) and len(p) == 2 for p in places)
                and isinstance(metadata, list) and all(isinstance(m, dict) for m in metadata)
                and isinstance(counters, list) and len(counters) == len(definitions.metrics)
                and all(isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c)
                        for c in counters) and isinstance(document, dict)):
            return False
        try:
            self.places: list[Key] = [(identifier(pid), identifier(tid)) for pid, tid in places]
        except ValueError:
            return False
        self.metadata: list[dict[str, Any]] = metadata
        self.counters = [(name, series) for name, series in counters]
        self.document = document
        return True

    def _synthesise(self, definitions: Definitions) -> None:
        owners: dict[tuple[str, int], int] = {}
        names: dict[int, str] = {}
        pids = []
        for index, location in enumerate(definitions.locations):
            parent = location.parent
            if location.kind == "process" or parent is None or not 0 <= parent < len(definitions.system_tree):
                owner, name = ("location", index), location.name
            else:
                owner, name = ("node", parent), definitions.system_tree[parent].name
            pid = owners.setdefault(owner, len(owners) + 1)
            names.setdefault(pid, name)
            pids.append(pid)
        self.places = [(pid, pid if definitions.locations[i].kind == "process" else len(owners) + 1 + i)
                       for i, pid in enumerate(pids)]
        self.metadata = []
        for pid, name in names.items():
            self.metadata.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
            self.metadata.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
        for index, ((pid, tid), location) in enumerate(zip(self.places, definitions.locations)):
            self.metadata.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                  "args": {"name": location.name}})
            self.metadata.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                                  "args": {"sort_index": index}})
        self.counters = [(metric.name, "value") for metric in definitions.metrics]


def _sample_json(bits: int, value_type: str) -> int | float | str:
    if value_type == "uint64":
        return bits % UINT64_END
    if value_type != "double":
        return bits
    number = struct.unpack("<d", struct.pack("<q", bits))[0]
    if math.isfinite(number):
        return number
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


class _Walker:
    """Turns one location's events into export tokens (calls and instants)."""

    def __init__(self, definitions: Definitions, placement: _Placement):
        self.definitions = definitions
        self.placement = placement
        self.objects: dict[int, dict[str, Any] | None] = {}

    def text(self, index: int) -> str | None:
        strings = self.definitions.strings
        return strings[index] if 0 <= index < len(strings) else None

    def object(self, index: int) -> dict[str, Any] | None:
        """The JSON object string ``index`` holds (None if it is none); parsed once."""
        if index not in self.objects:
            try:
                value = json.loads(self.text(index) or "")
            except ValueError:
                value = None
            self.objects[index] = value if isinstance(value, dict) else None
        return self.objects[index]

    def tokens(self, batch: EventBatch) -> list[tuple[int, Any]]:
        columns = [batch.time.tolist(), batch.kind.tolist()] + [getattr(batch, name).tolist() for name in COLUMNS]
        time, kind, ref, value = columns[0], columns[1], columns[2], columns[-1]
        tokens: list[tuple[int, Any]] = []
        stack: list[_Call] = []
        pending: dict[str, Any] | None = None
        i, count = 0, len(time)
        while i < count:
            at, what = time[i], kind[i]
            if what == EventKind.GENERIC:
                record = self.text(ref[i])
                loaded = self.object(value[i]) if record in (FIELDS, FLOW, WHOLE) else None
                if record == FIELDS and loaded is not None:
                    pending = loaded
                    i += 1
                    continue
                if loaded is not None and isinstance(loaded.get("ph"), str):
                    i += 1
                    if record == FLOW:       # the messages the flow step became
                        for follower in (EventKind.RECV, EventKind.SEND):
                            if i < count and kind[i] == follower and time[i] == at:
                                i += 1
                    tokens.append((POINT, _Instant(at, loaded)))
                    pending = None
                    continue
            if what == EventKind.ENTER:
                call = _Call(ref[i], at, pre=pending)
                stack.append(call)
                tokens.append((ENTER, call))
            elif what == EventKind.LEAVE:
                if not stack:
                    raise FormatError(f"LEAVE at {at} with no region open")
                call = stack.pop()
                call.end, call.post = at, pending
                tokens.append((LEAVE, call))
            elif what == EventKind.METRIC:
                i = self._counter(time, kind, ref, value, i, pending, tokens)
                pending = None
                continue
            else:
                tokens.append((POINT, self._own(i, [column[i] for column in columns])))
            pending = None
            i += 1
        return tokens

    def _counter(self, time: list[int], kind: list[int], ref: list[int], value: list[int], i: int,
                 pending: dict[str, Any] | None, tokens: list[tuple[int, Any]]) -> int:
        """One C event from the METRIC samples at ``i`` (consecutive samples of one counter
        at one time with distinct series form one event); returns the next index."""
        metrics, counters = self.definitions.metrics, self.placement.counters
        name = counters[ref[i]][0]
        args: dict[str, Any] = {}
        at = time[i]
        while (i < len(time) and kind[i] == EventKind.METRIC and time[i] == at
               and counters[ref[i]][0] == name and counters[ref[i]][1] not in args):
            args[counters[ref[i]][1]] = _sample_json(value[i], metrics[ref[i]].value_type)
            i += 1
        tokens.append((POINT, _Instant(at, {"ph": "C", "name": name, **(pending or {}), "args": args})))
        return i

    def _own(self, i: int, row: list[int]) -> _Instant:
        """A ``ccgformat`` instant carrying the model event ``row`` (time, kind, COLUMNS) exactly."""
        kind = EventKind(row[1])
        fields = dict(zip(COLUMNS, row[2:]))
        args: dict[str, Any] = {"kind": kind.name}
        for name in KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft:
            number = fields[name]
            if name == "ref" and kind in PEER_KINDS:
                args["peer"] = list(self.placement.places[number])
            elif kind == EventKind.GENERIC and (text := self.text(number)) is not None:
                args[GENERIC_TEXT[name]] = text
            else:
                args[name] = number
        event = {"ph": "i", "s": "t", "name": kind.name, "cat": OWN, "args": args}
        if kind in _MESSAGES:
            return _Instant(row[0], event, i, (int(kind), fields["ref"], fields["comm"], fields["tag"]))
        if kind == EventKind.GENERIC:
            event["name"] = args.get("record", kind.name)
        return _Instant(row[0], event)


class _Locations:
    """Each location's events as one batch; the first reading of up to `CACHED_EVENTS`
    events is kept for the second (reading an archive costs more than writing JSON)."""

    def __init__(self, archive: Archive):
        self.archive = archive
        self.cache: dict[int, EventBatch] = {}
        self.cached = 0

    def batch(self, location: int) -> EventBatch:
        batch = self.cache.pop(location, None)
        if batch is None:
            batch = EventBatch.concat(list(self.archive.location(location).events()))
            if self.cached + len(batch) <= CACHED_EVENTS:
                self.cache[location] = batch
                self.cached += len(batch)
        return batch


def _pair_messages(locations: _Locations, walker: _Walker) -> dict[tuple[int, int], int]:
    """Flow ids of matched messages, keyed by (location, event index): the n-th send from A
    to B on (comm, tag) matches the n-th receive on B from A on (comm, tag)."""
    sends: dict[tuple[int, int, int, int], list[tuple[int, int]]] = {}
    receives: dict[tuple[int, int, int, int], list[tuple[int, int]]] = {}
    for location in locations.archive.locations:
        for token, item in walker.tokens(locations.batch(location)):
            if token == POINT and item.message is not None:
                kind, peer, comm, tag = item.message
                if kind in _SENDS:
                    sends.setdefault((location, peer, comm, tag), []).append((location, item.index))
                else:
                    receives.setdefault((peer, location, comm, tag), []).append((location, item.index))
    ids: dict[tuple[int, int], int] = {}
    for key, outgoing in sends.items():
        for send, receive in zip(outgoing, receives.get(key, ())):
            ids[send] = ids[receive] = len(ids) // 2 + 1
    return ids


def _use_complete_events(tokens: list[tuple[int, Any]]) -> bool:
    """Whether X events re-import to exactly this order (see `nest`); else B/E are needed."""
    entries: list[tuple[int, int | None, int, Any]] = []
    for seq, (token, item) in enumerate(tokens):
        if token == ENTER:
            if item.post:
                return False
            entries.append((item.start, item.end, seq, item))
        elif token == POINT:
            entries.append((item.time, None, seq, item))
    lanes = nest(entries)
    return len(lanes) == 1 and len(lanes[0]) == len(tokens) and all(
        a[0] == b[0] and a[1] is b[1] for a, b in zip(lanes[0], tokens))


class _Writer:
    """Writes the events, one per line."""

    def __init__(self, stream: TextIO, clock: _Clock):
        self.stream = stream
        self.clock = clock
        self.first = True

    def event(self, fields: dict[str, Any], place: Key, time: int | None = None, end: int | None = None) -> None:
        """One event; ``time`` and ``end`` are timestamps in ticks. The duration is the
        difference of the written texts, so rounding keeps calls nested."""
        body = dict(fields)
        for name, value in zip(("pid", "tid"), place):
            if value is not None:
                body[name] = value
        text = compact(body)
        if time is not None:
            start = self.clock.scaled(time)
            text = text[:-1] + ',"ts":' + self.clock.text(start)
            text += (',"dur":' + self.clock.text(self.clock.scaled(end) - start) if end is not None else "") + "}"
        self.stream.write(("" if self.first else ",\n") + text)
        self.first = False


def write(archive: Archive, target: Path, progress: ExportProgress | None = None) -> None:
    """Write ``archive`` as Chrome Trace Event JSON (gzip-compressed when the target's name
    ends with ``.gz``); ``progress`` hears of each location's events once written."""
    definitions = archive.definitions
    placement = _Placement(definitions)
    walker = _Walker(definitions, placement)
    locations = _Locations(archive)
    ids = _pair_messages(locations, walker)
    clock = _Clock(definitions.timer_resolution, definitions.clock_offset)
    compress = target.name.lower().endswith(".gz")
    with atomic_output(target) as temporary, open(temporary, "wb") as raw:
        binary = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if compress else raw
        with io.TextIOWrapper(binary, encoding="utf-8", newline="\n") as stream:
            stream.write('{"traceEvents":[\n')
            writer = _Writer(stream, clock)
            for event in placement.metadata:
                writer.event({k: v for k, v in event.items() if k not in ("pid", "tid")},
                             (event.get("pid"), event.get("tid")))
            for location in archive.locations:
                batch = locations.batch(location)
                _write_location(writer, walker, batch, location, placement.places[location], definitions, ids)
                if progress is not None:
                    progress(len(batch))
            stream.write("\n],\n")
            document = {k: v for k, v in placement.document.items() if k not in ("traceEvents", OWN)}
            unit = document.pop("displayTimeUnit", None)
            if unit not in ("ms", "ns"):
                unit = "ns" if definitions.timer_resolution > 10 ** 6 else "ms"
            for name, value in document.items():
                stream.write(f"{compact(name)}:{compact(value)},\n")
            own = {"timer_resolution": definitions.timer_resolution, "clock_offset": definitions.clock_offset}
            stream.write(f'"displayTimeUnit":"{unit}",\n"{OWN}":{compact(own)}}}\n')


def _write_location(writer: _Writer, walker: _Walker, batch: EventBatch, location: int, place: Key,
                    definitions: Definitions, ids: dict[tuple[int, int], int]) -> None:
    tokens = walker.tokens(batch)
    complete = _use_complete_events(tokens)
    for token, item in tokens:
        if token == POINT:
            writer.event(_flow(item, ids.get((location, item.index))), place, item.time)
        elif token == ENTER:
            region = definitions.regions[item.region]
            fields = {"ph": "X" if complete else "B", "name": region.name}
            if region.group:
                fields["cat"] = region.group
            fields.update(item.pre or {})
            writer.event(fields, place, item.start, item.end if complete else None)
        elif not complete:   # E repeats its B's name: speedscope and chrome-trace match by it
            name = definitions.regions[item.region].name
            writer.event({"ph": "E", "name": name, **(item.post or {})}, place, item.end)


def _flow(item: _Instant, flow: int | None) -> dict[str, Any]:
    """A paired message as a flow start (send) or end (receive) bound to its call."""
    if flow is None or item.message is None:
        return item.event
    event = {k: v for k, v in item.event.items() if k != "s"}
    event.update(name="message", id=flow)
    if item.message[0] in _SENDS:
        return dict(event, ph="s")
    return dict(event, ph="f", bp="e")
