"""Walk benchmark: the native walker (ccgformat/_native/walk.c) next to the Python
`LocationWalker` on the same graph, in the same run: sequential iteration into numpy
batches, warm event(i) and find(t), and the checkpoint pass of the archive indexes.

Graphs are built as tools/bench_archive.py builds them (tools/synth.py SPMD traces,
regular and jittered, the lossless parameter set). Every figure is the median of
``--repeat`` runs. The Python walker reads at most ``--python-events`` events per run on
the jittered trace (it manages ~0.4 M events/s there); rates are per event either way.

    PYTHONPATH=. python tools/bench_walk.py [--locations 8] [--events-per-location 1250000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable

import numpy as np
import synth
from bench_builder import PARAM_SETS, TRACES
from benchkit import run_repeated

from ccgformat import Builder, Params
from ccgformat._native.tables import NodeTable
from ccgformat._native.walk import NativeWalker
from ccgformat.archive.indexes import native_checkpoints, reference_checkpoints

CALLS = 1000
INTERVAL = 65536


def _read(walkers: list[Any], limit: int | None = None) -> Callable[[], float]:
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


def _per_call(call: Callable[[int], Any], arguments: list[int]) -> Callable[[], float]:
    def sample() -> float:
        t0 = time.perf_counter()
        for argument in arguments:
            call(argument)
        return (time.perf_counter() - t0) / len(arguments)
    return sample


def bench_trace(kind: str, locations: int, events_per_location: int, repeat: int, python_events: int) -> dict:
    _, events = synth.synthesize(locations, events_per_location, pattern="spmd", **TRACES[kind])
    builder = Builder(Params(**PARAM_SETS["lossless"]))
    for location in range(locations):
        for batch in events(location):
            builder.add(location, batch)
    graph = builder.finish()
    table = NodeTable.from_pool(graph.pool)
    python = [graph.location(location) for location in range(locations)]
    native = [NativeWalker.from_table(table.struct, table, w.root, w.start, w.location) for w in python]
    count = sum(len(w) for w in python)
    assert all(a.equals(b) for a, b in zip(python[0].events(0, 5000, batch_size=1000),
                                          native[0].events(0, 5000, batch_size=1000)))
    limit = None if kind == "regular" else python_events
    rng = np.random.default_rng(20240601)
    first, last = python[0], native[0]
    indexes = rng.integers(0, len(first), CALLS).tolist()
    times = rng.integers(first.start, first.start + graph.pool.total[first.root], CALLS).tolist()
    stats = {
        "read": (run_repeated(_read(native), repeat), run_repeated(_read(python, limit), repeat)),
        "event": (run_repeated(_per_call(last.event, indexes), repeat),
                  run_repeated(_per_call(first.event, indexes), repeat)),
        "find": (run_repeated(_per_call(last.find, times), repeat),
                 run_repeated(_per_call(first.find, times), repeat)),
        "checkpoints": (run_repeated(lambda: _per_call(lambda _: native_checkpoints(last, INTERVAL), [0])() / len(last),
                                     repeat),
                        run_repeated(lambda: _per_call(lambda _: reference_checkpoints(first, INTERVAL), [0])()
                                     / len(first), repeat)),
    }
    result: dict[str, Any] = {"trace": kind, "locations": locations, "events": count, "nodes": len(graph.pool)}
    for name, (fast, slow) in stats.items():
        result[name] = {"native_s": fast.median, "python_s": slow.median, "speedup": slow.median / fast.median,
                        "native_samples": fast.samples, "python_samples": slow.samples}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, default=8)
    parser.add_argument("--events-per-location", type=int, default=1_250_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python-events", type=int, default=1_000_000)
    parser.add_argument("--traces", nargs="*", default=list(TRACES))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    options = parser.parse_args()
    results = [bench_trace(kind, options.locations, options.events_per_location, options.repeat,
                           options.python_events) for kind in options.traces]
    if options.json:
        json.dump(results, sys.stdout, indent=1)
        return
    for r in results:
        print(f"{r['trace']}: {r['locations']} locations, {r['events']:,} events, {r['nodes']:,} nodes")
        read = r["read"]
        print(f"  read        native {1e-6 / read['native_s']:8.1f} M events/s   python {1e-6 / read['python_s']:8.2f} "
              f"M events/s   x{read['speedup']:.1f}")
        for name in ("event", "find"):
            e = r[name]
            print(f"  {name:<11} native {1e6 * e['native_s']:8.2f} us/call     python {1e6 * e['python_s']:8.2f} "
                  f"us/call     x{e['speedup']:.1f}")
        c = r["checkpoints"]
        print(f"  checkpoints native {1e-6 / c['native_s']:8.1f} M events/s   python {1e-6 / c['python_s']:8.2f} "
              f"M events/s   x{c['speedup']:.1f}")


if __name__ == "__main__":
    main()
