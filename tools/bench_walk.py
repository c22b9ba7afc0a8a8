"""Walk benchmark: the native walker (ccgformat/_native/walk.c) next to the Python
`LocationWalker` on the same locations, in the same run: sequential iteration into numpy
batches, warm event(i) and find(t), and the checkpoint pass of the archive indexes.

Every trace (tools/synth.py SPMD, regular and jittered, the lossless parameter set) is
written with `ccgformat.write_trace`, and walked two ways: through the graph it returns
(the native builder's table) and through the public path, ``ccgformat.open(archive)
.location(i)`` (node blocks decoded on demand). Under the native backend both give a
`NativeWalker`. The Python walker is a `LocationWalker` over the archive's pool, and for
the graph over a `NodePool` copy of the native builder's table (the reference's own data
structure: through the table's `TableView` every node access goes through numpy, ~10x
slower). The Python walker reads at most ``PYTHON_EVENTS`` events per run (rates are per
event either way).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import synth
from bench_builder import LARGE_FACTOR, PARAM_SETS, RANDOM_ACCESSES, RANDOM_SEED, TRACES, per_call_us
from benchkit import Column, Stat, benchmark, child_task, fmt_int, fmt_rate, fmt_stat, run_child, run_repeated

#: Issue 5 targets of the native walker: sequential events/s at least, warm us per call below.
READ_TARGET = 20e6
CALL_TARGET_US = 20.0
#: The Python walker reads at most this many events per run (it manages ~0.4 M events/s on
#: the jittered trace), a tenth of that with --quick.
PYTHON_EVENTS = 1_000_000
#: Checkpoint interval of the index pass (events).
INTERVAL = 65536


def _read_seconds_per_event(walkers: list[Any], limit: int | None = None) -> Callable[[], float]:
    """Seconds per event to read the walkers' events in order (up to ``limit`` events)."""
    def sample() -> float:
        count = 0
        t0 = time.perf_counter()
        for walker in walkers:
            stop = None if limit is None else max(limit - count, 0)
            for batch in walker.events(0, stop):
                count += len(batch)
            if limit is not None and count >= limit:
                break
        return (time.perf_counter() - t0) / count
    return sample


def _checkpoint_seconds_per_event(checkpoints: Callable[[Any, int], Any], walker: Any) -> Callable[[], float]:
    def sample() -> float:
        t0 = time.perf_counter()
        checkpoints(walker, INTERVAL)
        return (time.perf_counter() - t0) / len(walker)
    return sample


def _pair(native: Stat, python: Stat, per_event: bool) -> dict[str, Any]:
    """Both walkers' samples; rates (events/s) for per-event seconds, else microseconds."""
    convert = (lambda s: 1 / s) if per_event else (lambda s: s)
    fast, slow = native.map(convert), python.map(convert)
    return {"native": fast.as_dict(), "python": slow.as_dict(), "speedup": python.median / native.median}


def _node_pool(view: Any) -> Any:
    """A `NodePool` with the columns of a native builder's table (a `TableView`)."""
    from ccgformat.graph.pool import NodePool

    if view.arrays()[1] != 0:
        raise ValueError("the table does not start at node 0")
    pool = NodePool()
    for name in ("kind", "key", "children", "durations", "soft", "events", "total", "metric_sums"):
        getattr(pool, name).extend(getattr(view, name)[:])
    return pool


def _measure(source: Any, locations: int, repeat: int, python_events: int,
             python_pool: Any = None) -> dict[str, Any]:
    """The native and the Python walker of every location of ``source`` (a graph or an
    archive); the Python walker reads ``python_pool`` if given, else the native one's pool."""
    from ccgformat._native.walk import NativeWalker
    from ccgformat.archive.indexes import native_checkpoints, reference_checkpoints
    from ccgformat.graph.walk import LocationWalker

    native = [source.location(location) for location in range(locations)]
    if not all(isinstance(walker, NativeWalker) for walker in native):
        raise RuntimeError(f"{type(source).__name__}.location did not give a NativeWalker")
    python = [LocationWalker(w.pool if python_pool is None else python_pool, w.root, w.start, w.location)
              for w in native]
    first, last = python[0], native[0]
    if not all(a.equals(b) for a, b in zip(first.events(0, 5000, batch_size=1000),
                                           last.events(0, 5000, batch_size=1000))):
        raise RuntimeError("the native and the Python walker disagree")
    rng = np.random.default_rng(RANDOM_SEED)
    indexes = rng.integers(0, len(first), RANDOM_ACCESSES).tolist()
    times = rng.integers(first.start, first.start + first.pool.total[first.root], RANDOM_ACCESSES).tolist()
    calls = {}
    for name, arguments in (("event", indexes), ("find", times)):
        for walker in (last, first):  # warm: the same calls once before timing
            for argument in arguments:
                getattr(walker, name)(argument)
        calls[name] = _pair(run_repeated(per_call_us(getattr(last, name), arguments), repeat),
                            run_repeated(per_call_us(getattr(first, name), arguments), repeat), per_event=False)
    return {
        "events": sum(len(w) for w in native),
        "python_read_events": min(python_events, sum(len(w) for w in native)),
        "read": _pair(run_repeated(_read_seconds_per_event(native), repeat),
                      run_repeated(_read_seconds_per_event(python, python_events), repeat), per_event=True),
        **calls,
        "checkpoints": _pair(run_repeated(_checkpoint_seconds_per_event(native_checkpoints, last), repeat),
                             run_repeated(_checkpoint_seconds_per_event(reference_checkpoints, first), repeat),
                             per_event=True),
    }


@child_task("walk")
def walk_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One trace: write it, then walk the returned graph and the reopened archive."""
    import ccgformat
    from ccgformat import Params

    locations = spec["locations"]
    definitions, events = synth.synthesize(locations, spec["events_per_location"], pattern="spmd",
                                           **TRACES[spec["trace"]])
    entries = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "walk.ccg"
        graph = ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(locations)),
                                      Params(**PARAM_SETS["lossless"]))
        nodes = graph.metrics.n
        entries.append({"source": "graph", **_measure(graph, locations, spec["repeat"], spec["python_events"],
                                                       _node_pool(graph.pool))})
        del graph
        archive = ccgformat.open(path)
        try:
            entries.append({"source": "archive", **_measure(archive, locations, spec["repeat"],
                                                             spec["python_events"])})
        finally:
            archive.close()
    for entry in entries:
        entry.update(trace=spec["trace"], locations=locations, nodes=nodes, backend=ccgformat.backend)
        entry["targets"] = {
            "read": entry["read"]["native"]["median"] >= READ_TARGET,
            "event": entry["event"]["native"]["median"] < CALL_TARGET_US,
            "find": entry["find"]["native"]["median"] < CALL_TARGET_US,
        }
    return {"entries": entries}


def _label(e: dict[str, Any]) -> str:
    return f"{e['trace']}/{e['source']}"


def _us(x: float) -> str:
    return f"{x:.2f}"


def _target(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: "PASS" if e["targets"][name] else "FAIL"


@benchmark(
    "native-walk",
    f"the native walker next to the Python LocationWalker ({LARGE_FACTOR}x the requested events per location, "
    "10M at full size): written graph and reopened archive",
    [
        ("Sequential reading into numpy batches and the checkpoint pass (events/s: median (min-max); "
         f"speed-up = native/Python median; source graph = write_trace's graph, archive = "
         f"ccgformat.open(path).location(i); target: native read >= {READ_TARGET / 1e6:g}M events/s)", [
            Column("trace/source", _label, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("nodes", lambda e: fmt_int(e["nodes"])),
            Column("native read ev/s", lambda e: fmt_stat(e["read"]["native"])),
            Column("python read ev/s", lambda e: fmt_stat(e["read"]["python"])),
            Column("py events", lambda e: fmt_int(e["python_read_events"])),
            Column("speed-up", lambda e: f"{e['read']['speedup']:.1f}"),
            Column("target", _target("read")),
            Column("native ckpt ev/s", lambda e: fmt_stat(e["checkpoints"]["native"])),
            Column("python ckpt ev/s", lambda e: fmt_stat(e["checkpoints"]["python"])),
            Column("speed-up", lambda e: f"{e['checkpoints']['speedup']:.1f}"),
        ]),
        (f"Warm random access on location 0 (median us per call over {RANDOM_ACCESSES} random calls, after one "
         f"warm-up pass over them; median (min-max) of the repeats; target: native < {CALL_TARGET_US:g} us)", [
            Column("trace/source", _label, "<"),
            Column("native event(i)", lambda e: fmt_stat(e["event"]["native"], _us)),
            Column("python event(i)", lambda e: fmt_stat(e["event"]["python"], _us)),
            Column("speed-up", lambda e: f"{e['event']['speedup']:.1f}"),
            Column("target", _target("event")),
            Column("native find(t)", lambda e: fmt_stat(e["find"]["native"], _us)),
            Column("python find(t)", lambda e: fmt_stat(e["find"]["python"], _us)),
            Column("speed-up", lambda e: f"{e['find']['speedup']:.1f}"),
            Column("target", _target("find")),
        ]),
    ])
def native_walk_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    import ccgformat
    if ccgformat.backend != "native":
        print("  native walk: skipped (the native backend is not active)", file=sys.stderr, flush=True)
        return []
    entries = []
    for trace in TRACES:
        t0 = time.perf_counter()
        spec = {"trace": trace, "locations": options.locations, "repeat": options.repeat,
                "events_per_location": LARGE_FACTOR * options.events_per_location,
                "python_events": PYTHON_EVENTS // 10 if options.quick else PYTHON_EVENTS}
        done = run_child("walk", spec)["entries"]
        entries += done
        for e in done:
            print(f"  native walk {_label(e)}: read {fmt_rate(e['read']['native']['median'])} events/s, "
                  f"{e['read']['speedup']:.0f}x Python ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    return entries
