"""Builder benchmark: events/s of the cCCG builder on synthetic SPMD traces, next to a
plain Python pass over the same events, with node counts and peak memory."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

import synth
from benchkit import (Column, benchmark, child_task, fmt_float, fmt_int, fmt_rate, fmt_stat, peak_rss_mb,
                      rate, rss_now_mb, run_child, run_repeated)
from ccgformat import Params
from ccgformat.graph import Builder  # the reference, whatever the backend (ccgformat.Builder may be native)
from ccgformat.model import COLUMNS, EventBatch


# --------------------------------------------------------------------------- builder benchmark

#: The traces: name -> synth.synthesize keyword arguments (SPMD pattern).
TRACES: dict[str, dict[str, Any]] = {
    "regular": {"jitter": 0.0, "seed": 1},
    "jittered": {"jitter": 0.2, "seed": 1},
}
#: The parameter sets: name -> Params keyword arguments.
PARAM_SETS: dict[str, dict[str, Any]] = {
    "lossless": {},
    "lossy": {"abs_dev": 1000, "rel_dev": 0.05},
}
LOCATIONS = 8
EVENTS_FULL = 125_000
EVENTS_QUICK = 12_500
#: The large traces (the archive benchmark's 10M trace, the native-* benchmarks) have this
#: many times the requested events per location: 8 x 1,250,000 = 10M events at full size.
LARGE_FACTOR = 10
#: Native builder target (issue 5): lossless, one core, events/s at least.
NATIVE_BUILDER_TARGET = 10e6
RANDOM_ACCESSES = 1000
RANDOM_SEED = 20240601


def _builder_class(name: str) -> Any:
    """"python": the reference `Builder`; "native": the C builder (`NativeBuilder`)."""
    if name == "native":
        from ccgformat._native.builder import NativeBuilder
        return NativeBuilder
    return Builder


def _build(params: Params, definitions, data: list[list[EventBatch]], builder_class: Any = Builder):
    """Feed every location one after another, then finish: what the builder timing covers."""
    builder = builder_class(params, definitions)
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


def check_location(graph, params: Params, original: EventBatch) -> str:
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
    builder_class = _builder_class(spec.get("builder", "python"))

    def build_once() -> float:
        nonlocal graph
        graph = None
        gc.collect()
        t0 = time.perf_counter()
        graph = _build(params, definitions, data, builder_class)
        return time.perf_counter() - t0

    build_seconds = run_repeated(build_once, repeat)
    peak_after = peak_rss_mb()
    assert graph is not None
    metrics = graph.metrics
    builder_rate = rate(count, build_seconds)
    baseline_rate = rate(count, baseline_seconds)
    entry = {
        "trace": spec["trace"],
        "params": spec["params"],
        "builder": spec.get("builder", "python"),
        "builder_class": f"{builder_class.__module__}.{builder_class.__name__}",
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
    }
    if not spec.get("walk", True):
        return entry

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
    check = check_location(graph, params, EventBatch.concat(data[0]))

    return {
        **entry,
        "walk_events": walk_count,
        "walk_events_per_s": rate(walk_count, walk_seconds).as_dict(),
        "event_us": event_us.as_dict(),
        "find_us": find_us.as_dict(),
        "check": check,
    }


def config_name(e: dict[str, Any]) -> str:
    return f"{e['trace']}/{e['params']}"


def mb_cell(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_float(e[key], 1)


@benchmark(
    "builder",
    "cCCG builder and walker on the synthetic SPMD trace (regular and jittered, lossless and lossy)",
    [
        ("Builder (events/s: median (min-max); ratio = builder/baseline median; memory in MiB)", [
            Column("trace/params", config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("builder ev/s", lambda e: fmt_stat(e["builder_events_per_s"])),
            Column("baseline ev/s", lambda e: fmt_stat(e["baseline_events_per_s"])),
            Column("ratio", lambda e: f"{e['ratio']:.4f}"),
            Column("N", lambda e: fmt_int(e["N"])),
            Column("n", lambda e: fmt_int(e["n"])),
            Column("R_nodes", lambda e: fmt_float(e["r_nodes"])),
            Column("R_memory", lambda e: fmt_float(e["r_memory"])),
            Column("rss_before_mb", mb_cell("rss_before_mb")),
            Column("peak_rss_mb", mb_cell("peak_rss_mb")),
        ]),
        ("Walker on location 0 (sequential events(); median us per call over "
         f"{RANDOM_ACCESSES} random event(i) / find(t))", [
            Column("trace/params", config_name, "<"),
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


def _native_builder_target(e: dict[str, Any]) -> str:
    if e["params"] != "lossless":
        return "-"
    return "PASS" if e["builder_events_per_s"]["median"] >= NATIVE_BUILDER_TARGET else "FAIL"


@benchmark(
    "native-builder",
    f"the native (C) cCCG builder on {LARGE_FACTOR}x the requested events per location (10M at full size) "
    "next to the Python reference on the requested events",
    [
        ("Native builder from in-memory batches (events/s: median (min-max); speed-up = native/reference "
         f"median; target: lossless >= {NATIVE_BUILDER_TARGET / 1e6:g}M events/s on one core)", [
            Column("trace/params", config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("native ev/s", lambda e: fmt_stat(e["builder_events_per_s"])),
            Column("ref. events", lambda e: fmt_int(e["reference"]["events"])),
            Column("reference ev/s", lambda e: fmt_stat(e["reference"]["builder_events_per_s"])),
            Column("speed-up", lambda e: f"{e['speedup']:.1f}"),
            Column("target", _native_builder_target),
            Column("n", lambda e: fmt_int(e["n"])),
            Column("R_nodes", lambda e: fmt_float(e["r_nodes"])),
            Column("peak_rss_mb", mb_cell("peak_rss_mb")),
        ]),
    ])
def native_builder_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    try:
        _builder_class("native")
    except ImportError as error:
        print(f"  native builder: skipped ({error})", file=sys.stderr, flush=True)
        return []
    entries = []
    for trace in TRACES:
        for params in PARAM_SETS:
            spec = {"trace": trace, "params": params, "locations": options.locations,
                    "events_per_location": LARGE_FACTOR * options.events_per_location, "repeat": options.repeat,
                    "builder": "native", "walk": False}
            entry = run_child("builder", spec)
            reference = run_child("builder", {**spec, "builder": "python",
                                              "events_per_location": options.events_per_location})
            entry["reference"] = reference
            entry["speedup"] = entry["builder_events_per_s"]["median"] / reference["builder_events_per_s"]["median"]
            entry["target"] = _native_builder_target(entry)
            entries.append(entry)
            print(f"  native builder {trace}/{params}: {fmt_rate(entry['builder_events_per_s']['median'])} "
                  f"events/s, {entry['speedup']:.0f}x the reference", file=sys.stderr, flush=True)
    return entries
