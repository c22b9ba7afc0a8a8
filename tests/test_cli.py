"""The `ccg` command line: in-process through `main` and as a real console script."""

from __future__ import annotations

import csv
import gc
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import ccgformat as ccg
from ccgformat import formats
from ccgformat.archive import SectionKind
from ccgformat.archive.layout import BLOCK_HEADER, NODE_KINDS
from ccgformat.cli import main
from ccgformat.errors import FormatError
from ccgformat.model import COLUMNS, KIND_FIELDS, EventKind

from .test_graph_lossy import check_location
from .traces import coded_minor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402

LOCATIONS = 3
EVENTS = 1000  # per location; enough jsonl output to overflow a pipe buffer


def all_events(archive_or_graph, location):
    return [e for batch in archive_or_graph.location(location).events() for e in batch.rows()]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A synthetic trace as .npz (the way tools/synth.py writes it), its events, and an archive."""
    folder = tmp_path_factory.mktemp("cli")
    definitions, unshifted = synth.synthesize(LOCATIONS, EVENTS, jitter=0.3, seed=3, batch_size=500)

    def events(loc):  # synth starts location r a millisecond after r - 1: make them overlap
        for batch in unshifted(loc):
            batch.time -= 1_000_000 * loc - 7 * loc
            yield batch

    npz = folder / "trace.npz"
    synth.write_npz(npz, definitions, events)
    originals = {loc: [e for b in events(loc) for e in b.rows()] for loc in range(LOCATIONS)}
    archive = folder / "trace.ccg"
    ccg.write_trace(archive, definitions, ((loc, events(loc)) for loc in range(LOCATIONS)),
                    nodes_per_block=400, checkpoint_interval=200, level=3)
    return {"npz": npz, "ccg": archive, "events": originals, "definitions": definitions}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# --------------------------------------------------------------------------- convert

def test_convert_npz_is_lossless_by_default(trace, tmp_path, capsys):
    code, out, err = run(capsys, "convert", trace["npz"], tmp_path / "a.ccg", "--level", 3)
    assert code == 0, err
    assert err == ""  # stderr is not a terminal: no progress line
    assert f"{LOCATIONS * len(trace['events'][0]):,} events" in out and "bytes/event" in out
    assert "nodes" in out and "->" in out
    with ccg.open(tmp_path / "a.ccg") as ar:
        assert ar.params == ccg.Params()
        assert ar.definitions.regions == trace["definitions"].regions
        assert ar.definitions.provenance["generator"] == "tools/synth.py"
        for loc, events in trace["events"].items():
            assert all_events(ar, loc) == events


def test_convert_ccg_to_ccg_keeps_events_and_provenance_with_new_parameters(trace, tmp_path, capsys):
    target = tmp_path / "b.ccg"
    code, out, err = run(capsys, "convert", trace["ccg"], target, "--branching", 5, "--search-length", 7,
                         "--leaf-window", 3, "--level", 2, "--checkpoint-interval", 50, "--quiet")
    assert (code, out, err) == (0, "", "")
    with ccg.open(trace["ccg"]) as source, ccg.open(target) as result:
        assert result.params == ccg.Params(branching=5, search_length=7, leaf_window=3)
        assert result.parameters["zstd_level"] == 2 and result.parameters["checkpoint_interval"] == 50
        assert result.definitions == source.definitions
        assert result.parameters["provenance"] == source.parameters["provenance"]
        for loc in source.locations:
            assert all_events(result, loc) == all_events(source, loc)
        assert result.checkpoints(SectionKind.SUMMARY, 0)[0]["index"] == 50


def test_convert_with_bounds_changes_the_parameters_and_stays_within_them(trace, tmp_path, capsys):
    code, _, err = run(capsys, "convert", trace["npz"], tmp_path / "l.ccg", "--abs", 400, "--rel", 0.2,
                       "--rel-size", 0.1, "--rel-metric", 0.05, "--level", 3, "-q")
    assert code == 0, err
    params = ccg.Params(abs_dev=400, rel_dev=0.2, rel_size=0.1, rel_metric=0.05)
    with ccg.open(tmp_path / "l.ccg") as lossy, ccg.open(trace["ccg"]) as exact:
        assert lossy.params == params
        assert lossy.stats.n < exact.stats.n  # jittered repetitions now merge
        for loc, events in trace["events"].items():
            check_location(events, all_events(lossy, loc), params)


def test_detection_uses_content_not_the_extension(trace, tmp_path, capsys):
    disguised_ccg = tmp_path / "archive.dat"
    disguised_npz = tmp_path / "trace.ccg"
    shutil.copy(trace["ccg"], disguised_ccg)
    shutil.copy(trace["npz"], disguised_npz)
    assert formats.detect(disguised_ccg) == "ccg"
    assert formats.detect(disguised_npz) == "npz"
    for source in (disguised_ccg, disguised_npz):
        target = tmp_path / (source.stem + ".out")
        code, out, err = run(capsys, "convert", source, target, "--level", 1)
        assert code == 0, err
        assert ("ccg -> ccg" if source is disguised_ccg else "npz -> ccg") in out
        with ccg.open(target) as ar:
            assert all_events(ar, 2) == trace["events"][2]


def test_from_overrides_detection(trace, tmp_path, capsys):
    code, _, err = run(capsys, "convert", trace["npz"], tmp_path / "x.ccg", "--from", "npz", "-q", "--level", 1)
    assert code == 0, err
    code, _, err = run(capsys, "convert", trace["npz"], tmp_path / "y.ccg", "--from", "ccg")
    assert code == 1 and err.startswith("ccg: ") and "magic" in err
    assert not (tmp_path / "y.ccg").exists()


@pytest.mark.parametrize("content", [b"", b"just some text\n", b"PK\x03\x04 not really a zip",
                                     b"\x89CCG\r\n\x1a\n truncated archive"])
def test_unknown_or_broken_input_exits_1_with_a_message_and_no_output(tmp_path, capsys, content):
    source = tmp_path / "in.ccg"
    source.write_bytes(content)
    code, out, err = run(capsys, "convert", source, tmp_path / "out.ccg")
    assert code == 1 and out == ""
    assert err.startswith("ccg: ") and str(source) in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not (tmp_path / "out.ccg").exists() and leftovers(tmp_path) == []


def test_unknown_format_is_a_format_error_naming_the_known_ones(tmp_path):
    (tmp_path / "f").write_bytes(b"%PDF-1.4")
    with pytest.raises(FormatError, match="unrecognised input format.*ccg, npz"):
        formats.detect(tmp_path / "f")
    with pytest.raises(FormatError, match="no such file"):
        formats.read(tmp_path / "missing")
    with pytest.raises(FormatError, match="unknown format name"):
        formats.read(tmp_path / "f", "otf9")
    assert isinstance(FormatError("x"), ccg.CcgError)


def test_a_failure_midway_leaves_no_target(trace, tmp_path, capsys):
    definitions, events = synth.synthesize(2, 200, seed=1)
    columns = {f"loc{i}_{c}": getattr(b, c) for i in range(2) for b in [next(iter(events(i)))]
               for c in ("time", "kind") + COLUMNS}
    columns["loc1_time"] = columns["loc1_time"][::-1].copy()  # location 1 goes back in time
    np.savez_compressed(tmp_path / "bad.npz",
                        definitions_json=np.array(json.dumps(definitions.to_dict())), **columns)
    target = tmp_path / "out.ccg"
    code, _, err = run(capsys, "convert", tmp_path / "bad.npz", target)
    assert code == 1 and "location 1" in err and "timestamp decreases" in err
    assert not target.exists() and leftovers(tmp_path) == []


def test_repair_closes_regions_left_open(tmp_path, capsys):
    definitions, events = synth.synthesize(2, 100, seed=4)
    columns = {f"loc{i}_{c}": getattr(b, c)[:-1] for i in range(2) for b in [next(iter(events(i)))]
               for c in ("time", "kind") + COLUMNS}  # drop main's LEAVE
    np.savez(tmp_path / "open.npz", definitions_json=np.array(json.dumps(definitions.to_dict())), **columns)
    code, _, err = run(capsys, "convert", tmp_path / "open.npz", tmp_path / "r.ccg")
    assert code == 1 and "still open" in err and not (tmp_path / "r.ccg").exists()
    code, _, err = run(capsys, "convert", tmp_path / "open.npz", tmp_path / "r.ccg", "--repair", "-q")
    assert code == 0, err
    main_name = definitions.regions[0].name
    for location in (0, 1):
        assert f"repaired: location {location}: closed open {main_name!r} at time" in err
    with ccg.open(tmp_path / "r.ccg") as ar:
        last = ar.location(1).event(-1)
        assert (last.kind, last.ref, last.time) == (EventKind.LEAVE, 0, int(columns["loc1_time"][-1]))


def test_malformed_npz_members_are_format_errors(trace, tmp_path, capsys):
    definitions, events = synth.synthesize(1, 50)
    good = {f"loc0_{c}": getattr(next(iter(events(0))), c) for c in ("time", "kind") + COLUMNS}
    cases = {
        "missing column": {k: v for k, v in good.items() if k != "loc0_value"},
        "float column": {**good, "loc0_size": good["loc0_size"].astype(float)},
        "short column": {**good, "loc0_tag": good["loc0_tag"][:3]},
        "undefined location": {**good, **{k.replace("loc0", "loc5"): v for k, v in good.items()}},
    }
    for name, members in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, definitions_json=np.array(json.dumps(definitions.to_dict())), **members)
        code, _, err = run(capsys, "convert", path, tmp_path / "o.ccg")
        assert code == 1 and err.startswith(f"ccg: {path}: "), (name, err)
    np.savez(tmp_path / "defs.npz", definitions_json=np.array("{}"), **good)
    code, _, err = run(capsys, "convert", tmp_path / "defs.npz", tmp_path / "o.ccg")
    assert code == 1 and "valid definitions" in err
    assert not (tmp_path / "o.ccg").exists()


def test_bad_parameters_are_usage_errors(trace, tmp_path, capsys):
    for option in (["--branching", "1"], ["--abs", "-3"], ["--rel", "x"], ["--level", "23"],
                   ["--checkpoint-interval", "0"], ["--from", "otf9"]):
        code, _, err = run(capsys, "convert", trace["npz"], tmp_path / "u.ccg", *option)
        assert code == 2 and "usage:" in err, option
    code, _, err = run(capsys, "convert", trace["ccg"], trace["ccg"])
    assert code == 2 and "input" in err
    assert not (tmp_path / "u.ccg").exists()


# --------------------------------------------------------------------------- info

def test_info_json_describes_the_archive(trace, capsys):
    code, out, _ = run(capsys, "info", trace["ccg"], "--json")
    assert code == 0
    document = json.loads(out)
    with ccg.open(trace["ccg"]) as ar:
        stats = ar.stats
        node_kinds = {e.kind for e in ar.sections if e.kind in NODE_KINDS}
        assert document["format_version"] == f"1.{coded_minor(node_kinds, 5)}"
        # info lists the blocks and the bundles' members, whose stored bytes are the bundle's
        bundles = [e for e in ar._directory if e.kind == SectionKind.DICTIONARY_BUNDLE]
        assert bundles, "the small sections of this archive are bundled"
        assert document["sections"]["DICTIONARY_BUNDLE"]["stored_bytes"] == sum(e.length for e in bundles)
        assert document["locations"] == LOCATIONS
        assert document["events"] == stats.events == sum(map(len, trace["events"].values()))
        assert document["time_range"] == list(ar.time_range)
        assert document["timer_resolution"] == 1_000_000_000
        assert (document["N"], document["n"]) == (stats.N, stats.n)
        assert document["R_nodes"] == pytest.approx(stats.r_nodes)
        assert document["R_memory"] == pytest.approx(stats.r_memory)
        assert document["file_bytes"] == os.path.getsize(trace["ccg"])
        assert document["bytes_per_event"] == pytest.approx(stats.file_bytes / stats.events)
        nodes = [e for e in ar.sections if e.kind in NODE_KINDS]
    assert document["parameters"] == {"abs_dev": 0, "rel_dev": 0.0, "rel_size": 0.0, "rel_metric": 0.0,
                                      "branching": 20, "search_length": 16, "zstd_level": 3,
                                      "checkpoint_interval": 200, "nodes_per_block": 400, "leaf_window": 4,
                                      "representatives": 16}
    assert document["provenance"]["source_format"] == "synthetic"
    assert document["converter"].startswith("ccgformat ")
    names = {SectionKind(kind).name for kind in node_kinds}
    for name in names:
        listed = [e for e in nodes if SectionKind(e.kind).name == name]
        assert document["sections"][name] == {"blocks": len(listed),
                                              "stored_bytes": sum(e.length for e in listed if e.member < 0),
                                              "raw_bytes": sum(e.raw_length for e in listed)}
    assert len(nodes) > 1
    # a trace this small holds no aggregation level within the writer's 2% budget
    assert set(document["sections"]) == names | {"CHECKPOINT_TABLE", "DEFINITIONS", "PARAMETERS", "ROOT_TABLE",
                                              "DICTIONARY_BUNDLE"}


def test_info_shows_the_leaf_window_of_files_before_it_as_0(capsys):
    vector = Path(__file__).resolve().parent.parent / "spec" / "vectors" / "1.3" / "minimal.ccg"
    code, out, _ = run(capsys, "info", vector, "--json")
    assert code == 0 and json.loads(out)["parameters"]["leaf_window"] == 0


def test_info_text(trace, capsys):
    code, out, _ = run(capsys, "info", trace["ccg"])
    assert code == 0
    with ccg.open(trace["ccg"]) as archive:
        version = f"1.{coded_minor((e.kind for e in archive.sections), 5)}"
    for words in (f"format version    {version}", "locations         3", "nodes N -> n", "R_nodes", "R_memory",
                  "bytes/event", "abs=0 rel=0.0", "b=20 L=16 leaf_window=4 representatives=16 zstd=3 checkpoint_interval=200",
                  "generator=tools/synth.py", "NODES", "ROOT_TABLE"):
        assert words in out, words


# --------------------------------------------------------------------------- verify

def nodes_blocks(path):
    with ccg.open(path) as ar:
        return sorted((e for e in ar._directory if e.kind in NODE_KINDS), key=lambda e: e.offset)


def test_verify_a_sound_archive(trace, capsys):
    code, out, _ = run(capsys, "verify", trace["ccg"])
    assert code == 0 and out.startswith("ok: ") and f"{LOCATIONS} locations" in out
    code, out, _ = run(capsys, "verify", trace["ccg"], "--json")
    assert code == 0 and json.loads(out) == {"path": str(trace["ccg"]), "ok": True, "problems": []}


def test_verify_names_the_block_with_a_flipped_byte(trace, tmp_path, capsys):
    block = nodes_blocks(trace["ccg"])[1]
    data = bytearray(trace["ccg"].read_bytes())
    data[block.offset + BLOCK_HEADER.size + block.length // 3] ^= 0x01
    damaged = tmp_path / "flipped.ccg"
    damaged.write_bytes(bytes(data))
    code, out, _ = run(capsys, "verify", damaged)
    assert code == 1
    first = out.splitlines()[0]
    name = SectionKind(block.kind).name
    assert first.startswith("FAILED: ") and f"{name} block at byte {block.offset}" in first and "1 problem" in first
    code, out, _ = run(capsys, "verify", damaged, "--json")
    document = json.loads(out)
    assert code == 1 and document["ok"] is False
    assert document["problems"][0]["offset"] == block.offset and document["problems"][0]["kind"] == name
    # reading through the damage elsewhere is a clean exit 1 as well
    code, out, err = run(capsys, "cat", damaged)
    assert code == 1 and err.startswith("ccg: ") and f"at byte {block.offset}" in err and "Traceback" not in err


def test_verify_a_truncated_file(trace, tmp_path, capsys):
    damaged = tmp_path / "short.ccg"
    damaged.write_bytes(trace["ccg"].read_bytes()[:-5])
    code, out, _ = run(capsys, "verify", damaged)
    assert code == 1 and "1 problem" in out and "truncated" in out
    code, _, err = run(capsys, "info", damaged)
    assert code == 1 and err.startswith("ccg: ") and "truncated" in err


def test_missing_files_exit_1(tmp_path, capsys):
    for command in ("info", "verify", "cat"):
        code, _, err = run(capsys, command, tmp_path / "nope.ccg")
        assert code == 1 and err.startswith("ccg: ") and "nope.ccg" in err, command


# --------------------------------------------------------------------------- cat

def expected(trace, locations=None, start=None, end=None):
    rows = []
    for loc in (locations or sorted(trace["events"])):
        rows += [(e.time, loc, e) for e in trace["events"][loc]
                 if (start is None or e.time >= start) and (end is None or e.time < end)]
    rows.sort(key=lambda row: (row[0], row[1]))  # stable: a location's ties keep their order
    return [(loc, e) for _, loc, e in rows]


def window(trace):
    times = sorted(e.time for events in trace["events"].values() for e in events)
    return times[len(times) // 4], times[len(times) // 2]


def used(event):
    fields = KIND_FIELDS[EventKind(event.kind)]
    return fields.hard + fields.soft


def test_cat_text_resolves_region_names(trace, capsys):
    start, end = window(trace)
    code, out, _ = run(capsys, "cat", trace["ccg"], "--location", 2, "--location", 0, "--start", start, "--stop", end)
    assert code == 0
    names = [r.name for r in trace["definitions"].regions]
    lines = []
    for loc, e in expected(trace, [0, 2], start, end):
        kind = EventKind(e.kind)
        detail = (names[e.ref] if kind in (EventKind.ENTER, EventKind.LEAVE)
                  else " ".join(f"{n}={getattr(e, n)}" for n in used(e)))
        lines.append(f"{loc} {e.time} {kind.name} {detail}".rstrip())
    assert out.splitlines() == lines
    assert len(lines) > 100 and {line.split()[0] for line in lines} == {"0", "2"}
    assert any(" SEND ref=" in line and "size=1024" in line for line in lines)


def test_cat_csv_matches_the_api(trace, capsys):
    start, _ = window(trace)
    code, out, _ = run(capsys, "cat", trace["ccg"], "--format", "csv", "--start", start, "--location", 1)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["location", "time", "kind", "ref", "comm", "tag", "request", "size", "recv_size", "value"]
    want = [[str(loc), str(e.time), EventKind(e.kind).name]
            + [str(getattr(e, c)) if c in used(e) else "" for c in COLUMNS]
            for loc, e in expected(trace, [1], start)]
    assert rows[1:] == want and len(want) > 100


def test_cat_jsonl_matches_the_api(trace, capsys):
    _, end = window(trace)
    code, out, _ = run(capsys, "cat", trace["ccg"], "--format", "jsonl", "--end", end)
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    want = [{"location": loc, "time": e.time, "kind": EventKind(e.kind).name, **{n: getattr(e, n) for n in used(e)}}
            for loc, e in expected(trace, None, None, end)]
    assert records == want
    assert {r["location"] for r in records} == {0, 1, 2}
    assert any(r["kind"] == "METRIC" and r["value"] > 0 for r in records)


def test_cat_end_is_an_alias_of_stop(trace, capsys):
    start, end = window(trace)
    outputs = [run(capsys, "cat", trace["ccg"], "--start", start, option, end) for option in ("--stop", "--end")]
    assert outputs[0] == outputs[1] and outputs[0][0] == 0
    assert outputs[0][1].splitlines() == [line for line in run(capsys, "cat", trace["ccg"])[1].splitlines()
                                          if start <= int(line.split()[1]) < end]
    code, out, _ = run(capsys, "cat", "--help")
    assert code == 0 and "--stop T, --end T" in out and "START <= time < STOP" in " ".join(out.split())


def test_cat_of_an_empty_window_prints_only_the_header(trace, capsys):
    code, out, _ = run(capsys, "cat", trace["ccg"], "--format", "csv", "--start", 10, "--end", 20)
    assert code == 0 and out.count("\n") == 1


def test_cat_of_an_unknown_location_is_a_usage_error(trace, capsys):
    code, out, err = run(capsys, "cat", trace["ccg"], "--location", 9)
    assert code == 2 and out == "" and "no location 9" in err


# --------------------------------------------------------------------------- usage

@pytest.mark.parametrize("command", [[], ["convert"], ["info"], ["verify"], ["cat"]])
def test_help_for_every_command(capsys, command):
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0 and out.startswith("usage: ccg")


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["convert", "only-one"], ["cat", "x.ccg", "--format", "xml"],
                                  ["info"], ["verify", "a", "b"], ["--bogus"]])
def test_usage_errors_exit_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and "usage:" in err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.splitlines()[0] == f"ccg {ccg.__version__}"


# --------------------------------------------------------------------------- real processes

#: this checkout's ``ccg`` (a ``ccg`` on PATH may be another installation), run from the
#: checkout's root so that its package is the one imported
CCG = [sys.executable, "-m", "ccgformat.cli"]


def test_module_entry_point(trace, tmp_path):
    done = subprocess.run(CCG + ["verify", str(trace["ccg"])], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("ok: "), done.stderr
    done = subprocess.run(CCG + ["info", str(tmp_path / "missing.ccg")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1 and done.stderr.startswith("ccg: ") and "Traceback" not in done.stderr
    done = subprocess.run(CCG + ["cat", "--format"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "usage:" in done.stderr


def _process_command(argv: list[str], *, thread: bool = False) -> subprocess.CompletedProcess[str]:
    """``main()`` run as a process's command with ``argv`` (and, with ``thread``, another
    thread alive meanwhile), after an exit handler that prints ``handler`` was registered
    and followed by a print of what `main` returned."""
    probe = ("import atexit, gc, sys, threading, time\n"
             "atexit.register(lambda: print('handler', gc.get_freeze_count() > 0))\n"
             + ("threading.Thread(target=time.sleep, args=(1,)).start()\n" if thread else "") +
             "from ccgformat.cli import main\n"
             f"sys.argv = ['ccg', *{argv!r}]\n"
             "status = main()\n"
             "print('returned', status, gc.get_freeze_count() > 0)\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("argv, status", [(["cat", "{ccg}"], 0), (["info", "{missing}"], 1), (["cat", "--format"], 2)])
def test_the_process_command_ends_the_process(trace, tmp_path, argv, status):
    """``main()`` as the process's command ends the process with the command's status once
    its output is flushed and the exit handlers ran (without the interpreter's teardown):
    it never returns."""
    argv = [part.format(ccg=trace["ccg"], missing=tmp_path / "missing.ccg") for part in argv]
    done = _process_command(argv)
    assert done.returncode == status, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "handler False" and not any(line.startswith("returned") for line in lines)
    if argv[0] == "cat" and status == 0:  # the whole output, flushed before the process ended
        assert lines[:-1] == subprocess.run(CCG + argv, capture_output=True, text=True, cwd=ROOT).stdout.splitlines()
        assert len(lines) - 1 == ccg.open(trace["ccg"]).stats.events


def test_the_process_command_with_another_thread_alive_returns(trace):
    """With another thread alive the interpreter ends the process (it waits for the
    thread): `main` returns, having frozen what is alive (no last full collection at the
    interpreter's exit); called with arguments (in-process) it leaves the collector alone."""
    done = _process_command(["info", str(trace["ccg"])], thread=True)
    assert done.returncode == 0 and done.stdout.splitlines()[-2:] == ["returned 0 True", "handler True"], done.stderr
    assert main(["info", str(trace["ccg"])]) == 0 and gc.get_freeze_count() == 0


def test_console_script_is_the_module_entry_point():
    """The ``ccg`` script pyproject.toml declares calls the `main` tested here."""
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["ccg"]
    module, name = target.split(":")
    assert getattr(importlib.import_module(module), name) is main


def test_cat_into_a_closed_stdout_is_quiet(trace, capsys, monkeypatch):
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["cat", str(trace["ccg"])]) == 0
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


def test_cat_into_a_closed_pipe_is_quiet(trace):
    process = subprocess.Popen(CCG + ["cat", str(trace["ccg"]), "--format", "jsonl"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    first = process.stdout.readline()
    process.stdout.close()  # like `| head -n 1`
    error = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=60) == 0
    assert json.loads(first)["kind"] == "ENTER"
    assert error == b""


def test_export_writes_each_format_and_reimports_the_same_calls(trace, tmp_path, capsys):
    with ccg.open(trace["ccg"]) as archive:
        original = {loc: [e for b in archive.location(loc).events() for e in b.rows()] for loc in archive.locations}
    for target, options in ((tmp_path / "t.json", []), (tmp_path / "t.bin", ["--to", "paje"]),
                            (tmp_path / "t.otf2", [])):
        code, out, err = run(capsys, "export", trace["ccg"], target, *options)
        assert code == 0, err
        assert out.strip() == f"wrote {target}"
        back = tmp_path / (target.name + ".ccg")
        assert run(capsys, "convert", target, back, "-q")[0] == 0
        with ccg.open(back) as archive:
            events = sorted(e for loc in archive.locations for b in archive.location(loc).events()
                            for e in b.rows())
        expected = sorted(e for rows in original.values() for e in rows)
        calls = (EventKind.ENTER, EventKind.LEAVE)  # what every format keeps, whatever it came from
        assert ([(e.time, e.kind) for e in events if e.kind in calls]
                == [(e.time, e.kind) for e in expected if e.kind in calls]), target
    assert leftovers(tmp_path) == []


def test_export_usage_errors(trace, tmp_path, capsys):
    code, _, err = run(capsys, "export", trace["ccg"], tmp_path / "out.bin")
    assert code == 2 and "cannot tell the export format" in err
    code, _, err = run(capsys, "export", trace["ccg"], tmp_path / "out.json", "--to", "xml")
    assert code == 2 and "usage:" in err
    code, _, err = run(capsys, "export", tmp_path / "missing.ccg", tmp_path / "out.json")
    assert code == 1 and "missing.ccg" in err
    assert list(tmp_path.iterdir()) == []
