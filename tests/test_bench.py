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
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--repeat", "1", "--json", str(out)],
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


def test_help_exits_zero():
    done = subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "--repeat" in done.stdout and "--quick" in done.stdout and "--json" in done.stdout
