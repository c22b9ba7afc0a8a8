#!/usr/bin/env python3
"""Read-only OTF2 import speed: the native event reader, the Python reference reader and
the plain `otf2` package's event iteration, on traces written by ``synth.py --otf2``.

Each measurement runs in its own subprocess (so that its peak RSS is its own): the time
to read the definitions and every event batch (``ccgformat.formats.read``, batches
dropped as they come), median of ``--repeat`` runs in one process. The plain iteration
(``for _ in trace.events``) is repeated ``--iterate-repeat`` times (it takes about a
minute per 10 M events).

    python tools/bench_otf2_read.py --events 1000000 10000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent


def _read(path: str) -> int:
    from ccgformat.formats import read

    definitions, streams = read(path)
    return sum(len(batch) for _, batches in streams for batch in batches)


def _iterate(path: str) -> int:
    import otf2

    count = 0
    with otf2.reader.open(str(Path(path) / "traces.otf2")) as trace:
        for _ in trace.events:
            count += 1
    return count


def child(mode: str, path: str, repeat: int) -> None:
    """One measurement; prints JSON."""
    run = _iterate if mode == "otf2" else _read
    seconds, events = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        events = run(path)
        seconds.append(time.perf_counter() - t0)
    import ccgformat
    print(json.dumps({"seconds": seconds, "events": events, "backend": ccgformat.backends.ACTIVE,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure(mode: str, path: Path, repeat: int) -> dict:
    env = dict(os.environ, CCGFORMAT_BACKEND="python" if mode == "python" else "native")
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(path), "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--locations", type=int, default=8)
    parser.add_argument("--jitter", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iterate-repeat", type=int, default=1)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child[0], options.child[1], options.repeat)
        return 0
    print(f"{'trace':>24} {'reader':>8} {'events':>11} {'median s':>9} {'M events/s':>11} "
          f"{'x otf2':>7} {'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory() as folder:
        for total in options.events:
            trace = Path(folder) / f"synth-{total}"
            subprocess.run([sys.executable, str(TOOLS / "synth.py"), str(trace), "--otf2", "--locations",
                            str(options.locations), "--events-per-location", str(total // options.locations),
                            "--jitter", str(options.jitter), "--seed", "1"], check=True, stderr=subprocess.DEVNULL)
            results = {mode: measure(mode, trace, options.iterate_repeat if mode == "otf2" else options.repeat)
                       for mode in ("native", "python", "otf2")}
            if results["native"]["backend"] != "native":
                print("warning: the native core is not built; 'native' measured the Python reader", file=sys.stderr)
            base = statistics.median(results["otf2"]["seconds"])
            for mode, result in results.items():
                median = statistics.median(result["seconds"])
                print(f"{trace.name:>24} {mode:>8} {result['events']:>11,} {median:>9.3f} "
                      f"{result['events'] / median / 1e6:>11.2f} {base / median:>7.1f} {result['peak_rss_mb']:>12.0f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
