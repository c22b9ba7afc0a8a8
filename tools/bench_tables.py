"""The events as tables (issue 37): `Archive.to_arrow` of the synthetic SPMD trace
(8 x 125,000 requested events, jitter 0.2, as ``tools/synth.py`` writes it) against
`Archive.events` over the same archive in the same child process (the baseline), and
`to_arrow_batches` streamed; the time's median of the repeats and the peak memory. Unless
``--quick``, the same trace `STREAM_FACTOR` times as long (30 M events) is streamed too,
against `Archive.events` (``--baseline-repeat`` times, default once).

Memory is measured in a fresh child per method, on the first (cold) call: the growth of
the resident set's high-water mark (``VmHWM``, reset before the call) over the resident
set before the call, beside the resulting table's bytes (``Table.nbytes``). Targets: ``to_arrow()`` of 1 M events within
0.5 s and 3 times the table's memory; ``to_arrow_batches()`` of 30 M events within 1 GB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import synth
from benchkit import (Column, Stat, benchmark, child_task, fmt_float, fmt_int, high_water_mb, reset_high_water,
                      rss_now_mb, run_child)

#: the methods timed: name -> what the child does with the open archive (rows, table bytes)
METHODS = ("events", "to_arrow", "to_arrow_batches")
#: the long trace streamed: this many times the events per location
STREAM_FACTOR = 30


def _run(archive: Any, method: str) -> tuple[int, int]:
    """Rows read by ``method`` and the bytes of the table it holds at its end."""
    if method == "events":
        return sum(len(batch) for _, batch in archive.events()), 0
    if method == "to_arrow":
        table = archive.to_arrow()
        return table.num_rows, table.nbytes
    return sum(batch.num_rows for batch in archive.to_arrow_batches()), 0


@child_task("tables")
def tables_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Open ``spec["path"]``, run ``spec["method"]`` once cold (its memory; pyarrow loaded
    before), then time it and `Archive.events` alternately ``spec["repeat"]`` times."""
    import ccgformat
    import pyarrow
    pyarrow.table({"x": [1]}).to_pylist()  # the library loaded before the memory is measured
    with ccgformat.open(spec["path"]) as archive:
        reset_high_water()  # ru_maxrss would hold the parent's peak at the fork
        before = rss_now_mb()
        rows, table_bytes = _run(archive, spec["method"])
        peak = high_water_mb()
        seconds: dict[str, list[float]] = {spec["method"]: [], "events": []}
        for _ in range(spec["repeat"]):
            for method in seconds:
                t0 = time.perf_counter()
                _run(archive, method)
                seconds[method].append(time.perf_counter() - t0)
    own, baseline = Stat(seconds[spec["method"]]), Stat(seconds["events"])
    growth = None if before is None or peak is None else peak - before
    return {"method": spec["method"], "trace": spec["trace"], "rows": rows, "seconds": own.as_dict(), "events_seconds": baseline.as_dict(),
            "vs_events": own.median / baseline.median, "peak_growth_mb": growth, "peak_rss_mb": peak,
            "table_mb": table_bytes / 2**20,
            "memory_vs_table": growth / (table_bytes / 2**20) if growth is not None and table_bytes else None}


@benchmark("tables", "the events as Arrow tables: to_arrow and to_arrow_batches against Archive.events", [
    ("events as tables (seconds: median (min-max); vs events: over Archive.events' median in the same child; "
     "memory: peak RSS growth of the first call, and over the table's bytes)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("method", lambda e: e["method"], "<"),
        Column("rows", lambda e: fmt_int(e["rows"])),
        Column("seconds", lambda e: f"{e['seconds']['median']:.3f} ({e['seconds']['min']:.3f}-"
                                    f"{e['seconds']['max']:.3f})"),
        Column("events s", lambda e: f"{e['events_seconds']['median']:.3f}"),
        Column("vs events", lambda e: fmt_float(e["vs_events"])),
        Column("peak MB", lambda e: fmt_float(e["peak_growth_mb"], 1)),
        Column("peak RSS MB", lambda e: fmt_float(e["peak_rss_mb"], 1)),
        Column("table MB", lambda e: fmt_float(e["table_mb"], 1)),
        Column("memory/table", lambda e: fmt_float(e["memory_vs_table"])),
    ]),
])
def tables_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    import ccgformat
    entries = []
    traces = [(options.events_per_location, METHODS, options.repeat)]
    if not options.quick:
        traces.append((STREAM_FACTOR * options.events_per_location, ("events", "to_arrow_batches"),
                       options.baseline_repeat))
    with tempfile.TemporaryDirectory(prefix="ccg-tables-") as folder:
        for per_location, methods, repeat in traces:
            path = Path(folder) / "spmd.ccg"
            definitions, events = synth.synthesize(options.locations, per_location, jitter=0.2)
            ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(options.locations)))
            name = f"spmd {options.locations} x {per_location:,}"
            for method in methods:
                entries.append(run_child("tables", {"path": str(path), "method": method, "repeat": repeat,
                                                    "trace": name}))
                print(f"  tables: {name} {method}", file=sys.stderr, flush=True)
    return entries
