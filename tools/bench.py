#!/usr/bin/env python3
"""The project's benchmarks.

Benchmarks are named functions in a registry (`BENCHMARKS`, filled by the `benchmark`
decorator). Each one returns a list of result entries (plain dicts, JSON-ready) and says
how to print them as tables. The common runner `run_repeated` repeats a measurement R
times and keeps every sample; results report the median with the min and max.

Machines are noisy, so every throughput figure comes with a baseline measured in the
same run (and the same process), and the ratio to it is what should be compared across
machines and commits.

Benchmarks that need a clean process (peak memory) run each configuration in a fresh
subprocess: this script itself with the hidden ``--child TASK SPEC`` mode, which does the
work, repeats the timings itself and prints one JSON line (`run_child`).

    python tools/bench.py                      # every benchmark, full size, 3 repeats
    python tools/bench.py --quick --repeat 1   # smoke test in seconds
    python tools/bench.py builder --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import numpy as np  # noqa: E402

import synth  # noqa: E402
from ccgformat import Builder, Params, __version__  # noqa: E402
from ccgformat.model import COLUMNS, EventBatch  # noqa: E402

# --------------------------------------------------------------------------- measurements


@dataclass
class Stat:
    """Repeated samples of one measurement."""

    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    def as_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "samples": list(self.samples)}

    def map(self, fn: Callable[[float], float]) -> Stat:
        return Stat([fn(x) for x in self.samples])


def run_repeated(sample: Callable[[], float], repeat: int) -> Stat:
    """The common runner: call ``sample`` (which measures once and returns the value,
    e.g. seconds) ``repeat`` times after a garbage collection each, keep every sample."""
    values = []
    for _ in range(repeat):
        gc.collect()
        values.append(float(sample()))
    return Stat(values)


def rate(count: int, seconds: Stat) -> Stat:
    """Items per second for every sample of a duration."""
    return seconds.map(lambda s: count / s if s > 0 else float("inf"))


def rss_now_mb() -> float | None:
    """The current resident set size of this process in MiB (Linux), else None."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, AttributeError):
        return None


def peak_rss_mb() -> float | None:
    """``ru_maxrss`` of this process in MiB (KiB on Linux, bytes on macOS), else None."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def run_child(task: str, spec: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Run ``task`` of `CHILD_TASKS` in a fresh interpreter; returns the JSON it prints."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", task, json.dumps(spec)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"child {task} {spec} failed with exit status {done.returncode}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"child {task} {spec} printed nothing")
    return json.loads(lines[-1])


# --------------------------------------------------------------------------- registry


@dataclass
class Column:
    """One column of a printed table: a header and how to format an entry's cell."""

    header: str
    cell: Callable[[dict[str, Any]], str]
    align: str = ">"


@dataclass
class Benchmark:
    name: str
    description: str
    run: Callable[[argparse.Namespace], list[dict[str, Any]]]
    tables: list[tuple[str, list[Column]]] = field(default_factory=list)


#: Every benchmark by name, in the order they run.
BENCHMARKS: dict[str, Benchmark] = {}
#: Work done in a fresh subprocess (``--child TASK SPEC``): spec dict -> result dict.
CHILD_TASKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def benchmark(name: str, description: str, tables: list[tuple[str, list[Column]]]):
    """Register a benchmark function ``fn(options) -> list of result entries``."""
    def register(fn):
        BENCHMARKS[name] = Benchmark(name, description, fn, tables)
        return fn
    return register


def child_task(name: str):
    def register(fn):
        CHILD_TASKS[name] = fn
        return fn
    return register


# --------------------------------------------------------------------------- formatting


def fmt_int(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def fmt_float(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def fmt_rate(x: float) -> str:
    """Events/s, shortened: 123.4k, 1.23M."""
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_stat(stat: dict[str, Any], fmt: Callable[[float], str] = fmt_rate) -> str:
    """``median (min-max)``; just the median for a single sample."""
    if stat["min"] == stat["max"]:
        return fmt(stat["median"])
    return f"{fmt(stat['median'])} ({fmt(stat['min'])}-{fmt(stat['max'])})"


def render_table(title: str, columns: list[Column], entries: list[dict[str, Any]]) -> str:
    rows = [[c.cell(e) for c in columns] for e in entries]
    widths = [max([len(c.header)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    line = lambda cells: "  ".join(f"{cell:{c.align}{w}}" for cell, c, w in zip(cells, columns, widths))
    out = [title, line([c.header for c in columns]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------- builder benchmark

#: The traces: name -> synth.synthesize keyword arguments (SPMD pattern).
TRACES: dict[str, dict[str, Any]] = {
    "regular": {"jitter": 0.0, "seed": 1},
    "jittered": {"jitter": 0.2, "seed": 1},
}
#: The parameter sets: name -> Params keyword arguments.
PARAM_SETS: dict[str, dict[str, Any]] = {
    "lossless": {"branching": 20, "search_length": 1000},
    "lossy": {"abs_dev": 1000, "rel_dev": 0.05, "branching": 20, "search_length": 1000},
}
LOCATIONS = 8
EVENTS_FULL = 125_000
EVENTS_QUICK = 12_500
RANDOM_ACCESSES = 1000
RANDOM_SEED = 20240601


def _build(params: Params, definitions, data: list[list[EventBatch]]):
    """Feed every location one after another, then finish: what the builder timing covers."""
    builder = Builder(params, definitions)
    for location, batches in enumerate(data):
        for batch in batches:
            builder.add(location, batch)
    return builder.finish()


def _baseline_pass(data: list[list[EventBatch]]) -> int:
    """A plain Python walk over the same events: every column to a list as the builder
    does, then one trivial operation per event (summing time differences)."""
    total = 0
    for batches in data:
        previous = None
        for batch in batches:
            times = batch.time.tolist()
            kinds = batch.kind.tolist()
            _others = [getattr(batch, name).tolist() for name in COLUMNS]
            if previous is None and times:
                previous = times[0]
            for t, _kind in zip(times, kinds):
                total += t - previous
                previous = t
    return total


def _check_location(graph, params: Params, original: EventBatch) -> str:
    """Compare the walked location with its input: 'ok' or what differs."""
    walker = graph.location(0)
    if len(walker) != len(original):
        return f"location 0 has {len(walker)} events, expected {len(original)}"
    walked = EventBatch.concat(list(walker.events()))
    for name in ("kind",) + COLUMNS:
        if not np.array_equal(getattr(walked, name), getattr(original, name)):
            i = int(np.flatnonzero(getattr(walked, name) != getattr(original, name))[0])
            return f"column {name} differs first at event {i}"
    deviation = np.abs(walked.time - original.time)
    bound = 0 if params.exact_time else params.abs_dev
    if deviation.max(initial=0) > bound:
        i = int(np.argmax(deviation))
        return f"time deviates by {int(deviation[i])} > {bound} at event {i}"
    return "ok"


@child_task("builder")
def builder_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One (trace, params) configuration: generate once, build R times, walk the last graph."""
    repeat = spec["repeat"]
    definitions, events = synth.synthesize(spec["locations"], spec["events_per_location"],
                                           pattern="spmd", **TRACES[spec["trace"]])
    data = [list(events(location)) for location in range(spec["locations"])]
    count = sum(len(batch) for batches in data for batch in batches)
    gc.collect()
    rss_before = rss_now_mb()
    peak_before = peak_rss_mb()
    params = Params(**PARAM_SETS[spec["params"]])

    # Baseline: the plain Python loop over the same events, same process, same run. It
    # runs before the builds, on a clean heap: once a large graph is built and the
    # builder's garbage collected, new small objects land scattered over a fragmented
    # heap, which slowed this loop down ~3x on the jittered traces and made the ratio
    # depend on the configuration.
    expected_sum = sum(int(b[-1].time[-1]) - int(b[0].time[0]) for b in data if b)

    def baseline_once() -> float:
        t0 = time.perf_counter()
        result = _baseline_pass(data)
        elapsed = time.perf_counter() - t0
        assert result == expected_sum, (result, expected_sum)
        return elapsed

    baseline_seconds = run_repeated(baseline_once, repeat)

    # Builder: a fresh Builder per repeat, the previous graph freed first.
    graph = None

    def build_once() -> float:
        nonlocal graph
        graph = None
        gc.collect()
        t0 = time.perf_counter()
        graph = _build(params, definitions, data)
        return time.perf_counter() - t0

    build_seconds = run_repeated(build_once, repeat)
    peak_after = peak_rss_mb()
    assert graph is not None
    metrics = graph.metrics

    # Walker on location 0: sequential iteration, then random access and time search.
    walker = graph.location(0)
    walk_count = len(walker)

    def walk_once() -> float:
        t0 = time.perf_counter()
        seen = 0
        for batch in walker.events():
            seen += len(batch)
        elapsed = time.perf_counter() - t0
        assert seen == walk_count, (seen, walk_count)
        return elapsed

    walk_seconds = run_repeated(walk_once, repeat)
    rng = np.random.default_rng(RANDOM_SEED)
    root = graph.roots[0]
    indices = rng.integers(0, walk_count, RANDOM_ACCESSES).tolist()
    times = rng.integers(root.start, root.end + 1, RANDOM_ACCESSES).tolist()

    def per_call_us(fn: Callable[[int], Any], args: list[int]) -> Callable[[], float]:
        def sample() -> float:
            clock = time.perf_counter_ns
            calls = []
            for arg in args:
                t0 = clock()
                fn(arg)
                calls.append(clock() - t0)
            return statistics.median(calls) / 1000
        return sample

    event_us = run_repeated(per_call_us(walker.event, indices), repeat)
    find_us = run_repeated(per_call_us(walker.find, times), repeat)
    check = _check_location(graph, params, EventBatch.concat(data[0]))

    builder_rate = rate(count, build_seconds)
    baseline_rate = rate(count, baseline_seconds)
    return {
        "trace": spec["trace"],
        "params": spec["params"],
        "trace_args": TRACES[spec["trace"]],
        "params_args": PARAM_SETS[spec["params"]],
        "locations": spec["locations"],
        "events_per_location_requested": spec["events_per_location"],
        "events": count,
        "repeat": repeat,
        "builder_seconds": build_seconds.as_dict(),
        "builder_events_per_s": builder_rate.as_dict(),
        "baseline_seconds": baseline_seconds.as_dict(),
        "baseline_events_per_s": baseline_rate.as_dict(),
        "ratio": builder_rate.median / baseline_rate.median,
        "N": metrics.N,
        "n": metrics.n,
        "M": metrics.M,
        "m": metrics.m,
        "r_nodes": metrics.r_nodes,
        "r_memory": metrics.r_memory,
        "rss_before_mb": rss_before,
        "maxrss_before_mb": peak_before,
        "peak_rss_mb": peak_after,
        "walk_events": walk_count,
        "walk_events_per_s": rate(walk_count, walk_seconds).as_dict(),
        "event_us": event_us.as_dict(),
        "find_us": find_us.as_dict(),
        "check": check,
    }


def _config_name(e: dict[str, Any]) -> str:
    return f"{e['trace']}/{e['params']}"


def _mb(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_float(e[key], 1)


@benchmark(
    "builder",
    "cCCG builder and walker on the synthetic SPMD trace (regular and jittered, lossless and lossy)",
    [
        ("Builder (events/s: median (min-max); ratio = builder/baseline median; memory in MiB)", [
            Column("trace/params", _config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("builder ev/s", lambda e: fmt_stat(e["builder_events_per_s"])),
            Column("baseline ev/s", lambda e: fmt_stat(e["baseline_events_per_s"])),
            Column("ratio", lambda e: f"{e['ratio']:.4f}"),
            Column("N", lambda e: fmt_int(e["N"])),
            Column("n", lambda e: fmt_int(e["n"])),
            Column("R_nodes", lambda e: fmt_float(e["r_nodes"])),
            Column("R_memory", lambda e: fmt_float(e["r_memory"])),
            Column("rss_before_mb", _mb("rss_before_mb")),
            Column("peak_rss_mb", _mb("peak_rss_mb")),
        ]),
        ("Walker on location 0 (sequential events(); median us per call over "
         f"{RANDOM_ACCESSES} random event(i) / find(t))", [
            Column("trace/params", _config_name, "<"),
            Column("events", lambda e: fmt_int(e["walk_events"])),
            Column("walk ev/s", lambda e: fmt_stat(e["walk_events_per_s"])),
            Column("event(i) us", lambda e: fmt_stat(e["event_us"], lambda x: f"{x:.1f}")),
            Column("find(t) us", lambda e: fmt_stat(e["find_us"], lambda x: f"{x:.1f}")),
            Column("check", lambda e: e["check"], "<"),
        ]),
    ])
def builder_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    for trace in TRACES:
        for params in PARAM_SETS:
            spec = {"trace": trace, "params": params, "locations": options.locations,
                    "events_per_location": options.events_per_location, "repeat": options.repeat}
            t0 = time.perf_counter()
            entry = run_child("builder", spec)
            entries.append(entry)
            print(f"  builder {trace}/{params}: {fmt_rate(entry['builder_events_per_s']['median'])} "
                  f"events/s, R_nodes {entry['r_nodes']:.2f} ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    return entries


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench.py",
        description="Run the ccgformat benchmarks and print the results as tables "
                    "(timings: median (min-max) of --repeat runs).",
        epilog="Benchmarks: " + "; ".join(f"{b.name}: {b.description}" for b in BENCHMARKS.values()))
    parser.add_argument("benchmarks", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    parser.add_argument("--repeat", type=int, default=3, metavar="R",
                        help="repetitions of every timing; medians are reported (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help=f"small traces ({LOCATIONS} x {EVENTS_QUICK:,} events) for a smoke test")
    parser.add_argument("--events-per-location", type=int, default=None, metavar="N",
                        help=f"requested events per location (default {EVENTS_FULL:,}, "
                             f"{EVENTS_QUICK:,} with --quick)")
    parser.add_argument("--locations", type=int, default=LOCATIONS, help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="FILE", help="also write all results as JSON to FILE")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--child", nargs=2, metavar=("TASK", "SPEC"), help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.child:
        task, spec = args.child
        if task not in CHILD_TASKS:
            parser.error(f"unknown child task {task!r}")
        print(json.dumps(CHILD_TASKS[task](json.loads(spec))), flush=True)
        return 0
    if args.list:
        for b in BENCHMARKS.values():
            print(f"{b.name}: {b.description}")
        return 0
    unknown = [name for name in args.benchmarks if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if args.events_per_location is None:
        args.events_per_location = EVENTS_QUICK if args.quick else EVENTS_FULL
    if args.events_per_location < 2 or args.locations < 1:
        parser.error("--events-per-location must be >= 2")

    started = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    selected = args.benchmarks or list(BENCHMARKS)
    for name in selected:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results[name] = BENCHMARKS[name].run(args)
    elapsed = time.perf_counter() - started

    meta = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "ccgformat": __version__,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "repeat": args.repeat,
        "quick": args.quick,
        "locations": args.locations,
        "events_per_location": args.events_per_location,
        "elapsed_s": elapsed,
    }
    print(f"ccgformat {__version__}, Python {meta['python']} on {meta['platform']}; "
          f"{args.locations} x {args.events_per_location:,} events requested per trace; "
          f"repeat {args.repeat}")
    for name in selected:
        for title, columns in BENCHMARKS[name].tables:
            print()
            print(render_table(f"[{name}] {title}", columns, results[name]))
    print(f"\ntotal time {elapsed:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "benchmarks": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
