"""The tables at any slice count (issue 35 item 3): the whole-trace steps that the
aggregation tables answer, on archives with the level of 3,000 slices (AGGREGATE_SLICES,
spec 4.10.3) against the same steps on archives written before it, in the same run.

The archives are those of ``bench.py long`` (bench-out/long/long-{length}-{variant}.ccg,
converted by this checkout); the baseline is the same name in --slices-baseline, a folder
of archives written without the level (for example another checkout's bench-out/long).
Each step runs --repeat times as a fresh process, ``python -m ccgformat.cli ...``, the two
archives alternating, so that a busy machine weighs on both alike: per archive the median
wall time (start-up included) with its range, the largest peak RSS, and the ratio of the
medians. A baseline archive that is missing is reported and its rows left without a ratio.

Every step of an archive is preceded by ``ccg info``, the start-up and opening that each
step pays. ``ring 20000`` runs ``ccg info`` and ``ccg aggregate --slices 30`` (its text
summary, not the 600,000 cells as JSON) on the 20,000-rank ring archive of --slices-ring (issue 14's independent ring trace converted by this checkout):
the target is ``aggregate`` within 0.5 s of ``info``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

from bench_long import STEPS
from bench_query import CACHE
from bench_scale import STEP_COLUMNS, _cell
from benchkit import Column, benchmark, fmt_float, repeated_process

#: the whole-trace steps the tables answer, as `bench_long.STEPS` runs them, after ``info``
#: (the start-up and the opening of the archive that every step pays)
TABLE_STEPS = ("info", "timeline", "aggregate 30", "aggregate 100", "aggregate 1000", "aggregate 37", "overview 30")
#: the 20,000-rank steps: the model's text summary, as the issue's ``aggregate --slices 30``
RING_STEPS = {"info": ["info", "{archive}"], "aggregate 30": ["aggregate", "{archive}", "--slices", "30"]}
#: the issue's bound on those steps at 100 M events (seconds)
SECONDS_100M = 1.0
#: ``aggregate --slices 30`` of 20,000 ranks at most this many seconds above ``ccg info``
RING_MARGIN = 0.5


def _alternating(commands: dict[str, list[str]], options: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """`repeated_process` of each command once per round, --repeat rounds: the commands
    alternate, so that the load of a shared machine falls on each alike."""
    rounds = [{name: repeated_process(command, 1, options.timeout, options.memory_limit)
               for name, command in commands.items()} for _ in range(options.repeat)]
    merged = {}
    for name in commands:
        runs = [r[name] for r in rounds]
        samples = sorted(s for run in runs for s in run.get("seconds", {}).get("samples", []))
        entry: dict[str, Any] = {"status": next((run["status"] for run in runs if run["status"] != "ok"), "ok"),
                                 "peak_rss_mb": max(run["peak_rss_mb"] or 0 for run in runs)}
        if samples:
            entry["seconds"] = {"median": statistics.median(samples), "min": samples[0], "max": samples[-1],
                                "samples": samples}
        merged[name] = entry
    return merged


def _command(step: str, archive: Path, steps: dict[str, list[str]] = STEPS) -> list[str]:
    return [sys.executable, "-m", "ccgformat.cli", *[part.format(archive=archive) for part in steps[step]]]


def run_archive(length: str, variant: str, options: argparse.Namespace) -> list[dict[str, Any]]:
    """Every table step on one archive and its baseline."""
    name = f"long-{length}-{variant}.ccg"
    archive = CACHE / "long" / name
    baseline = Path(options.slices_baseline) / name if options.slices_baseline else None
    if not archive.exists():
        return [{"archive": name, "step": step, "which": "new", "status": "skipped: no archive (bench.py long)"}
                for step in TABLE_STEPS]
    entries = []
    for step in TABLE_STEPS:
        print(f"    {name} {step}", file=sys.stderr, flush=True)
        commands = {"new": _command(step, archive)}
        if baseline is not None and baseline.exists():
            commands["old"] = _command(step, baseline)
        measured = _alternating(commands, options)
        new, old = measured["new"], measured.get("old")
        for which, entry in measured.items():
            entries.append({"archive": name, "step": step, "which": which, **entry})
        if old is not None and "seconds" in new and "seconds" in old:
            entries[-2]["ratio"] = new["seconds"]["median"] / old["seconds"]["median"]
        target = SECONDS_100M if length == "100m" and step != "info" else None
        for entry in entries[-len(measured):]:
            entry["target"] = "-" if target is None or entry["which"] != "new" else f"<= {target:g} s"
            entry["verdict"] = "-" if entry["target"] == "-" else \
                "PASS" if entry.get("seconds", {}).get("median", target + 1) <= target else "FAIL"
    return entries


def run_ring(options: argparse.Namespace) -> list[dict[str, Any]]:
    """``ccg info`` against ``ccg aggregate --slices 30`` of the 20,000-rank ring archive."""
    archive = Path(options.slices_ring)
    if not archive.exists():
        return [{"archive": archive.name, "step": "aggregate 30", "which": "new",
                 "status": f"skipped: no archive {archive}"}]
    print(f"    {archive.name} info, aggregate 30", file=sys.stderr, flush=True)
    measured = _alternating({step: _command(step, archive, RING_STEPS) for step in RING_STEPS}, options)
    info, model = measured["info"], measured["aggregate 30"]
    entries = [{"archive": archive.name, "step": step, "which": "new", **entry} for step, entry in measured.items()]
    if "seconds" in info and "seconds" in model:
        above = model["seconds"]["median"] - info["seconds"]["median"]
        entries[1].update(above_info=above, target=f"<= info + {RING_MARGIN:g} s",
                          verdict="PASS" if above <= RING_MARGIN else "FAIL")
    return entries


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--slices-baseline", metavar="DIR", default=None,
                        help="slices: a folder of long-*.ccg archives written without the level of 3,000 slices, "
                             "the baseline of each step (default: none)")
    parser.add_argument("--slices-ring", metavar="FILE", default=str(CACHE / "scale" / "ring20000.ccg"),
                        help="slices: the 20,000-rank ring archive for info against aggregate 30 "
                             "(default bench-out/scale/ring20000.ccg)")


@benchmark("slices", "whole-trace timeline, aggregate at 30, 100, 1,000 and 37 slices and overview on the long "
                     "archives with the level of 3,000 slices against a baseline, and 20,000 ranks' aggregate 30 "
                     "against info", [
    ("Table steps (fresh processes, the archives alternating; s: median (min-max) of --repeat; peak RSS: the "
     "largest; ratio: new median / old median)", [
        Column("archive", lambda e: e["archive"], "<"),
        Column("which", lambda e: e["which"], "<"),
        *STEP_COLUMNS[:1], STEP_COLUMNS[1], STEP_COLUMNS[3],
        Column("ratio", _cell("ratio", lambda x: f"{x:.3f}")),
        Column("above info s", _cell("above_info", lambda x: fmt_float(x, 2))),
        Column("target", lambda e: e.get("target", "-"), "<"),
        Column("", lambda e: e.get("verdict", "-"), "<"),
        Column("status", lambda e: e["status"][:60], "<"),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    for length in options.lengths:
        for variant in options.variants:
            entries += run_archive(length, variant, options)
    return entries + run_ring(options)
