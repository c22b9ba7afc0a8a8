"""Smoke test of the query benchmark (tools/bench.py query, quick mode, one repeat)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_quick_query_benchmark(tmp_path):
    out = tmp_path / "bench.json"
    env = {**os.environ, "CCG_BENCH_OUT": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "bench.py"), "query", "--quick", "--repeat", "1",
                           "--events-per-location", "2000", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    entries = json.loads(out.read_text())["benchmarks"]["query"]
    assert {e["trace"] for e in entries} >= {"jittered-16k-lossless", "jittered-16k-lossy"}
    for e in entries:
        assert e["agrees"], e["trace"]  # the numpy baseline computes the same profile
        assert e["first_s"] > 0 and e["baseline_s"] > 0 and len(e["successive_ms"]) == 4
    assert "Nested windows" in done.stdout
