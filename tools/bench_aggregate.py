"""Aggregation benchmark (issue 15): the aggregation tables' cost at conversion and the
time of `Archive.aggregate`.

- 20,000 ranks x 50 events (the OTF2 archive of tools/bench_scale.py's ``20000x50:otf2``
  shape, written by tools/synth.py --otf2 when missing): ``ccg aggregate --slices 30``
  (text, and with --json) against ``ccg info`` of the same archive, each in a fresh
  interpreter, interleaved, --repeat times; target: at most info + 0.5 s.
- Conversion of that trace, of every corpus trace and of the 10M-event trace: the time of a
  conversion with the tables against one without (medians, alternating in one process),
  and the tables' bytes against the rest of the file; target: <= 10% each.
- The 10M-event synthetic trace of tools/bench_query.py, converted once more with the
  tables: random windows at random T <= 1,000, warm (after a first query); target:
  <= 50 ms each.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_query import CACHE, _archives
from bench_scale import Shape, _otf2_source
from benchkit import Column, benchmark, child_task, fmt_float, fmt_int, run_child

SHAPE = Shape.parse("20000x50:otf2")
INFO_MARGIN_S = 0.5
TABLE_SHARE = 0.10
WARM_MS = 50.0
WINDOWS = 30


@child_task("aggregate_convert")
def convert_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Convert ``rounds`` times without the tables and with them, alternately (so that the
    machine's load hits both alike), timing each whole conversion."""
    import ccgformat
    from ccgformat.archive.layout import SectionKind
    seconds: dict[bool, list[float]] = {False: [], True: []}
    size: dict[bool, int] = {}
    for _ in range(spec["rounds"]):
        for tables in (False, True):
            t0 = time.perf_counter()
            ccgformat.convert(spec["source"], spec["archive"], aggregation=tables)
            seconds[tables].append(time.perf_counter() - t0)
            size[tables] = Path(spec["archive"]).stat().st_size
    with ccgformat.open(spec["archive"]) as archive:  # the blocks and bundle members of each kind
        kinds = [entry.kind for entry in archive.sections]
    return {"convert_s": statistics.median(seconds[True]), "plain_s": statistics.median(seconds[False]),
            "file_bytes": size[True], "table_bytes": size[True] - size[False],
            "levels": kinds.count(SectionKind.AGGREGATE_LEVEL), "metric_levels": kinds.count(SectionKind.METRIC_LEVEL)}


@child_task("aggregate_windows")
def windows_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The first whole-trace query (cold), then random windows at random T <= 1,000 (warm)."""
    import ccgformat
    rng = np.random.default_rng(spec["seed"])
    with ccgformat.open(spec["path"]) as archive:
        first, last = archive.time_range
        t0 = time.perf_counter()
        archive.aggregate(1000)
        cold = time.perf_counter() - t0
        times = []
        for _ in range(spec["windows"]):
            a, b = sorted(rng.integers(first, last + 2, size=2).tolist())
            slices = int(rng.integers(1, 1001))
            t0 = time.perf_counter()
            archive.aggregate(slices, a, max(b, a + 1), states=str(rng.choice(["region", "group"])))
            times.append(time.perf_counter() - t0)
        return {"cold_ms": cold * 1e3, "warm_ms": [t * 1e3 for t in times], "events": archive.stats.events,
                "tables": archive.aggregation_tables is not None}


def _command(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ccgformat.cli", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _stat(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "worst": max(values)}


def _cli(path: Path, repeat: int) -> dict[str, Any]:
    runs: dict[str, list[float]] = {"info": [], "aggregate": [], "aggregate_json": []}
    for _ in range(repeat):  # interleaved, so that the machine's load hits all alike
        runs["info"].append(_command(["info", str(path)]))
        runs["aggregate"].append(_command(["aggregate", str(path), "--slices", "30"]))
        runs["aggregate_json"].append(_command(["aggregate", str(path), "--slices", "30", "--json"]))
    return {name: _stat(values) for name, values in runs.items()}


def _share(entry: dict[str, Any]) -> str:
    time_share = entry["convert_s"] / entry["plain_s"] - 1
    byte_share = entry["table_bytes"] / max(entry["file_bytes"] - entry["table_bytes"], 1)
    entry["time_share"], entry["byte_share"] = time_share, byte_share
    return "PASS" if time_share <= TABLE_SHARE and byte_share <= TABLE_SHARE else "FAIL"


def _cli_target(entry: dict[str, Any]) -> str:
    cli = entry["cli"]
    return "PASS" if cli["aggregate"]["median"] <= cli["info"]["median"] + INFO_MARGIN_S else "FAIL"


@benchmark("aggregate", "aggregation tables: conversion cost, ccg aggregate vs ccg info, warm windows", [
    ("Tables at conversion (medians of conversions without and with the tables, alternating in one "
     "process; tables B: the file with them less the file without them)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("no tables s", lambda e: fmt_float(e["plain_s"], 4)),
        Column("tables s", lambda e: fmt_float(e["convert_s"], 4)),
        Column("levels", lambda e: fmt_int(e["levels"])),
        Column("metric levels", lambda e: fmt_int(e["metric_levels"])),
        Column("file B", lambda e: fmt_int(e["file_bytes"])),
        Column("tables B", lambda e: fmt_int(e["table_bytes"])),
        Column("time +%", lambda e: fmt_float(100 * e["time_share"], 1)),
        Column("bytes +%", lambda e: fmt_float(100 * e["byte_share"], 1)),
        Column("target", lambda e: e["target"], "<"),
    ], lambda e: "convert_s" in e),
    ("20,000 x 50: ccg info vs ccg aggregate --slices 30, fresh interpreters (median / worst s)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("info", lambda e: f"{e['cli']['info']['median']:.2f} / {e['cli']['info']['worst']:.2f}"),
        Column("aggregate", lambda e: f"{e['cli']['aggregate']['median']:.2f} / {e['cli']['aggregate']['worst']:.2f}"),
        Column("aggregate --json", lambda e: f"{e['cli']['aggregate_json']['median']:.2f} / "
                                             f"{e['cli']['aggregate_json']['worst']:.2f}"),
        Column("target", lambda e: e["cli_target"], "<"),
    ], lambda e: "cli" in e),
    (f"Random windows at random T <= 1,000 ({WINDOWS} each; ms)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("events", lambda e: fmt_int(e["events"])),
        Column("tables", lambda e: "yes" if e["tables"] else "no"),
        Column("first (cold)", lambda e: fmt_float(e["cold_ms"], 1)),
        Column("warm median", lambda e: fmt_float(statistics.median(e["warm_ms"]), 2)),
        Column("warm worst", lambda e: fmt_float(max(e["warm_ms"]), 2)),
        Column("target", lambda e: "PASS" if max(e["warm_ms"]) <= WARM_MS else "FAIL", "<"),
    ], lambda e: "warm_ms" in e),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    from corpus_root import CORPUS_TRACES, corpus_root
    folder = CACHE / "aggregate"
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    sources = [(SHAPE.name, _otf2_source(SHAPE, CACHE / "scale")[0])]
    sources += [(name, corpus_root().joinpath(*parts)) for name, parts in CORPUS_TRACES.items()
                if corpus_root().joinpath(*parts).exists()]
    for name, source in sources:
        print(f"  converting {name} ...", file=sys.stderr, flush=True)
        target = folder / f"{name.split()[0].replace(':', '-')}.ccg"
        entry = {"trace": name, **run_child("aggregate_convert", {"source": str(source), "archive": str(target),
                                                                  "rounds": max(options.repeat, 5)})}
        entry["target"] = _share(entry)
        if name == SHAPE.name:
            entry["cli"] = _cli(target, options.repeat)
            entry["cli_target"] = _cli_target(entry)
        entries.append(entry)
    large = [a for a in _archives(options) if a["synthetic"] and a["trace"].endswith("lossless")]
    for archive in large:  # rewritten with the tables (the query benchmark's are kept as they are)
        path = folder / f"{archive['trace']}.ccg"
        print(f"  rewriting {archive['trace']} without and with the tables ...", file=sys.stderr, flush=True)
        entry = {"trace": f"{archive['trace']} (rewritten)",
                 **run_child("aggregate_convert", {"source": archive["path"], "archive": str(path),
                                                   "rounds": options.repeat})}
        entry["target"] = _share(entry)
        entries.append(entry)
        for trace, candidate in ((archive["trace"] + " (the query benchmark's)", archive["path"]),
                                 (archive["trace"], str(path))):
            entries.append({"trace": trace, **run_child("aggregate_windows", {"path": candidate, "seed": 7,
                                                                              "windows": WINDOWS})})
    return entries
