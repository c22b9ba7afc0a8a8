"""Scale benchmark (issue 14): time and peak RSS of every command on traces with many
locations, and bytes per location.

A shape is ``LOCATIONSxEVENTS`` (events requested per location, as tools/synth.py takes
them; regular timing, jitter 0) with ``:otf2`` when the trace is read from an OTF2
archive written by ``tools/synth.py --otf2`` (kept in bench-out/scale/ between runs),
else generated in memory as columns (`synth.synthesize_table`, written with
`ccgformat.write_table`), and ``:PATTERN`` to name tools/synth.py's pattern. By default
a shape with too few events per location for one spmd iteration uses the ``single``
pattern (1,000,000 x 10: main and four calls, no messages), the others ``spmd``.
``20000x50:otf2:ring`` is the issue's own trace: ring messages, and idle gaps drawn
uniformly, so that no two ranks' events repeat; it has the targets of 20000x50:otf2.
Every shape also runs with --ratio-locations locations and the same per-location shape:
the ratios of time and memory per location are the issue's "constant per location".

Every step runs in a fresh interpreter (`benchkit.run_measured`): peak RSS is the step's
own (imports included: the ``startup`` row is an interpreter that only imports), and a
step still running after --timeout seconds, or above --memory-limit MB of RSS, is killed
and reported, and the rest still runs.
The seconds are measured inside the child around the step itself (not the interpreter
start). profile, messages and timeline (1,000 columns, rows by location) open the archive
and run the whole-trace query (`Archive.profile`, ...) as ``ccg`` does, without printing;
cat runs ``ccg cat`` (every event, text) in-process with its output sent to /dev/null.

An OTF2 shape also times fresh processes, wall time from the start (so that start-up
counts on both sides): ``ccg --version`` and ``ccg convert`` of the archive (``python -m
ccgformat.cli``, the same ccgformat the steps import; --repeat times each), and the
reference tool ``otf2-print`` reading it with its output sent to /dev/null (once: 55 s at
20,000 x 50, where it holds about 1 MB per location, so that the default --memory-limit
stops it; where the limit of open files is 20,000 it fails after 14 s, "Too many opened
files", as it keeps two files open per location: either way the ratio is a lower bound,
"> N x", and a failed run passes no target; skipped, saying so, when it is not on PATH).
The issue's target: otf2-print takes ten times as long as ccg convert.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import synth
from bench_archive import section_sizes, write_parquet
from bench_query import CACHE
from benchkit import Column, benchmark, child_task, fmt_float, fmt_int, fmt_rate, repeated_process, run_measured

SHAPES = ("20000x50:otf2", "20000x50:otf2:ring", "100000x100", "1000000x10")
RATIO_LOCATIONS = 1000
TIMELINE_WIDTH = 1000
STEPS = ("convert", "open", "profile", "timeline", "messages", "cat", "parquet")
#: The issue's targets: shape -> step -> (max seconds, max peak RSS MB, min events/s); None: no bound.
TARGETS: dict[str, dict[str, tuple[float | None, float | None, float | None]]] = {
    "20000x50:otf2": {"convert": (2.0, 1024, None), "profile": (1.0, 500, None), "messages": (1.0, 500, None),
                      "timeline": (2.0, None, None), "cat": (5.0, None, None)},
    "1000000x10": {"convert": (None, 4096, 2e6), "open": (0.1, None, None)},
}
#: The archive at most this fraction of the Parquet file (20,000 x 50 from OTF2).
SIZE_TARGETS = {"20000x50:otf2": 1 / 3}
#: ``otf2-print`` at least this many times as long as ``ccg convert`` (both fresh processes)
OTF2_PRINT_FACTOR = 10.0
_SHAPE = re.compile(r"(\d+)x(\d+)(:otf2)?(?::(" + "|".join(synth.PATTERNS) + "))?")


@dataclass(frozen=True)
class Shape:
    locations: int
    events_per_location: int
    otf2: bool
    chosen_pattern: str | None = None

    @classmethod
    def parse(cls, text: str) -> Shape:
        match = _SHAPE.fullmatch(text)
        if not match or int(match[1]) < 1 or int(match[2]) < 2:
            raise ValueError(f"shape {text!r} is not LOCATIONSxEVENTS[:otf2][:PATTERN] "
                             "(LOCATIONS >= 1, EVENTS >= 2)")
        return cls(int(match[1]), int(match[2]), bool(match[3]), match[4])

    @property
    def name(self) -> str:
        return self.target_name + (f":{self.chosen_pattern}" if self.chosen_pattern else "")

    @property
    def target_name(self) -> str:
        """The shape whose targets apply (the pattern aside)."""
        return f"{self.locations}x{self.events_per_location}" + (":otf2" if self.otf2 else "")

    @property
    def pattern(self) -> str:
        if self.chosen_pattern:
            return self.chosen_pattern
        return "spmd" if self.events_per_location >= 2 + synth.iteration_length("spmd") else "single"

    @property
    def events(self) -> int:
        """The events of the whole trace (synth rounds down to whole iterations)."""
        return self.locations * synth.event_count(self.events_per_location, self.pattern)

    def synth_args(self) -> dict[str, Any]:
        return {"locations": self.locations, "events_per_location": self.events_per_location,
                "pattern": self.pattern}

    def twin(self, locations: int) -> Shape:
        return Shape(locations, self.events_per_location, self.otf2, self.chosen_pattern)


# --------------------------------------------------------------------------- the steps (children)

def _convert(spec: dict[str, Any]) -> dict[str, Any]:
    """``ccgformat.convert`` of the OTF2 archive, or `write_table` of the synthetic trace
    held as columns (`synth.synthesize_table`, whose own time is ``input_seconds``; the
process's CPU seconds of the write, compression threads included, are ``cpu_seconds``)."""
    import ccgformat
    if spec["source"] is not None:
        t0 = time.perf_counter()
        ccgformat.convert(spec["source"], spec["archive"])
        return {"seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    definitions, batch, offsets = synth.synthesize_table(**spec["shape"])
    input_seconds = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    ccgformat.write_table(spec["archive"], definitions, batch, offsets)
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "input_seconds": input_seconds}


def _open(spec: dict[str, Any]) -> dict[str, Any]:
    import ccgformat
    t0 = time.perf_counter()
    archive = ccgformat.open(spec["archive"])
    seconds = time.perf_counter() - t0
    with archive:
        return {"seconds": seconds, "events": archive.stats.events, "ccg_bytes": archive.stats.file_bytes,
                "sections": section_sizes(archive)}


def _query(spec: dict[str, Any]) -> dict[str, Any]:
    """Open and the whole-trace profile, messages or timeline."""
    import ccgformat
    t0 = time.perf_counter()
    with ccgformat.open(spec["archive"]) as archive:
        if spec["step"] == "timeline":
            first, last = archive.time_range
            archive.timeline(first, last + 1, TIMELINE_WIDTH)
        else:
            getattr(archive, spec["step"])()
    return {"seconds": time.perf_counter() - t0}


def _cat(spec: dict[str, Any]) -> dict[str, Any]:
    """``ccg cat ARCHIVE`` in this process, its output going to /dev/null."""
    from ccgformat.cli import main
    saved = sys.stdout
    t0 = time.perf_counter()
    with open(os.devnull, "w") as sink:
        sys.stdout = sink
        try:
            status = main(["cat", spec["archive"]])
        finally:
            sys.stdout = saved
    if status != 0:
        raise SystemExit(f"ccg cat exited with status {status}")
    return {"seconds": time.perf_counter() - t0}


def _parquet(spec: dict[str, Any]) -> dict[str, Any]:
    """The Parquet reference file of the same events (`bench_archive.write_parquet`)."""
    _, batch, offsets = synth.synthesize_table(**spec["shape"])
    seconds = write_parquet(Path(spec["parquet"]), batch, offsets)
    return {"seconds": seconds, "events": len(batch), "parquet_bytes": Path(spec["parquet"]).stat().st_size}


_STEP: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "startup": lambda spec: {"seconds": 0.0}, "convert": _convert, "open": _open, "profile": _query,
    "timeline": _query, "messages": _query, "cat": _cat, "parquet": _parquet}


@child_task("scale_step")
def scale_step_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One step of the scale benchmark on one shape (imports done before it): its seconds and facts."""
    import ccgformat  # noqa: F401
    from ccgformat.cli import main  # noqa: F401
    return _STEP[spec["step"]](spec)


# --------------------------------------------------------------------------- the runner

def _otf2_source(shape: Shape, folder: Path) -> tuple[Path, float | None]:
    """The OTF2 archive of a shape, written by tools/synth.py when missing; its seconds then."""
    path = folder / f"otf2-{shape.locations}x{shape.events_per_location}-{shape.pattern}"
    if path.is_dir():
        return path, None
    print(f"  writing {path} with tools/synth.py --otf2 ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(Path(synth.__file__)), "--otf2", str(path),
                    "--locations", str(shape.locations), "--events-per-location", str(shape.events_per_location),
                    "--pattern", shape.pattern], check=True, stdout=subprocess.DEVNULL)
    return path, time.perf_counter() - t0


def _step_entry(shape: Shape, step: str, spec: dict[str, Any], options: argparse.Namespace) -> dict[str, Any]:
    """Run one step --repeat times (stopping at the first failure): median seconds, max peak RSS."""
    runs = []
    for _ in range(options.repeat):
        run = run_measured("scale_step", {**spec, "step": step}, options.timeout,
                           memory_limit_mb=options.memory_limit)
        runs.append(run)
        if run.status != "ok":
            break
    done = [run for run in runs if run.status == "ok"]
    entry: dict[str, Any] = {"shape": shape.name, "step": step, "locations": shape.locations,
                             "status": runs[-1].status, "wall_seconds": [run.wall_seconds for run in runs],
                             "peak_rss_mb": max((run.peak_rss_mb or 0 for run in runs), default=None)}
    if done:
        samples = [run.result["seconds"] for run in done]  # type: ignore[index]
        entry["seconds"] = {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
                            "samples": samples}
        entry.update({k: v for k, v in done[-1].result.items() if k != "seconds"})  # type: ignore[union-attr]
    return entry


def _process_entry(shape: Shape, step: str, command: list[str], repeat: int,
                   options: argparse.Namespace) -> dict[str, Any]:
    """`benchkit.repeated_process` of a shape's step."""
    return {"shape": shape.name, "step": step, "locations": shape.locations,
            **repeated_process(command, repeat, options.timeout, options.memory_limit)}


def _otf2_processes(shape: Shape, source: Path, archive: str, options: argparse.Namespace) -> list[dict[str, Any]]:
    """``ccg --version`` (start-up), ``ccg convert`` and ``otf2-print`` of the shape's OTF2
    archive, each a fresh process."""
    startup = _process_entry(shape, "ccg --version (process)", [sys.executable, "-m", "ccgformat.cli", "--version"],
                             options.repeat, options)
    convert = _process_entry(shape, "ccg convert (process)",
                             [sys.executable, "-m", "ccgformat.cli", "convert", "-q", str(source), archive],
                             options.repeat, options)
    Path(archive).unlink(missing_ok=True)
    tool = shutil.which("otf2-print")
    if tool is None:
        printed = {"shape": shape.name, "step": "otf2-print (process)", "locations": shape.locations,
                   "status": "skipped: otf2-print is not on PATH (Debian package otf2-tools)"}
    else:
        printed = _process_entry(shape, "otf2-print (process)", [tool, str(next(source.glob("*.otf2")))], 1,
                                 options)
    if "seconds" in convert and "seconds" in printed:
        printed["print_per_convert"] = printed["seconds"]["median"] / convert["seconds"]["median"]
    elif "seconds" in convert and printed["status"].startswith(("killed", "timeout", "failed")):
        # it takes longer still; "failed": at 20,000 ranks it runs out of file descriptors (it
        # keeps two files open per location, and the limit here is 20,000) after reading the rest
        printed["print_per_convert_above"] = printed["wall_seconds"][-1] / convert["seconds"]["median"]
    return [startup, convert, printed]


def run_shape(shape: Shape, folder: Path, options: argparse.Namespace) -> list[dict[str, Any]]:
    """Every step of one shape; the steps after a failed convert are reported as skipped."""
    print(f"  scale {shape.name} ({shape.pattern}) ...", file=sys.stderr, flush=True)
    stem = shape.name.replace(":", "-")
    spec: dict[str, Any] = {"shape": shape.synth_args(), "source": None, "archive": str(folder / f"scale-{stem}.ccg"),
                            "parquet": str(folder / f"scale-{stem}.parquet")}
    prepared = None
    if shape.otf2:
        source, prepared = _otf2_source(shape, folder)
        spec["source"] = str(source)
    entries = []
    for step in STEPS:
        if step == "parquet" and importlib.util.find_spec("pyarrow") is None:
            entries.append({"shape": shape.name, "step": step, "locations": shape.locations,
                            "status": "skipped: needs pyarrow"})
            continue
        if step != "parquet" and entries and entries[0]["status"] != "ok":
            entries.append({"shape": shape.name, "step": step, "locations": shape.locations,
                            "status": "skipped: no archive"})
            continue
        entry = _step_entry(shape, step, spec, options)
        if step == "convert" and prepared is not None:
            entry["synth_otf2_seconds"] = prepared
        entries.append(entry)
        print(f"    {step}: {entry['status']}", file=sys.stderr, flush=True)
    if shape.otf2:
        for entry in _otf2_processes(shape, Path(spec["source"]), spec["archive"], options):
            entries.append(entry)
            print(f"    {entry['step']}: {entry['status']}", file=sys.stderr, flush=True)
    Path(spec["archive"]).unlink(missing_ok=True)
    Path(spec["parquet"]).unlink(missing_ok=True)
    return entries


def _summarise(entries: list[dict[str, Any]], startup_mb: float | None) -> None:
    """Per-location figures, ratios to the twin shape, sizes and targets, in place."""
    by = {(e["shape"], e["step"]): e for e in entries}
    for e in entries:
        n = e["locations"]
        if "seconds" in e:
            e["us_per_location"] = 1e6 * e["seconds"]["median"] / n
        if e.get("peak_rss_mb") and startup_mb is not None and e["step"] != "startup":
            e["kb_per_location"] = 1024 * max(0.0, e["peak_rss_mb"] - startup_mb) / n
        if e["step"] == "convert" and "seconds" in e:
            e["events"] = Shape.parse(e["shape"]).events
            e["events_per_s"] = e["events"] / e["seconds"]["median"]
    for e in entries:
        twin = e.get("twin")
        other = by.get((twin, e["step"])) if twin else None
        if other is None:
            continue
        for key in ("us_per_location", "kb_per_location"):
            if e.get(key) is not None and other.get(key):
                e[key.replace("per_location", "ratio")] = e[key] / other[key]
    for e in entries:
        if e["step"] == "open" and "ccg_bytes" in e:
            e["bytes_per_location"] = e["ccg_bytes"] / e["locations"]
            parquet = by.get((e["shape"], "parquet"), {}).get("parquet_bytes")
            if parquet:
                e["parquet_bytes"] = parquet
                e["ccg_per_parquet"] = e["ccg_bytes"] / parquet
        e["target"] = _target(e)


def _target(e: dict[str, Any]) -> str:
    """PASS, FAIL (with what) or "-" when the issue sets no target for the row."""
    if e["step"] == "otf2-print (process)":
        ratio = e.get("print_per_convert", e.get("print_per_convert_above"))
        if ratio is None or e["status"].startswith("failed") or \
                ("print_per_convert" not in e and ratio < OTF2_PRINT_FACTOR):
            return "-"   # not measured, failed (no time to beat), or stopped before it told
        return "PASS" if ratio >= OTF2_PRINT_FACTOR else f"FAIL < {OTF2_PRINT_FACTOR:g}x"
    targeted = Shape.parse(e["shape"]).target_name if _SHAPE.fullmatch(e["shape"]) else e["shape"]  # "-": start-up
    bound = TARGETS.get(targeted, {}).get(e["step"])
    size = SIZE_TARGETS.get(targeted) if e["step"] == "open" else None
    if bound is None and size is None:
        return "-"
    if "seconds" not in e:
        return "FAIL"
    fails = []
    if bound is not None:
        seconds, rss, rate = bound
        if seconds is not None and e["seconds"]["median"] > seconds:
            fails.append(f"> {seconds:g} s")
        if rss is not None and (e.get("peak_rss_mb") or 0) > rss:
            fails.append(f"> {rss:g} MB")
        if rate is not None and e.get("events_per_s", 0) < rate:
            fails.append(f"< {fmt_rate(rate)} ev/s")
    if size is not None and (e.get("ccg_per_parquet") is None or e["ccg_per_parquet"] > size):
        fails.append(f"ccg > parquet/{1 / size:g}")
    return "PASS" if not fails else "FAIL " + ", ".join(fails)


def _cell(key: str, fmt: Callable[[float], str]) -> Callable[[dict[str, Any]], str]:
    return lambda e: "-" if e.get(key) is None else fmt(e[key])


def _seconds(e: dict[str, Any]) -> str:
    s = e.get("seconds")
    if s is None:
        return "-"
    digits = 4 if s["median"] < 0.1 else 3 if s["median"] < 1 else 2
    if s["min"] == s["max"]:
        return fmt_float(s["median"], digits)
    return f"{fmt_float(s['median'], digits)} ({fmt_float(s['min'], digits)}-{fmt_float(s['max'], digits)})"


def _section(kind: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_float(e["sections"].get(kind, {}).get("bytes", 0) / e["locations"], 1)


#: a step's name, its seconds, events per second and peak RSS (the long benchmark's too)
STEP_COLUMNS = [Column("step", lambda e: e["step"], "<"), Column("s", _seconds),
                Column("ev/s", _cell("events_per_s", fmt_rate)),
                Column("peak RSS MB", _cell("peak_rss_mb", lambda x: fmt_float(x, 0)))]


@benchmark("scale", "time and peak RSS of convert, open, queries and cat at 20,000 to 1,000,000 locations", [
    ("Steps (s: median (min-max) in the child; peak RSS of the child; per location: us and KB above startup; "
     "x1k: per-location ratio to the same shape with --ratio-locations)", [
        Column("shape", lambda e: e["shape"], "<"),
        *STEP_COLUMNS,
        Column("us/loc", _cell("us_per_location", lambda x: fmt_float(x, 2))),
        Column("x1k", _cell("us_ratio", lambda x: f"{x:.2f}")),
        Column("KB/loc", _cell("kb_per_location", lambda x: fmt_float(x, 2))),
        Column("x1k ", _cell("kb_ratio", lambda x: f"{x:.2f}")),
        Column("target", lambda e: e["target"], "<"),
        Column("status", lambda e: e["status"][:70], "<"),
    ]),
    ("OTF2: otf2-print against ccg convert, each a fresh process (wall s from the start, start-up included; "
     "convert: median (min-max) of --repeat; otf2-print: once); in-process: the convert step above; start-up: "
     "ccg --version, a fresh process", [
        Column("shape", lambda e: e["shape"], "<"),
        Column("ccg convert s", lambda e: _seconds(e["convert"])),
        Column("in-process s", lambda e: _seconds(e["in_process"])),
        Column("ccg start-up s", lambda e: _seconds(e["startup"])),
        Column("otf2-print s", lambda e: _seconds(e)),
        Column("otf2-print / convert", lambda e: f"{e['print_per_convert']:.1f}x" if "print_per_convert" in e else
               f"> {e['print_per_convert_above']:.1f}x" if "print_per_convert_above" in e else "-"),
        Column("target", lambda e: e["target"], "<"),
        Column("status", lambda e: e["status"][:70], "<"),
    ], lambda e: e["step"] == "otf2-print (process)"),
    ("Bytes per location (archive and its sections; the Parquet file of the same events: zstd 19, delta time)", [
        Column("shape", lambda e: e["shape"], "<"),
        Column("events", _cell("events", fmt_int)),
        Column("ccg bytes", _cell("ccg_bytes", fmt_int)),
        Column("B/loc", _cell("bytes_per_location", lambda x: fmt_float(x, 1))),
        *[Column(kind, _section(kind)) for kind in ("NODES", "DEFINITIONS", "EXTENSION_TABLE", "LOCATION_TABLE",
                                                    "ROOT_TABLE", "CHECKPOINT_TABLE", "ROOTS", "SNAPSHOTS", "SUMMARY")],
        Column("parquet bytes", _cell("parquet_bytes", fmt_int)),
        Column("ccg/parquet", _cell("ccg_per_parquet", lambda x: f"{x:.3f}")),
    ], lambda e: e["step"] == "open" and "ccg_bytes" in e),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    shapes = [Shape.parse(text) for text in options.shapes]
    folder = CACHE / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    startup = _step_entry(Shape(1, 2, False), "startup", {"archive": ""}, options)
    startup.update(shape="-", locations=1)
    entries = [startup]
    twins: dict[Shape, Shape] = {}
    for shape in shapes:
        twin = shape.twin(options.ratio_locations)
        if twin != shape and twin not in shapes and twin not in twins.values():
            twins[shape] = twin
            entries += run_shape(twin, folder, options)
        elif twin != shape:
            twins[shape] = twin
        for e in run_shape(shape, folder, options):
            entries.append({**e, "twin": twins[shape].name} if shape in twins else e)
    _summarise(entries, startup.get("peak_rss_mb"))
    by = {(e["shape"], e["step"]): e for e in entries}
    for e in entries:
        if e["step"] == "otf2-print (process)":
            e.update(convert=by[(e["shape"], "ccg convert (process)")], in_process=by.get((e["shape"], "convert"), {}),
                     startup=by[(e["shape"], "ccg --version (process)")])
    return entries
