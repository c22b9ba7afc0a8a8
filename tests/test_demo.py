"""`ccg demo` and the demo trace that ships with the package: the command runs as a shell
runs it and prints what `ccg info` and `ccg profile` print for the archive it writes; the
shipped OTF2 trace is what tools/make_demo_trace.py makes, and a plausible MPI program."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import ccgformat as ccg
from ccgformat.cli.demo import DEMO_TRACE
from ccgformat.model import EventKind as K

from .corpus import require_module

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import make_demo_trace  # noqa: E402

CCG = [sys.executable, "-m", "ccgformat.cli"]
COLUMNS = ("time", "kind", "ref", "comm", "tag", "request", "size", "recv_size", "value")

require_module("otf2", "the otf2 package (extra 'otf2') reads and writes the demo trace")
from ccgformat.formats.otf2 import read  # noqa: E402


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CCG + list(argv), capture_output=True, text=True, cwd=ROOT, timeout=300)


def content(folder: Path) -> tuple[dict, dict[int, dict[str, list[int]]]]:
    """An OTF2 archive as read back: its definitions (the anchor's creator and trace id,
    which name the writer's version and a random number, left out) and every location's
    events, column by column."""
    definitions, locations = read(folder)
    document = definitions.to_dict()
    document["extensions"]["otf2"].pop("archive")
    document.pop("provenance")
    events = {location: {name: np.concatenate([getattr(b, name) for b in batches]).tolist() for name in COLUMNS}
              for location, batches in ((location, list(batches)) for location, batches in locations)}
    return document, events


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``ccg demo --out DIR``: its result, the folder, and the archive it wrote."""
    folder = tmp_path_factory.mktemp("demo")
    done = run("demo", "--out", str(folder))
    return done, folder, folder / "demo.ccg"


def section(text: str, header: str, end: str) -> str:
    """The lines of ``text`` after the line ``header`` up to the text ``end``."""
    start = text.index(header + "\n") + len(header) + 1
    return text[start:text.index(end, start)]


def test_the_shipped_trace_is_what_the_tool_makes(tmp_path):
    regenerated = tmp_path / "demo"
    assert make_demo_trace.main([str(regenerated)]) == 0
    assert content(DEMO_TRACE) == content(regenerated)


def test_the_shipped_trace_holds_the_programs_events():
    """Read back through the OTF2 reader, every rank's events are the program's."""
    definitions, events = make_demo_trace.demo_trace()
    shipped, locations = read(DEMO_TRACE)
    assert [r.name for r in shipped.regions] == [r.name for r in definitions.regions]
    assert [loc.name for loc in shipped.locations] == [loc.name for loc in definitions.locations]
    read_back = {location: list(batches) for location, batches in locations}
    assert sorted(read_back) == list(range(len(events)))
    for location, batch in enumerate(events):
        got = ccg.EventBatch.concat(read_back[location])
        for name in COLUMNS:
            assert getattr(got, name).tolist() == getattr(batch, name).tolist(), (location, name)


def test_the_shipped_trace_is_small():
    size = sum(path.stat().st_size for path in DEMO_TRACE.rglob("*") if path.is_file())
    assert 50_000 < size < 1_000_000


def test_the_program_is_a_plausible_mpi_run():
    """Every message is received after it was sent at its peer, receives wait for the
    slow rank, every collective ends together, and the calls nest."""
    definitions, events = make_demo_trace.demo_trace()
    names = [r.name for r in definitions.regions]
    sends, receives, stencil, waiting = Counter(), Counter(), {}, {}
    send_times, recv_times = {}, {}
    for rank, batch in enumerate(events):
        stack, begun, exclusive = [], {}, Counter()
        assert (np.diff(batch.time) >= 0).all()
        for time, kind, ref, tag in zip(*(getattr(batch, c).tolist() for c in ("time", "kind", "ref", "tag"))):
            if kind == K.ENTER:
                if stack:
                    exclusive[stack[-1][0]] += time - begun[stack[-1]]
                stack.append((ref, time))
                begun[stack[-1]] = time
            elif kind == K.LEAVE:
                top = stack.pop()
                assert top[0] == ref
                exclusive[ref] += time - begun[top]
                if stack:
                    begun[stack[-1]] = time
            elif kind == K.SEND:
                send_times.setdefault((rank, ref, tag), []).append(time)
                sends[(rank, ref)] += 1
            elif kind == K.RECV:
                recv_times.setdefault((ref, rank, tag), []).append(time)
                receives[(ref, rank)] += 1
        assert stack == []
        stencil[rank] = exclusive[names.index("stencil")]
        waiting[rank] = exclusive[names.index("MPI_Recv")] + exclusive[names.index("MPI_Allreduce")]
    assert sends == receives and len(sends) == 2 * len(events)
    for key, sent in send_times.items():
        assert all(r >= s + make_demo_trace.LATENCY for s, r in zip(sent, recv_times[key]))
    slow = make_demo_trace.SLOW_RANK
    assert stencil[slow] == max(stencil.values()) and waiting[slow] == min(waiting.values())
    ends = [batch.time[batch.kind == K.COLL_END] for batch in events]
    assert all(len(e) == len(ends[0]) > 0 for e in ends)
    assert np.ptp(np.stack(ends), axis=0).max() < 20_000   # the ranks leave a collective within 20 us


def test_ccg_demo_shows_the_whole_job(demo):
    done, folder, archive = demo
    assert done.returncode == 0, done.stderr
    with ccg.open(archive) as opened:
        shipped, locations = read(DEMO_TRACE)
        assert opened.stats.events == sum(len(b) for _, batches in locations for b in batches)
        assert len(opened.locations) == len(shipped.locations)
    out = done.stdout
    assert str(archive) in out and str(folder / "overview.svg") in out
    info = run("info", str(archive))
    profile = run("profile", str(archive))
    assert info.returncode == profile.returncode == 0
    assert section(out, f"$ ccg info {archive}", "\n\n$ ccg profile") == info.stdout.rstrip("\n")
    assert section(out, f"$ ccg profile {archive}", "\n\nThe overview") == profile.stdout.rstrip("\n")
    picture = ET.parse(folder / "overview.svg").getroot()
    assert picture.tag == "{http://www.w3.org/2000/svg}svg"
    assert "Try next:" in out and f"ccg timeline {archive}" in out


def test_ccg_demo_json(tmp_path):
    done = run("demo", "--out", str(tmp_path / "new" / "folder"), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert Path(document["archive"]).is_file() and Path(document["overview"]).is_file()
    with ccg.open(document["archive"]) as archive:
        assert document["info"]["events"] == archive.stats.events
        assert document["profile"] == json.loads(json.dumps(archive.profile().to_json()))


def test_ccg_demo_without_out_keeps_a_new_folder():
    done = run("demo")
    assert done.returncode == 0, done.stderr
    archive = Path(done.stdout.split(" into ", 1)[1].split(" (", 1)[0])
    try:
        assert archive.name == "demo.ccg" and archive.parent.name.startswith("ccg-demo-")
        with ccg.open(archive) as opened:
            assert opened.stats.events > 10_000
    finally:
        for path in sorted(archive.parent.rglob("*"), reverse=True):
            path.unlink()
        archive.parent.rmdir()


def test_ccg_demo_without_otf2_names_the_extra(tmp_path):
    """Where the ``otf2`` package is missing, the demo says which extra reads OTF2."""
    code = ("import sys; sys.modules['otf2'] = None; from ccgformat.cli import main; "
            f"sys.exit(main(['demo', '--out', {str(tmp_path)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1 and "ccgformat[otf2]" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "demo.ccg").exists()
