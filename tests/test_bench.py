"""Smoke test of the benchmark script tools/bench.py (quick mode, one repeat)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "parquet bytes" in done.stdout and "open ms" in done.stdout
    result = json.loads(out.read_text())
    assert result["meta"]["skip_10m"] is True
    entries = result["benchmarks"]["archive"]
    configurations = [(e["trace"], e["params"]) for e in entries]
    assert sorted(configurations) == sorted(
        (trace, params) for trace in ("regular", "jittered") for params in ("lossless", "lossy"))
    by_config = dict(zip(configurations, entries))
    for e in entries:
        assert e["events"] > 0 and e["events"] == e["write_events"]
        assert e["ccg_bytes"] > 0 and e["parquet_bytes"] > 0 and e["zstd_raw_bytes"] > 0
        assert e["ccg_bytes_per_event"] == pytest.approx(e["ccg_bytes"] / e["events"])
        assert e["ratio"] == pytest.approx(e["parquet_bytes"] / e["ccg_bytes"])
        assert sum(part["bytes"] for part in e["sections"].values()) == e["ccg_bytes"]
        assert e["sections"]["NODES"]["bytes"] > 0 and e["node_blocks"] >= 1
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


def test_help_exits_zero():
    done = subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "--repeat" in done.stdout and "--quick" in done.stdout and "--json" in done.stdout
    assert "--skip-10m" in done.stdout


@pytest.mark.slow
def test_quick_import_benchmark_converts_every_format_and_the_synthetic_otf2(tmp_path):
    pytest.importorskip("otf2", reason="the import benchmark reads OTF2 through the otf2 package")
    from .corpus import corpus_root
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
    if corpus_root().is_dir():
        assert {e["format"] for e in entries} >= {"otf2", "otf1", "paje", "epilog", "chrome"}
    for e in entries:
        assert e["convert_events_per_s"]["median"] > 0 and e["ccg_bytes"] > 0
