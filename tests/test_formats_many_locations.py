"""Every importer with many locations (issue 14): a trace of `LOCATIONS` locations of one
call each, written in each input format (by our exporter or a test writer following the
format's specification), comes back with every location's call, in seconds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import ccgformat
from ccgformat.formats import detect, read
from ccgformat.model import Definitions, EventBatch, EventKind, Location, Region, SystemTreeNode

from .corpus import require_module
from .test_formats_epilog import Run
from .test_formats_otf1 import write_trace as write_otf1
from .test_formats_paje import HEADER as PAJE_HEADER

ROOT = Path(__file__).resolve().parents[1]
LOCATIONS = 3000
REGIONS = ("r0", "r1", "r2")


def _call(i: int) -> tuple[int, int, str]:
    """Location i's call: enter and leave time in microseconds, region name."""
    return 1000 * i + 7, 1000 * i + 7 + 1 + i % 5, REGIONS[i % len(REGIONS)]


def _definitions(locations: int) -> Definitions:
    return Definitions(regions=[Region(name) for name in REGIONS], system_tree=[SystemTreeNode("m", "machine")],
                       locations=[Location(f"rank {i}", parent=0) for i in range(locations)],
                       timer_resolution=1_000_000)


def _batch(i: int) -> EventBatch:
    enter, leave, region = _call(i)
    ref = REGIONS.index(region)
    return EventBatch.from_events([(enter, EventKind.ENTER, ref), (leave, EventKind.LEAVE, ref)])


def _otf2(folder: Path, locations: int) -> Path:
    """With the `otf2` package's writer and small chunks (our exporter's writes are durable:
    a few milliseconds per location)."""
    otf2 = require_module("otf2", "the otf2 package is not installed")
    with otf2.writer.open(str(folder / "t"), timer_resolution=1_000_000, chunk_size_events=256 * 1024,
                          chunk_size_definitions=256 * 1024) as trace:
        group = trace.definitions.location_group("process", system_tree_parent=trace.definitions.system_tree_node("m"))
        regions = {name: trace.definitions.region(name) for name in REGIONS}
        for i in range(locations):
            enter, leave, region = _call(i)
            events = trace.event_writer(f"rank {i}", group=group)
            events.enter(enter, regions[region])
            events.leave(leave, regions[region])
    return folder / "t"


def _ccg(folder: Path, locations: int) -> Path:
    ccgformat.write_trace(folder / "t.ccg", _definitions(locations), ((i, [_batch(i)]) for i in range(locations)))
    return folder / "t.ccg"


def _npz(folder: Path, locations: int) -> Path:
    sys.path.insert(0, str(ROOT / "tools"))
    import synth
    synth.write_npz(folder / "t.npz", _definitions(locations), lambda i: iter([_batch(i)]))
    return folder / "t.npz"


def _chrome(folder: Path, locations: int) -> Path:
    events = []
    for i in range(locations):
        enter, leave, region = _call(i)
        events += [{"ph": "B", "pid": 1, "tid": i, "ts": enter, "name": region},
                   {"ph": "E", "pid": 1, "tid": i, "ts": leave}]
    (folder / "t.json").write_text(json.dumps({"traceEvents": events}))
    return folder / "t.json"


def _paje(folder: Path, locations: int) -> Path:
    lines = [PAJE_HEADER.rsplit("6 0.0", 1)[0].rstrip("\n")]
    lines += [f"6 0.0 p{i} P 0 p{i}" for i in range(locations)]
    for i in range(locations):
        enter, leave, region = _call(i)
        lines += [f"12 {enter / 1e6:.6f} p{i} S {region}", f"14 {leave / 1e6:.6f} p{i} S"]
    (folder / "t.trace").write_text("\n".join(lines) + "\n")
    return folder / "t.trace"


def _otf1(folder: Path, locations: int, one_stream: bool) -> Path:
    """Function k is named "fk" by the writer."""
    processes = {p: 0 for p in range(1, locations + 1)}
    events = {}
    for p in processes:
        enter, leave, region = _call(p - 1)
        function = REGIONS.index(region) + 1
        events[p] = [(enter, "Enter", {"function": function}, [], []),
                     (leave, "Leave", {"function": function}, [], [])]
    return write_otf1(folder, {"processes": processes, "functions": len(REGIONS), "events": events, "markers": [],
                               "long": False, "one_stream": one_stream, "compression": None})


def _epilog(folder: Path, locations: int) -> Path:
    run = Run(locations, {10 + k: name for k, name in enumerate(REGIONS)})
    run.communicator = False
    for i in range(locations):
        enter, leave, region = _call(i)
        run.records += [("ENTER", i, enter, (10 + REGIONS.index(region),), ()), ("EXIT", i, leave, (), ())]
    return run.file().write(folder / "t.elg")


#: per input format, a writer of a trace of one call per location in that format (by our
#: exporter or a test writer following the format's specification): folder, locations -> path
WRITERS: dict[str, Callable[[Path, int], Path]] = {
    "otf2": _otf2, "ccg": _ccg, "npz": _npz, "chrome": _chrome, "paje": _paje, "epilog": _epilog,
    "otf1": lambda folder, locations: _otf1(folder, locations, one_stream=True),
    "otf1-streams": lambda folder, locations: _otf1(folder, locations, one_stream=False),
}


def _calls(definitions: Definitions, streams) -> list[tuple[int, int, str]]:
    """Each location's (enter, leave) in microseconds and region, in location order."""
    calls = {}
    for location, batches in streams:
        batch = EventBatch.concat(list(batches))
        chosen = np.isin(batch.kind, (EventKind.ENTER, EventKind.LEAVE))
        assert batch.kind[chosen].tolist() == [EventKind.ENTER, EventKind.LEAVE], location
        times = (batch.time[chosen] * 1_000_000) // definitions.timer_resolution
        calls[location] = (int(times[0]), int(times[1]), definitions.regions[int(batch.ref[chosen][0])].name)
    return [calls[location] for location in sorted(calls)]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_many_locations_come_back(fmt: str, tmp_path: Path) -> None:
    source = WRITERS[fmt](tmp_path, LOCATIONS)
    assert detect(source) == fmt.split("-")[0]
    definitions, streams = read(source)
    named = (lambda region: f"f{REGIONS.index(region) + 1}") if fmt.startswith("otf1") else (lambda region: region)
    assert _calls(definitions, streams) == [(enter, leave, named(region)) for enter, leave, region in
                                            map(_call, range(LOCATIONS))]
    assert len(definitions.locations) >= LOCATIONS


def test_many_locations_through_an_archive(tmp_path: Path) -> None:
    """The whole conversion: every location's call in the archive."""
    report = ccgformat.convert(_chrome(tmp_path, LOCATIONS), tmp_path / "t.ccg")
    assert (report.locations, report.events) == (LOCATIONS, 2 * LOCATIONS)
    with ccgformat.open(tmp_path / "t.ccg") as archive:
        streams = ((location, archive.location(location).events()) for location in archive.locations)
        assert _calls(archive.definitions, streams) == [_call(i) for i in range(LOCATIONS)]
