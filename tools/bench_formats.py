"""Import benchmarks: conversion speed per input format, and the native OTF2 path.

The import benchmark makes two measurements, each in a fresh subprocess (peak memory):

- every registered format's largest corpus trace (found by content detection under
  ``CCG_CORPUS``, default ``../shared/traces``), converted losslessly: events/s;
- synthetic OTF2 traces written by ``tools/synth.py --otf2`` (8 locations, 1M events at
  full size; regular, and with jitter 0.2): the time the plain ``otf2`` Python reader needs just to iterate it
  (``for _ in trace.events``) next to the conversion time, in the same process. Target:
  conversion takes at most 1.25 times that iteration.

The native-convert benchmark measures the issue-5 targets on the large synthetic OTF2
trace (``synth.py --otf2``, 8 x 1,250,000 events at full size, regular): end-to-end
`ccgformat.convert` under the native backend (at least 3M events/s and 15 times the plain
``otf2`` iteration), with the read-only speeds of the native and the Python OTF2 reader
(`ccgformat.formats.read`, batches dropped as they come) and the iteration itself, every
row in its own subprocess (peak RSS its own), the slow rows repeated ``--baseline-repeat``
times.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_builder import LARGE_FACTOR
from benchkit import (TOOLS, Column, Stat, benchmark, child_task, fmt_float, fmt_int, fmt_stat, peak_rss_mb, rate,
                      run_child, run_repeated)
from corpus_root import corpus_root

import ccgformat
from ccgformat.errors import CcgError
from ccgformat.formats import detect

#: conversion / plain otf2 iteration, at most
OTF2_RATIO_TARGET = 1.25
#: native-convert targets: events/s at least, and speed-up over the plain otf2 iteration at least
NATIVE_CONVERT_TARGET = 3e6
NATIVE_ITERATION_SPEEDUP = 15.0
#: the synthetic OTF2 traces: regular (the target's trace) and jittered (the builder's harder case)
SYNTHETIC_JITTER = (0.0, 0.2)
#: formats of this project's own making, not measured against a corpus
INTERNAL_FORMATS = ("ccg", "npz")


def _size(path: Path) -> int:
    """Bytes of the input: a folder's files, or the file with its siblings of the same
    stem (an OTF master file names its definition and event files that way)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    stem = path.name.split(".")[0]
    return sum(p.stat().st_size for p in path.parent.glob(f"{stem}.*") if p.is_file())


def largest_corpus_traces(root: Path) -> dict[str, Path]:
    """Per format, the largest input under ``root`` that detection assigns to it."""
    best: dict[str, tuple[int, Path]] = {}
    for path in sorted(root.rglob("*")):
        try:
            name = detect(path)
        except (CcgError, OSError):
            continue
        if name in INTERNAL_FORMATS:
            continue
        size = _size(path)
        if name not in best or size > best[name][0]:
            best[name] = (size, path)
    return {name: path for name, (_, path) in sorted(best.items())}


@child_task("convert")
def convert_child(spec: dict[str, Any]) -> dict[str, Any]:
    source = Path(spec["source"])
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "out.ccg"
        reports = []

        def once() -> float:
            t0 = time.perf_counter()
            reports.append(ccgformat.convert(source, target))
            return time.perf_counter() - t0

        seconds = run_repeated(once, spec["repeat"])
        iterate = run_repeated(lambda: _iterate_otf2(source), spec["repeat"]) if spec.get("baseline") else None
    report = reports[-1]
    entry = {"format": report.format, "source": str(source), "events": report.events,
             "locations": report.locations, "ccg_bytes": report.file_bytes, "source_bytes": _size(source),
             "convert_seconds": seconds.as_dict(),
             "convert_events_per_s": rate(report.events, seconds).as_dict(), "peak_rss_mb": peak_rss_mb(),
             "backend": ccgformat.backend}
    if iterate is not None:
        entry["iterate_seconds"] = iterate.as_dict()
        entry["iterate_events_per_s"] = rate(report.events, iterate).as_dict()
        entry["ratio"] = seconds.median / iterate.median
        entry["target"] = {"target": f"convert <= {OTF2_RATIO_TARGET:g} x otf2 iteration",
                           "pass": entry["ratio"] <= OTF2_RATIO_TARGET}
    return entry


def _iterate_otf2(source: Path) -> float:
    """Seconds the plain otf2 reader needs to visit every event (the user's baseline)."""
    import otf2
    anchor = source if source.is_file() else next(source.glob("*.otf2"))
    t0 = time.perf_counter()
    with otf2.reader.open(str(anchor)) as trace:
        for _ in trace.events:
            pass
    return time.perf_counter() - t0


def _read_otf2(source: Path) -> float:
    """Seconds `ccgformat.formats.read` needs for the definitions and every event batch."""
    from ccgformat.formats import read
    t0 = time.perf_counter()
    _, streams = read(source)
    for _, batches in streams:
        for _ in batches:
            pass
    return time.perf_counter() - t0


@child_task("otf2_pass")
def otf2_pass_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Read-only passes over an OTF2 trace: ``mode`` "read" (this package's reader, of the
    backend the child runs with) or "iterate" (the plain otf2 package)."""
    seconds = run_repeated(lambda: (_iterate_otf2 if spec["mode"] == "iterate" else _read_otf2)(Path(spec["source"])),
                           spec["repeat"])
    return {"seconds": seconds.as_dict(), "peak_rss_mb": peak_rss_mb(), "backend": ccgformat.backend}


def _synthetic_otf2(folder: Path, options: argparse.Namespace, jitter: float, factor: int = 1) -> Path:
    out = folder / f"synthetic-otf2-jitter{jitter:g}"
    subprocess.run([sys.executable, str(TOOLS / "synth.py"), str(out), "--otf2", "--locations", str(options.locations),
                    "--events-per-location", str(factor * options.events_per_location),
                    "--jitter", str(jitter), "--seed", "1"],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@benchmark(
    "import",
    "conversion speed per input format (largest corpus trace) and OTF2 conversion next to plain otf2 iteration",
    [
        ("Conversion to .ccg, lossless (events/s: median (min-max); memory in MiB)", [
            Column("format", lambda e: e["format"], "<"),
            Column("trace", lambda e: e["label"], "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("input bytes", lambda e: fmt_int(e["source_bytes"])),
            Column(".ccg bytes", lambda e: fmt_int(e["ccg_bytes"])),
            Column("convert ev/s", lambda e: fmt_stat(e["convert_events_per_s"])),
            Column("otf2 iterate ev/s", lambda e: fmt_stat(e["iterate_events_per_s"]) if "ratio" in e else "-"),
            Column("convert/iterate", lambda e: fmt_float(e.get("ratio"))),
            Column("target", lambda e: ("PASS" if e["target"]["pass"] else "FAIL") if "target" in e else "-"),
            Column("peak RSS", lambda e: fmt_float(e["peak_rss_mb"], 0)),
        ]),
    ])
def import_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    root = corpus_root()
    runs: list[tuple[str, Path, bool]] = []
    if root.is_dir():
        runs += [(f"corpus: {path.relative_to(root)}", path, False)
                 for path in largest_corpus_traces(root).values()]
    else:
        print(f"  import: no corpus at {root} (set CCG_CORPUS); corpus traces skipped", file=sys.stderr)
    with tempfile.TemporaryDirectory() as folder:
        for jitter in SYNTHETIC_JITTER:
            runs.append((f"synth --otf2 {options.locations} x {options.events_per_location:,} --jitter {jitter:g}",
                         _synthetic_otf2(Path(folder), options, jitter), True))
        for label, source, baseline in runs:
            t0 = time.perf_counter()
            entry = run_child("convert", {"source": str(source), "repeat": options.repeat, "baseline": baseline})
            entry["label"] = label
            entries.append(entry)
            print(f"  import {label}: {entry['events']:,} events, "
                  f"{entry['convert_events_per_s']['median']:,.0f} events/s "
                  f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    return entries


def _native_convert_cell(target: str) -> Any:
    return lambda e: ("PASS" if e["targets"][target] else "FAIL") if target in e.get("targets", {}) else "-"


@benchmark(
    "native-convert",
    f"end-to-end OTF2 -> .ccg with the native backend on the synthetic OTF2 trace ({LARGE_FACTOR}x the requested "
    "events per location, 10M at full size), next to the native and Python readers and plain otf2 iteration",
    [
        ("OTF2 -> .ccg, lossless, native backend (seconds and events/s: median (min-max) of the runs; "
         "x iteration = otf2 iteration median / row median; every row its own process and peak RSS in MiB; "
         f"targets: convert >= {NATIVE_CONVERT_TARGET / 1e6:g}M events/s and >= {NATIVE_ITERATION_SPEEDUP:g}x "
         "the iteration)", [
            Column("row", lambda e: e["row"], "<"),
            Column("backend", lambda e: e["backend"], "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("runs", lambda e: str(len(e["seconds"]["samples"]))),
            Column("seconds", lambda e: fmt_stat(e["seconds"], lambda x: f"{x:.3f}")),
            Column("ev/s", lambda e: fmt_stat(e["events_per_s"])),
            Column("x iteration", lambda e: f"{e['speedup']:.1f}"),
            Column(">= 3M ev/s", _native_convert_cell("rate")),
            Column(">= 15x", _native_convert_cell("speedup")),
            Column("peak RSS", lambda e: fmt_float(e["peak_rss_mb"], 0)),
        ]),
    ])
def native_convert_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    if ccgformat.backend != "native":
        print("  native convert: skipped (the native backend is not active)", file=sys.stderr, flush=True)
        return []
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        source = _synthetic_otf2(Path(folder), options, 0.0, LARGE_FACTOR)
        print(f"  native convert: trace written ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
        convert = run_child("convert", {"source": str(source), "repeat": options.repeat}, backend="native")
        events = convert["events"]
        rows = [{"row": "convert", "backend": convert["backend"], "seconds": convert["convert_seconds"],
                 "peak_rss_mb": convert["peak_rss_mb"], "ccg_bytes": convert["ccg_bytes"]}]
        for row, backend, mode, repeat in (("read (native reader)", "native", "read", options.repeat),
                                           ("read (Python reader)", "python", "read", options.baseline_repeat),
                                           ("otf2 iteration", "native", "iterate", options.baseline_repeat)):
            t0 = time.perf_counter()
            rows.append({"row": row, **run_child("otf2_pass", {"source": str(source), "mode": mode, "repeat": repeat},
                                                 backend=backend)})
            if mode == "iterate":
                rows[-1]["backend"] = "otf2"
            print(f"  native convert: {row} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    iteration = rows[-1]["seconds"]["median"]
    for e in rows:
        e["events"] = events
        e["events_per_s"] = rate(events, Stat(e["seconds"]["samples"])).as_dict()
        e["speedup"] = iteration / e["seconds"]["median"]
    rows[0]["targets"] = {"rate": rows[0]["events_per_s"]["median"] >= NATIVE_CONVERT_TARGET,
                          "speedup": rows[0]["speedup"] >= NATIVE_ITERATION_SPEEDUP}
    return rows
