"""The topology graph (issue 38): `Archive.topology` as JSON on a SimGrid-style platform of
10,000 hosts (``tools/simgrid_platform.py``: 10 sites x 10 clusters x 100 hosts, 2,000
one-second steps, converted from Paje once), against baselines on the same archive in the
same run: ``ccg info``'s summary (`info_document`), and the two queries the topology
rests on, `Archive.metric_integrals` over the window and the streamed message matching
(`Archive.iter_messages`, read to its end).

Every step runs in a fresh interpreter (`benchkit.run_measured`), opens the archive and
times one call on it (cold: the blocks decoded as a user's first query decodes them), in
seconds and in processor seconds of the interpreter (its threads too; on a busy machine the
closer measure of what the call costs);
its peak RSS is the interpreter's own high-water mark (``VmHWM``: ``ru_maxrss`` would
carry over the parent's, which converted the trace and is far larger). Windows: the
middle half of the trace at depth 2 (the issue's "a window"), a short one (a hundredth, its
bounds between the platform's one-second steps, so that they cut the variables' intervals),
and the whole trace (default window) at depth 2 and at the leaves. Target:
<= 1 s and <= 500 MB (medians of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import Column, benchmark, child_task, fmt_float, fmt_int, high_water_mb, run_measured
from simgrid_platform import Platform, write_platform

TARGET_SECONDS, TARGET_MB = 1.0, 500.0
#: (name, window: "middle" or "whole", depth) of the topology steps
STEPS = [("topology middle d2", "middle", 2), ("topology short d2", "short", 2), ("topology whole d2", "whole", 2),
         ("topology whole leaves", "whole", None)]
BASELINES = ["info", "metric_integrals middle", "messages"]


def _window(archive: Any, which: str) -> tuple[int | None, int | None]:
    first, last = archive.time_range
    if which == "whole":
        return None, None
    if which == "short":  # a hundredth of the trace, its bounds off the one-second steps: cutting intervals
        start = first + 37 * (last - first) // 100 + 123_457
        return start, start + (last - first) // 100
    return first + (last - first) // 4, first + 3 * (last - first) // 4


@child_task("topology_step")
def topology_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Open the archive and time one call of the step ``spec["step"]``."""
    import ccgformat
    from ccgformat.cli.info import info_document
    with ccgformat.open(spec["path"]) as archive:
        step = spec["step"]
        t0, c0 = time.perf_counter(), time.process_time()
        if step == "info":
            size = len(json.dumps(info_document(archive)))
        elif step == "messages":
            size = sum(len(chunk) for chunk in archive.iter_messages())
        elif step.startswith("metric_integrals"):
            size = archive.metric_integrals(1, *_window(archive, "middle")).values.size
        else:
            _, which, depth = next(s for s in STEPS if s[0] == step)
            size = len(json.dumps(archive.topology(*_window(archive, which), depth).to_json()))
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": seconds, "cpu": cpu, "size": size, "peak_rss_mb": high_water_mb()}


def _platform(options: argparse.Namespace) -> Platform:
    return Platform(2, 5, 20, 200) if options.quick else Platform()


@benchmark("topology", "Archive.topology JSON of a 10,000-host SimGrid-style platform against ccg info, "
                       "metric_integrals and messages on the same archive", [
    ("topology graph (seconds of one cold call in a fresh interpreter: median (min-max) of --repeat runs; "
     "cpu s: its processor time (all threads; what a machine of its own takes, about), median; peak RSS of "
     "the interpreter, largest; vs info: over ccg info's summary in the same run; target <= 1 s, "
     "<= 500 MB)", [
        Column("step", lambda e: e["step"], "<"),
        Column("seconds", lambda e: f"{e['seconds']['median']:.3f} ({e['seconds']['min']:.3f}-"
                                    f"{e['seconds']['max']:.3f})" if e.get("seconds") else e["status"]),
        Column("cpu s", lambda e: fmt_float(e.get("cpu"), 3)),
        Column("vs info", lambda e: fmt_float(e.get("vs_info"), 1)),
        Column("peak MB", lambda e: fmt_int(e["peak_rss_mb"])),
        Column("output", lambda e: fmt_int(e.get("size"))),
        Column("target", lambda e: "-" if e["step"] in BASELINES else
               ("yes" if e.get("meets_target") else "NO")),
    ]),
])
def topology_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    import ccgformat
    platform = _platform(options)
    entries = []
    with tempfile.TemporaryDirectory(prefix="ccg-topology-") as folder:
        trace, path = Path(folder) / "platform.trace", Path(folder) / "platform.ccg"
        t0 = time.perf_counter()
        written = write_platform(trace, platform)
        generated = time.perf_counter() - t0
        t0 = time.perf_counter()
        ccgformat.convert(trace, path)
        converted = time.perf_counter() - t0
        print(f"  topology: {written['hosts']:,} hosts, {written['records']:,} records, generated in {generated:.1f} s, "
              f"converted in {converted:.1f} s ({path.stat().st_size:,} bytes)", file=sys.stderr, flush=True)
        for step in BASELINES + [name for name, _, _ in STEPS]:
            runs = [run_measured("topology_step", {"path": str(path), "step": step}, options.timeout,
                                 memory_limit_mb=options.memory_limit or None) for _ in range(options.repeat)]
            done = [run for run in runs if run.status == "ok"]
            entry: dict[str, Any] = {"step": step, "status": runs[-1].status, "hosts": written["hosts"],
                                     "records": written["records"], "archive_bytes": path.stat().st_size,
                                     "convert_seconds": converted,
                                     "peak_rss_mb": max((run.result["peak_rss_mb"] or 0 for run in done), default=None)}
            if done:
                samples = [run.result["seconds"] for run in done]
                entry.update(seconds={"median": statistics.median(samples), "min": min(samples), "max": max(samples),
                                      "samples": samples}, size=done[0].result["size"],
                             cpu=statistics.median(run.result["cpu"] for run in done))
            entries.append(entry)
            print(f"  topology: {step}", file=sys.stderr, flush=True)
    info = next(e for e in entries if e["step"] == "info")
    for entry in entries:
        if entry.get("seconds") and info.get("seconds"):
            entry["vs_info"] = entry["seconds"]["median"] / info["seconds"]["median"]
        if entry["step"] not in BASELINES and entry.get("seconds"):
            entry["meets_target"] = (entry["seconds"]["median"] <= TARGET_SECONDS
                                     and (entry["peak_rss_mb"] or 0) <= TARGET_MB)
    return entries
