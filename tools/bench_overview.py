"""Overview benchmark (issue 16): the optimal aggregation of papers 000 and 002.

- DP alone, 1,000 leaves x 30 slices (C kernel; the numpy reference as same-run baseline);
- the quality curve, 1,000 x 30 (one DP as the same-run baseline);
- spatial-only aggregation of 1,000,000 leaves (site/cluster/machine/process, 100 each;
  baseline: one numpy pass summing the model's values);
- ``ccg overview`` end to end on a 20,000 ranks x 50 events archive, T = 30, at a given p
  and at the default p (baseline: ``ccg info`` on the same archive), each in a fresh process.

Medians of ``--repeat`` runs with the worst and the median CPU seconds (user + system,
children included: less sensitive to a shared machine than the wall time); ratios to the
baseline of the same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import synth
from benchkit import Column, benchmark, fmt_float, run_repeated

CACHE = Path(os.environ.get("CCG_BENCH_OUT", Path(__file__).resolve().parent.parent / "bench-out"))
TARGETS_S = {"dp 1000x30": 0.05, "curve 1000x30": 5.0, "spatial 1000000": 2.0, "ccg overview 20000x50 p=0.5": 2.0,
             "ccg overview 20000x50 default p": 2.0}


def _model(leaves: int, slices: int, states: int, fanout: int, seed: int = 0) -> Any:
    """A random model: leaves under groups of ``fanout``, Dirichlet shares, some cells idle."""
    from ccgformat.aggregate_model import AggregateModel, Hierarchy
    parents, first, stop = [-1], [0], [leaves]
    level = [(0, 0, leaves)]  # (node, first leaf, stop leaf), built breadth-first then renumbered in preorder
    children: dict[int, list[tuple[int, int, int]]] = {}
    count = 1
    while level:
        nxt = []
        for node, lo, hi in level:
            if hi - lo == 1:
                continue
            size = max(1, -(-(hi - lo) // fanout))
            kids = []
            for a in range(lo, hi, size):
                kids.append((count, a, min(hi, a + size)))
                count += 1
            children[node] = kids
            nxt += kids
        level = nxt
    order: list[tuple[int, int, int, int]] = []
    stack = [(0, -1, 0, leaves)]
    while stack:
        node, parent, lo, hi = stack.pop()
        order.append((node, parent, lo, hi))
        stack += [(k, node, a, b) for k, a, b in reversed(children.get(node, []))]
    index = {node: i for i, (node, _, _, _) in enumerate(order)}
    parents = [index[parent] if parent >= 0 else -1 for _, parent, _, _ in order]
    first = [lo for _, _, lo, _ in order]
    stop = [hi for _, _, _, hi in order]
    hierarchy = Hierarchy(tuple(f"n{i}" for i in range(len(order))), tuple("node" for _ in order),
                          np.array(parents), np.array(first), np.array(stop), np.arange(leaves))
    rng = np.random.default_rng(seed)
    shares = rng.dirichlet(np.ones(states), size=(leaves, slices))
    values = np.floor(shares * 100 * (rng.random((leaves, slices, 1)) > 0.2)).astype(np.int64)
    return AggregateModel(np.arange(slices + 1) * 100, tuple(f"s{x}" for x in range(states)), np.arange(leaves),
                          values, hierarchy)


_CPU: dict[str, list[float]] = {}


def _timed(fn: Any, name: str = "") -> float:
    """Wall seconds of ``fn()``; its CPU seconds (with children's) go to ``_CPU[name]``."""
    cpu = _cpu()
    began = time.perf_counter()
    fn()
    wall = time.perf_counter() - began
    _CPU.setdefault(name, []).append(_cpu() - cpu)
    return wall


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _entry(name: str, seconds: Any, baseline: Any, what: str) -> dict[str, Any]:
    return {"name": name, "median_s": seconds.median, "cpu_s": statistics.median(_CPU.get(name, [0.0])), "worst_s": seconds.max, "baseline_s": baseline.median,
            "baseline": what, "ratio": seconds.median / baseline.median if baseline.median > 0 else None,
            "target_s": TARGETS_S.get(name), "samples": seconds.samples}


def _archive() -> Path:
    """The 20,000 x 50 synthetic archive, built once into bench-out/."""
    import ccgformat
    path = CACHE / "overview-20000x50.ccg"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        definitions, events = synth.synthesize(20_000, 50, pattern="spmd")
        ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(20_000)))
    return path


def _cli(name: str, *args: str) -> float:
    command = [sys.executable, "-m", "ccgformat.cli", *args]
    return _timed(lambda: subprocess.run(command, check=True, stdout=subprocess.DEVNULL), name)


@benchmark("overview", "optimal spatiotemporal aggregation (issue 16): DP, quality curve, 10^6 leaves, ccg overview", [
    ("Medians of the repeats, the worst, and the same-run baseline", [
        Column("what", lambda e: e["name"], "<"),
        Column("median s", lambda e: fmt_float(e["median_s"], 4)),
        Column("worst s", lambda e: fmt_float(e["worst_s"], 4)),
        Column("CPU s", lambda e: fmt_float(e["cpu_s"], 4)),
        Column("target s", lambda e: fmt_float(e["target_s"], 2)),
        Column("baseline", lambda e: e["baseline"], "<"),
        Column("baseline s", lambda e: fmt_float(e["baseline_s"], 4)),
        Column("ratio", lambda e: fmt_float(e["ratio"], 2)),
        Column("target", lambda e: "PASS" if e["target_s"] is None or e["median_s"] <= e["target_s"] else "FAIL", "<"),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    from ccgformat.query.overview_query import overview_of
    from ccgformat.query.overview_curve import explore
    from ccgformat.query.overview_dp import solve, solve_reference
    from ccgformat.query.overview_measures import measures, proportions
    repeat = options.repeat
    entries = []
    model = _model(1000, 30, 8, 10)
    found = measures(model.hierarchy, proportions(model))
    dp = run_repeated(lambda: _timed(lambda: solve(found, 0.3), "dp 1000x30"), max(repeat, 5))
    reference = run_repeated(lambda: _timed(lambda: solve_reference(found, 0.3)), 1)
    entries.append(_entry("dp 1000x30", dp, reference, "numpy reference DP"))
    curve = run_repeated(lambda: _timed(lambda: explore(found), "curve 1000x30"), repeat)
    entries.append(_entry("curve 1000x30", curve, dp, "one DP"))
    big = _model(1_000_000, 1, 2, 100)
    spatial = run_repeated(lambda: _timed(lambda: overview_of(big, 0.1, kind="spatial"), "spatial 1000000"), repeat)
    sums = run_repeated(lambda: _timed(lambda: big.values.sum(axis=0)), repeat)
    entries.append(_entry("spatial 1000000", spatial, sums, "numpy sum of the values"))
    if not getattr(options, "quick", False):
        path = str(_archive())
        info = run_repeated(lambda: _cli("", "info", path), repeat)
        name = "ccg overview 20000x50 p=0.5"
        given = run_repeated(lambda: _cli(name, "overview", path, "--slices", "30", "--p", "0.5", "--json"), repeat)
        entries.append(_entry(name, given, info, "ccg info"))
        name = "ccg overview 20000x50 default p"
        default = run_repeated(lambda: _cli(name, "overview", path, "--slices", "30", "--json"), repeat)
        entries.append(_entry(name, default, info, "ccg info"))
    return entries
