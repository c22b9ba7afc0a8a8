"""The native OTF2 event reader (ccgformat/_native/otf2read.c, formats/otf2/native.py)
against the Python reference: the same definitions and, per location, the same events
(batches concatenated), on the corpus, on synthetic traces, on generated traces with every
event kind, with the fallback to the reference for locations the native reader does not
map, without the library, and on damaged files."""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings

from ccgformat import backends
from ccgformat.errors import FormatError
from ccgformat.formats import read
from ccgformat.model import Definitions, Event, EventBatch, EventKind

from .corpus import corpus_path, require_module
from .traces import traces

require_module("otf2", "the otf2 package is not installed")
try:
    from ccgformat._native import load
    load()
except ImportError:
    pytest.skip("the native core is not built", allow_module_level=True)

from ccgformat.formats.otf2 import native  # noqa: E402
from ccgformat.formats.otf2.export import write_events  # noqa: E402

from .test_formats_otf2 import (CORPUS_TRACES, _all_records_trace, _definitions, _garble,  # noqa: E402
                                _truncate, ping_pong)

ROOT = Path(__file__).resolve().parent.parent
Result = tuple[Definitions, dict[int, EventBatch]]

__all__ = ["ping_pong"]     # a fixture of test_formats_otf2, used here too


@pytest.fixture()
def paths(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts how many locations the native reader maps and how many it leaves to Python."""
    counts = {"native": 0, "python": 0}
    location = native.NativeEvents.location

    def counted(self: native.NativeEvents, ref: int, path: str, records: int | None) -> Any:
        result = location(self, ref, path, records)
        counts["native" if result is not None else "python"] += 1
        return result
    monkeypatch.setattr(native.NativeEvents, "location", counted)
    return counts


def _read(path: Path, backend: str) -> Result:
    saved = backends.ACTIVE
    backends.ACTIVE = backend
    try:
        definitions, streams = read(path)
        return definitions, {location: EventBatch.concat(list(batches)) for location, batches in streams}
    finally:
        backends.ACTIVE = saved


def _assert_same(path: Path) -> Result:
    """Reads ``path`` with both backends and checks that they agree; the native result."""
    reference = _read(path, "python")
    result = _read(path, "native")
    assert result[0] == reference[0]
    assert result[1].keys() == reference[1].keys()
    for location, events in reference[1].items():
        got = result[1][location]
        assert got.equals(events), f"location {location}"
        assert got.kind.dtype == events.kind.dtype and got.time.dtype == events.time.dtype
    return result


# --------------------------------------------------------------------------- corpus and synthetic traces

@pytest.mark.parametrize("parts", CORPUS_TRACES, ids=lambda parts: parts[-1])
def test_corpus_traces_read_the_same(parts: tuple[str, ...], paths: dict[str, int]) -> None:
    _assert_same(corpus_path(*parts))
    # Score-P's ProgramBegin/End (with attributes) and TraceR's MeasurementOnOff on every
    # location: read by the reference, inserted into the native columns
    assert paths["native"] > 0
    # TraceR's location 0 breaks the nesting: all of it is read by the reference
    assert paths["python"] == (1 if parts[-1] == "traces-32" else 0)


def _synth(folder: Path, *options: str) -> Path:
    sys.path.insert(0, str(ROOT / "tools"))
    import synth

    out = folder / "synthetic"
    assert synth.main([str(out), "--otf2", *options]) == 0
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """spmd (every kind the synthesizer makes: calls, sends, receives, collectives,
    metrics), with jitter."""
    return _synth(tmp_path_factory.mktemp("synth"), "--locations", "3", "--events-per-location", "3000",
                  "--jitter", "0.3", "--seed", "4")


@pytest.mark.parametrize("batch_size, single_pass", [(512, 1 << 21), (512, 0), (1 << 16, 1 << 21)],
                         ids=["small-chunks", "two-passes", "one-chunk"])
def test_synthetic_trace_reads_the_same(synthetic: Path, paths: dict[str, int], monkeypatch: pytest.MonkeyPatch,
                                        batch_size: int, single_pass: int) -> None:
    monkeypatch.setattr(native, "BATCH_SIZE", batch_size)
    monkeypatch.setattr(native, "SINGLE_PASS_EVENTS", single_pass)
    definitions, events = _assert_same(synthetic)
    assert paths == {"native": 3, "python": 0}
    kinds = {int(k) for batch in events.values() for k in set(batch.kind.tolist())}
    assert {EventKind.ENTER, EventKind.LEAVE, EventKind.SEND, EventKind.RECV, EventKind.COLL_BEGIN,
            EventKind.COLL_END, EventKind.METRIC} <= kinds
    assert all(len(batch) > 2900 for batch in events.values())     # several chunks of 512


@pytest.mark.parametrize("pattern", ["single", "random"])
def test_other_synthetic_patterns_read_the_same(tmp_path: Path, paths: dict[str, int], pattern: str) -> None:
    _assert_same(_synth(tmp_path, "--locations", "2", "--events-per-location", "2000", "--jitter", "0.5",
                        "--pattern", pattern))
    assert paths == {"native": 2, "python": 0}


@settings(max_examples=25, deadline=None)
@given(traces())
def test_generated_traces_read_the_same(trace: dict[int, list[Event]]) -> None:
    """Every event kind, MARKER and GENERIC (left to the reference) among them."""
    with tempfile.TemporaryDirectory(prefix="ccg-otf2-native-") as scratch:
        target = Path(scratch) / "t.otf2"
        write_events(_definitions(), lambda i: [EventBatch.from_events(trace[i])] if i in trace else [], target)
        _assert_same(target)


# --------------------------------------------------------------------------- the fallback

def test_every_record_falls_back_to_the_reference(tmp_path: Path, paths: dict[str, int]) -> None:
    definitions, _ = _assert_same(_all_records_trace(tmp_path / "all"))
    assert paths == {"native": 0, "python": 1}
    assert "otf2:attributes" in definitions.strings and "otf2:ProgramBegin" in definitions.strings


def test_locations_needing_the_fallback_next_to_mapped_ones(tmp_path: Path, paths: dict[str, int]) -> None:
    """Location 0 maps; 1 has a MARKER, 2 a GENERIC event, 4 a MARKER at its end and 5 only
    a MARKER (records the reference reads for the native columns); 3 an unclosed ENTER (read
    by the reference). The strings keep their order."""
    definitions = _definitions()
    definitions.locations.extend(definitions.locations[0].__class__(f"rank {i}") for i in (3, 4, 5))
    call = [Event(1, EventKind.ENTER, ref=1), Event(2, EventKind.ISEND, ref=2, comm=1, tag=3, request=-7, size=9),
            Event(3, EventKind.IRECV_REQUEST, request=5), Event(4, EventKind.REQUEST_COMPLETE, request=-7),
            Event(5, EventKind.IRECV, ref=1, comm=2, tag=1, request=5, size=1 << 40),
            Event(6, EventKind.COLL_END, ref=4, comm=0, tag=-1, size=3, recv_size=4),
            Event(7, EventKind.METRIC, ref=1, value=-5), Event(8, EventKind.LEAVE, ref=1)]
    events = {0: call, 1: call[:3] + [Event(3, EventKind.MARKER, ref=4, value=1)] + call[3:],
              2: call[:1] + [Event(2, EventKind.GENERIC, ref=1, value=2)] + call[1:],
              3: call + [Event(9, EventKind.ENTER, ref=2)], 4: call + [Event(9, EventKind.MARKER, ref=1, value=2)],
              5: [Event(9, EventKind.MARKER, ref=1, value=2)]}
    target = tmp_path / "mixed.otf2"
    write_events(definitions, lambda i: [EventBatch.from_events(events[i])], target)
    result = _assert_same(target)
    assert paths == {"native": 5, "python": 1}
    assert list(result[1][0].rows()) == call


def test_missing_function_falls_back_with_a_warning(synthetic: Path, monkeypatch: pytest.MonkeyPatch,
                                                    paths: dict[str, int]) -> None:
    names = native.symbol_names()
    monkeypatch.setattr(native, "symbol_names", lambda: names[:-1] + ["OTF2_NoSuchFunction"])
    reference = _read(synthetic, "python")
    with pytest.warns(native.NativeOtf2Warning, match="OTF2_NoSuchFunction") as caught:
        definitions, events = _read(synthetic, "native")
    assert len(caught) == 1                      # once per archive, not per location
    assert paths == {"native": 0, "python": 0}   # never asked: no native reader
    assert definitions == reference[0]
    assert all(events[i].equals(reference[1][i]) for i in reference[1])


@pytest.mark.parametrize("change", [
    lambda binding: {"library_path": "/nonexistent/libotf2.so"},
    lambda binding: {"names": ["OTF2_Reader_GetEvtReader"]},
], ids=["bogus-library", "short-name-list"])
def test_unloadable_library_gives_no_native_reader(change: Callable[[Any], dict[str, Any]]) -> None:
    from ccgformat.formats.otf2.binding import load as load_binding

    binding = load_binding("x")
    with pytest.warns(native.NativeOtf2Warning):
        assert native.NativeEvents.create(binding, 0, None, None, **change(binding)) is None  # type: ignore[arg-type]


def test_record_prototypes_match_the_otf2_package() -> None:
    """otf2read.c declares the callbacks it registers; the package's prototypes must agree."""
    from ccgformat.formats.otf2.binding import load as load_binding

    records = load_binding("x").records
    assert {name: records[name].c_types for name in native.PROTOTYPES} == native.PROTOTYPES


@pytest.fixture(scope="module")
def sparse_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two locations of calls with MARKER and GENERIC events (ParameterInt/String records,
    which the native reader skips) in runs of up to three, at the start and at the end."""
    definitions = _definitions()
    events: dict[int, list[Event]] = {}
    for location in range(2):
        time, run = 0, []
        for i in range(1500):
            time += 1 + i % 3
            if i % 7 < 1 + location:
                run += [Event(time, EventKind.MARKER, ref=i % 5, value=i)] * (1 + i % 3)
                run.append(Event(time, EventKind.GENERIC, ref=i % 2, value=2))
            run += [Event(time, EventKind.ENTER, ref=i % 4), Event(time + 1, EventKind.LEAVE, ref=i % 4)]
        events[location] = [Event(0, EventKind.MARKER, ref=1, value=1), *run, Event(time + 5, EventKind.MARKER)]
    target = tmp_path_factory.mktemp("sparse") / "t.otf2"
    write_events(definitions, lambda i: [EventBatch.from_events(events[i])] if i in events else [], target)
    return target


@pytest.mark.parametrize("batch_size, single_pass, gaps", [(512, 1 << 21, 4096), (512, 0, 4096), (512, 0, 2),
                                                           (1 << 16, 1 << 21, 4096), (1 << 16, 1 << 21, 3)],
                         ids=["small-chunks", "two-passes", "two-passes-few-gaps", "one-chunk", "few-gaps"])
def test_sparse_records_are_inserted_where_they_were(sparse_records: Path, paths: dict[str, int],
                                                     monkeypatch: pytest.MonkeyPatch, batch_size: int,
                                                     single_pass: int, gaps: int) -> None:
    monkeypatch.setattr(native, "BATCH_SIZE", batch_size)
    monkeypatch.setattr(native, "SINGLE_PASS_EVENTS", single_pass)
    monkeypatch.setattr(native, "GAPS_PER_CHUNK", gaps)
    _, events = _assert_same(sparse_records)
    assert paths == {"native": 3, "python": 0}          # location 2 has no events
    assert all(int((events[location].kind == EventKind.MARKER).sum()) > 300 for location in (0, 1))


def test_failing_sparse_read_leaves_the_location_to_the_reference(sparse_records: Path, paths: dict[str, int],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    create = native.NativeEvents.create

    def failing(binding: Any, address: int, tables: Any, sparse: Any, **options: Any) -> Any:
        return create(binding, address, tables, lambda ref, path, records: None, **options)
    monkeypatch.setattr(native.NativeEvents, "create", failing)
    _assert_same(sparse_records)
    assert paths == {"native": 1, "python": 2}          # location 2 has no events


# --------------------------------------------------------------------------- damaged files

def _outcome(path: Path, backend: str) -> Result | tuple[str, str | None]:
    try:
        return _read(path, backend)
    except FormatError as error:
        return "FormatError", None if error.path is None else Path(error.path).name


@pytest.mark.parametrize("damage", [
    lambda f: _truncate(f / "traces" / "0.evt", 500),
    lambda f: _truncate(f / "traces" / "1.evt", 2000),
    lambda f: _garble(f / "traces" / "0.evt", 40, 16),
    lambda f: _garble(f / "traces" / "1.evt", 3000, 64),
    lambda f: (f / "traces" / "1.evt").unlink(),
    lambda f: _truncate(f / "traces" / "1.def", 10),
], ids=["truncated", "truncated-later", "garbled", "garbled-later", "missing", "local-definitions-truncated"])
def test_damaged_event_files_fail_like_the_reference(tmp_path: Path, damage: Callable[[Path], None]) -> None:
    folder = _synth(tmp_path, "--locations", "2", "--events-per-location", "1500", "--seed", "2")
    damage(folder)
    reference, result = _outcome(folder, "python"), _outcome(folder, "native")
    if isinstance(reference[0], Definitions):
        assert isinstance(result[0], Definitions) and result[0] == reference[0]
        assert all(result[1][i].equals(reference[1][i]) for i in reference[1])   # type: ignore[index]
    else:
        assert result == reference


@pytest.mark.parametrize("damage", [
    lambda f: _truncate(f / "traces" / "0.evt", 500),
    lambda f: _garble(f / "traces" / "0.evt", 40, 16),
    lambda f: (f / "traces" / "1.evt").unlink(),
], ids=["events-truncated", "events-garbled", "events-missing"])
def test_damaged_corpus_trace_fails_like_the_reference(ping_pong: Path, damage: Callable[[Path], None]) -> None:
    damage(ping_pong)
    assert _outcome(ping_pong, "native") == _outcome(ping_pong, "python") == ("FormatError", _named(damage))


def _named(damage: Callable[[Path], None]) -> str:
    return "1.evt" if "unlink" in damage.__code__.co_names else "0.evt"


def test_batches_read_after_the_next_location_started(synthetic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams consumed together (as a merge by time does) still see every event."""
    monkeypatch.setattr(native, "BATCH_SIZE", 512)
    monkeypatch.setattr(native, "SINGLE_PASS_EVENTS", 0)
    reference = _read(synthetic, "python")
    saved = backends.ACTIVE
    backends.ACTIVE = "native"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _, streams = read(synthetic)
            held = list(streams)
    finally:
        backends.ACTIVE = saved
    for location, batches in held:
        assert EventBatch.concat(list(batches)).equals(reference[1][location])
