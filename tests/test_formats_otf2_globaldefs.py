"""The OTF2 global definitions read through the C library (formats/otf2/globaldefs.py)
give the writer calls that the `otf2` package's own reader and registry give, in the
package's write order: on the corpus traces, and on an archive holding every kind of
definition the package reads (not InterComm: it fails on them), written in another order
than the package writes (strings late, groups split by metrics, kinds that share
references interleaved)."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import pytest

from ccgformat.errors import FormatError
from ccgformat.model import Communicator, Definitions, Location, Region

from .corpus import corpus_path, require_module

otf2 = require_module("otf2", "the otf2 package is not installed")
_otf2 = require_module("_otf2", "the otf2 package is not installed")

from ccgformat.formats.otf2.binding import load  # noqa: E402
from ccgformat.formats.otf2.export import write_events  # noqa: E402
from ccgformat.formats.otf2.globaldefs import GlobalDefinitions, read_global_definitions  # noqa: E402
from ccgformat.formats.otf2.reader import read  # noqa: E402

U32, U64 = 0xFFFFFFFF, (1 << 64) - 1
CORPUS = (
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2"),
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2-papi"),
    ("otf2", "TraceR", "examples", "stencil4d-otf", "traces-32"),
)
#: Every kind of global definition, in an order of the file the package does not write.
EVERY_KIND: list[list[Any]] = [
    ["String", [0, ""]], ["String", [1, "node"]], ["String", [2, "machine"]],
    ["SystemTreeNode", [0, 1, 2, U32]], ["String", [3, "MPI"]], ["Paradigm", [4, 3, 0]],
    ["SystemTreeNodeDomain", [0, 1]], ["String", [4, "process 0"]], ["LocationGroup", [0, 4, 1, 0, U32]],
    ["String", [5, "thread 0"]], ["Location", [0, 5, 1, 0, 0]], ["String", [6, "thread 1"]],
    ["Location", [1, 6, 1, 0, 0]], ["String", [7, "key"]], ["LocationProperty", [0, 7, 4, {"bits": 3}]],
    ["LocationGroupProperty", [0, 7, 4, {"bits": 4}]], ["SystemTreeNodeProperty", [0, 7, 4, {"bits": 5}]],
    ["Attribute", [0, 7, 0, 4]], ["String", [8, "main"]], ["Region", [0, 8, 8, 0, 1, 1, 0, U32, 0, 0]],
    ["Group", [0, 8, 2, 1, 0, [0]]], ["Group", [1, 0, 4, 4, 0, [0, 1]]], ["Group", [2, 0, 5, 4, 0, [1, 0]]],
    ["Comm", [0, 3, 2, U32, 0]], ["String", [9, "cycles"]], ["MetricMember", [0, 9, 0, 0, 0, 4, 1, 0, 0]],
    ["MetricClass", [0, [0], 0, 0]], ["MetricInstance", [1, 0, 0, 0, 0]], ["MetricClassRecorder", [0, 1]],
    ["Group", [3, 9, 3, 0, 0, [0]]], ["Parameter", [0, 7, 1]], ["Callpath", [0, U32, 0]],
    ["CallpathParameter", [0, 0, 8, {"bits": 2}]], ["RmaWin", [0, 3, 0, 0]],
    ["CartDimension", [0, 7, 2, 0]], ["CartTopology", [0, 7, 0, [0]]], ["CartCoordinate", [0, 0, [1]]],
    ["SourceCodeLocation", [0, 8, 3]], ["CallingContext", [0, 0, 0, U32]],
    ["CallingContextProperty", [0, 7, 4, {"bits": 1}]], ["InterruptGenerator", [0, 7, 0, 1, 0, 100]],
    ["Callsite", [0, 8, 1, 0, 0]], ["IoParadigm", [0, 7, 7, 0, 0, [], [], []]], ["IoRegularFile", [0, 8, 0]],
    ["IoDirectory", [1, 7, 0]], ["IoFileProperty", [0, 7, 4, {"bits": 9}]], ["IoHandle", [0, 8, 0, 0, 0, 0, U32]],
    ["IoPreCreatedHandleState", [0, 0, 0]], ["ParadigmProperty", [4, 0, 4, {"bits": 1}]],
    ["String", [10, "late"]],
]


def _json(value: Any) -> Any:
    """A writer argument of the package as JSON (attribute values as their 64 bits)."""
    if isinstance(value, ctypes.Union):
        return {"bits": int(value._arg_value)}
    if isinstance(value, ctypes._SimpleCData):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


class _Recorder:
    """Stands in for the package's definition writer: records each write call."""

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []
        self._archive = self

    def write(self, definition: Any, *args: Any) -> None:
        self.calls.append([type(definition).__name__, [_json(a) for a in args]])

    def event_writer_from_location(self, location: Any) -> None:
        pass


def _package(anchor: Path) -> tuple[list[list[Any]], tuple[int, ...]]:
    """The calls and clock properties by the `otf2` package's reader and registry."""
    reader = otf2.reader.Reader(str(anchor))
    try:
        recorder = _Recorder()
        reader.definitions.write(recorder)
        clock = reader.definitions.clock_properties
        return recorder.calls, (clock.timer_resolution, clock.global_offset, clock.trace_length,
                                clock.realtime_timestamp)
    finally:
        reader.close()


def _ours(anchor: Path) -> GlobalDefinitions:
    binding = load(str(anchor))
    handle = _otf2.Reader_Open(str(anchor))
    try:
        return read_global_definitions(binding, handle, str(anchor.with_suffix(".def")))
    finally:
        _otf2.Reader_Close(handle)


def _write(folder: Path, calls: list[list[Any]]) -> Path:
    definitions = Definitions(
        regions=[Region("main")], locations=[Location("thread 0"), Location("thread 1")],
        communicators=[Communicator("MPI", (1, 0))],
        extensions={"otf2": {"version": 1, "archive": {"creator": "test"}, "clock_properties": [1000, 5, 0, U64],
                             "definitions": calls, "regions": [0], "locations": [0, 1], "communicators": [0],
                             "metrics": []}})
    write_events(definitions, lambda i: [], folder)
    return folder / "traces.otf2"


@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_corpus_definitions_are_the_packages(parts: tuple[str, ...]) -> None:
    anchor = corpus_path(*parts) / "traces.otf2"
    ours = _ours(anchor)
    calls, clock = _package(anchor)
    assert len(calls) > 20
    assert ours.calls == calls and ours.clock == clock


def test_every_kind_comes_in_the_packages_order(tmp_path: Path) -> None:
    anchor = _write(tmp_path / "every", EVERY_KIND)
    ours = _ours(anchor)
    calls, clock = _package(anchor)
    assert {name for name, _ in calls} == {name for name, _ in EVERY_KIND}
    assert ours.calls == calls and ours.clock == clock
    assert ours.calls != EVERY_KIND and sorted(map(repr, ours.calls)) == sorted(map(repr, EVERY_KIND))


def test_the_model_of_every_kind(tmp_path: Path) -> None:
    """The communicator of a COMM_GROUP holds its ranks' locations."""
    definitions, streams = read(_write(tmp_path / "every", EVERY_KIND))
    list(streams)
    assert [c.members for c in definitions.communicators] == [(1, 0)]
    assert [(loc.name, loc.parent) for loc in definitions.locations] == [("thread 0", 1), ("thread 1", 1)]
    assert [(n.name, n.kind, n.parent) for n in definitions.system_tree] == [("node", "machine", None),
                                                                             ("process 0", "process", 0)]
    assert [(r.name, r.role, r.paradigm, r.group) for r in definitions.regions] == [("main", "function", "user",
                                                                                     "main")]
    assert [m.name for m in definitions.metrics] == ["cycles", "cycles"]


@pytest.mark.parametrize("calls, problem", [
    (EVERY_KIND + [["Location", [1, 6, 1, 0, 0]]], "Location definition 1 is defined twice"),
    ([c for c in EVERY_KIND if c != ["String", [6, "thread 1"]]], "undefined String 6"),
    ([c if c[0] != "Location" else ["Location", [c[1][0], 5, 1, 0, 7]] for c in EVERY_KIND],
     "undefined LocationGroup 7"),
], ids=["duplicate", "string", "group"])
def test_bad_definitions_are_format_errors(tmp_path: Path, calls: list[list[Any]], problem: str) -> None:
    anchor = _write(tmp_path / "bad", calls)
    with pytest.raises(FormatError, match=problem) as error:
        read(anchor)
    assert str(anchor.with_suffix(".def")) in str(error.value)
