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
import tempfile
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


def per_call_us(fn: Callable[[int], Any], args: list[int]) -> Callable[[], float]:
    """A sample function: call ``fn`` on every argument, return the median microseconds per call."""
    def sample() -> float:
        clock = time.perf_counter_ns
        calls = []
        for arg in args:
            t0 = clock()
            fn(arg)
            calls.append(clock() - t0)
        return statistics.median(calls) / 1000
    return sample


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


# --------------------------------------------------------------------------- archive benchmark

#: zstd level of every compressed artefact of the archive benchmark (.ccg blocks, Parquet, raw).
ARCHIVE_LEVEL = 19
#: The large trace has this many times the events per location of the small ones
#: (8 x 1,250,000 = 10M events at full size, 1M with --quick).
LARGE_FACTOR = 10
#: Every open-time sample is the median of this many fresh opens.
OPEN_SAMPLES = 25
#: Random event(i) / find(t) calls on a fresh Archive each, per repeat.
COLD_CALLS = 30
#: Size targets: (SPMD trace kind, parameter set) -> minimum parquet_bytes / ccg_bytes.
SIZE_TARGETS: dict[tuple[str, str], float] = {
    ("regular", "lossless"): 10.0,
    ("jittered", "lossless"): 1.0,
    ("jittered", "lossy"): 10.0,
}
OPEN_TARGET_MS = 10.0
WARM_TARGET_US = 100.0
COLD_TARGET_MS = 5.0
#: The Parquet columns besides location, time and kind (all int64).
PARQUET_INT64 = COLUMNS


def _short_count(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def _archive_traces(options: argparse.Namespace) -> list[dict[str, Any]]:
    """The traces of the archive benchmark: name, SPMD kind (a `TRACES` key) and size."""
    small = options.events_per_location
    traces = [{"trace": kind, "kind": kind, "locations": options.locations, "events_per_location": small}
              for kind in ("regular", "jittered")]
    if not options.skip_10m:
        large = LARGE_FACTOR * small
        traces.append({"trace": f"jittered-{_short_count(options.locations * large)}", "kind": "jittered",
                       "locations": options.locations, "events_per_location": large})
    return traces


def _synthesize(spec: dict[str, Any]):
    return synth.synthesize(spec["locations"], spec["events_per_location"], pattern="spmd",
                            **TRACES[spec["kind"]])


def _delta(times: np.ndarray) -> np.ndarray:
    """Differences to the previous event; the first stays absolute."""
    out = np.empty_like(times)
    out[:1] = times[:1]
    np.subtract(times[1:], times[:-1], out=out[1:])
    return out


@child_task("archive_reference")
def archive_reference_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The comparison files of one trace: Parquet (zstd 19, per-location delta time) and
    plain zstd 19 of the raw columns (every column, all locations, as tools/synth.py's .npz
    holds them: absolute int64 times, uint8 kinds, int64 others)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    definitions, events = _synthesize(spec)
    t0 = time.perf_counter()
    data = [EventBatch.concat(list(events(location))) for location in range(spec["locations"])]
    generate_seconds = time.perf_counter() - t0
    count = sum(len(batch) for batch in data)

    columns = {
        "location": pa.array(np.concatenate([np.full(len(b), i, dtype=np.int32) for i, b in enumerate(data)])),
        "time": pa.array(np.concatenate([_delta(b.time.astype(np.int64)) for b in data])),
        "kind": pa.array(np.concatenate([b.kind for b in data]).astype(np.uint8)),
    }
    for name in PARQUET_INT64:
        columns[name] = pa.array(np.concatenate([getattr(b, name) for b in data]).astype(np.int64))
    table = pa.table(columns)
    del columns
    path = Path(spec["parquet_path"])
    t0 = time.perf_counter()
    pq.write_table(table, path, compression="zstd", compression_level=ARCHIVE_LEVEL)
    parquet_seconds = time.perf_counter() - t0
    del table
    rows = pq.ParquetFile(path).metadata.num_rows
    assert rows == count, (rows, count)

    # plain zstd of the raw columns, streamed column by column (one frame)
    compressor = zstandard.ZstdCompressor(level=ARCHIVE_LEVEL).compressobj()
    raw_bytes = zstd_bytes = 0
    t0 = time.perf_counter()
    for name in ("time", "kind") + COLUMNS:
        for batch in data:
            chunk = np.ascontiguousarray(getattr(batch, name)).tobytes()
            raw_bytes += len(chunk)
            zstd_bytes += len(compressor.compress(chunk))
    zstd_bytes += len(compressor.flush())
    zstd_seconds = time.perf_counter() - t0
    return {
        "events": count,
        "generate_seconds": generate_seconds,
        "parquet_bytes": path.stat().st_size,
        "parquet_seconds": parquet_seconds,
        "parquet_row_groups": pq.ParquetFile(path).metadata.num_row_groups,
        "raw_bytes": raw_bytes,
        "zstd_raw_bytes": zstd_bytes,
        "zstd_raw_seconds": zstd_seconds,
        "pyarrow": pa.__version__,
    }


@child_task("archive_write")
def archive_write_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One streaming `write_trace` of a (trace, params) configuration. The synthetic events
    are generated on the fly (a few % of the time), so peak RSS is the writer's own."""
    import ccgformat

    definitions, events = _synthesize(spec)
    params = Params(**PARAM_SETS[spec["params"]])
    gc.collect()
    rss_before = rss_now_mb()
    peak_before = peak_rss_mb()
    t0 = time.perf_counter()
    graph = ccgformat.write_trace(spec["path"], definitions,
                                  ((location, events(location)) for location in range(spec["locations"])),
                                  params, level=ARCHIVE_LEVEL)
    seconds = time.perf_counter() - t0
    peak_after = peak_rss_mb()
    count = sum(root.events for root in graph.roots.values())
    return {"write_seconds": seconds, "write_events_per_s": count / seconds if seconds > 0 else None,
            "write_events": count, "write_rss_before_mb": rss_before, "write_maxrss_before_mb": peak_before,
            "write_peak_rss_mb": peak_after}


class _Probe:
    """Wall time spent in the reader's block functions, by temporarily wrapping the names
    `ccgformat.archive.reader` calls them by (instrumentation only; the package is unchanged)."""

    NAMES = ("read_block", "unpack_payload", "decode_nodes")

    def __init__(self) -> None:
        from ccgformat.archive import reader
        self._reader = reader
        self._saved = {name: getattr(reader, name) for name in self.NAMES}
        self.reset()

    def reset(self) -> None:
        self.seconds = {name: 0.0 for name in self.NAMES}
        self.calls = {name: 0 for name in self.NAMES}

    def __enter__(self) -> _Probe:
        for name, fn in self._saved.items():
            setattr(self._reader, name, self._timed(name, fn))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, fn in self._saved.items():
            setattr(self._reader, name, fn)

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += clock() - t0
                self.calls[name] += 1
        return timed


@child_task("archive_read")
def archive_read_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Open, random access (warm and cold), sequential iteration and sizes of one archive."""
    import ccgformat
    from ccgformat.archive.layout import BLOCK_OVERHEAD, SectionKind

    path, repeat, location = spec["path"], spec["repeat"], 0
    params = Params(**PARAM_SETS[spec["params"]])
    ccgformat.open(path).close()  # imports and page cache

    # sizes
    archive = ccgformat.open(path)
    stats = archive.stats
    sections: dict[str, dict[str, int]] = {}
    for entry in archive._directory:
        name = SectionKind(entry.kind).name if entry.kind in {int(k) for k in SectionKind} else str(entry.kind)
        part = sections.setdefault(name, {"blocks": 0, "bytes": 0, "raw_bytes": 0})
        part["blocks"] += 1
        part["bytes"] += BLOCK_OVERHEAD + entry.length
        part["raw_bytes"] += entry.raw_length
    listed = sum(part["bytes"] for part in sections.values())
    sections["FOOTER"] = {"blocks": 1, "bytes": stats.file_bytes - listed, "raw_bytes": 0}  # + header, trailer
    node_blocks = sections.get("NODES", {}).get("blocks", 0)
    archive.close()

    # open: every sample is the median of OPEN_SAMPLES opens of a fresh Archive
    def open_once() -> float:
        samples = []
        for _ in range(OPEN_SAMPLES):
            t0 = time.perf_counter()
            opened = ccgformat.open(path)
            samples.append(time.perf_counter() - t0)
            opened.close()
        return statistics.median(samples) * 1000

    open_ms = run_repeated(open_once, repeat)

    # warm random access on one Archive, after a warm-up pass over the same calls
    archive = ccgformat.open(path)
    walker = archive.location(location)
    count = len(walker)
    root = archive.roots[location]
    rng = np.random.default_rng(RANDOM_SEED)
    indices = rng.integers(0, count, RANDOM_ACCESSES).tolist()
    times = rng.integers(root.start, root.end + 1, RANDOM_ACCESSES).tolist()
    for i in indices:
        walker.event(i)
    for t in times:
        walker.find(t)
    event_us = run_repeated(per_call_us(walker.event, indices), repeat)
    find_us = run_repeated(per_call_us(walker.find, times), repeat)
    probe = _Probe()
    with probe:  # block decodes during one more warm pass: LRU cache misses
        for i in indices:
            walker.event(i)
        for t in times:
            walker.find(t)
    warm_decodes = probe.calls["decode_nodes"]
    archive.close()
    del walker, archive

    # cold random access: a fresh Archive for every call (location lookup included)
    cold_indices = rng.integers(0, count, COLD_CALLS).tolist()
    cold_times = rng.integers(root.start, root.end + 1, COLD_CALLS).tolist()
    cold_event = lambda a, i: a.location(location).event(i)
    cold_find = lambda a, t: a.location(location).find(t)

    def cold_ms(call: Callable[[Any, int], Any], args: list[int]) -> Callable[[], float]:
        def sample() -> float:
            calls = []
            for arg in args:
                opened = ccgformat.open(path)
                t0 = time.perf_counter_ns()
                call(opened, arg)
                calls.append(time.perf_counter_ns() - t0)
                opened.close()
            return statistics.median(calls) / 1e6
        return sample

    event_cold_ms = run_repeated(cold_ms(cold_event, cold_indices), repeat)
    find_cold_ms = run_repeated(cold_ms(cold_find, cold_times), repeat)

    # where the cold time goes: one instrumented pass (mean ms per call)
    def breakdown(call: Callable[[Any, int], Any], args: list[int]) -> dict[str, float]:
        totals = {"total_ms": 0.0, "read_block_ms": 0.0, "zstd_ms": 0.0, "decode_nodes_ms": 0.0,
                  "blocks": 0.0}
        with _Probe() as probe:
            for arg in args:
                opened = ccgformat.open(path)
                probe.reset()
                t0 = time.perf_counter()
                call(opened, arg)
                totals["total_ms"] += (time.perf_counter() - t0) * 1000
                totals["read_block_ms"] += probe.seconds["read_block"] * 1000
                totals["zstd_ms"] += probe.seconds["unpack_payload"] * 1000
                totals["decode_nodes_ms"] += probe.seconds["decode_nodes"] * 1000
                totals["blocks"] += probe.calls["decode_nodes"]
                opened.close()
        means = {key: value / len(args) for key, value in totals.items()}
        means["other_ms"] = means["total_ms"] - means["read_block_ms"] - means["zstd_ms"] - means["decode_nodes_ms"]
        return means

    cold_event_breakdown = breakdown(cold_event, cold_indices)
    cold_find_breakdown = breakdown(cold_find, cold_times)

    # sequential iteration over the location, on a fresh Archive each time
    def walk_once() -> float:
        opened = ccgformat.open(path)
        w = opened.location(location)
        t0 = time.perf_counter()
        seen = 0
        for batch in w.events():
            seen += len(batch)
        elapsed = time.perf_counter() - t0
        opened.close()
        assert seen == count, (seen, count)
        return elapsed

    walk_seconds = run_repeated(walk_once, repeat)

    # the location read back against the synthetic input
    _, events = _synthesize(spec)
    with ccgformat.open(path) as opened:
        check = _check_location(opened, params, EventBatch.concat(list(events(location))))

    return {
        "ccg_bytes": stats.file_bytes,
        "ccg_bytes_per_event": stats.bytes_per_event,
        "events": stats.events,
        "N": stats.N,
        "n": stats.n,
        "r_nodes": stats.r_nodes,
        "r_memory": stats.r_memory,
        "sections": sections,
        "node_blocks": node_blocks,
        "open_ms": open_ms.as_dict(),
        "walk_location": location,
        "walk_events": count,
        "event_us": event_us.as_dict(),
        "find_us": find_us.as_dict(),
        "warm_block_decodes": warm_decodes,
        "warm_calls": 2 * RANDOM_ACCESSES,
        "event_cold_ms": event_cold_ms.as_dict(),
        "find_cold_ms": find_cold_ms.as_dict(),
        "cold_calls": COLD_CALLS,
        "event_cold_breakdown": cold_event_breakdown,
        "find_cold_breakdown": cold_find_breakdown,
        "walk_events_per_s": rate(count, walk_seconds).as_dict(),
        "check": check,
    }


def _archive_targets(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """PASS/FAIL of every target that applies to an entry: name -> target, value, pass."""
    targets: dict[str, dict[str, Any]] = {}
    need = SIZE_TARGETS.get((entry["kind"], entry["params"]))
    if need is not None:
        targets["size"] = {"target": f"parquet/ccg >= {need:g}", "min": need, "value": entry["ratio"],
                           "pass": entry["ratio"] >= need}
    open_ms = entry["open_ms"]["median"]
    targets["open"] = {"target": f"open < {OPEN_TARGET_MS:g} ms", "value": open_ms,
                       "pass": open_ms < OPEN_TARGET_MS}
    warm = max(entry["event_us"]["median"], entry["find_us"]["median"])
    targets["warm"] = {"target": f"event/find warm < {WARM_TARGET_US:g} us", "value": warm,
                       "pass": warm < WARM_TARGET_US}
    cold = max(entry["event_cold_ms"]["median"], entry["find_cold_ms"]["median"])
    targets["cold"] = {"target": f"event/find cold < {COLD_TARGET_MS:g} ms", "value": cold,
                       "pass": cold < COLD_TARGET_MS}
    return targets


def _status(name: str) -> Callable[[dict[str, Any]], str]:
    def cell(e: dict[str, Any]) -> str:
        target = e["targets"].get(name)
        return "-" if target is None else ("PASS" if target["pass"] else "FAIL")
    return cell


def _ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def _us(x: float) -> str:
    return f"{x:.1f}"


def _section_bytes(kind: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_int(e["sections"].get(kind, {}).get("bytes"))


def _breakdown(key: str, field_: str, digits: int = 2) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_float(e[key][field_], digits)


@benchmark(
    "archive",
    ".ccg archives vs Parquet: size, open, random and sequential access, writer time and memory",
    [
        ("Size (bytes; ratio = parquet/ccg; targets: regular lossless >= 10x, jittered lossless >= 1x, "
         "jittered lossy >= 10x)", [
            Column("trace/params", _config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("ccg bytes", lambda e: fmt_int(e["ccg_bytes"])),
            Column("ccg B/ev", lambda e: f"{e['ccg_bytes_per_event']:.4f}"),
            Column("parquet bytes", lambda e: fmt_int(e["parquet_bytes"])),
            Column("parquet B/ev", lambda e: f"{e['parquet_bytes_per_event']:.4f}"),
            Column("zstd raw bytes", lambda e: fmt_int(e["zstd_raw_bytes"])),
            Column("ratio", lambda e: f"{e['ratio']:.2f}"),
            Column("target", lambda e: f">= {e['targets']['size']['min']:g}x" if "size" in e["targets"] else "-"),
            Column("size", _status("size")),
            Column("R_nodes", lambda e: fmt_float(e["r_nodes"])),
        ]),
        ("Sections of the .ccg (bytes incl. block framing; FOOTER includes file header and trailer)", [
            Column("trace/params", _config_name, "<"),
            Column("NODES", _section_bytes("NODES")),
            Column("blocks", lambda e: fmt_int(e["node_blocks"])),
            Column("SNAPSHOTS", _section_bytes("SNAPSHOTS")),
            Column("SUMMARY", _section_bytes("SUMMARY")),
            Column("DEFINITIONS", _section_bytes("DEFINITIONS")),
            Column("PARAMETERS", _section_bytes("PARAMETERS")),
            Column("ROOTS", _section_bytes("ROOTS")),
            Column("FOOTER", _section_bytes("FOOTER")),
        ]),
        (f"Access on location 0 (open: median of {OPEN_SAMPLES} fresh opens per repeat; warm: median us "
         f"per call over {RANDOM_ACCESSES} random calls after a warm-up pass; cold: median ms per call, "
         f"fresh Archive per call, {COLD_CALLS} calls; walk: sequential events() on a fresh Archive; "
         f"targets: open < {OPEN_TARGET_MS:g} ms, warm < {WARM_TARGET_US:g} us, cold < {COLD_TARGET_MS:g} ms)", [
            Column("trace/params", _config_name, "<"),
            Column("open ms", lambda e: fmt_stat(e["open_ms"], _ms)),
            Column("event(i) us", lambda e: fmt_stat(e["event_us"], _us)),
            Column("find(t) us", lambda e: fmt_stat(e["find_us"], _us)),
            Column("event(i) cold ms", lambda e: fmt_stat(e["event_cold_ms"], _ms)),
            Column("find(t) cold ms", lambda e: fmt_stat(e["find_cold_ms"], _ms)),
            Column("walk ev/s", lambda e: fmt_stat(e["walk_events_per_s"])),
            Column("open", _status("open")),
            Column("warm", _status("warm")),
            Column("cold", _status("cold")),
            Column("check", lambda e: e["check"], "<"),
        ]),
        ("Cold calls broken down (mean ms per call; blocks = node blocks decoded per call; "
         "warm decodes = node blocks decoded in one warm pass of 2x1000 calls, i.e. LRU misses)", [
            Column("trace/params", _config_name, "<"),
            Column("event ms", _breakdown("event_cold_breakdown", "total_ms")),
            Column("blocks", _breakdown("event_cold_breakdown", "blocks", 1)),
            Column("read+crc", _breakdown("event_cold_breakdown", "read_block_ms")),
            Column("zstd", _breakdown("event_cold_breakdown", "zstd_ms")),
            Column("decode_nodes", _breakdown("event_cold_breakdown", "decode_nodes_ms")),
            Column("other", _breakdown("event_cold_breakdown", "other_ms")),
            Column("find ms", _breakdown("find_cold_breakdown", "total_ms")),
            Column("blocks", _breakdown("find_cold_breakdown", "blocks", 1)),
            Column("decode_nodes", _breakdown("find_cold_breakdown", "decode_nodes_ms")),
            Column("warm decodes", lambda e: fmt_int(e["warm_block_decodes"])),
        ]),
        ("Writing (one streaming write_trace per configuration, synthetic events generated on the fly; "
         "memory in MiB of the writer's child process; Parquet and raw zstd times for comparison)", [
            Column("trace/params", _config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("write s", lambda e: fmt_float(e["write_seconds"], 1)),
            Column("write ev/s", lambda e: fmt_rate(e["write_events_per_s"])),
            Column("rss_before_mb", _mb("write_rss_before_mb")),
            Column("peak_rss_mb", _mb("write_peak_rss_mb")),
            Column("generate s", lambda e: fmt_float(e["generate_seconds"], 2)),
            Column("parquet s", lambda e: fmt_float(e["parquet_seconds"], 1)),
            Column("zstd raw s", lambda e: fmt_float(e["zstd_raw_seconds"], 1)),
        ]),
    ])
def archive_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    """Per trace one reference child (Parquet, raw zstd); per (trace, params) one write
    child (the single build) and one read child on the archive it left in the run's
    temporary folder."""
    entries = []
    with tempfile.TemporaryDirectory(prefix="ccg-bench-") as folder:
        for trace in _archive_traces(options):
            t0 = time.perf_counter()
            reference = run_child("archive_reference",
                                  {**trace, "parquet_path": str(Path(folder) / f"{trace['trace']}.parquet")})
            print(f"  archive {trace['trace']}: {reference['events']:,} events, Parquet "
                  f"{reference['parquet_bytes']:,} bytes ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
            for params in PARAM_SETS:
                spec = {**trace, "params": params, "repeat": options.repeat,
                        "path": str(Path(folder) / f"{trace['trace']}-{params}.ccg")}
                t0 = time.perf_counter()
                written = run_child("archive_write", spec)
                read = run_child("archive_read", spec)
                assert read["events"] == reference["events"] == written["write_events"], (
                    read["events"], reference["events"], written["write_events"])
                entry = {
                    "trace": trace["trace"], "kind": trace["kind"], "params": params,
                    "trace_args": TRACES[trace["kind"]], "params_args": PARAM_SETS[params],
                    "zstd_level": ARCHIVE_LEVEL, "locations": trace["locations"],
                    "events_per_location_requested": trace["events_per_location"], "repeat": options.repeat,
                    **reference, **written, **read,
                    "parquet_bytes_per_event": reference["parquet_bytes"] / reference["events"],
                    "ratio": reference["parquet_bytes"] / read["ccg_bytes"],
                    "zstd_raw_ratio": reference["zstd_raw_bytes"] / read["ccg_bytes"],
                }
                entry["targets"] = _archive_targets(entry)
                entries.append(entry)
                failed = [name for name, target in entry["targets"].items() if not target["pass"]]
                print(f"  archive {trace['trace']}/{params}: {entry['ccg_bytes']:,} bytes, "
                      f"ratio {entry['ratio']:.2f}, write {entry['write_seconds']:.1f} s, "
                      f"targets {'FAIL ' + ', '.join(failed) if failed else 'PASS'} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    return entries


def _needs(benchmarks: Sequence[str]) -> list[str]:
    """Problems that keep the selected benchmarks from running (missing optional packages)."""
    problems = []
    if "archive" in benchmarks:
        import importlib.util
        if importlib.util.find_spec("pyarrow") is None:
            problems.append("the archive benchmark needs pyarrow (pip install pyarrow, or the 'bench' extra); "
                            "name the other benchmarks to run them without it")
    return problems


# --------------------------------------------------------------------------- command line


def _git_head() -> str | None:
    """The commit of the checkout holding the imported ccgformat, with ``+dirty`` if its
    working tree differs from it; None outside a git checkout."""
    folder = Path(sys.modules["ccgformat"].__file__).parent
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


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
    parser.add_argument("--skip-10m", action="store_true",
                        help=f"archive benchmark: leave out the large trace ({LARGE_FACTOR}x the events "
                             f"per location: {LOCATIONS} x {LARGE_FACTOR * EVENTS_FULL:,} = 10M events)")
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

    selected = args.benchmarks or list(BENCHMARKS)
    problems = _needs(selected)
    if problems:
        parser.error("; ".join(problems))

    started = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
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
        "skip_10m": args.skip_10m,
        "ccgformat_path": str(Path(sys.modules["ccgformat"].__file__).parent),
        "git_head": _git_head(),
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
