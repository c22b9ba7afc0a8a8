#!/usr/bin/env python3
"""The project's benchmarks: the command line.

Benchmarks live in tools/bench_*.py and register themselves (`benchkit.benchmark`); each
returns a list of result entries (plain dicts, JSON-ready) and says how to print them as
tables. Timings repeat R times; results report the median with the min and max.

Machines are noisy, so every throughput figure comes with a baseline measured in the
same run (and the same process), and the ratio to it is what should be compared across
machines and commits.

Benchmarks that need a clean process (peak memory) run each configuration in a fresh
subprocess: this script itself with the hidden ``--child TASK SPEC`` mode, which does the
work, repeats the timings itself and prints one JSON line (`benchkit.run_child`).

    python tools/bench.py                      # every benchmark, full size, 3 repeats
    python tools/bench.py --quick --repeat 1   # smoke test in seconds
    python tools/bench.py builder --json out.json
    python tools/bench.py native-builder native-convert native-walk   # the native core, 10M events
    python tools/bench.py scale --repeat 1 --timeout 120              # 20,000 to 1,000,000 locations
    python tools/bench.py long --lengths 1m 30m --timeout 600          # 1 M to 100 M events
    python tools/bench.py mpi --mpi-traces 1m 20000x50                 # mpirun -n 2 against 1 rank
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import bench_aggregate  # noqa: E402,F401  (registers the aggregation benchmark)
import bench_archive  # noqa: E402,F401  (registers the archive benchmark)
import bench_builder  # noqa: E402,F401  (registers the builder benchmark)
import bench_calltree  # noqa: E402,F401  (registers the calltree benchmark)
import bench_figures  # noqa: E402,F401  (registers the figures benchmark)
import bench_formats  # noqa: E402,F401  (registers the import and native-convert benchmarks)
import bench_importers  # noqa: E402,F401  (registers the import-locations benchmark)
import bench_levels  # noqa: E402,F401  (registers the levels benchmark)
import bench_logical  # noqa: E402,F401  (registers the logical benchmark)
import bench_merge  # noqa: E402  (registers the merge benchmark)
import bench_long  # noqa: E402,F401  (registers the long benchmark)
import bench_mpi  # noqa: E402,F401  (registers the mpi benchmark)
import bench_query  # noqa: E402,F401  (registers the query benchmark)
import bench_scale  # noqa: E402,F401  (registers the scale benchmark)
import bench_slices  # noqa: E402  (registers the slices benchmark)
import bench_tables  # noqa: E402,F401  (registers the tables benchmark)
import bench_topology  # noqa: E402,F401  (registers the topology benchmark)
import bench_overview  # noqa: E402,F401  (registers the overview benchmark)
import bench_walk  # noqa: E402,F401  (registers the native-walk benchmark)
import corpus_size  # noqa: E402,F401  (registers the corpus-size benchmark)
from bench_builder import EVENTS_FULL, EVENTS_QUICK, LARGE_FACTOR, LOCATIONS  # noqa: E402
from bench_scale import RATIO_LOCATIONS, SHAPES, Shape  # noqa: E402
from benchkit import BENCHMARKS, CHILD_TASKS, render_table  # noqa: E402
import ccgformat  # noqa: E402
from ccgformat import __version__  # noqa: E402


def _needs(benchmarks: Sequence[str], shapes: Sequence[str]) -> list[str]:
    """Problems that keep the selected benchmarks from running (missing optional packages)."""
    problems = []
    if "import" in benchmarks or "native-convert" in benchmarks:
        if importlib.util.find_spec("otf2") is None:
            problems.append("the import benchmarks read and write OTF2 and need the otf2 package "
                            "(pip install otf2, or the 'otf2' extra)")
    if "aggregate" in benchmarks and importlib.util.find_spec("otf2") is None:
        problems.append("the aggregate benchmark writes its 20,000 x 50 OTF2 archive with the otf2 package "
                        "(pip install otf2, or the 'otf2' extra)")
    if "scale" in benchmarks and any(shape.endswith(":otf2") for shape in shapes):
        if importlib.util.find_spec("otf2") is None:
            problems.append("the scale benchmark writes its :otf2 shapes with the otf2 package "
                            "(pip install otf2, or the 'otf2' extra)")
    if "mpi" in benchmarks:
        for module, extra in (("mpi4py", "mpi"), ("otf2", "otf2")):
            if importlib.util.find_spec(module) is None:
                problems.append(f"the mpi benchmark needs {module} (pip install {module}, or the '{extra}' extra)")
    if "tables" in benchmarks and importlib.util.find_spec("pyarrow") is None:
        problems.append("the tables benchmark needs pyarrow (pip install pyarrow, or the 'arrow' extra)")
    if "archive" in benchmarks:
        if importlib.util.find_spec("pyarrow") is None:
            problems.append("the archive benchmark needs pyarrow (pip install pyarrow, or the 'bench' extra); "
                            "name the other benchmarks to run them without it")
        if importlib.util.find_spec("otf2") is None:
            problems.append("the archive benchmark converts its traces from OTF2 and needs the otf2 package "
                            "(pip install otf2, or the 'otf2' extra)")
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
    parser.add_argument("--baseline-repeat", type=int, default=1, metavar="R",
                        help="native-convert and archive: repetitions of the slow rows, the Python reader and "
                             "the plain otf2 iteration (~100 s per 10M events; default 1)")
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), metavar="SHAPE",
                        help="scale: LOCATIONSxEVENTS[:otf2] shapes, events requested per location, :otf2 "
                             f"read from an OTF2 archive (default {' '.join(SHAPES)})")
    parser.add_argument("--ratio-locations", type=int, default=RATIO_LOCATIONS, metavar="N",
                        help=f"scale: every shape also runs with N locations, for the per-location ratios "
                             f"(default {RATIO_LOCATIONS:,})")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S",
                        help="scale: a step still running after S seconds is killed and reported (default 120)")
    parser.add_argument("--memory-limit", type=float, default=8192, metavar="MB",
                        help="scale, long: a step whose resident set grows above MB is killed and reported "
                             "(the machine may be shared), 0 = no limit (default 8192)")
    bench_merge.add_options(parser)
    bench_slices.add_options(parser)
    parser.add_argument("--lengths", nargs="+", default=list(bench_long.LENGTHS), choices=list(bench_long.LENGTHS),
                        help="long: the trace lengths (default all; 1m comes first, the twin of the growth figures)")
    parser.add_argument("--variants", nargs="+", default=list(bench_long.VARIANTS), choices=list(bench_long.VARIANTS),
                        help="long: jittered and/or regular timing (default both)")
    parser.add_argument("--steps", nargs="+", default=list(bench_long.STEPS), choices=list(bench_long.STEPS),
                        metavar="STEP", help=f"long: the steps, convert first (default all: "
                                             f"{', '.join(bench_long.STEPS)})")
    parser.add_argument("--logical-lengths", nargs="*", default=[], choices=[k for k in bench_long.LENGTHS if k != "1m"],
                        metavar="LENGTH", help="logical: also the jittered archives of bench.py long of these lengths "
                                               "(bench-out/long/, one run each; default none)")
    parser.add_argument("--logical-baseline", metavar="CHECKOUT",
                        help="logical-cli: a checkout (e.g. a worktree of main) whose ccg logical runs in turn with "
                             "this one's, for the ratio (default none)")
    parser.add_argument("--mpi-traces", nargs="+", default=list(bench_mpi.TRACES), choices=list(bench_mpi.TRACES),
                        help="mpi: the traces (default all; 100m converts 16 x 6.25 M events once, on 2 ranks)")
    parser.add_argument("--import-locations", type=int, default=bench_importers.DEFAULT_LOCATIONS, metavar="N",
                        help=f"import-locations: locations of every format's trace (default "
                             f"{bench_importers.DEFAULT_LOCATIONS:,}; 1,000 too, for the ratio)")
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
    if args.repeat < 1 or args.baseline_repeat < 1:
        parser.error("--repeat and --baseline-repeat must be >= 1")
    if args.events_per_location is None:
        args.events_per_location = EVENTS_QUICK if args.quick else EVENTS_FULL
    if args.events_per_location < 2 or args.locations < 1:
        parser.error("--events-per-location must be >= 2")
    if args.ratio_locations < 1 or args.timeout <= 0 or args.import_locations < 1:
        parser.error("--ratio-locations and --import-locations must be >= 1 and --timeout > 0")
    for shape in args.shapes:
        try:
            Shape.parse(shape)
        except ValueError as error:
            parser.error(str(error))

    selected = args.benchmarks or list(BENCHMARKS)
    problems = _needs(selected, args.shapes)
    if problems:
        parser.error("; ".join(problems))

    started = time.perf_counter()
    loadavg = os.getloadavg()
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
        "baseline_repeat": args.baseline_repeat,
        "backend": ccgformat.backend,
        "quick": args.quick,
        "locations": args.locations,
        "events_per_location": args.events_per_location,
        "skip_10m": args.skip_10m,
        "shapes": args.shapes,
        "lengths": args.lengths,
        "variants": args.variants,
        "ratio_locations": args.ratio_locations,
        "timeout": args.timeout,
        "memory_limit_mb": args.memory_limit,
        "loadavg": loadavg,
        "loadavg_end": os.getloadavg(),
        "ccgformat_path": str(Path(sys.modules["ccgformat"].__file__).parent),
        "git_head": _git_head(),
        "elapsed_s": elapsed,
    }
    sizes = (f"; {args.locations} x {args.events_per_location:,} events requested per trace "
             f"({LARGE_FACTOR}x that in the native-* benchmarks and the archive's large trace)"
             if set(selected) - {"scale", "long"} else f"; shapes {' '.join(args.shapes)}" if "scale" in selected
             else f"; lengths {' '.join(args.lengths)}")
    print(f"ccgformat {__version__} from {meta['ccgformat_path']} ({meta['git_head'] or 'not a git checkout'}), "
          f"Python {meta['python']} on {meta['platform']}{sizes}; repeat {args.repeat}; "
          f"load average {' '.join(f'{x:.1f}' for x in meta['loadavg'])} at the start")
    for name in selected:
        for title, columns, *keep in BENCHMARKS[name].tables:
            print()
            print(render_table(f"[{name}] {title}", columns, [e for e in results[name] if all(k(e) for k in keep)]))
    print(f"\ntotal time {elapsed:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "benchmarks": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
