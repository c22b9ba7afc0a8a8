"""Smoke test of the query benchmark (tools/bench.py query, quick mode, one repeat)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ccgformat

ROOT = Path(__file__).resolve().parent.parent

#: The benchmarks time the installed core in subprocesses. Under the suite's python pass
#: (CCGFORMAT_BACKEND=python) they would time the pure-Python reference for many minutes
#: and check no logic the native pass does not: they run in the native pass.
pytestmark = pytest.mark.skipif(ccgformat.backend == "python",
                                reason="the benchmark smoke tests run in the suite's native pass")


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
