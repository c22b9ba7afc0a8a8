"""Smoke test of the benchmark script tools/bench.py (quick mode, one repeat)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ccgformat

from .corpus import corpus_available, require_module

ROOT = Path(__file__).resolve().parent.parent

#: The benchmarks time the installed core in subprocesses. Under the suite's python pass
#: (CCGFORMAT_BACKEND=python) they would time the pure-Python reference for many minutes
#: and check no logic the native pass does not: they run in the native pass.
pytestmark = pytest.mark.skipif(ccgformat.backend == "python",
                                reason="the benchmark smoke tests run in the suite's native pass")
BENCH = ROOT / "tools" / "bench.py"


@pytest.mark.slow
def test_quick_benchmark_writes_one_sane_entry_per_configuration(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "builder", "--quick", "--repeat", "1", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "builder ev/s" in done.stdout
    entries = json.loads(out.read_text())["benchmarks"]["builder"]
    configurations = [(e["trace"], e["params"]) for e in entries]
    assert sorted(configurations) == sorted(
        (trace, params) for trace in ("regular", "jittered") for params in ("lossless", "lossy"))
    by_config = dict(zip(configurations, entries))
    for e in entries:
        assert e["builder_class"] == "ccgformat.graph.builder.Builder"  # the reference, whatever the backend
        assert e["events"] > 0
        assert e["builder_events_per_s"]["median"] > 0
        assert e["baseline_events_per_s"]["median"] > 0
        assert e["N"] >= e["n"] >= 1
        assert e["r_nodes"] >= 1
        assert e["peak_rss_mb"] is None or e["peak_rss_mb"] > 0
    assert by_config["regular", "lossless"]["r_nodes"] > by_config["jittered", "lossless"]["r_nodes"]


@pytest.mark.slow
def test_quick_archive_benchmark_reports_sizes_and_access_times(tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pytest.skip("the archive benchmark compares with Parquet and needs pyarrow (pip install pyarrow)")
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "archive", "--quick", "--skip-10m", "--repeat", "1",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "parquet bytes" in done.stdout and "open ms" in done.stdout
    result = json.loads(out.read_text())
    assert result["meta"]["skip_10m"] is True
    entries = result["benchmarks"]["archive"]
    configurations = [(e["trace"], e["params"]) for e in entries]
    assert sorted(configurations) == sorted(
        (trace, params) for trace in ("regular", "jittered", "ring-regular", "ring-jittered")
        for params in ("lossless", "lossy"))
    by_config = dict(zip(configurations, entries))
    for e in entries:
        assert e["events"] > 0 and e["events"] == e["write_events"]
        assert e["ccg_bytes"] > 0 and e["parquet_bytes"] > 0 and e["zstd_raw_bytes"] > 0
        assert e["ccg_bytes_per_event"] == pytest.approx(e["ccg_bytes"] / e["events"])
        assert e["ratio"] == pytest.approx(e["parquet_bytes"] / e["ccg_bytes"])
        assert sum(part["bytes"] for part in e["sections"].values()) == e["ccg_bytes"]
        node_sections = [e["sections"][k] for k in ("NODES", "PREDICTED_NODES", "CODED_NODES", "CODED_SOFT_NODES")
                         if k in e["sections"]]
        assert sum(part["bytes"] for part in node_sections) + e["sections"].get("DICTIONARY_BUNDLE", {}).get("bytes", 0) > 0
        assert e["node_blocks"] == sum(part["blocks"] for part in node_sections) >= 1
        assert e["floor_bytes"] == 0 if "regular" in e["trace"] else e["floor_bytes"] > 0
        for key in ("open_ms", "event_us", "find_us", "event_cold_ms", "find_cold_ms", "walk_events_per_s"):
            assert e[key]["median"] > 0, key
        assert e["write_seconds"] > 0
        assert e["write_peak_rss_mb"] is None or e["write_peak_rss_mb"] > 0
        assert e["event_cold_breakdown"]["blocks"] >= 1
        assert e["check"] == "ok"
        assert {"open", "warm", "cold"} <= set(e["targets"])
        assert all(isinstance(t["pass"], bool) for t in e["targets"].values())
    assert set(by_config["regular", "lossless"]["targets"]) >= {"size"}
    assert "size" not in by_config["regular", "lossy"]["targets"]
    # the same trace gives the same Parquet file whatever the parameters
    assert by_config["jittered", "lossless"]["parquet_bytes"] == by_config["jittered", "lossy"]["parquet_bytes"]
    assert by_config["regular", "lossless"]["ccg_bytes"] < by_config["jittered", "lossless"]["ccg_bytes"]
    assert by_config["jittered", "lossy"]["ccg_bytes"] <= by_config["jittered", "lossless"]["ccg_bytes"]


def test_a_measured_process_peak_is_its_own_not_the_spawning_process_peak():
    """`benchkit.run_process` reports the child's peak RSS, not the high-water mark of the
    process that spawned it (Linux starts a child's ``ru_maxrss`` there): a parent that
    grew to 400 MB and let it go measures an interpreter doing nothing at far less."""
    code = ("import sys\n"
            f"sys.path.insert(0, {str(ROOT / 'tools')!r})\n"
            "import benchkit\n"
            "grown = bytearray(400 * 2**20)\n"
            "grown[::4096] = b'x' * len(grown[::4096])\n"
            "del grown\n"
            "measured = benchkit.run_process([sys.executable, '-c', 'pass'], 60)\n"
            "print(measured.status, measured.peak_rss_mb)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    status, peak = done.stdout.split()
    assert status == "ok" and 0 < float(peak) < 100


def test_help_exits_zero():
    done = subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "--repeat" in done.stdout and "--quick" in done.stdout and "--json" in done.stdout
    assert "--skip-10m" in done.stdout


@pytest.mark.slow
def test_quick_import_benchmark_converts_every_format_and_the_synthetic_otf2(tmp_path):
    require_module("otf2", "the import benchmark reads OTF2 through the otf2 package")
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "import", "--quick", "--repeat", "1",
                           "--events-per-location", "2000", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    entries = json.loads(out.read_text())["benchmarks"]["import"]
    synthetic = [e for e in entries if e["label"].startswith("synth --otf2")]
    assert len(synthetic) == 2
    for e in synthetic:
        assert e["format"] == "otf2" and e["events"] > 8 * 1900
        assert e["ratio"] == pytest.approx(e["convert_seconds"]["median"] / e["iterate_seconds"]["median"])
        assert e["target"]["pass"] == (e["ratio"] <= 1.25)
    if corpus_available():
        assert {e["format"] for e in entries} >= {"otf2", "otf1", "paje", "epilog", "chrome"}
    for e in entries:
        assert e["convert_events_per_s"]["median"] > 0 and e["ccg_bytes"] > 0


def test_import_locations_benchmark_converts_every_format_at_both_sizes(tmp_path):
    entries = _run_quick("import-locations", tmp_path, "--import-locations", "1500")["benchmarks"]["import-locations"]
    assert [(e["format"], e["locations"]) for e in entries] == [
        (fmt, count) for fmt in ("chrome", "paje", "epilog", "otf1", "otf1-streams") for count in (1000, 1500)]
    for twin, e in zip(entries[::2], entries[1::2]):
        assert e["events"] >= 2 * e["locations"] and "ratio" not in twin
        per_location = [x["convert_seconds"]["median"] / x["locations"] for x in (e, twin)]
        assert e["ratio"] == pytest.approx(per_location[0] / per_location[1])


def test_tables_benchmark_times_each_method_against_events(tmp_path):
    pytest.importorskip("pyarrow")
    entries = _run_quick("tables", tmp_path)["benchmarks"]["tables"]
    assert [e["method"] for e in entries] == ["events", "to_arrow", "to_arrow_batches"]
    assert len({e["rows"] for e in entries}) == 1 and entries[0]["rows"] > 8 * 1000
    for e in entries:
        assert e["vs_events"] == pytest.approx(e["seconds"]["median"] / e["events_seconds"]["median"])
    table = entries[1]
    assert table["table_mb"] > 0 and table["memory_vs_table"] == pytest.approx(table["peak_growth_mb"] / table["table_mb"])


def test_figures_benchmark_draws_each_picture_in_both_formats(tmp_path):
    """A tenth of the timeline (1,000 x 2,000), both patterns and formats, and the overview."""
    entries = _run_quick("figures", tmp_path)["benchmarks"]["figures"]
    assert [e["name"] for e in entries[:4]] == [f"timeline 1,000 x 2,000 {pattern} {suffix}"
                                                for pattern in ("runs", "random") for suffix in ("svg", "png")]
    assert len(entries) == 6 and [e["name"][:22] + e["name"][-4:] for e in entries[4:]] == [
        "overview 1,000 x 100,  svg", "overview 1,000 x 100,  png"]
    for e in entries:
        assert e["bytes"] > 0 and e["ratio"] == pytest.approx(e["seconds"]["median"] / e["baseline_seconds"]["median"])
    random_png, runs_png = entries[3]["bytes"], entries[1]["bytes"]
    assert random_png > 5 * runs_png     # random cells do not compress, runs do


def test_calltree_benchmark_times_both_traces_against_events(tmp_path):
    entries = _run_quick("calltree", tmp_path)["benchmarks"]["calltree"]
    assert [e["trace"].split()[0] for e in entries] == ["jittered", "regular"]
    jittered, regular = entries
    for e in entries:  # 10 call paths (main, iteration, compute, ...) at each of the 8 locations
        assert e["events"] > 8 * 1000 and e["rows"] == 80
        assert e["vs_events"] == pytest.approx(e["seconds"]["median"] / e["events_seconds"]["median"])
        assert e["meets_target"] == (e["seconds"]["median"] <= 1.0)
    assert jittered["events"] == regular["events"] and jittered["n"] > 10 * regular["n"]


def test_merge_benchmark_compares_the_merge_with_the_conversion_at_once(tmp_path):
    convert, merged = _run_quick("merge", tmp_path)["benchmarks"]["merge"]
    assert [convert["step"], merged["step"]] == ["convert at once", "merge"]
    assert convert["events"] == merged["events"] > 16 * 1000
    assert merged["size_ratio"] == pytest.approx(merged["bytes"] / convert["bytes"])
    assert merged["time_ratio"] == pytest.approx(merged["seconds"]["median"] / convert["seconds"]["median"])
    assert 0.5 < merged["size_ratio"] < 2 and merged["peak_rss_mb"] > 0


def test_topology_benchmark_times_each_step_against_info(tmp_path):
    entries = _run_quick("topology", tmp_path)["benchmarks"]["topology"]
    assert [e["step"] for e in entries] == ["info", "metric_integrals middle", "messages", "topology middle d2",
                                            "topology short d2", "topology whole d2", "topology whole leaves"]
    info = entries[0]
    for e in entries:
        assert e["status"] == "ok" and e["hosts"] == 200 and e["peak_rss_mb"] > 0
        assert e["cpu"] > 0  # the processor seconds of the call, reported beside the wall time
        assert e["vs_info"] == pytest.approx(e["seconds"]["median"] / info["seconds"]["median"])
    for e in entries[3:]:
        assert e["meets_target"] == (e["seconds"]["median"] <= 1.0 and e["peak_rss_mb"] <= 500)
    assert entries[2]["size"] == 200 * 2 + 2 * 5 * 3 + 2 * 2  # one link per connection of the platform


def _run_quick(name: str, tmp_path: Path, *extra: str, backend: str | None = None) -> dict:
    """Run one benchmark at 8 x 2,000 requested events per location (the native-* ones
    measure 10 times that), one repeat, under ``backend`` (default: the suite's own);
    returns the JSON results."""
    out = tmp_path / "bench.json"
    command = [sys.executable, str(BENCH), name, "--quick", "--repeat", "1", "--events-per-location", "2000"]
    env = dict(os.environ, **({"CCGFORMAT_BACKEND": backend} if backend else {}))
    done = subprocess.run(command + [*extra, "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _native_or_skip() -> None:
    """The native-* benchmarks run under the native backend whatever the suite's backend;
    only a machine where the C core was not built (no compiler) skips them."""
    try:
        from ccgformat._native import load
        load()
    except ImportError as error:
        pytest.skip(f"the native-* benchmarks need the C core, which is not built here: {error}")


@pytest.mark.slow
def test_quick_native_builder_benchmark_measures_ten_times_the_events_against_the_reference(tmp_path):
    _native_or_skip()
    entries = _run_quick("native-builder", tmp_path, backend="native")["benchmarks"]["native-builder"]
    assert sorted((e["trace"], e["params"]) for e in entries) == sorted(
        (trace, params) for trace in ("regular", "jittered") for params in ("lossless", "lossy"))
    for e in entries:
        assert e["builder_class"] == "ccgformat._native.builder.NativeBuilder"
        assert e["reference"]["builder_class"] == "ccgformat.graph.builder.Builder"
        assert 9 * e["reference"]["events"] < e["events"] < 11 * e["reference"]["events"]  # synth rounds to loops
        assert e["speedup"] == pytest.approx(e["builder_events_per_s"]["median"]
                                             / e["reference"]["builder_events_per_s"]["median"])
        expected = ("PASS" if e["builder_events_per_s"]["median"] >= 10e6 else "FAIL") if e["params"] == "lossless" \
            else "-"
        assert e["target"] == expected


@pytest.mark.slow
def test_quick_native_convert_benchmark_compares_convert_with_the_otf2_iteration(tmp_path):
    require_module("otf2", "the native-convert benchmark reads OTF2 through the otf2 package")
    _native_or_skip()
    result = _run_quick("native-convert", tmp_path, "--baseline-repeat", "2", backend="native")
    assert result["meta"]["baseline_repeat"] == 2
    rows = {e["row"]: e for e in result["benchmarks"]["native-convert"]}
    assert list(rows) == ["convert", "read (native reader)", "read (Python reader)", "otf2 iteration"]
    assert [rows[name]["backend"] for name in rows] == ["native", "native", "python", "otf2"]
    assert [len(e["seconds"]["samples"]) for e in rows.values()] == [1, 1, 2, 2]
    iteration = rows["otf2 iteration"]["seconds"]["median"]
    for e in rows.values():
        assert e["events"] > 8 * 19_000  # 10 x 2000 per location requested, a few dropped at the ends
        assert e["speedup"] == pytest.approx(iteration / e["seconds"]["median"])
        assert e["peak_rss_mb"] is None or e["peak_rss_mb"] > 0
    convert = rows["convert"]
    assert convert["ccg_bytes"] > 0
    assert convert["targets"] == {"rate": convert["events_per_s"]["median"] >= 3e6,
                                  "speedup": convert["speedup"] >= 15}


@pytest.mark.slow
def test_quick_native_walk_benchmark_walks_the_graph_and_the_archive_both_ways(tmp_path):
    _native_or_skip()
    entries = _run_quick("native-walk", tmp_path, backend="native")["benchmarks"]["native-walk"]
    assert sorted((e["trace"], e["source"]) for e in entries) == sorted(
        (trace, source) for trace in ("regular", "jittered") for source in ("graph", "archive"))
    for e in entries:
        assert e["backend"] == "native" and e["events"] > 8 * 19_000
        assert 0 < e["python_read_events"] <= 100_000
        for name in ("read", "event", "find", "checkpoints"):
            native, python = e[name]["native"]["median"], e[name]["python"]["median"]
            assert native > 0 and python > 0
            per_event = name in ("read", "checkpoints")
            assert e[name]["speedup"] == pytest.approx(native / python if per_event else python / native)
        assert e["targets"] == {"read": e["read"]["native"]["median"] >= 20e6,
                                "event": e["event"]["native"]["median"] < 20,
                                "find": e["find"]["native"]["median"] < 20}
    nodes = {e["trace"]: e["nodes"] for e in entries}
    assert nodes["regular"] < nodes["jittered"]


def _scale(tmp_path: Path, *args: str) -> dict:
    """Run ``bench.py scale ARGS`` with its files under ``tmp_path``; returns the JSON results."""
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "scale", "--repeat", "1", *args, "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, CCG_BENCH_OUT=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.mark.slow
def test_quick_scale_benchmark_runs_every_step_of_tiny_shapes_and_their_twins(tmp_path):
    require_module("otf2", "the :otf2 shapes are written with the otf2 package")
    has_pyarrow = importlib.util.find_spec("pyarrow") is not None
    result = _scale(tmp_path, "--shapes", "12x50:otf2", "40x10", "--ratio-locations", "4", "--timeout", "120")
    assert result["meta"]["shapes"] == ["12x50:otf2", "40x10"] and result["meta"]["ratio_locations"] == 4
    entries = result["benchmarks"]["scale"]
    assert [e["step"] for e in entries[:1]] == ["startup"]
    by = {(e["shape"], e["step"]): e for e in entries[1:]}
    steps = ("convert", "open", "profile", "timeline", "messages", "cat", "parquet")
    processes = ("ccg --version (process)", "ccg convert (process)", "otf2-print (process)")
    shapes = {"4x50:otf2": 4 * 48, "12x50:otf2": 12 * 48, "4x10": 4 * 10, "40x10": 40 * 10}  # synth's counts
    assert sorted(by) == sorted([(shape, step) for shape in shapes for step in steps]
                                + [(shape, step) for shape in shapes if shape.endswith(":otf2") for step in processes])
    has_otf2_print = shutil.which("otf2-print") is not None
    for shape in ("4x50:otf2", "12x50:otf2"):
        printed, convert = by[shape, "otf2-print (process)"], by[shape, "ccg convert (process)"]
        # both are timed fresh processes; which is longer for a tiny trace is the load's to say
        assert convert["seconds"]["median"] > 0 and by[shape, "ccg --version (process)"]["seconds"]["median"] > 0
        if has_otf2_print:
            assert printed["print_per_convert"] == pytest.approx(printed["seconds"]["median"]
                                                                 / convert["seconds"]["median"])
            assert printed["target"] in ("PASS", "FAIL < 10x")
        else:
            assert printed["status"].startswith("skipped: otf2-print is not on PATH")
        del by[shape, "otf2-print (process)"]
    for (shape, step), e in by.items():
        if step == "parquet" and not has_pyarrow:
            assert e["status"] == "skipped: needs pyarrow"
            continue
        assert e["status"] == "ok", (shape, step, e["status"])
        assert e["seconds"]["median"] >= 0 and e["peak_rss_mb"] > 0 and e["target"] == "-"
        assert e["us_per_location"] == pytest.approx(1e6 * e["seconds"]["median"] / e["locations"])
    for shape, events in shapes.items():
        opened, convert = by[shape, "open"], by[shape, "convert"]
        assert opened["events"] == convert["events"] == events
        assert convert["events_per_s"] == pytest.approx(events / convert["seconds"]["median"])
        assert sum(part["bytes"] for part in opened["sections"].values()) == opened["ccg_bytes"]
        assert opened["bytes_per_location"] == pytest.approx(opened["ccg_bytes"] / opened["locations"])
        if has_pyarrow:
            assert by[shape, "parquet"]["events"] == events
            assert opened["ccg_per_parquet"] == pytest.approx(opened["ccg_bytes"] / by[shape, "parquet"]["parquet_bytes"])
    for big, twin in (("12x50:otf2", "4x50:otf2"), ("40x10", "4x10")):
        for step in ("convert", "cat"):
            assert by[big, step]["twin"] == twin
            assert by[big, step]["us_ratio"] == pytest.approx(by[big, step]["us_per_location"]
                                                              / by[twin, step]["us_per_location"])
    # the OTF2 inputs stay for the next run, the archives do not
    assert sorted(p.name for p in (tmp_path / "scale").iterdir()) == ["otf2-12x50-spmd", "otf2-4x50-spmd"]


def test_scale_benchmark_reports_a_step_past_its_timeout_and_goes_on(tmp_path):
    result = _scale(tmp_path, "--shapes", "3x10", "--ratio-locations", "3", "--timeout", "0.01")
    statuses = [(e["shape"], e["step"], e["status"]) for e in result["benchmarks"]["scale"]]
    timeout = "timeout after 0.01 s"
    assert statuses == [("-", "startup", timeout), ("3x10", "convert", timeout)] + [
        ("3x10", step, "skipped: no archive") for step in ("open", "profile", "timeline", "messages", "cat")] + [
        ("3x10", "parquet", timeout if importlib.util.find_spec("pyarrow") else "skipped: needs pyarrow")]


def test_scale_targets_are_the_issues():
    sys.path.insert(0, str(ROOT / "tools"))
    from bench_scale import _target

    def entry(shape: str, step: str, seconds: float, rss: float, **more: float) -> dict:
        return {"shape": shape, "step": step, "status": "ok", "peak_rss_mb": rss,
                "seconds": {"median": seconds}, **more}

    assert _target(entry("20000x50:otf2", "convert", 1.9, 900)) == "PASS"
    assert _target(entry("20000x50:otf2", "convert", 2.1, 1100)) == "FAIL > 2 s, > 1024 MB"
    assert _target(entry("20000x50:otf2", "cat", 4.0, 9000)) == "PASS"
    assert _target(entry("1000000x10", "convert", 9.0, 4000, events_per_s=1.9e6)) == "FAIL < 2.00M ev/s"
    assert _target(entry("1000000x10", "open", 0.09, 10)) == "PASS"
    assert _target(entry("20000x50:otf2", "open", 0.5, 10, ccg_per_parquet=0.4)) == "FAIL ccg > parquet/3"
    assert _target(entry("100000x100", "convert", 99, 99999)) == "-"
    # the issue's ring-message trace has the targets of its size
    assert _target(entry("20000x50:otf2:ring", "convert", 2.1, 900)) == "FAIL > 2 s"
    assert _target(entry("20000x50:otf2:ring", "open", 0.5, 10, ccg_per_parquet=0.2)) == "PASS"
    assert _target(entry("-", "startup", 0.2, 50)) == "-"
    assert _target({"shape": "20000x50:otf2", "step": "cat", "status": "timeout after 9 s"}) == "FAIL"
    printed = {"shape": "2000x50:otf2", "step": "otf2-print (process)", "status": "ok"}
    assert _target({**printed, "print_per_convert": 10.5}) == "PASS"
    assert _target({**printed, "print_per_convert": 0.8}) == "FAIL < 10x"
    stopped = {**printed, "status": "killed above 8192 MB RSS"}
    assert _target({**stopped, "print_per_convert_above": 11.7}) == "PASS"
    assert _target({**stopped, "print_per_convert_above": 6.0}) == "-"     # it might still have passed
    failed = {**printed, "status": "failed (exit status 1): Too many opened files"}
    assert _target({**failed, "print_per_convert_above": 10.8}) == "-"     # no run of it to beat
    assert _target({**printed, "status": "skipped: otf2-print is not on PATH"}) == "-"


def test_scale_benchmark_reports_a_step_past_its_memory_limit(tmp_path):
    result = _scale(tmp_path, "--shapes", "3x10", "--ratio-locations", "3", "--memory-limit", "5")
    entries = result["benchmarks"]["scale"]
    assert result["meta"]["memory_limit_mb"] == 5
    assert [(e["step"], e["status"]) for e in entries[:2]] == [("startup", "killed above 5 MB RSS"),
                                                              ("convert", "killed above 5 MB RSS")]
    assert entries[1]["target"] == "-" and "seconds" not in entries[1] and entries[1]["peak_rss_mb"] > 5


def test_the_archive_convert_child_times_both_levels_next_to_the_otf2_iteration(tmp_path):
    require_module("otf2", "the archive benchmark converts its traces from OTF2 through the otf2 package")
    spec = {"trace": "jittered", "kind": "jittered", "locations": 2, "events_per_location": 3000, "params": "lossless",
            "repeat": 2, "baseline_repeat": 1, "otf2_path": str(tmp_path / "j.otf2")}
    done = subprocess.run([sys.executable, str(BENCH), "--child", "archive_convert", json.dumps(spec)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    e = json.loads(done.stdout.strip().splitlines()[-1])
    assert e["convert_events"] > 2 * 2900
    for key in ("convert_default_seconds", "convert_19_seconds"):
        assert len(e[key]["samples"]) == 2 and e[key]["min"] > 0
    assert len(e["iterate_seconds"]["samples"]) == 1
    assert e["speedup"] == pytest.approx(e["iterate_seconds"]["median"] / e["convert_default_seconds"]["median"])
    assert e["speedup_worst"] <= e["speedup"]
    assert e["size_vs_19"] == pytest.approx(e["convert_default_bytes"] / e["convert_19_bytes"])
    assert e["convert_default_bytes"] <= 1.02 * e["convert_19_bytes"]
    assert 0 < e["xz_bytes"] < e["original_bytes"]
    assert e["size_vs_xz"] == pytest.approx(e["convert_default_bytes"] / e["xz_bytes"])
    assert [len(e[f"cpu_{name}_seconds"]["samples"]) for name in ("default", "19", "iterate")] == [2, 2, 1]
    assert e["cpu_speedup"] == pytest.approx(e["cpu_iterate_seconds"]["median"] / e["cpu_default_seconds"]["median"])
    assert list(tmp_path.iterdir()) == []  # the OTF2 folder and the archives are removed


def test_scale_shapes_name_their_pattern():
    sys.path.insert(0, str(ROOT / "tools"))
    from bench_scale import Shape

    ring = Shape.parse("20000x50:otf2:ring")
    assert (ring.pattern, ring.name, ring.target_name) == ("ring", "20000x50:otf2:ring", "20000x50:otf2")
    assert ring.twin(1000).name == "1000x50:otf2:ring" and ring.synth_args()["pattern"] == "ring"
    assert Shape.parse("1000000x10").pattern == "single" and Shape.parse("40x50").pattern == "spmd"
    assert Shape.parse("40x50:random").name == "40x50:random"
    with pytest.raises(ValueError, match="PATTERN"):
        Shape.parse("40x50:otf2:zigzag")


def _bench_module(name: str):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "tools"))


def test_long_benchmark_growth_projection_and_targets():
    """Growth per 10^6 events against the 1 M twin, the line to 10^9, and the issue's
    targets, from entries made up here (each figure computed by hand)."""
    bench_long = _bench_module("bench_long")

    def entry(length, step, seconds, mb, events):
        return {"length": length, "variant": "jittered", "step": step, "events": events, "status": "ok",
                "peak_rss_mb": mb, "seconds": {"median": seconds, "min": seconds, "max": seconds}}

    entries = [entry("1m", "convert", 1.0, 300.0, 1_000_000), entry("30m", "convert", 20.0, 900.0, 30_000_000),
               entry("30m", "messages", 5.0, 1100.0, 30_000_000), entry("100m", "timeline", 1.5, 200.0, 100_000_000)]
    bench_long.summarise(entries)
    convert = entries[1]
    assert convert["mb_per_million"] == pytest.approx(600 / 29)
    assert convert["s_per_million"] == pytest.approx(19 / 29)
    assert convert["projected_mb"] == pytest.approx(900 + 600 / 29 * 970)
    assert convert["events_per_s"] == pytest.approx(1.5e6)
    assert convert["verdict"] == "PASS"                      # <= 1 GB and >= 1.5 M ev/s
    assert entries[2]["verdict"] == "FAIL"                   # 1.1 GB, and 6 M ev/s passes alone
    assert entries[3]["verdict"] == "FAIL" and "<= 1 s" in entries[3]["target"]
    assert "mb_per_million" not in entries[0] and entries[0]["verdict"] == "-"


@pytest.mark.slow
def test_long_benchmark_runs_its_steps_as_processes(tmp_path, monkeypatch):
    """Tiny lengths in place of 1 M and 30 M: every chosen step runs, as a process, on
    both; the growth figures appear."""
    require_module("otf2", "the long benchmark writes its traces with tools/synth.py --otf2")
    bench_long = _bench_module("bench_long")
    monkeypatch.setattr(bench_long, "LENGTHS", {"1m": (2, 400), "30m": (2, 1600)})
    monkeypatch.setattr(bench_long, "CACHE", tmp_path)
    options = type("Options", (), {"lengths": ["1m", "30m"], "variants": ["jittered"], "timeout": 120.0,
                                   "memory_limit": 4096.0, "repeat": 1,
                                   "steps": ["convert", "profile", "aggregate 30", "export chrome"]})()
    entries = bench_long.run(options)
    assert [(e["length"], e["step"]) for e in entries] == [
        (length, step) for length in ("1m", "30m") for step in options.steps]
    assert all(e["status"] == "ok" and e["seconds"]["median"] > 0 and e["peak_rss_mb"] > 0 for e in entries)
    assert entries[0]["archive_bytes"] > 0
    assert all("mb_per_million" in e for e in entries[4:])
    assert not list(tmp_path.glob("*export*"))  # the exports are removed after each step


@pytest.mark.slow
def test_quick_logical_benchmark_times_both_schemes_against_messages(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "logical", "--quick", "--repeat", "1", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, CCG_BENCH_OUT=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "ravel vs messages" in done.stdout
    entries = json.loads(out.read_text())["benchmarks"]["logical"]
    assert [e["trace"] for e in entries] == ["2,000 x 50", "16 x 62,500"]
    for e, (messages, events) in zip(entries, [(8_000, 16_000), (83_328, 166_656)]):
        assert e["messages"]["rows"] == messages and e["ravel"]["rows"] == events
        assert e["lamport"]["rows"] == events
        for method in ("ravel", "lamport", "messages"):
            assert e[method]["status"] == "ok" and 0 < e[method]["seconds"]["median"] and e[method]["peak_mb"] > 0
        assert e["ravel"]["vs_messages"] > 0 and e["meets"] is None


def test_slices_benchmark_compares_each_table_step_with_its_baseline(tmp_path):
    """`bench.py slices` on a small archive (the 1 M slot of bench-out/long) and a baseline
    written without the level of 3,000 slices: every table step of both, alternating, with
    the ratio of the medians; the ring row says what is missing."""
    import synth
    definitions, stream = synth.synthesize(2, 3000, jitter=0.2, seed=1, pattern="ring")
    (tmp_path / "long").mkdir()
    (tmp_path / "old").mkdir()
    for folder, slices in ((tmp_path / "long", 3000), (tmp_path / "old", None)):
        ccgformat.write_trace(folder / "long-1m-jittered.ccg", definitions,
                              ((location, stream(location)) for location in range(2)), aggregation=1000.0,
                              slices=slices)
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(BENCH), "slices", "--repeat", "1", "--lengths", "1m", "--variants",
                           "jittered", "--slices-baseline", str(tmp_path / "old"), "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, CCG_BENCH_OUT=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    entries = json.loads(out.read_text())["benchmarks"]["slices"]
    steps = ("info", "timeline", "aggregate 30", "aggregate 100", "aggregate 1000", "aggregate 37", "overview 30")
    assert [(e["step"], e["which"]) for e in entries[:-1]] == [(s, w) for s in steps for w in ("new", "old")]
    for e in entries[:-1]:
        assert e["status"] == "ok" and e["seconds"]["median"] > 0 and e["peak_rss_mb"] > 0
        assert ("ratio" in e) == (e["which"] == "new")
    assert entries[-1]["status"].startswith("skipped: no archive")
