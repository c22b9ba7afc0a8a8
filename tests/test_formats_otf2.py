"""Tests of the OTF2 importer and exporter (ccgformat/formats/otf2/).

The corpus traces go OTF2 -> .ccg (lossless) -> OTF2 and the reference tool ``otf2-print``
must print the same events and definitions for both; the importer's events are also
checked line by line against ``otf2-print`` of the original. A trace holding every OTF2
event record (written with the `_otf2` wrappers, not with the code under test) makes the
same round trip. Generated traces with every event kind go model -> OTF2 -> model.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings

import ccgformat
from ccgformat.errors import FormatError
from ccgformat.formats import detect, read
from ccgformat.model import Communicator, Definitions, Event, EventBatch, EventKind, Location, Metric, Region

from .corpus import corpus_path, require_module, require_tool
from .traces import traces

otf2 = require_module("otf2", "the otf2 package is not installed")
_otf2 = require_module("_otf2", "the otf2 package is not installed")

from ccgformat.formats.otf2.export import write_events  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS_TRACES = (
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2"),
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2-papi"),
    ("otf2", "TraceR", "examples", "stencil4d-otf", "traces-32"),
)
_REFERENCE = re.compile(r" <\d+>")
_EVENT_LINE = re.compile(r"^([A-Z0-9_]+) +(\d+) +(\d+) *(.*)$")


def _print(anchor: Path, *options: str) -> str:
    tool = require_tool("otf2-print")
    return subprocess.run([tool, *options, str(anchor)], check=True, capture_output=True, text=True).stdout


def _normalised(text: str) -> list[str]:
    """The printed lines with references dropped (``"MPI_Send" <12>`` -> ``"MPI_Send"``)."""
    return _REFERENCE.sub("", text).splitlines()


def _round_trip(source: Path, folder: Path) -> Path:
    """OTF2 -> .ccg -> OTF2; returns the new anchor file."""
    archive_path = folder / "trace.ccg"
    report = ccgformat.convert(source, archive_path)
    assert report.format == "otf2" and not report.repairs
    target = folder / "out.otf2"
    with ccgformat.open(archive_path) as archive:
        archive.export(target)
    return target / "traces.otf2"


# --------------------------------------------------------------------------- corpus

@pytest.fixture(scope="module", params=CORPUS_TRACES, ids=lambda parts: parts[-1])
def corpus_round_trip(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    source = corpus_path(*request.param)
    return source / "traces.otf2", _round_trip(source, tmp_path_factory.mktemp(request.param[-1]))


def test_corpus_round_trip_prints_the_same_events(corpus_round_trip: tuple[Path, Path]) -> None:
    original, copy = corpus_round_trip
    expected = _normalised(_print(original))
    assert len(expected) > 100
    assert _normalised(_print(copy)) == expected


def test_corpus_round_trip_keeps_the_definitions(corpus_round_trip: tuple[Path, Path]) -> None:
    original, copy = corpus_round_trip
    assert sorted(_normalised(_print(copy, "-G"))) == sorted(_normalised(_print(original, "-G")))
    # the anchor: all but the trace identifier (random) and the version (of the writing library)
    info = [sorted(line for line in _print(anchor, "-I").splitlines()
                   if not line.startswith(("Trace identifier", "Version"))) for anchor in (original, copy)]
    assert info[0] == info[1]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def _printed_events(anchor: Path) -> dict[int, list[tuple[str, int, str]]]:
    """(record, timestamp, fields) per location ref, from otf2-print."""
    events: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
    for line in _print(anchor).splitlines():
        match = _EVENT_LINE.match(line)
        if match and match.group(1) not in ("Event",):
            events[int(match.group(2))].append((match.group(1), int(match.group(3)), match.group(4)))
    return events


@pytest.mark.parametrize("parts", CORPUS_TRACES, ids=lambda parts: parts[-1])
def test_import_matches_otf2_print(parts: tuple[str, ...]) -> None:
    """Every imported event against the reference tool's line: record, time and fields."""
    assert assert_matches_otf2_print(corpus_path(*parts)) > 100


def assert_matches_otf2_print(source: Path) -> int:
    """Checks every event the importer reads from ``source`` against otf2-print's line for
    it (record, time and fields) and that no printed line is left; the events checked."""
    printed = _printed_events(source / "traces.otf2")
    definitions, streams = read(source)
    refs = definitions.extensions["otf2"]["locations"]
    checked = 0
    for location, batches in streams:
        lines = iter(printed[refs[location]])
        events = list(EventBatch.concat(list(batches)).rows())
        i = 0
        while i < len(events):
            event = events[i]
            kind = EventKind(event.kind)
            if kind == EventKind.GENERIC and definitions.strings[event.ref] == "otf2:attributes":
                i += 1
                continue
            name, time, fields = next(lines)
            assert time == event.time
            if kind in (EventKind.ENTER, EventKind.LEAVE):
                assert (name, fields) == (kind.name, f'Region: "{definitions.regions[event.ref].name}"'
                                          f' <{_region_ref(definitions, event.ref)}>')
            elif kind in (EventKind.SEND, EventKind.RECV, EventKind.IRECV, EventKind.ISEND):
                assert name == f"MPI_{kind.name}"
                rank = definitions.communicators[event.comm].members.index(event.ref)
                peer = "Receiver" if kind in (EventKind.SEND, EventKind.ISEND) else "Sender"
                assert fields.startswith(f"{peer}: {rank} (")
                assert f"Tag: {event.tag}, Length: {event.size}" in fields
                if kind == EventKind.IRECV:
                    assert fields.endswith(f"Request: {event.request}")
            elif kind == EventKind.IRECV_REQUEST:
                assert (name, fields) == ("MPI_IRECV_REQUEST", f"Request: {event.request}")
            elif kind == EventKind.COLL_BEGIN:
                assert name == "MPI_COLLECTIVE_BEGIN"
            elif kind == EventKind.COLL_END:
                assert name == "MPI_COLLECTIVE_END"
                assert f'Communicator: "{definitions.communicators[event.comm].name}"' in fields
                assert fields.endswith(f"Sent: {event.size}, Received: {event.recv_size}")
                assert ("Root: NONE" in fields) == (event.tag == -1)
            elif kind == EventKind.METRIC:
                values = [event.value]
                while i + 1 < len(events) and events[i + 1].kind == EventKind.METRIC and events[i + 1].time == time:
                    i += 1
                    values.append(events[i].value)
                assert name == "METRIC"
                assert [int(v) for v in re.findall(r"; U?INT64; (-?\d+)\)", fields)] == values
            else:
                assert kind == EventKind.GENERIC
                assert name == _snake(definitions.strings[event.ref].removeprefix("otf2:"))
            checked += 1
            i += 1
        assert next(lines, None) is None
    return checked


def _region_ref(definitions: Definitions, index: int) -> int:
    return definitions.extensions["otf2"]["regions"][index]


# --------------------------------------------------------------------------- every record

def _all_records_trace(folder: Path) -> Path:
    """An OTF2 archive with every event record (with attribute lists on every third one),
    written with the `_otf2` wrappers. Field values alternate 0 and 1, so point-to-point
    records name rank 0 (mapped) or rank 1 (outside the one-location communicators). At
    the end: a Metric whose value type differs from its member's, a Leave of a region that
    is not open and an Enter left open."""
    from ccgformat.formats.otf2.binding import load

    from otf2.enums import GroupType, Paradigm, Type

    records = load(str(folder)).records
    with otf2.writer.open(str(folder), timer_resolution=1000) as writer:
        d = writer.definitions
        location = d.location("thread", group=d.location_group("process", system_tree_parent=d.system_tree_node("n")))
        region = d.region("f")
        counter, real = d.attribute("A", type=Type.UINT32), d.attribute("B", type=Type.DOUBLE)
        metric = d.metric("m", value_type=Type.UINT64)
        d.group("L", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=[location])
        for name in ("c0", "c1"):
            d.comm(name, group=d.group(name, group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                       members=[location]))
        events = writer.event_writer_from_location(location)
        time = 10
        for i, (name, record) in enumerate(sorted(records.items())):
            attributes = None
            if i % 3 == 0:
                attributes = _otf2.AttributeList_New()
                _otf2.AttributeList_AddUint32(attributes, counter._ref, i)
                _otf2.AttributeList_AddDouble(attributes, real._ref, i + 0.5)
            write = getattr(_otf2, f"EvtWriter_{name}")
            if name == "Metric":
                value = _otf2.MetricValue()
                value.unsigned_int = 77
                write(events.handle, attributes, time, metric._ref, [Type.UINT64], [value])
            elif name == "ProgramBegin":
                write(events.handle, attributes, time, 0, [0, 0])
            elif name in ("Enter", "Leave"):
                write(events.handle, attributes, time, region._ref)
            else:
                write(events.handle, attributes, time, *[(i + j) % 2 for j in range(len(record.fields))])
            if attributes is not None:
                _otf2.AttributeList_Delete(attributes)
            location._number_of_events_written += 1
            time += 5
        value = _otf2.MetricValue()
        value.signed_int = -3
        _otf2.EvtWriter_Metric(events.handle, None, time, metric._ref, [Type.INT64], [value])
        _otf2.EvtWriter_Leave(events.handle, None, time + 1, region._ref)
        _otf2.EvtWriter_Enter(events.handle, None, time + 2, region._ref)
        location._number_of_events_written += 3
        writer._update_timestamps(time + 2)
    return folder


def test_every_record_survives_the_round_trip(tmp_path: Path) -> None:
    source = _all_records_trace(tmp_path / "source")
    copy = _round_trip(source, tmp_path)
    expected = _normalised(_print(source / "traces.otf2"))
    assert sum("ADDITIONAL ATTRIBUTES" in line for line in expected) >= 25
    assert len([line for line in expected if _EVENT_LINE.match(line)]) == 83 + 3   # every record once
    assert _normalised(_print(copy)) == expected


# --------------------------------------------------------------------------- generated traces

def _definitions() -> Definitions:
    """What `tests.traces.traces` refers to (refs 0..2, regions 0..3), with communicators
    whose ranks are not the location indexes and a string for every GENERIC reference."""
    return Definitions(
        regions=[Region(f"r{i}", "function", "user", "G" if i % 2 else "") for i in range(4)],
        locations=[Location(f"rank {i}") for i in range(3)],
        communicators=[Communicator("c0", (0, 1, 2)), Communicator("c1", (2, 0, 1)), Communicator("c2", (1, 2, 0))],
        metrics=[Metric("m0"), Metric("m1", "s", "absolute", "double"), Metric("m2", value_type="uint64")],
        strings=["kind", "x:other kind", '{"a":1}'])


def _resolved(events: list[Event], strings: list[str]) -> list[tuple]:
    """Events with GENERIC references replaced by the texts they name."""
    return [(e.time, e.kind, strings[e.ref], strings[e.value]) if e.kind == EventKind.GENERIC else tuple(e)
            for e in events]


@settings(max_examples=15, deadline=None)
@given(traces())
def test_generated_traces_round_trip(trace: dict[int, list[Event]]) -> None:
    definitions = _definitions()
    with tempfile.TemporaryDirectory(prefix="ccg-otf2-") as scratch:   # one per hypothesis example
        target = Path(scratch) / "t.otf2"
        write_events(definitions, lambda i: [EventBatch.from_events(trace[i])] if i in trace else [], target)
        read_definitions, streams = read(target)
        got = {location: list(EventBatch.concat(list(batches)).rows()) for location, batches in streams}
    for location, events in trace.items():
        assert _resolved(got[location], read_definitions.strings) == _resolved(events, definitions.strings)
    assert not any(got[location] for location in got if location not in trace)
    assert [r.name for r in read_definitions.regions] == [r.name for r in definitions.regions]
    assert [c.members for c in read_definitions.communicators] == [c.members for c in definitions.communicators]
    assert [(m.name, m.unit, m.mode, m.value_type) for m in read_definitions.metrics] == \
        [(m.name, m.unit, m.mode, m.value_type) for m in definitions.metrics]


def test_foreign_archive_exports_readable_otf2(tmp_path: Path) -> None:
    """An archive not from OTF2 (synthetic, with markers and generic records) through
    Archive.export: otf2-print accepts it and the events come back."""
    definitions = _definitions()
    events = {0: [Event(5, EventKind.ENTER, ref=1), Event(6, EventKind.MARKER, ref=-2, value=7),
                  Event(7, EventKind.GENERIC, ref=1, value=2), Event(8, EventKind.SEND, ref=2, comm=1, tag=3, size=9),
                  Event(9, EventKind.COLL_END, ref=11, comm=2, tag=-1, size=3, recv_size=4),
                  Event(10, EventKind.METRIC, ref=1, value=-5), Event(12, EventKind.LEAVE, ref=1)],
              2: [Event(3, EventKind.COLL_BEGIN), Event(6, EventKind.IRECV, ref=0, comm=0, tag=1, request=-1, size=1)]}
    archive_path = tmp_path / "a.ccg"
    ccgformat.write_trace(archive_path, definitions, ((i, [EventBatch.from_events(e)]) for i, e in events.items()))
    with ccgformat.open(archive_path) as archive:
        archive.export(tmp_path / "b.otf2")
    printed = _print(tmp_path / "b.otf2" / "traces.otf2")
    assert re.search(r'^PARAMETER_INT64 +0 +6  Parameter: "MARKER -2" <\d+>, Value: 7$', printed, re.M)
    assert re.search(r'^PARAMETER_STRING +0 +7  Parameter: "GENERIC x:other kind" <\d+>, Value: "\{"a":1\}"', printed,
                     re.M)
    assert "Operation: ALLREDUCE" in printed and "Root: NONE" in printed
    read_definitions, streams = read(tmp_path / "b.otf2")
    got = {location: list(EventBatch.concat(list(batches)).rows()) for location, batches in streams}
    for location, expected in events.items():
        assert _resolved(got[location], read_definitions.strings) == _resolved(expected, definitions.strings)


def test_synth_otf2_matches_the_synthetic_events(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import synth

    out = tmp_path / "synthetic"
    assert synth.main([str(out), "--otf2", "--locations", "3", "--events-per-location", "400",
                       "--jitter", "0.3", "--seed", "5"]) == 0
    assert (out / "traces.otf2").is_file() and (out / "traces").is_dir()
    report = ccgformat.convert(out, tmp_path / "s.ccg")
    assert report.format == "otf2" and report.events == 3 * synth.event_count(400)
    _, generate = synth.synthesize(3, 400, jitter=0.3, seed=5)
    with ccgformat.open(tmp_path / "s.ccg") as archive:
        for location in range(3):
            assert EventBatch.concat(list(archive.location(location).events())).equals(
                EventBatch.concat(list(generate(location))))


@pytest.mark.parametrize("event, problem", [
    (Event(5, EventKind.SEND, ref=1, comm=0, tag=1 << 40, size=1), "SEND event does not fit OTF2"),
    (Event(-5, EventKind.ENTER, ref=0), "ENTER event does not fit OTF2"),
    (Event(5, EventKind.COLL_END, ref=300, comm=0, tag=0), "COLL_END event does not fit OTF2"),
])
def test_export_rejects_values_otf2_cannot_hold(tmp_path: Path, event: Event, problem: str) -> None:
    events = [event] if event.kind != EventKind.ENTER else [event, Event(6, EventKind.LEAVE, ref=0)]
    target = tmp_path / "t.otf2"
    with pytest.raises(FormatError, match=problem) as caught:
        write_events(_definitions(), lambda i: [EventBatch.from_events(events)] if i == 0 else [], target)
    assert caught.value.path == str(target) and not target.exists()
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- bad input and detection

@pytest.fixture()
def ping_pong(tmp_path: Path) -> Path:
    """A writable copy of the small corpus trace."""
    folder = tmp_path / "ping-pong"
    shutil.copytree(corpus_path(*CORPUS_TRACES[0]), folder)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def _truncate(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


def _garble(path: Path, at: int, count: int) -> None:
    data = bytearray(path.read_bytes())
    data[at:at + count] = b"\xff" * count
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, named", [
    (lambda f: _truncate(f / "traces.otf2", 20), "traces.otf2"),
    (lambda f: _garble(f / "traces.otf2", 8, 40), "traces.otf2"),
    (lambda f: _truncate(f / "traces.def", 3000), "traces.def"),
    (lambda f: _garble(f / "traces.def", 100, 50), "traces.def"),
    (lambda f: _truncate(f / "traces" / "0.evt", 500), "0.evt"),
    (lambda f: _garble(f / "traces" / "0.evt", 40, 16), "0.evt"),
    (lambda f: _truncate(f / "traces" / "1.def", 10), "1.def"),
    (lambda f: (f / "traces" / "1.evt").unlink(), "1.evt"),
], ids=["anchor-truncated", "anchor-garbled", "definitions-truncated", "definitions-garbled",
        "events-truncated", "events-garbled", "local-definitions-truncated", "events-missing"])
def test_damaged_archives_raise_format_error_naming_the_file(ping_pong: Path, damage, named: str) -> None:
    damage(ping_pong)
    with pytest.raises(FormatError) as caught:
        definitions, streams = read(ping_pong)
        for _, batches in streams:
            list(batches)
    assert caught.value.path is not None and Path(caught.value.path).name == named


_EVERY_CUT = """
import sys
from pathlib import Path
from ccgformat.errors import FormatError
from ccgformat.formats import read
local = Path(sys.argv[1]) / "traces" / "1.def"
whole = local.read_bytes()
for size in range(len(whole)):
    local.write_bytes(whole[:size])
    try:
        definitions, streams = read(Path(sys.argv[1]))
        for _, batches in streams:
            list(batches)
        print("read", size)
    except FormatError as error:
        print("FormatError", size, Path(error.path).name)
"""


@pytest.mark.parametrize("backend", ["python", "native"])
def test_every_cut_of_a_local_definition_file_is_a_format_error(ping_pong: Path, backend: str) -> None:
    """The library reads a local definition file cut short into memory it never filled,
    and kept reading for ever when the cut fell inside the chunk header: every cut of
    ping-pong's 1.def (147 bytes, with records) must fail at once, naming the file, but
    the one that leaves out only the last byte (END_OF_BUFFER, after END_OF_FILE), which
    reads. A child process, so that a hang fails the test by its timeout instead of
    stopping the suite."""
    size = (ping_pong / "traces" / "1.def").stat().st_size
    done = subprocess.run([sys.executable, "-c", _EVERY_CUT, str(ping_pong)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CCGFORMAT_BACKEND": backend})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"FormatError {cut} 1.def" for cut in range(size - 1)] + [f"read {size - 1}"]


def test_folder_without_anchor(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "notes.otf2").write_text("not an anchor\n")
    with pytest.raises(FormatError, match="no OTF2 anchor") as caught:
        read(tmp_path, "otf2")
    assert caught.value.path == str(tmp_path)


def test_detection_from_content(ping_pong: Path, tmp_path: Path) -> None:
    assert detect(ping_pong) == "otf2"
    assert detect(ping_pong / "traces.otf2") == "otf2"
    renamed = ping_pong / "anchor.bin"
    shutil.copy(ping_pong / "traces.otf2", renamed)
    assert detect(renamed) == "otf2"                 # content, not the extension
    impostor = tmp_path / "impostor.otf2"
    impostor.write_bytes(b"\x03BOTF3\x00" + bytes(100))
    with pytest.raises(FormatError):
        detect(impostor)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FormatError):
        detect(empty)


def test_an_error_inside_a_record_callback_is_a_format_error_naming_the_file(tmp_path: Path) -> None:
    """A Metric record of a metric the definitions lack: the callback's exception must not
    cross into the C library, and reaches the caller as the file's FormatError."""
    from otf2.enums import Type

    with otf2.writer.open(str(tmp_path / "trace"), timer_resolution=1000) as writer:
        d = writer.definitions
        location = d.location("thread", group=d.location_group("process", system_tree_parent=d.system_tree_node("n")))
        events = writer.event_writer_from_location(location)
        value = _otf2.MetricValue()
        value.unsigned_int = 1
        _otf2.EvtWriter_Metric(events.handle, None, 10, 99, [Type.UINT64], [value])
        location._number_of_events_written += 1
        writer._update_timestamps(10)
    with pytest.raises(FormatError, match="metric 99 is not defined") as caught:
        _, streams = read(tmp_path / "trace")
        for _, batches in streams:
            list(batches)
    assert caught.value.path is not None and Path(caught.value.path).name == "0.evt"
