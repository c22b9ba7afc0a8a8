"""Archives merged (issue 40 item 2): `ccgformat.merge` of archives of disjoint locations
against converting all their locations at once, the baseline measured in the same run.

The trace is tools/synth.py's ring pattern with log-normal jitter 0.2 (the shape of
`bench_long`), ``--locations`` x ``--events-per-location`` per part (default 8 x 125,000),
two parts: each part archive holds its locations and the whole definitions, as the ranks
of an MPI conversion write them. Every measurement is a fresh process (`run_child`),
``--repeat`` times: the median wall time of the call, the events per second, the peak
RSS, and the merged archive's size against the archive converted at once (from an npz
file of all locations, `ccgformat.convert`). Target: at most 1.05 times that size, at 5 M
events/s or more. `merge_case` and `measure` are for other benchmarks (``bench.py mpi``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import synth
from benchkit import Column, Stat, benchmark, child_task, fmt_float, fmt_int, fmt_stat, high_water_mb, run_child

PARTS = 2
PATTERN = "ring"
JITTER = 0.2
TARGET_RATIO = 1.05
TARGET_RATE = 5e6


def merge_case(folder: Path, locations: int, per_location: int, parts: int = PARTS, jitter: float = JITTER
               ) -> tuple[list[Path], Path, int]:
    """The part archives (``parts`` of ``locations`` each), the npz file of all their
    locations, and the events: the trace written once into ``folder``."""
    import ccgformat
    total = parts * locations
    definitions, events = synth.synthesize(total, per_location, jitter=jitter, pattern=PATTERN)
    whole = folder / "whole.npz"
    synth.write_npz(whole, definitions, events)
    paths = []
    for part in range(parts):
        path = folder / f"part{part}.ccg"
        ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(part * locations,
                                                                                   (part + 1) * locations)))
        paths.append(path)
    return paths, whole, total * synth.event_count(per_location, PATTERN)


@child_task("merge")
def merge_child(spec: dict[str, Any]) -> dict[str, Any]:
    """``merge`` the archives ``spec["sources"]`` (or ``convert`` ``spec["source"]``) into
    ``spec["target"]``: the call's seconds, the file's bytes and the peak RSS."""
    import ccgformat
    start = time.perf_counter()
    if spec["step"] == "merge":
        ccgformat.merge(spec["sources"], spec["target"])
    else:
        ccgformat.convert(spec["source"], spec["target"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "bytes": os.path.getsize(spec["target"]), "peak_rss_mb": high_water_mb()}


def measure(step: str, spec: dict[str, Any], repeat: int, backend: str | None = None) -> dict[str, Any]:
    """``repeat`` fresh processes of ``merge_child``: the seconds (median, min, max), the
    largest peak RSS and the bytes of the last file."""
    runs = [run_child("merge", {**spec, "step": step}, backend=backend) for _ in range(repeat)]
    return {"seconds": Stat([run["seconds"] for run in runs]).as_dict(), "bytes": runs[-1]["bytes"],
            "peak_rss_mb": max((run["peak_rss_mb"] or 0.0) for run in runs)}


@benchmark("merge", "ccg merge of archives of disjoint locations against converting them at once", [
    ("archives merged (seconds: median (min-max) of fresh processes; size and time over the conversion of all "
     "locations at once in the same run)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("step", lambda e: e["step"], "<"),
        Column("events", lambda e: fmt_int(e["events"])),
        Column("seconds", lambda e: fmt_stat(e["seconds"], lambda x: f"{x:.3f}")),
        Column("M events/s", lambda e: fmt_float(e["events"] / e["seconds"]["median"] / 1e6)),
        Column("bytes", lambda e: fmt_int(e["bytes"])),
        Column("size ratio", lambda e: fmt_float(e.get("size_ratio"), 4)),
        Column("time ratio", lambda e: fmt_float(e.get("time_ratio"), 3)),
        Column("peak RSS MB", lambda e: fmt_float(e["peak_rss_mb"], 1)),
        Column("targets", lambda e: e.get("targets", ""), "<"),
    ]),
])
def merge_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    locations = options.merge_locations
    per_location = options.events_per_location or 125_000
    with tempfile.TemporaryDirectory(prefix="ccg-merge-") as folder:
        parts, whole, events = merge_case(Path(folder), locations, per_location)
        name = f"ring {PARTS} x {locations} x {per_location:,} jitter {JITTER}"
        base = {"trace": name, "events": events}
        print(f"  merge: {name}: converting at once ...", file=sys.stderr, flush=True)
        convert = {**base, "step": "convert at once",
                   **measure("convert", {"source": str(whole), "target": str(Path(folder) / "whole.ccg")},
                             options.repeat)}
        print(f"  merge: {name}: merging ...", file=sys.stderr, flush=True)
        merged = {**base, "step": "merge", **measure("merge", {"sources": [str(p) for p in parts],
                                                               "target": str(Path(folder) / "merged.ccg")},
                                                     options.repeat)}
    merged["size_ratio"] = merged["bytes"] / convert["bytes"]
    merged["time_ratio"] = merged["seconds"]["median"] / convert["seconds"]["median"]
    rate = events / merged["seconds"]["median"]
    merged["targets"] = (f"size {'met' if merged['size_ratio'] <= TARGET_RATIO else 'MISSED'}, "
                         f"rate {'met' if rate >= TARGET_RATE else 'MISSED'}")
    return [convert, merged]


def add_options(parser: argparse.ArgumentParser) -> None:
    """The benchmark's options of bench.py."""
    parser.add_argument("--merge-locations", type=int, default=8, metavar="N",
                        help=f"merge: locations per part archive ({PARTS} parts; default 8)")

