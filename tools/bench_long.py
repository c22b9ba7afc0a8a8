"""Long-trace benchmark (issue 35, scale in time): every step of the ``ccg`` command on
traces of 1 M, 30 M and 100 M events, as a user runs them, and how time and memory grow
with the trace's length.

A length is one of `LENGTHS` (``1m``: 8 locations x 125,000 events, ``30m``: 8 x 3.75 M,
``100m``: 16 x 6.25 M); each runs as twins of tools/synth.py's ring pattern (nested calls,
ring send/receive), ``jittered`` (log-normal factor of sigma `JITTER` on every gap, so
that few sub-trees repeat exactly: the worst case for the graph) and ``regular`` (no
jitter). The OTF2 archives are written once by ``tools/synth.py --otf2`` and kept in
bench-out/long/ between runs (100 M events: about 1.3 GB and four minutes).

Every step is a fresh process, ``python -m ccgformat.cli ...`` with its output sent to
/dev/null, run --repeat times: the median wall time (start-up included, about 0.2 s) and
the largest peak RSS of the runs (`benchkit.repeated_process`). A step still running after
--timeout seconds or above --memory-limit MB is killed and reported; the steps after a
failed conversion are skipped.

Growth: per step, (value at this length - value at 1 M) / (events at this length -
events at 1 M) per 10^6 events, for seconds and MB, against the same pattern's 1 M twin;
the projection to 10^9 events extends that line (a step whose memory streams has a
growth near 0 MB per 10^6 events).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import synth
from bench_query import CACHE
from bench_scale import STEP_COLUMNS, _cell
from benchkit import Column, benchmark, fmt_float, fmt_rate, repeated_process

#: length name -> (locations, events per location)
LENGTHS = {"1m": (8, 125_000), "30m": (8, 3_750_000), "100m": (16, 6_250_000)}
PATTERN = "ring"
JITTER = 0.2
VARIANTS = {"jittered": JITTER, "regular": 0.0}
PROJECTED_EVENTS = 10 ** 9
#: step -> the ``ccg`` arguments after the command name ({archive}, {source} and {out} filled in)
STEPS: dict[str, list[str]] = {
    "convert": ["convert", "-q", "{source}", "{archive}"],
    "info": ["info", "{archive}"],
    "profile": ["profile", "{archive}", "--json"],
    "messages": ["messages", "{archive}", "--json"],
    "timeline": ["timeline", "{archive}", "--width", "1000", "--json"],
    "aggregate 30": ["aggregate", "{archive}", "--slices", "30", "--json"],
    "aggregate 100": ["aggregate", "{archive}", "--slices", "100", "--json"],
    "aggregate 1000": ["aggregate", "{archive}", "--slices", "1000", "--json"],
    "aggregate 1024": ["aggregate", "{archive}", "--slices", "1024", "--json"],
    "aggregate 37": ["aggregate", "{archive}", "--slices", "37", "--json"],
    "overview 30": ["overview", "{archive}", "--slices", "30"],
    "calltree": ["calltree", "{archive}"],
    "verify": ["verify", "{archive}"],
    "cat": ["cat", "{archive}"],
    "export otf2": ["export", "-q", "{archive}", "{out}.otf2", "--to", "otf2"],
    "export paje": ["export", "-q", "{archive}", "{out}.trace", "--to", "paje"],
    "export chrome": ["export", "-q", "{archive}", "{out}.json", "--to", "chrome"],
}
#: The issue's targets per (length, variant) or length alone: step -> (max seconds, max
#: peak MB, min events/s); None: no bound.
TARGETS: dict[str, dict[str, tuple[float | None, float | None, float | None]]] = {
    "30m:jittered": {"convert": (None, 1024, 1.5e6)},
    "30m": {step: (None, 1024, None) for step in STEPS if step != "convert"},
    "100m": {"convert": (None, 2048, None),
             **{step: (None, 1024, None) for step in STEPS if step != "convert"},
             **{step: (1.0, 1024, None) for step in ("timeline", "aggregate 30", "aggregate 100", "aggregate 1000",
                                                     "overview 30")}},
}
#: throughput targets of the long traces (30 M and 100 M events): step -> min events/s
RATE_TARGETS = {"messages": 5e6, "verify": 5e6, "export otf2": 2e6, "export chrome": 1e6, "export paje": 1e6}


def _source(length: str, variant: str, folder: Path) -> Path:
    """The OTF2 archive of a length and variant, written by tools/synth.py when missing."""
    locations, per_location = LENGTHS[length]
    path = folder / f"otf2-{length}-{variant}"
    if not path.is_dir():
        print(f"  writing {path} with tools/synth.py --otf2 ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(Path(synth.__file__)), "--otf2", str(path), "--locations", str(locations),
                        "--events-per-location", str(per_location), "--pattern", PATTERN,
                        "--jitter", str(VARIANTS[variant])], check=True, stdout=subprocess.DEVNULL)
    return path


def run_length(length: str, variant: str, folder: Path, options: argparse.Namespace) -> list[dict[str, Any]]:
    """Every step of one length and variant."""
    locations, per_location = LENGTHS[length]
    events = locations * synth.event_count(per_location, PATTERN)
    source = _source(length, variant, folder)
    archive = folder / f"long-{length}-{variant}.ccg"
    out = folder / f"long-{length}-{variant}-export"
    print(f"  long {length} {variant} ({events:,} events) ...", file=sys.stderr, flush=True)
    entries: list[dict[str, Any]] = []
    for name in options.steps:
        base = {"length": length, "variant": variant, "events": events}
        if name != "convert" and entries and entries[0]["step"] == "convert" and entries[0]["status"] != "ok":
            entries.append({**base, "step": name, "status": "skipped: no archive"})
            continue
        arguments = [part.format(source=source, archive=archive, out=out) for part in STEPS[name]]
        command = [sys.executable, "-m", "ccgformat.cli", *arguments]
        entry = {**base, "step": name, **repeated_process(command, options.repeat, options.timeout,
                                                          options.memory_limit)}
        if name == "convert" and archive.exists():
            entry["archive_bytes"] = archive.stat().st_size
        entries.append(entry)
        print(f"    {name}: {entry['status']}", file=sys.stderr, flush=True)
        for leftover in folder.glob(f"{out.name}*"):
            subprocess.run(["rm", "-rf", str(leftover)], check=False)
    return entries


def _targets(e: dict[str, Any]) -> list[tuple[str, bool]]:
    """The issue's targets for an entry: (what, met)."""
    bounds = {**TARGETS.get(e["length"], {}), **TARGETS.get(f"{e['length']}:{e['variant']}", {})}.get(e["step"])
    seconds = e.get("seconds", {}).get("median")
    rate = e["events"] / seconds if seconds else None
    checks = []
    if bounds is not None:
        most_seconds, most_mb, least_rate = bounds
        if most_seconds is not None:
            checks.append((f"<= {most_seconds:g} s", seconds is not None and seconds <= most_seconds))
        if most_mb is not None:
            checks.append((f"<= {most_mb:g} MB", e.get("status") == "ok" and (e.get("peak_rss_mb") or 0) <= most_mb))
        if least_rate is not None:
            checks.append((f">= {fmt_rate(least_rate)} ev/s", rate is not None and rate >= least_rate))
    if e["step"] in RATE_TARGETS and e["length"] != "1m":
        least = RATE_TARGETS[e["step"]]
        checks.append((f">= {fmt_rate(least)} ev/s", rate is not None and rate >= least))
    return checks


def summarise(entries: list[dict[str, Any]]) -> None:
    """Rates, growth per 10^6 events against the 1 M twin, the 10^9 projection and the
    targets, in place."""
    by = {(e["length"], e["variant"], e["step"]): e for e in entries}
    for e in entries:
        seconds = e.get("seconds", {}).get("median")
        if seconds:
            e["events_per_s"] = e["events"] / seconds
        twin = by.get(("1m", e["variant"], e["step"]))
        if twin is not None and twin is not e and twin["events"] < e["events"]:
            span = (e["events"] - twin["events"]) / 1e6
            if e.get("status") == "ok" and twin.get("status") == "ok":
                e["mb_per_million"] = (e["peak_rss_mb"] - twin["peak_rss_mb"]) / span
                e["s_per_million"] = (seconds - twin["seconds"]["median"]) / span
                more = (PROJECTED_EVENTS - e["events"]) / 1e6
                e["projected_mb"] = e["peak_rss_mb"] + e["mb_per_million"] * more
                e["projected_s"] = seconds + e["s_per_million"] * more
        checks = _targets(e)
        e["target"] = ", ".join(what for what, _ in checks) or "-"
        e["verdict"] = "-" if not checks else "PASS" if all(met for _, met in checks) else "FAIL"


@benchmark("long", "time and peak RSS of every ccg step at 1 M, 30 M and 100 M events (jittered and regular "
                   "twins), their growth per 10^6 events and a projection to 10^9", [
    ("Steps (fresh processes, wall s: median (min-max) of --repeat; peak RSS: the largest of the runs; growth: "
     "per 10^6 events against the 1 M twin; projection: that line extended to 10^9 events)", [
        Column("length", lambda e: e["length"], "<"),
        Column("variant", lambda e: e["variant"], "<"),
        *STEP_COLUMNS,
        Column("MB/10^6 ev", _cell("mb_per_million", lambda x: fmt_float(x, 1))),
        Column("s/10^6 ev", _cell("s_per_million", lambda x: fmt_float(x, 3))),
        Column("10^9: MB", _cell("projected_mb", lambda x: fmt_float(x, 0))),
        Column("10^9: s", _cell("projected_s", lambda x: fmt_float(x, 0))),
        Column("bytes", _cell("archive_bytes", lambda x: f"{x:,}")),
        Column("target", lambda e: e["target"], "<"),
        Column("", lambda e: e["verdict"], "<"),
        Column("status", lambda e: e["status"][:60], "<"),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    folder = CACHE / "long"
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    started = time.perf_counter()
    for length in options.lengths:
        for variant in options.variants:
            entries += run_length(length, variant, folder, options)
    summarise(entries)
    print(f"  long: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return entries
