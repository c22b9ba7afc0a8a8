"""Chrome Trace Event JSON: import of the corpus file, export (structure checked the way a
viewer needs it) and re-import, lossless round trips of foreign files, and bad input."""

from __future__ import annotations

import gzip
import json
import math
import struct
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive import write_trace
from ccgformat.errors import FormatError
from ccgformat.formats import chrome, detect, read
from ccgformat.model import Definitions, Event, EventBatch, EventKind, Location, Metric, Region, SystemTreeNode

from .corpus import corpus_path
from .traces import traces, validate

ROCPROF = ("chrome-json", "otf2_cli_chrome_trace_converter", "tests", "data",
           "memcpy-host-device.rocprofiler.json.gz")
K = EventKind


# --------------------------------------------------------------------------- helpers

def load_json(path: Path) -> Any:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data, parse_float=Decimal)


def trace_events(document: Any) -> list[dict[str, Any]]:
    return document["traceEvents"] if isinstance(document, dict) else document


def number(value: Any) -> Decimal:
    assert not isinstance(value, bool)
    return Decimal(value) if isinstance(value, (int, str)) else value


def check_structure(document: Any) -> None:
    """What chrome://tracing, Perfetto and speedscope need: required keys per phase, B/E
    balanced per thread with each E named as its B, X events nested per thread, every flow
    start paired with one flow end."""
    assert isinstance(document, dict) and isinstance(document["traceEvents"], list)
    assert document.get("displayTimeUnit") in ("ms", "ns")
    required = {"X": ("name", "ts", "dur", "pid", "tid"), "B": ("name", "ts", "pid", "tid"),
                "E": ("name", "ts", "pid", "tid"), "i": ("name", "ts", "pid", "tid"), "C": ("name", "ts", "pid", "args"),
                "s": ("name", "cat", "id", "ts", "pid", "tid"), "t": ("name", "cat", "id", "ts", "pid", "tid"),
                "f": ("name", "cat", "id", "ts", "pid", "tid"),
                "M": ("name", "pid", "args")}
    open_calls: dict[tuple, list] = defaultdict(list)
    last_be: dict[tuple, Decimal] = {}
    complete: dict[tuple, list] = defaultdict(list)
    flows: dict[tuple, Counter] = defaultdict(Counter)
    for event in document["traceEvents"]:
        phase = event["ph"]
        for key in required[phase]:
            assert key in event, (phase, key, event)
        assert all(type(event[k]) is int for k in ("pid", "tid") if k in event), event
        if "ts" in event:
            assert isinstance(event["ts"], (int, Decimal))
        thread = (event["pid"], event.get("tid"))
        if phase in "BE":
            assert event["ts"] >= last_be.get(thread, event["ts"])
            last_be[thread] = event["ts"]
            if phase == "B":
                open_calls[thread].append(event)
            else:
                assert open_calls[thread], f"E without B on {thread}"
                begin = open_calls[thread].pop()
                assert event["name"] == begin["name"], (begin, event)
        elif phase == "X":
            assert event["dur"] >= 0
            complete[thread].append((event["ts"], event["ts"] + event["dur"]))
        elif phase == "C":
            assert all(isinstance(v, (int, Decimal)) or v in ("NaN", "Infinity", "-Infinity")
                       for v in event["args"].values())
        elif phase in "stf":
            flows[(event["cat"], event["id"])][phase] += 1
        elif phase == "M":
            assert event["name"] in ("process_name", "process_sort_index", "thread_name", "thread_sort_index")
    assert not any(open_calls.values()), "B without E"
    for thread, spans in complete.items():
        ends: list[Decimal] = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while ends and ends[-1] <= start and end > ends[-1]:
                ends.pop()
            assert not ends or end <= ends[-1], f"X events overlap without nesting on {thread}"
            ends.append(end)
    for (category, _), phases in flows.items():
        if category == chrome.OWN:      # messages: one start and one end bound to the enclosing call
            assert phases == Counter({"s": 1, "f": 1}), phases
        else:                           # copied flows: a start and at least one step or end
            assert phases["s"] == 1 and phases["t"] + phases["f"] >= 1, phases
    for event in document["traceEvents"]:
        if event["ph"] == "f" and event["cat"] == chrome.OWN:
            assert event["bp"] == "e"


def threads(document: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(pid, tid) of each thread name."""
    return {e["args"]["name"]: (e["pid"], e["tid"]) for e in document["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def imported(path: Path) -> tuple[Definitions, dict[int, EventBatch]]:
    definitions, streams = read(path)
    events = {}
    for location, batches in streams:
        batches = list(batches)
        validate(location, batches, definitions)
        events[location] = EventBatch.concat(batches)
    return definitions, events


def calls(definitions: Definitions, events: dict[int, EventBatch]) -> Counter:
    """(region name, pid, tid, start, duration) of every call, from the model's events."""
    places = definitions.extensions["chrome"]["locations"]
    found: Counter = Counter()
    for location, batch in events.items():
        stack = []
        for event in batch.rows():
            if event.kind == K.ENTER:
                stack.append(event)
            elif event.kind == K.LEAVE:
                enter = stack.pop()
                pid, tid = places[location]
                found[(definitions.regions[enter.ref].name, pid, tid, enter.time, event.time - enter.time)] += 1
    return found


def write_archive(tmp_path: Path, definitions: Definitions, trace: dict[int, list]) -> ccgformat.Archive:
    path = tmp_path / "trace.ccg"
    write_trace(path, definitions, [(loc, [EventBatch.from_events(evs)]) for loc, evs in sorted(trace.items())])
    return ccgformat.open(path)


# --------------------------------------------------------------------------- corpus

def test_corpus_file_imports_with_the_same_calls():
    path = corpus_path(*ROCPROF)
    assert detect(path) == "chrome"
    definitions, events = imported(path)
    assert definitions.timer_resolution == 10 ** 6        # no fractional microseconds in the file
    raw = trace_events(load_json(path))
    expected = Counter((e["name"], int(e["pid"]), int(e["tid"]), int(number(e["ts"])), int(number(e["dur"])))
                       for e in raw if e.get("ph") == "X")
    assert sum(expected.values()) == 2636
    assert calls(definitions, events) == expected
    names = {node.name for node in definitions.system_tree}
    assert names == {e["args"]["name"] for e in raw if e.get("ph") == "M"}
    # two flows s -> t: one message each, from the HIP thread to the GPU
    sends = [(loc, e) for loc, b in events.items() for e in b.rows() if e.kind == K.SEND]
    receives = [(loc, e) for loc, b in events.items() for e in b.rows() if e.kind == K.RECV]
    places = definitions.extensions["chrome"]["locations"]
    assert sorted((places[loc], places[e.ref], e.time) for loc, e in sends) == [
        ([2, 209770], [6, 1], 2678276906215), ([2, 209773], [7, 1], 2678276915837)]
    assert sorted((places[loc], places[e.ref], e.time) for loc, e in receives) == [
        ([6, 1], [2, 209770], 2678276906222), ([7, 1], [2, 209773], 2678276915864)]


def test_corpus_file_exports_back_to_the_same_events(tmp_path):
    path = corpus_path(*ROCPROF)
    report = ccgformat.convert(path, tmp_path / "a.ccg")
    assert report.format == "chrome"
    archive = ccgformat.open(tmp_path / "a.ccg")
    archive.export(tmp_path / "b.json.gz")
    assert (tmp_path / "b.json.gz").read_bytes()[:2] == b"\x1f\x8b"
    exported = load_json(tmp_path / "b.json.gz")
    check_structure(exported)
    assert normalised(trace_events(load_json(path))) == normalised(exported["traceEvents"])
    assert exported["otherData"] == load_json(path)["otherData"]


def canonical(value: Any) -> Any:
    """Numbers as normalised decimal text (JSON does not tell 3 from 3.0)."""
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return str(Decimal(str(value)).normalize())
    return value


def normalised(events: list[dict[str, Any]]) -> Counter:
    """Events as comparable text: pid/tid as integers (null as absent), ts/dur as exact
    decimals (they may be given as strings), every number canonical; empty objects dropped."""
    out: Counter = Counter()
    for event in events:
        if not event:
            continue
        event = dict(event)
        for key in ("pid", "tid"):
            if isinstance(event.get(key), str) and event[key].lstrip("-").isdigit():
                event[key] = int(event[key])
            elif key in event and event[key] is None:
                del event[key]
        for key in ("ts", "dur"):
            if key in event:
                event[key] = number(event[key])
        out[json.dumps(canonical(event), sort_keys=True)] += 1
    return out


# --------------------------------------------------------------------------- foreign files

FOREIGN = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "app"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}},
    {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 3}},
    {"ph": "X", "name": "main", "cat": "app", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"n": 1}},
    {"ph": "X", "name": "inner", "pid": 1, "tid": 1, "ts": "10.5", "dur": "20.25"},
    {"ph": "X", "name": "skewed", "pid": 1, "tid": 1, "ts": 90, "dur": 30, "tts": 5},
    {"ph": "B", "name": "loop", "pid": 1, "tid": 2, "ts": 5, "args": {"i": 0}},
    {"ph": "B", "name": "body", "pid": 1, "tid": 2, "ts": 5},
    {"ph": "i", "name": "tick", "s": "t", "pid": 1, "tid": 2, "ts": 5},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 7},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 9, "args": {"result": "ok"}},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 9.5},
    {"ph": "B", "name": "never-ends", "pid": 1, "tid": 2, "ts": 50},
    {"ph": "C", "name": "memory", "pid": 1, "ts": 1, "args": {"heap": 10, "stack": 2.5}},
    {"ph": "C", "name": "memory", "pid": 1, "ts": 2, "id": 7, "args": {"heap": 12, "stack": 3}},
    {"ph": "C", "name": "odd", "pid": 1, "ts": 3, "args": {"text": "not a number"}},
    {"ph": "s", "name": "req", "cat": "net", "id": "0x1", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "t", "name": "req", "cat": "net", "id": "0x1", "pid": 1, "tid": 2, "ts": 13},
    {"ph": "f", "name": "req", "cat": "net", "id": "0x1", "bp": "e", "pid": 1, "tid": 1, "ts": 14},
    {"ph": "f", "name": "lonely", "cat": "net", "id": 9, "pid": 1, "tid": 1, "ts": 15},
    {"ph": "b", "name": "async", "cat": "io", "id": 4, "pid": 1, "tid": 1, "ts": 20},
    {"ph": "e", "name": "async", "cat": "io", "id": 4, "pid": 1, "tid": 1, "ts": 30},
    {"ph": "I", "name": "global", "s": "g", "pid": 1, "tid": 1, "ts": 31},
    {"ph": "c", "name": "clock_sync", "ts": 32, "args": {"sync_id": "a"}},
    {"ph": "X", "name": "odd category", "cat": ["a", "b"], "pid": 1, "tid": 3, "ts": 1, "dur": 1},
    {"ph": "i", "name": 7, "pid": 1, "tid": 3, "ts": 1.25},
]


def test_every_phase_survives_import_and_export(tmp_path):
    source = tmp_path / "foreign.json"
    source.write_text(json.dumps({"traceEvents": FOREIGN, "otherData": {"tool": "x"}, "displayTimeUnit": "ns"}))
    definitions, events = imported(source)
    assert definitions.timer_resolution == 10 ** 8      # "20.25" needs two decimals
    assert calls(definitions, events)[("inner", 1, 1, 1050, 2025)] == 1
    # "skewed" (90..120) overlaps "main" (0..100) without nesting: an extra location
    places = definitions.extensions["chrome"]["locations"]
    assert places.count([1, 1]) == 2
    assert calls(definitions, events)[("skewed", 1, 1, 9000, 3000)] == 1
    ccgformat.convert(source, tmp_path / "f.ccg")
    ccgformat.open(tmp_path / "f.ccg").export(tmp_path / "back.json")
    back = load_json(tmp_path / "back.json")
    assert back["otherData"] == {"tool": "x"} and back["displayTimeUnit"] == "ns"
    # an E that closes a B comes back named as that B (viewers pair them by name)
    named = {7: "body", 9: "loop"}
    expected = [dict(e, name=named[e["ts"]]) if e["ph"] == "E" and e["ts"] in named else e for e in FOREIGN]
    assert normalised(back["traceEvents"]) == normalised(expected)
    # and again: the export of the re-import is the same file
    ccgformat.convert(tmp_path / "back.json", tmp_path / "g.ccg")
    ccgformat.open(tmp_path / "g.ccg").export(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == (tmp_path / "back.json").read_text()


def test_array_form_with_missing_bracket_and_object_form(tmp_path):
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
              {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1.5, "dur": 0.5}]
    texts = {"array.json": json.dumps(events), "open.json": json.dumps(events)[:-1] + ",\n",
             "object.json": json.dumps({"displayTimeUnit": "ms", "traceEvents": events})}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        assert detect(tmp_path / name) == "chrome"
        definitions, loaded = imported(tmp_path / name)
        assert calls(definitions, loaded) == Counter({("a", 1, 1, 10, 20): 1, ("b", 1, 1, 15, 5): 1}), name


def test_equal_begin_and_end_times_nest_by_containment(tmp_path):
    """Same (ts, dur): the earlier in the file is the parent; a call starting where another
    ends is its sibling, an instant at the end of a call is inside it."""
    events = [{"ph": "X", "name": "child", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
              {"ph": "X", "name": "parent", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
              {"ph": "X", "name": "next", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
              {"ph": "i", "name": "end", "pid": 1, "tid": 1, "ts": 6}]
    (tmp_path / "t.json").write_text(json.dumps(events))
    definitions, loaded = imported(tmp_path / "t.json")
    rows = [(e.time, K(e.kind).name, definitions.regions[e.ref].name if e.kind <= K.LEAVE else "")
            for e in loaded[0].rows()]
    assert rows == [(0, "ENTER", "child"), (0, "ENTER", "parent"), (5, "LEAVE", "parent"), (5, "LEAVE", "child"),
                    (5, "ENTER", "next"), (6, "GENERIC", ""), (6, "LEAVE", "next")]


# --------------------------------------------------------------------------- synthetic archives

STRINGS = ["alpha", '{"x":1}', "gamma"]


def synthetic_definitions(resolution: int, offset: int) -> Definitions:
    return Definitions(
        regions=[Region("main", group="app"), Region("MPI_Send", "function", "mpi", "MPI"), Region("f"),
                 Region("f", group="other")],
        system_tree=[SystemTreeNode("cluster", "machine"), SystemTreeNode("node0", "node", 0),
                     SystemTreeNode("node1", "node", 0)],
        locations=[Location("rank 0", "process", 1), Location("thread a", "thread", 2),
                   Location("thread b", "thread", 2)],
        metrics=[Metric("m0"), Metric("temperature", "C", "absolute", "double"),
                 Metric("bytes", "B", value_type="uint64")],
        strings=list(STRINGS), timer_resolution=resolution, clock_offset=offset)


def described(definitions: Definitions, batch: EventBatch) -> list[tuple]:
    """Events with names instead of table indexes (those differ after a re-import)."""
    out = []
    for event in batch.rows():
        kind = K(event.kind)
        if kind in (K.ENTER, K.LEAVE):
            region = definitions.regions[event.ref]
            out.append((event.time, kind, region.name, region.group))
        elif kind == K.METRIC:
            metric = definitions.metrics[event.ref]
            value: Any = event.value
            if metric.value_type == "double":
                value = struct.unpack("<d", struct.pack("<q", event.value))[0]
                value = "nan" if math.isnan(value) else value
            else:
                value %= 1 << 64
            out.append((event.time, kind, metric.name, value))
        elif kind == K.GENERIC:
            out.append((event.time, kind, definitions.strings[event.ref], definitions.strings[event.value]))
        else:
            out.append(tuple(event))
    return out


@settings(max_examples=25, deadline=None)
@given(trace=traces(), resolution=st.sampled_from([10 ** 9, 10 ** 6, 1 << 20, 3 * 10 ** 8]),
       offset=st.integers(-10 ** 12, 10 ** 12), compressed=st.booleans())
def test_synthetic_archives_export_and_reimport(tmp_path_factory, trace, resolution, offset, compressed):
    tmp_path = tmp_path_factory.mktemp("chrome")
    definitions = synthetic_definitions(resolution, offset)
    archive = write_archive(tmp_path, definitions, trace)
    target = tmp_path / ("out.json.gz" if compressed else "out.json")
    archive.export(target)
    document = load_json(target)
    check_structure(document)
    assert detect(target) == "chrome"
    again, events = imported(target)
    assert again.timer_resolution == resolution and again.clock_offset == offset
    assert [loc.name for loc in again.locations] == [loc.name for loc in definitions.locations]
    for location in archive.locations:
        original = EventBatch.concat(list(archive.location(location).events()))
        assert described(again, events[location]) == described(definitions, original)
    sends = sum(1 for b in events.values() for e in b.rows() if e.kind in (K.SEND, K.ISEND))
    flows = sum(1 for e in document["traceEvents"] if e["ph"] == "s")
    assert flows <= sends


def test_export_uses_begin_end_where_complete_events_are_ambiguous(tmp_path):
    """A zero-length call at its parent's end would re-import as a sibling from X events."""
    definitions = synthetic_definitions(10 ** 6, 0)
    trace = {0: [(0, K.ENTER, 0), (5, K.ENTER, 2), (5, K.LEAVE, 2), (5, K.LEAVE, 0), (5, K.ENTER, 3),
                 (6, K.LEAVE, 3)],
             1: [(0, K.ENTER, 0), (2, K.ENTER, 2), (3, K.LEAVE, 2), (5, K.LEAVE, 0)]}
    archive = write_archive(tmp_path, definitions, trace)
    archive.export(tmp_path / "t.json")
    document = load_json(tmp_path / "t.json")
    check_structure(document)
    phases = Counter((e["ph"], e["tid"]) for e in document["traceEvents"] if e["ph"] in "XBE")
    places = threads(document)
    assert phases == Counter({("B", places["rank 0"][1]): 3, ("E", places["rank 0"][1]): 3,
                              ("X", places["thread a"][1]): 2})
    again, events = imported(tmp_path / "t.json")
    for location in (0, 1):
        original = EventBatch.concat(list(archive.location(location).events()))
        assert described(again, events[location]) == described(definitions, original)


@settings(max_examples=25, deadline=None)
@given(trace=traces(), resolution=st.sampled_from([10 ** 6, 10 ** 9]))
def test_begin_end_export_names_each_end_and_nests_per_thread(tmp_path_factory, trace, resolution):
    """Written as B/E, each thread's events are its location's calls in order, and each E
    carries the name of the B it closes (speedscope pairs them by name; chrome-trace drops
    events without one)."""
    for events in trace.values():   # a zero-length call at its parent's end, then a sibling: X cannot say that
        t = events[-1].time
        events += [Event(t + 1, K.ENTER, 0), Event(t + 2, K.ENTER, 1), Event(t + 2, K.LEAVE, 1),
                   Event(t + 2, K.LEAVE, 0), Event(t + 2, K.ENTER, 2), Event(t + 3, K.LEAVE, 2)]
    definitions = synthetic_definitions(resolution, 0)
    folder = tmp_path_factory.mktemp("chrome")
    archive = write_archive(folder, definitions, trace)
    target = folder / "out.json"
    archive.export(target)
    document = load_json(target)
    places = threads(document)
    written: dict[tuple, list] = defaultdict(list)
    for event in document["traceEvents"]:
        if event["ph"] in "BEX":
            written[(event["pid"], event["tid"])].append((event["ph"], event["name"], event["ts"]))
    for location in archive.locations:
        expected = [("B" if e.kind == K.ENTER else "E", definitions.regions[e.ref].name,
                     Decimal(e.time) * 10 ** 6 / resolution)
                    for b in archive.location(location).events() for e in b.rows() if e.kind in (K.ENTER, K.LEAVE)]
        events = written[places[definitions.locations[location].name]]
        assert events == expected
        stack = []
        for phase, name, _ in events:
            if phase == "B":
                stack.append(name)
            else:
                assert stack.pop() == name
        assert not stack


def test_end_named_unlike_its_begin_keeps_its_name(tmp_path):
    source = tmp_path / "t.json"
    source.write_text(json.dumps([{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
                                  {"ph": "E", "name": "b", "pid": 1, "tid": 1, "ts": 2}]))
    ccgformat.convert(source, tmp_path / "t.ccg")
    ccgformat.open(tmp_path / "t.ccg").export(tmp_path / "back.json")
    ends = [e for e in load_json(tmp_path / "back.json")["traceEvents"] if e["ph"] == "E"]
    assert [(e["name"], e["ts"]) for e in ends] == [("b", 2)]


def test_messages_pair_in_fifo_order(tmp_path):
    definitions = synthetic_definitions(10 ** 6, 0)
    trace = {0: [(1, K.SEND, 1, 0, 5), (2, K.SEND, 1, 0, 5), (3, K.SEND, 1, 0, 6), (4, K.SEND, 2, 0, 5)],
             1: [(5, K.RECV, 0, 0, 6), (6, K.RECV, 0, 0, 5), (7, K.RECV, 0, 0, 5)]}
    archive = write_archive(tmp_path, definitions, trace)
    archive.export(tmp_path / "m.json")
    document = load_json(tmp_path / "m.json")
    check_structure(document)
    starts = {e["id"]: e["ts"] for e in document["traceEvents"] if e["ph"] == "s"}
    ends = {e["ts"]: e["id"] for e in document["traceEvents"] if e["ph"] == "f"}
    assert {ts: starts[flow] for ts, flow in ends.items()} == {5: 3, 6: 1, 7: 2}
    unpaired = [e for e in document["traceEvents"] if e["ph"] == "i"]
    assert [(e["ts"], e["args"]["peer"]) for e in unpaired] == [(4, list(threads(document)["thread b"]))]


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("text, reason, line", [
    ('[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n {"ph": }]', "invalid JSON", 2),
    ('[{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n {"name": "a", "ts": 3}]', "no 'ph'", 2),
    ('[\n\n{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": "soon"}]', "bad 'ts'", 3),
    ('[{"ph": "i", "name": "a", "pid": 1, "tid": 1}]', "bad 'ts'", 1),
    ('[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -1}]', "negative 'dur'", 1),
    ('[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1}]', "bad 'dur'", 1),
    ('[{"ph": "X", "name": "a", "pid": 1.5, "tid": 1, "ts": 1, "dur": 1}]', "bad pid/tid", 1),
    ('[{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": NaN}]', "invalid JSON", 1),
    ('[{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1e30}]', "64-bit", 1),
    ('[{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 0.0000000000001}]', "fractional digits", None),
    ('[1, 2]', "not a JSON object", 1),
    ('[{"ph": "X", "name": 5, "pid": 1, "tid": 1, "ts": 1, "dur": 1}]', "'name' is not a string", 1),
    ('{"traceEvents": [{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1}]', "invalid JSON", 1),
    ('{"otherData": {}, "ph": 1}', "no 'traceEvents'", 1),
    ('[{"ph": "i", "cat": "ccgformat", "name": "a", "pid": 1, "tid": 1, "ts": 1, "args": {"kind": "NOPE"}}]',
     "unknown ccgformat kind", 1),
    ('[{"ph": "i", "cat": "ccgformat", "name": "a", "pid": 1, "tid": 1, "ts": 1,'
     ' "args": {"kind": "SEND", "peer": [9, 9], "comm": 0, "tag": 0, "size": 0}}]', "not a thread", 1),
])
def test_bad_input_raises_format_error(tmp_path, text, reason, line):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(FormatError, match=reason) as caught:
        _, streams = chrome.read(path)
        for _, batches in streams:
            list(batches)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    if line is not None:
        assert caught.value.offset is not None and 0 <= caught.value.offset <= len(text.encode())


def test_invalid_json_reports_its_byte_offset(tmp_path):
    path = tmp_path / "bad.json"
    text = '[{"ph": "i", "name": "é", "pid": 1, "tid": 1, "ts": 1},\n {"ph": "i", "ts": 1,, }]'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        chrome.read(path)
    assert caught.value.line == 2
    assert caught.value.offset == text.encode("utf-8").index(b",,") + 1


def test_damaged_gzip_and_bad_text(tmp_path):
    good = gzip.compress(b'[{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1}]')
    (tmp_path / "cut.json.gz").write_bytes(good[:-6])
    with pytest.raises(FormatError, match="gzip"):
        chrome.read(tmp_path / "cut.json.gz")
    latin = b'[{"ph": "i", "name": "\xe9", "ts": 1}]'
    (tmp_path / "latin.json").write_bytes(latin)
    with pytest.raises(FormatError, match="UTF-8") as caught:
        chrome.read(tmp_path / "latin.json")
    assert caught.value.offset == latin.index(b"\xe9")


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(0, 2000), junk=st.sampled_from(["", "{", "}", "]", ",", '"', "1e999", "null", "\\u00", "\x00"]),
       where=st.integers(0, 2000))
def test_damaged_text_raises_only_format_error(tmp_path_factory, cut, junk, where):
    text = json.dumps({"traceEvents": FOREIGN})
    text = text[:where] + junk + text[where:]
    path = tmp_path_factory.mktemp("damaged") / "t.json"
    path.write_text(text[:len(text) - cut])
    try:
        definitions, streams = chrome.read(path)
        for location, batches in streams:
            validate(location, list(batches), definitions)
    except FormatError as error:
        assert error.path == str(path)


@pytest.mark.parametrize("head, expected", [
    (b'[{"ph":"X"}', True), (b'\n { "traceEvents": [', True), (gzip.compress(b'{"traceEvents":[]}', mtime=0), True),
    (b'{"name": "x"}', False), (b'["a", "b"]', False), (b"PK\x03\x04", False), (b"", False),
    (gzip.compress(b"plain text", mtime=0), False), (b"\x1f\x8b\x08garbage", False),
])
def test_sniff(head, expected):
    assert chrome.sniff(Path("x"), head) is expected
