"""``--mpi`` on real MPI ranks: ``mpirun -n P`` (Open MPI, ``--oversubscribe
--allow-run-as-root`` as CI runs it) of the ``ccg`` commands. Skipped when mpirun or
mpi4py is missing, unless ``CCG_REQUIRE_CORPUS=1`` (CI; tools/install-reference-tools
installs Open MPI, the dev extra mpi4py). Each mpirun costs about a second, so the
conversions of many traces share one (tests/mpi_convert.py)."""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive.layout import NODE_KINDS, SectionKind
from ccgformat.archive.merge import COPY_NODES
from ccgformat.archive.verify import verify
from ccgformat.archive.writer import nodes_level
from ccgformat.cli import main

from .corpus import corpus_path, require_module, require_tool
from .parallel_support import assert_same_events, location_rows
from .query_support import ring_archive
from .test_archive_tables import damage_stream
from .test_formats_otf2 import CORPUS_TRACES
from .test_verify import rebuild

ROOT = Path(__file__).resolve().parent.parent
#: seconds an mpirun may take before the test calls it a hang
HANG = 180
streaming = importlib.import_module("ccgformat.query.streaming")


def mpirun(ranks: int, *arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mpirun -n ranks python arguments...`` with this checkout first on the path (and
    the variables ``env`` set)."""
    require_module("mpi4py", "mpi4py is not installed (the mpi extra)")
    command = [require_tool("mpirun"), "-n", str(ranks), "--oversubscribe", "--allow-run-as-root", sys.executable,
               *arguments]
    variables = {**os.environ, **(env or {}),
                 "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(command, capture_output=True, text=True, timeout=HANG, env=variables, cwd=ROOT)


def _sources(folder: Path) -> list[Path]:
    """Every corpus OTF2 trace, and random traces: two as OTF2 (each rank reads its own
    locations) and one as .npz (rank 0 reads and distributes)."""
    sources = [corpus_path(*parts) for parts in CORPUS_TRACES]
    for seed, (name, extra) in enumerate([("random1", ["--otf2"]), ("random2", ["--otf2"]), ("random3.npz", [])]):
        target = folder / name
        subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(target), *extra, "--pattern", "random",
                        "--locations", str(3 + 2 * seed), "--events-per-location", "3000", "--jitter", "0.3",
                        "--seed", str(seed)], check=True, capture_output=True)
        sources.append(target)
    return sources


def _without_extensions(definitions: ccg.Definitions) -> dict:
    return {**definitions.to_dict(), "extensions": {}}


def _assert_same_archive(serial: Path, parallel: Path) -> None:
    """Events, definitions (but the format extensions: `test_the_otf2_extension_is_kept`)
    and indexes as the serial conversion's."""
    with ccg.open(serial) as expected, ccg.open(parallel) as actual:
        assert_same_events(expected, actual)
        assert _without_extensions(actual.definitions) == _without_extensions(expected.definitions)
        assert actual.stats.events == expected.stats.events
        for location in expected.locations:
            for kind in (4, 5):  # SNAPSHOTS, SUMMARY (spec 4.4, 4.5)
                assert actual.checkpoints(kind, location) == expected.checkpoints(kind, location)
        assert actual.profile().to_json() == expected.profile().to_json()
        levels = [{(entry.kind, entry.first): archive.payload(entry) for entry in archive.sections
                   if entry.kind in (SectionKind.AGGREGATE_LEVEL, SectionKind.METRIC_LEVEL)}
                  for archive in (expected, actual)]
        # the ranks' table rows put side by side: every level both files keep is the serial one's
        assert all(levels[1][key] == payload for key, payload in levels[0].items() if key in levels[1])
    assert verify(parallel) == []  # which recomputes every level from the events


@pytest.mark.parametrize("ranks, way", [(1, "auto"), (2, "auto"), (2, "parts"), (3, "parts"), (2, "gathered"),
                                        (3, "gathered")])
def test_parallel_conversion_equals_the_serial_one(tmp_path, ranks, way):
    """Each way (the OTF2 traces; the .npz is read by rank 0 for every rank whatever the
    way), and the way each trace chooses. The gathered way writes with the serial writer
    what the serial reader reads: the serial file, byte for byte."""
    sources = _sources(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    done = mpirun(ranks, str(ROOT / "tests" / "mpi_convert.py"), way, str(out), *map(str, sources))
    assert done.returncode == 0, done.stderr
    for position, source in enumerate(sources):
        serial = tmp_path / f"serial{position}.ccg"
        ccg.convert(source, serial)
        _assert_same_archive(serial, out / f"{position}.ccg")
        if way == "gathered" and source.suffix != ".npz":
            assert (out / f"{position}.ccg").read_bytes() == serial.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{i}.ccg" for i in range(len(sources)))


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_large_graph_is_joined_from_the_blocks_each_rank_moved(tmp_path, ranks):
    """A graph of more than COPY_NODES nodes, whose merge copies node blocks: each rank
    moves its part's node ids and compresses them at the merge's level itself
    (`merge.write_moved`), so the archive holds the serial conversion's events,
    definitions and indexes in about its bytes (on main, whose merge copied the first
    part's blocks at the parts' level 1: 1.024x at 2 ranks), and no part or moved-blocks
    file remains."""
    parallel, serial = _synthesised_on_ranks(tmp_path, ranks, "ring", 8, 100000, "--jitter", "0.3", "--seed", "7")
    with ccg.open(serial) as archive:
        assert archive.stats.n >= COPY_NODES
    _assert_same_archive(serial, parallel)
    assert parallel.stat().st_size <= 1.005 * serial.stat().st_size


def _synthesised_on_ranks(folder: Path, ranks: int, pattern: str, locations: int, events: int, *extra: str,
                          options: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """A tools/synth.py OTF2 trace converted by `ccg convert --mpi` on ``ranks`` ranks and
    serially, both with the convert ``options``: the two archives (no other file left
    beside the parallel one)."""
    source = folder / pattern
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(source), "--otf2", "--pattern", pattern,
                    "--locations", str(locations), "--events-per-location", str(events), *extra],
                   check=True, capture_output=True)
    out = folder / "out"
    out.mkdir()
    done = mpirun(ranks, "-m", "ccgformat.cli", "convert", str(source), str(out / "p.ccg"), "--mpi", "-q", *options)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in out.iterdir()] == ["p.ccg"]
    assert main(["convert", "-q", str(source), str(folder / "s.ccg"), *options]) == 0
    return out / "p.ccg", folder / "s.ccg"


@pytest.mark.parametrize("pattern, locations, events, extra", [("ring", 8, 100000, ("--jitter", "0.3", "--seed", "7")),
                                                                ("spmd", 300, 48, ("--seed", "3"))],
                         ids=["parts, blocks", "gathered"])
def test_the_writer_s_options_hold_on_ranks(tmp_path, pattern, locations, events, extra):
    """`ccg convert --mpi --level --checkpoint-interval --gaps` writes what the serial
    conversion with those options writes: the parts way its events, definitions, indexes
    (at the interval asked for) and tables, every node block at the level asked for (the
    ranks compress the blocks they move at it), none with coded gaps; the gathered way
    its bytes."""
    options = ("--level", "5", "--checkpoint-interval", "5000", "--gaps", "plain")
    parallel, serial = _synthesised_on_ranks(tmp_path, 2, pattern, locations, events, *extra, options=options)
    if pattern == "spmd":
        assert parallel.read_bytes() == serial.read_bytes()
        return
    _assert_same_archive(serial, parallel)
    level = nodes_level(5)
    with ccg.open(parallel) as archive:
        assert archive.stats.n >= COPY_NODES
        assert (archive.parameters["zstd_level"], archive.parameters["checkpoint_interval"]) == (5, 5000)
        blocks = [entry for entry in archive.sections if entry.kind in NODE_KINDS]
        assert all(archive.stored_frame(entry) == level.compress(archive.payload(entry)) for entry in blocks)
        assert SectionKind.CODED_NODES not in {entry.kind for entry in blocks}
        assert len(archive.checkpoints(SectionKind.CHECKPOINT_TABLE, 0)) >= 20  # 100,000+ events every 5,000


@pytest.mark.parametrize("ranks", [2, 3])
def test_many_small_locations_of_one_program_are_gathered_into_the_serial_file(tmp_path, ranks):
    """`ccg convert --mpi` on 300 locations of 48 events, the same program on every rank:
    the gathered way with rank 0's probed locations held (tests/test_parallel.py checks
    that this trace is gathered), and the archive is the serial one, byte for byte."""
    parallel, serial = _synthesised_on_ranks(tmp_path, ranks, "spmd", 300, 48, "--seed", "3")
    assert parallel.read_bytes() == serial.read_bytes()


def test_ccg_convert_mpi_prints_one_result_line(tmp_path):
    source = corpus_path(*CORPUS_TRACES[-1])
    done = mpirun(2, "-m", "ccgformat.cli", "convert", str(source), str(tmp_path / "p.ccg"), "--mpi", "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and '"locations": 32' in lines[0]
    ccg.convert(source, tmp_path / "s.ccg")
    _assert_same_archive(tmp_path / "s.ccg", tmp_path / "p.ccg")


def test_a_lossy_conversion_on_ranks_keeps_the_bounds(tmp_path):
    """With deviation bounds each rank picks its own representatives, so the events may
    differ from the serial lossy conversion's; every timestamp stays within --abs of the
    original (lossless) one, and everything else is exact."""
    source = corpus_path(*CORPUS_TRACES[-1])
    done = mpirun(2, "-m", "ccgformat.cli", "convert", str(source), str(tmp_path / "p.ccg"), "--mpi", "-q",
                  "--abs", "1000", "--rel", "0.05")
    assert done.returncode == 0, done.stderr
    ccg.convert(source, tmp_path / "exact.ccg")
    with ccg.open(tmp_path / "exact.ccg") as exact, ccg.open(tmp_path / "p.ccg") as lossy:
        assert (lossy.params.abs_dev, lossy.params.rel_dev) == (1000, 0.05)
        for location in exact.locations:
            want, got = location_rows(exact, location), location_rows(lossy, location)
            assert max((abs(a - b) for a, b in zip(want.pop("time"), got.pop("time"))), default=0) <= 1000
            assert got == want


def test_the_otf2_extension_is_kept(tmp_path):
    source = corpus_path(*CORPUS_TRACES[-1])
    done = mpirun(2, "-m", "ccgformat.cli", "convert", str(source), str(tmp_path / "p.ccg"), "--mpi", "-q")
    assert done.returncode == 0, done.stderr
    ccg.convert(source, tmp_path / "s.ccg")
    with ccg.open(tmp_path / "s.ccg") as expected, ccg.open(tmp_path / "p.ccg") as actual:
        assert actual.definitions.extensions == expected.definitions.extensions
    # and the extension still describes the merged definitions: the exports read alike
    printed = []
    for name in ("s", "p"):
        with ccg.open(tmp_path / f"{name}.ccg") as archive:
            archive.export(tmp_path / f"{name}.otf2", to="otf2")
        printed.append(subprocess.run([require_tool("otf2-print"), str(tmp_path / f"{name}.otf2" / "traces.otf2")],
                                      check=True, capture_output=True, text=True).stdout)
    assert printed[1] == printed[0]


def _otf2_cut_short(folder: Path, position: int = -1) -> Path:
    """The corpus stencil trace with the event file of its location at ``position`` cut
    short: the rank that reads the last location (rank 1 of 2) fails while rank 0 converts
    its own; the first, rank 0."""
    source = folder / "trace"
    shutil.copytree(corpus_path(*CORPUS_TRACES[-1]), source)
    events = sorted((source / "traces").glob("*.evt"), key=lambda p: int(p.stem))[position]
    events.write_bytes(events.read_bytes()[:40])
    return source


def _npz_damaged(folder: Path) -> Path:
    """A .npz whose location 0 cannot be decompressed: rank 0, reading the input for every
    rank, fails while sending rank 1 its events."""
    source = folder / "trace.npz"
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(source), "--locations", "4",
                    "--events-per-location", "5000", "--pattern", "random"], check=True, capture_output=True)
    with zipfile.ZipFile(source) as archive:
        member = archive.getinfo("loc0_time.npy")
    data = bytearray(source.read_bytes())
    middle = member.header_offset + 100 + member.compress_size // 2
    data[middle:middle + 100] = bytes(b ^ 0xFF for b in data[middle:middle + 100])
    source.write_bytes(data)
    return source


@pytest.mark.parametrize("damaged, failed", [(_otf2_cut_short, 1), (_npz_damaged, 0)], ids=["otf2", "npz"])
def test_a_rank_failing_mid_way_leaves_no_file_and_every_rank_fails(tmp_path, damaged, failed):
    """Both ranks end with status 1, saying which rank failed, and neither the target nor
    a part remains."""
    source = damaged(tmp_path)
    target = tmp_path / "out" / "t.ccg"
    target.parent.mkdir()
    done = mpirun(2, "-m", "ccgformat.cli", "convert", str(source), str(target), "--mpi")
    assert done.returncode != 0
    assert list(target.parent.iterdir()) == []
    assert f"MPI rank {failed} failed" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("ccg: ") == 2  # one line from each rank


@pytest.mark.parametrize("position, failed", [(-1, 1), (0, 0)], ids=["reading rank", "building rank"])
def test_a_rank_failing_in_the_gathered_way_leaves_no_file(tmp_path, position, failed):
    """The gathered way: rank 1 failing while it reads and sends its locations, or rank 0
    while it builds its own; every rank raises, none waits for another, no file remains."""
    source = _otf2_cut_short(tmp_path, position)
    out = tmp_path / "out"
    out.mkdir()
    done = mpirun(2, str(ROOT / "tests" / "mpi_convert.py"), "gathered", str(out), str(source))
    assert done.returncode != 0
    assert list(out.iterdir()) == []
    assert f"ParallelError: MPI rank {failed} failed" in done.stderr
    assert "FormatError" in done.stderr


@pytest.mark.parametrize("argv", [["profile", "--json"], ["aggregate", "--slices", "30", "--states", "group", "--json"],
                                  ["messages", "--json"], ["verify", "--json"]], ids=lambda argv: argv[0])
def test_queries_on_ranks_equal_the_serial_ones(tmp_path, capsys, argv):
    archive = tmp_path / "t.ccg"
    ccg.convert(corpus_path(*CORPUS_TRACES[-1]), archive)
    status = main([argv[0], str(archive), *argv[1:]])
    serial = capsys.readouterr().out
    done = mpirun(3, "-m", "ccgformat.cli", argv[0], str(archive), *argv[1:], "--mpi")
    assert (done.returncode, done.stdout) == (status, serial), done.stderr
    assert len(serial) > 40


def test_queries_on_ranks_write_the_output_file_on_rank_0(tmp_path, capsys):
    """``-o FILE`` under --mpi: rank 0 writes the answer to the file, the serial answer
    byte for byte; nothing goes through mpirun's output, no other rank leaves a file."""
    archive = tmp_path / "t.ccg"
    ccg.convert(corpus_path(*CORPUS_TRACES[-1]), archive)
    assert main(["messages", str(archive), "--json"]) == 0
    serial = capsys.readouterr().out
    target = tmp_path / "messages.json"
    done = mpirun(2, "-m", "ccgformat.cli", "messages", str(archive), "--json", "--mpi", "-o", str(target))
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert target.read_text(encoding="utf-8") == serial and len(serial) > 40
    assert sorted(path.name for path in tmp_path.iterdir()) == ["messages.json", "t.ccg"]


def test_verify_on_ranks_splits_the_walk_and_finds_what_the_serial_one_finds(tmp_path, monkeypatch):
    """``verify --mpi`` walks a share of the locations on each rank (the levels made by the
    walk): sound, the checkpoints of locations 1 and 2 (ranks 1 and 2 of 3) unlike their
    events, and a node block damaged behind a right CRC (a rank's walk fails) - the
    problems of the serial verify, on 2 and 3 ranks; every other rank checks the node
    blocks its walk decodes for rank 0."""
    sound = ring_archive(tmp_path, 3, 3000, aggregation=1000.0, checkpoint_interval=500)

    def sent_messages(values):  # the messages a checkpoint counts: location 2's last but one, and one of 1's
        values[15][-2] += 1
        values[15][len(values[15]) // 2] += 1
    checkpoints = rebuild(sound, tmp_path / "checkpoints.ccg", damage_stream(SectionKind.CHECKPOINT_TABLE, sent_messages))
    with ccg.open(sound) as archive:
        last_block = max((e for e in archive.sections if e.kind in NODE_KINDS), key=lambda e: e.first).offset
    nodes = rebuild(sound, tmp_path / "nodes.ccg", lambda entry, raw: raw[:-9] + bytes([raw[-9] ^ 0x5A]) + raw[-8:]
                    if entry.offset == last_block else raw)
    paths = [sound, checkpoints, nodes]
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    problems = [verify(path) for path in paths]
    assert problems[0] == [] and all(problems[1:])
    assert {"location 1", "location 2"} <= {problem.reason.split(":")[0] for problem in problems[1]}
    assert any(problem.kind in NODE_KINDS for problem in problems[2])
    serial = [[problem.to_dict() for problem in found] for found in problems]
    for ranks in (2, 3):
        done = mpirun(ranks, str(ROOT / "tests" / "mpi_verify.py"), *map(str, paths))
        assert done.returncode == 0, done.stderr
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        assert [answer["problems"] for answer in answers] == serial
        shares = answers[0]["walked"]  # the sound archive's: consecutive, every location on some rank
        assert len(shares) == ranks and shares[0][0] == -math.inf and shares[-1][1] == math.inf
        assert all(a[1] == b[0] for a, b in zip(shares, shares[1:]))
        assert all(first < end for first, end in shares[1:]) and shares[1][0] <= 2
        assert answers[0]["checked"][0] == 0 and all(answers[0]["checked"][1:])
    # a rank that holds the columns of one block's check at most leaves the others to rank 0
    done = mpirun(2, str(ROOT / "tests" / "mpi_verify.py"), *map(str, paths), env={"CHECKS_BYTES": "1"})
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["problems"] for answer in answers] == serial and answers[0]["checked"] == [0, 1]


def test_a_rank_waiting_for_another_sleeps(tmp_path):
    """While rank 0 takes a step of a second, rank 1 waits in `World.agree` asleep: under
    Open MPI's blocking allgather it polled, about half a second of CPU here."""
    done = mpirun(2, str(ROOT / "tests" / "mpi_arrive.py"), "1.0", str(tmp_path))
    assert done.returncode == 0, done.stderr
    steps = {int(path.name[4:]): tuple(map(float, path.read_text().split())) for path in tmp_path.glob("rank*")}
    assert set(steps) == {0, 1}
    cpu, wall = steps[1]
    assert wall >= 1.0 and cpu < 0.25, steps
