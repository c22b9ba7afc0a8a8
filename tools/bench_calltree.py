"""Call-path profiles (issue 37): `Archive.calltree()` of the synthetic SPMD trace (8 x
125,000 requested events, as ``tools/synth.py`` writes it), jittered (sigma 0.2: few
shared sub-trees, the worst case) and regular, against `Archive.events` over the same
archive in the same child process (the baseline).

Every repeat opens the archive afresh, so that each call is cold - the node tables are
decoded from the archive's blocks, as a user's first query does - and the two are
measured alternately; a second call on the same archive (``warm``, the node tables kept)
is timed too. Target: ``calltree()`` of 1 M events within 1 s (median).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import synth
from benchkit import Column, Stat, benchmark, child_task, fmt_float, fmt_int, run_child

#: the traces: name -> jitter
TRACES = {"jittered": 0.2, "regular": 0.0}
TARGET_SECONDS = 1.0


def _timed(path: str, method: str) -> tuple[float, float, int]:
    """Open ``path`` and run ``method`` (``calltree`` or ``events``) on it: seconds of the
    cold call, of a second call (warm), and rows (call paths x locations, or events)."""
    import ccgformat
    with ccgformat.open(path) as archive:
        seconds = []
        for _ in range(2):
            t0 = time.perf_counter()
            if method == "calltree":
                rows = len(archive.calltree().path)
            else:
                rows = sum(len(batch) for _, batch in archive.events())
            seconds.append(time.perf_counter() - t0)
    return seconds[0], seconds[1], rows


@child_task("calltree")
def calltree_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Time ``calltree()`` and ``events()`` alternately, ``spec["repeat"]`` times each."""
    samples: dict[str, list[tuple[float, float, int]]] = {"calltree": [], "events": []}
    for _ in range(spec["repeat"]):
        for method in samples:
            samples[method].append(_timed(spec["path"], method))
    cold = Stat([sample[0] for sample in samples["calltree"]])
    warm = Stat([sample[1] for sample in samples["calltree"]])
    events = Stat([sample[0] for sample in samples["events"]])
    return {"trace": spec["trace"], "events": samples["events"][0][2], "rows": samples["calltree"][0][2],
            "n": spec["n"], "seconds": cold.as_dict(), "warm_seconds": warm.as_dict(),
            "events_seconds": events.as_dict(), "vs_events": cold.median / events.median,
            "meets_target": cold.median <= TARGET_SECONDS}


@benchmark("calltree", "Archive.calltree() of 1 M events (jittered and regular) against Archive.events", [
    ("call-path profile (seconds: median (min-max) of cold calls, each on a freshly opened archive; warm: a "
     "second call; vs events: over Archive.events' cold median in the same child; target <= 1 s)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("events", lambda e: fmt_int(e["events"])),
        Column("nodes", lambda e: fmt_int(e["n"])),
        Column("rows", lambda e: fmt_int(e["rows"])),
        Column("seconds", lambda e: f"{e['seconds']['median']:.3f} ({e['seconds']['min']:.3f}-"
                                    f"{e['seconds']['max']:.3f})"),
        Column("warm s", lambda e: f"{e['warm_seconds']['median']:.3f}"),
        Column("events s", lambda e: f"{e['events_seconds']['median']:.3f}"),
        Column("vs events", lambda e: fmt_float(e["vs_events"])),
        Column("<= 1 s", lambda e: "yes" if e["meets_target"] else "NO"),
    ]),
])
def calltree_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    import ccgformat
    entries = []
    with tempfile.TemporaryDirectory(prefix="ccg-calltree-") as folder:
        for name, jitter in TRACES.items():
            path = Path(folder) / f"{name}.ccg"
            definitions, events = synth.synthesize(options.locations, options.events_per_location, jitter=jitter,
                                                   seed=1)
            ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(options.locations)))
            with ccgformat.open(path) as archive:
                nodes = archive.stats.n
            entries.append(run_child("calltree", {"path": str(path), "repeat": options.repeat, "n": nodes,
                                                  "trace": f"{name} {options.locations} x "
                                                           f"{options.events_per_location:,}"}))
            print(f"  calltree: {name}", file=sys.stderr, flush=True)
    return entries
