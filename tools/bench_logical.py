"""Logical time (issue 39): `Archive.logical()` by Ravel's scheme and Lamport's, against
`Archive.messages()` on the same archive (the baseline: logical time matches messages
with it, then walks every location once more for the events' indexes and calls).

Traces, tools/synth.py's ring pattern with jitter 0.2 (sends to the next rank, receives
from the previous one), written once into bench-out/logical/: 20,000 ranks x 50 events
(80,000 messages) and 16 ranks x 625,000 events (10 M events, 833,328 messages); with
``--lengths`` also the long archives of ``tools/bench.py long`` (bench-out/long/, 30 M
and 100 M jittered events) when they are there. ``--quick``: 2,000 x 50 and 16 x 62,500.

Every measurement is a fresh process (`run_measured`): the call's seconds as the child
times it, and the child's peak RSS. The methods run alternately, ``--repeat`` times
each; medians (min-max). Targets: 20,000 x 50 within 2 s and 1 GB, 10 M events within
5 s, 100 M events within 1 GB.

``logical-cli``: the command users run, ``ccg logical ARCHIVE --json > /dev/null`` (streamed:
`query.logical_spool`), in fresh processes - wall and CPU seconds with start-up, peak RSS -
on the same traces, in turn with the same command of ``--logical-baseline CHECKOUT`` (a
worktree of main: the answer held whole) for the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import synth
from bench_query import CACHE
from benchkit import Column, benchmark, child_task, fmt_float, fmt_int, high_water_mb, run_measured, run_process

#: name -> (ranks, events per rank); with --quick a tenth of each
TRACES = {"20,000 x 50": (20_000, 50), "16 x 625,000": (16, 625_000)}
QUICK = {"2,000 x 50": (2_000, 50), "16 x 62,500": (16, 62_500)}
JITTER = 0.2
METHODS = ("ravel", "streamed", "lamport", "messages")
#: trace -> (seconds, MB) targets of the issue (None: none)
TARGETS: dict[str, tuple[float | None, float | None]] = {"20,000 x 50": (2.0, 1024.0), "16 x 625,000": (5.0, None),
                                                         "100m": (None, 1024.0)}


@child_task("logical")
def logical_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Open the archive and time one call: ``ravel``/``lamport`` (`Archive.logical`),
    ``streamed`` (Ravel's scheme as `ccg logical` streams it: closed and spooled, not
    written) or ``messages`` (`Archive.messages`); rows: events or messages; the process's peak RSS
    (``VmHWM``: unlike the child's ``ru_maxrss`` not inherited from the parent, which may
    have grown writing the traces)."""
    import ccgformat
    with ccgformat.open(spec["path"]) as archive:
        began = time.perf_counter()
        if spec["method"] == "messages":
            rows = len(archive.messages())
        elif spec["method"] == "streamed":
            from ccgformat.query.logical_spool import streamed_logical
            with streamed_logical(archive) as answer:
                rows = len(answer)
        else:
            rows = len(archive.logical(spec["method"]))
        seconds = time.perf_counter() - began
    return {"seconds": seconds, "rows": rows, "peak_mb": high_water_mb()}


def _archive(name: str, ranks: int, per_rank: int) -> Path:
    """The ring trace's archive, written once into bench-out/logical/."""
    import ccgformat
    path = CACHE / "logical" / f"ring-{ranks}x{per_rank}-jitter{JITTER}.ccg"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"  logical: writing {path.name}", file=sys.stderr, flush=True)
        definitions, events = synth.synthesize(ranks, per_rank, jitter=JITTER, seed=0, pattern="ring")
        ccgformat.write_trace(path, definitions, ((rank, events(rank)) for rank in range(ranks)))
    return path


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _measure(trace: str, path: Path, repeat: int, timeout: float, memory_limit: float | None) -> dict[str, Any]:
    """Every method ``repeat`` times, alternately, each in a fresh process."""
    runs: dict[str, list[Any]] = {method: [] for method in METHODS}
    for _ in range(repeat):
        for method in METHODS:
            runs[method].append(run_measured("logical", {"path": str(path), "method": method}, timeout,
                                             memory_limit_mb=memory_limit))
    entry: dict[str, Any] = {"trace": trace, "path": str(path)}
    for method, measured in runs.items():
        done = [m for m in measured if m.status == "ok"]
        entry[method] = {"status": next((m.status for m in measured if m.status != "ok"), "ok"),
                         "seconds": _summary([m.result["seconds"] for m in done]) if done else None,
                         "peak_mb": max((m.result["peak_mb"] or m.peak_rss_mb or 0 for m in done), default=None),
                         "rows": done[0].result["rows"] if done else None}
    base = entry["messages"]["seconds"]
    for method in ("ravel", "streamed", "lamport"):
        mine = entry[method]["seconds"]
        entry[method]["vs_messages"] = mine["median"] / base["median"] if mine and base else None
    seconds, megabytes = TARGETS.get(trace, (None, None))
    ravel = entry["streamed"]  # what ccg logical runs
    entry["meets"] = None if seconds is None and megabytes is None else bool(
        ravel["seconds"] and (seconds is None or ravel["seconds"]["median"] <= seconds)
        and (megabytes is None or (ravel["peak_mb"] or 0) <= megabytes))
    entry["target"] = " and ".join(part for part in (f"<= {seconds:g} s" if seconds else "",
                                                     f"<= {megabytes:g} MB" if megabytes else "") if part)
    return entry


def _cell(entry: dict[str, Any], method: str) -> str:
    result = entry[method]
    if result["seconds"] is None:
        return result["status"]
    s = result["seconds"]
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) s, {fmt_int(result['peak_mb'])} MB"


@benchmark("logical", "Archive.logical() (Ravel, Lamport) against Archive.messages() on ring traces", [
    ("logical time (seconds: median (min-max) of fresh processes, the call alone; MB: the largest peak RSS; "
     "vs messages: median over Archive.messages()'s in the same run)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("events", lambda e: fmt_int(e["ravel"]["rows"])),
        Column("messages", lambda e: fmt_int(e["messages"]["rows"])),
        Column("ravel", lambda e: _cell(e, "ravel")),
        Column("ravel streamed", lambda e: _cell(e, "streamed")),
        Column("lamport", lambda e: _cell(e, "lamport")),
        Column("Archive.messages", lambda e: _cell(e, "messages")),
        Column("ravel vs messages", lambda e: fmt_float(e["ravel"]["vs_messages"])),
        Column("streamed vs messages", lambda e: fmt_float(e["streamed"]["vs_messages"])),
        Column("lamport vs messages", lambda e: fmt_float(e["lamport"]["vs_messages"])),
        Column("target", lambda e: e["target"] or "-", "<"),
        Column("met (streamed)", lambda e: "-" if e["meets"] is None else "yes" if e["meets"] else "NO"),
    ]),
])
def logical_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    limit = options.memory_limit or None
    for name, (ranks, per_rank) in (QUICK if options.quick else TRACES).items():
        entries.append(_measure(name, _archive(name, ranks, per_rank), options.repeat, options.timeout, limit))
        print(f"  logical: {name}", file=sys.stderr, flush=True)
    for length in options.logical_lengths:
        path = CACHE / "long" / f"long-{length}-jittered.ccg"
        if path.exists():
            entries.append(_measure(length, path, 1, max(options.timeout, 1200.0), limit))
            print(f"  logical: {length}", file=sys.stderr, flush=True)
        else:
            print(f"  logical: {path} is missing (tools/bench.py long writes it); left out", file=sys.stderr)
    return entries



def _cli_runs(path: Path, checkout: Path, repeat: int, timeout: float, limit: float | None) -> dict[str, Any]:
    """``ccg logical PATH --json > /dev/null`` of ``checkout`` (its ccgformat first on the
    path), ``repeat`` fresh processes: wall and CPU seconds, start-up included, and the
    largest peak RSS."""
    import os
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, "-m", "ccgformat.cli", "logical", str(path), "--json"]
    runs = [run_process(command, timeout, limit, env=env, cwd=checkout) for _ in range(repeat)]
    done = [run for run in runs if run.status == "ok"]
    return {"status": next((run.status for run in runs if run.status != "ok"), "ok"),
            "seconds": _summary([run.wall_seconds for run in done]) if done else None,
            "cpu": _summary([run.cpu_seconds or 0.0 for run in done]) if done else None,
            "peak_mb": max((run.peak_rss_mb or 0 for run in runs), default=None)}


def _measure_cli(trace: str, path: Path, repeat: int, timeout: float, limit: float | None,
                 baseline: Path | None) -> dict[str, Any]:
    """This checkout's streamed `ccg logical --json` against ``baseline``'s, one run of
    each in turn, ``repeat`` times."""
    checkout = Path(__file__).resolve().parent.parent
    sides = {"streamed": checkout} | ({"baseline": baseline} if baseline else {})
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for _ in range(repeat):
        for side, folder in sides.items():
            runs[side].append(_cli_runs(path, folder, 1, timeout, limit))
    entry: dict[str, Any] = {"trace": trace}
    for side, measured in runs.items():
        done = [m for m in measured if m["status"] == "ok"]
        entry[side] = {"status": next((m["status"] for m in measured if m["status"] != "ok"), "ok"),
                       "seconds": _summary([m["seconds"]["median"] for m in done]) if done else None,
                       "cpu": _summary([m["cpu"]["median"] for m in done]) if done else None,
                       "peak_mb": max((m["peak_mb"] or 0 for m in measured), default=None)}
    mine, base = entry["streamed"], entry.get("baseline")
    entry["ratio"] = (mine["seconds"]["median"] / base["seconds"]["median"]
                      if base and mine["seconds"] and base["seconds"] else None)
    seconds, megabytes = TARGETS.get(trace, (None, None))
    entry["target"] = " and ".join(part for part in (f"<= {seconds:g} s" if seconds else "",
                                                     f"<= {megabytes:g} MB" if megabytes else "") if part)
    entry["meets"] = None if not entry["target"] else bool(
        mine["seconds"] and (seconds is None or mine["seconds"]["median"] <= seconds)
        and (megabytes is None or (mine["peak_mb"] or 0) <= megabytes))
    return entry


def _cli_cell(entry: dict[str, Any], side: str) -> str:
    result = entry.get(side)
    if result is None:
        return "-"
    if result["seconds"] is None:
        return result["status"]
    s = result["seconds"]
    return (f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) s, CPU {result['cpu']['median']:.2f} s, "
            f"{fmt_int(result['peak_mb'])} MB")


@benchmark("logical-cli", "ccg logical --json > /dev/null, streamed, against a baseline checkout's", [
    ("ccg logical --json > /dev/null (wall: median (min-max) of fresh processes, start-up included; CPU: median "
     "user + system; MB: the largest peak RSS; ratio: wall median over the baseline's, measured in turn)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("streamed", lambda e: _cli_cell(e, "streamed")),
        Column("baseline", lambda e: _cli_cell(e, "baseline")),
        Column("ratio", lambda e: fmt_float(e["ratio"])),
        Column("target", lambda e: e["target"] or "-", "<"),
        Column("met", lambda e: "-" if e["meets"] is None else "yes" if e["meets"] else "NO"),
    ]),
])
def logical_cli_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    limit = options.memory_limit or None
    baseline = Path(options.logical_baseline) if options.logical_baseline else None
    for name, (ranks, per_rank) in (QUICK if options.quick else TRACES).items():
        entries.append(_measure_cli(name, _archive(name, ranks, per_rank), options.repeat, options.timeout, limit,
                                    baseline))
        print(f"  logical-cli: {name}", file=sys.stderr, flush=True)
    for length in options.logical_lengths:
        path = CACHE / "long" / f"long-{length}-jittered.ccg"
        if path.exists():
            entries.append(_measure_cli(length, path, 1, max(options.timeout, 1200.0), limit, baseline))
            print(f"  logical-cli: {length}", file=sys.stderr, flush=True)
        else:
            print(f"  logical-cli: {path} is missing (tools/bench.py long writes it); left out", file=sys.stderr)
    return entries
