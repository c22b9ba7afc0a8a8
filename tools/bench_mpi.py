"""MPI benchmark (issue 40): ``mpirun -n P ccg convert SRC DST --mpi`` against one rank,
and the queries under ``--mpi``, on this machine's cores.

Traces (`TRACES`): ``1m``, bench_long's jittered 1 M-event OTF2 trace (8 x 125,000,
ring messages), and ``1m-regular`` its regular twin (a small graph: the merge hash conses
its nodes); ``20000x50``, bench_scale's 20,000 ranks x 50 events ring trace, and
``20000x50-spmd`` its spmd twin (one call tree shared by every rank: a small graph
again); ``100m``, bench_long's jittered 16 x 6.25 M (about 1.3 GB of OTF2, written once
and kept in bench-out/). The targets of the 1 M and 20,000 x 50 traces are checked on
both shapes of each (the regular 1 M trace's ratio is bound by what both runs pay before
and after the conversion, docs/parallel.md). Every step is a fresh ``mpirun -n P --oversubscribe --allow-run-as-root
python -m ccgformat.cli ...`` (start-up, imports and MPI_Init included), run --repeat
times, the ranks counts interleaved so that the machine's load drifts alike over them:
the median wall time and the largest peak RSS of one process (mpirun waits for its ranks:
the peak is the largest rank's, memory per rank). The serial ``ccg convert`` (no mpirun)
is the baseline of the size: the parallel archive's bytes over the serial one's. The
ratio of a P-rank step is its median over the 1-rank median of the same run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench_long import _source as long_source
from bench_query import CACHE
from bench_scale import Shape, _otf2_source as scale_source
from benchkit import Column, benchmark, fmt_float, fmt_stat, repeated_process

#: trace name -> where its OTF2 archive comes from
TRACES = ("1m", "1m-regular", "20000x50", "20000x50-spmd", "100m")
#: the issue's targets: (trace, step, ranks) -> (max ratio to 1 rank, max peak MB, max size ratio to serial)
TARGETS: dict[tuple[str, str, int], tuple[float | None, float | None, float | None]] = {
    ("1m", "convert", 2): (0.7, None, 1.05),
    ("1m-regular", "convert", 2): (0.7, None, 1.05),
    ("20000x50", "convert", 2): (0.7, None, None),
    ("20000x50-spmd", "convert", 2): (0.7, None, None),
    ("100m", "convert", 2): (None, 2048, None),
}
#: ranks of each trace's conversions (100 M events: only the target's 2 ranks)
RANKS = {"1m": (1, 2), "1m-regular": (1, 2), "20000x50": (1, 2), "20000x50-spmd": (1, 2), "100m": (2,)}
#: the queries timed on the 1 M archive, 1 and 2 ranks; messages twice: its 14 MB answer through
#: mpirun's forwarding of standard output, and written by rank 0 to a file (-o)
QUERIES = {"profile": ["profile", "{archive}", "--json"], "aggregate": ["aggregate", "{archive}", "--slices", "30",
                                                                        "--json"],
           "messages": ["messages", "{archive}", "--json"],
           "messages -o": ["messages", "{archive}", "--json", "-o", "{output}"], "verify": ["verify", "{archive}"]}


def _source(trace: str) -> Path:
    if trace.startswith("20000x50"):
        (CACHE / "scale").mkdir(parents=True, exist_ok=True)
        return scale_source(Shape.parse("20000x50:otf2:" + ("spmd" if trace.endswith("spmd") else "ring")),
                            CACHE / "scale")[0]
    (CACHE / "long").mkdir(parents=True, exist_ok=True)
    name, _, timing = trace.partition("-")
    return long_source(name, timing or "jittered", CACHE / "long")


def _mpirun(ranks: int, arguments: list[str]) -> list[str]:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise SystemExit("bench mpi: mpirun is not installed (tools/install-reference-tools installs Open MPI)")
    return [mpirun, "-n", str(ranks), "--oversubscribe", "--allow-run-as-root", sys.executable, "-m",
            "ccgformat.cli", *arguments, "--mpi"]


def _interleaved(commands: dict[Any, list[str]], options: argparse.Namespace, repeat: int) -> dict[Any, dict[str, Any]]:
    """Each command run ``repeat`` times, one run of each in turn; per command the entry
    of `benchkit.repeated_process` over its runs."""
    runs: dict[Any, list[dict[str, Any]]] = {key: [] for key in commands}
    for _ in range(repeat):
        for key, command in commands.items():
            runs[key].append(repeated_process(command, 1, options.timeout, options.memory_limit or None))
    entries = {}
    for key, done in runs.items():
        samples = [s for run in done for s in run.get("seconds", {}).get("samples", [])]
        failed = [run["status"] for run in done if run["status"] != "ok"]
        entries[key] = {"status": failed[0] if failed else "ok",
                        "peak_rss_mb": max((run["peak_rss_mb"] or 0 for run in done), default=None),
                        **({"seconds": {"median": statistics.median(samples), "min": min(samples),
                                        "max": max(samples), "samples": samples}} if samples else {})}
    return entries


def run_trace(trace: str, options: argparse.Namespace) -> list[dict[str, Any]]:
    source = _source(trace)
    folder = CACHE / "mpi"
    folder.mkdir(parents=True, exist_ok=True)
    serial = folder / f"{trace}-serial.ccg"
    print(f"  mpi {trace} ...", file=sys.stderr, flush=True)
    repeat = 1 if trace == "100m" else options.repeat
    commands: dict[Any, list[str]] = {}
    if trace != "100m":  # the serial baseline: no mpirun
        commands[0] = [sys.executable, "-m", "ccgformat.cli", "convert", "-q", str(source), str(serial)]
    for ranks in RANKS[trace]:
        commands[ranks] = _mpirun(ranks, ["convert", "-q", str(source), str(folder / f"{trace}-{ranks}.ccg")])
    measured = _interleaved(commands, options, repeat)
    entries = []
    for ranks, entry in measured.items():
        target = serial if ranks == 0 else folder / f"{trace}-{ranks}.ccg"
        entries.append({"trace": trace, "step": "convert", "ranks": ranks, **entry,
                        "archive_bytes": target.stat().st_size if target.exists() else None})
    if trace == "1m":
        archive = str(serial)
        queries = {(name, ranks): _mpirun(ranks, [part.format(archive=archive, output=folder / f"answer-{ranks}.json")
                                                  for part in argv])
                   for name, argv in QUERIES.items() for ranks in (1, 2)}
        for (name, ranks), entry in _interleaved(queries, options, repeat).items():
            entries.append({"trace": trace, "step": name, "ranks": ranks, **entry})
    return entries


def _summarise(entries: list[dict[str, Any]]) -> None:
    """Ratios to 1 rank and size ratios to serial, and the targets' verdicts."""
    def median(trace: str, step: str, ranks: int) -> float | None:
        for e in entries:
            if (e["trace"], e["step"], e["ranks"]) == (trace, step, ranks) and "seconds" in e:
                return e["seconds"]["median"]
        return None

    serial_bytes = {e["trace"]: e["archive_bytes"] for e in entries if e["ranks"] == 0 and e.get("archive_bytes")}
    for e in entries:
        one = median(e["trace"], e["step"], 1)
        if e["ranks"] > 1 and one and "seconds" in e:
            e["ratio"] = e["seconds"]["median"] / one
        if e.get("archive_bytes") and e["trace"] in serial_bytes:
            e["size_ratio"] = e["archive_bytes"] / serial_bytes[e["trace"]]
        bounds = TARGETS.get((e["trace"], e["step"], e["ranks"]))
        checks = []
        if bounds:
            ratio, peak, size = bounds
            if ratio is not None:
                checks.append((f"<= {ratio}x 1 rank", e.get("ratio") is not None and e["ratio"] <= ratio))
            if peak is not None:
                checks.append((f"<= {peak:g} MB/rank", e.get("peak_rss_mb") is not None and e["peak_rss_mb"] <= peak
                               and e["status"] == "ok"))
            if size is not None:
                checks.append((f"<= {size}x serial bytes", e.get("size_ratio") is not None and e["size_ratio"] <= size))
        e["target"] = ", ".join(what for what, _ in checks) or "-"
        e["verdict"] = "-" if not checks else "PASS" if all(met for _, met in checks) else "FAIL"


def _seconds(e: dict[str, Any]) -> str:
    s = e.get("seconds")
    return fmt_stat(s, lambda x: f"{x:.2f}") if s else "-"


@benchmark("mpi", "mpirun -n P ccg convert --mpi and the --mpi queries against 1 rank (1 M events jittered and "
                  "regular, 20,000 x 50 ring and spmd, 100 M events)", [
    ("MPI (fresh mpirun per run, wall s: median (min-max) of --repeat, interleaved; peak RSS: the largest "
     "process, i.e. per rank; ratio: to 1 rank in the same run; ranks 0: serial ccg convert, no mpirun)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("step", lambda e: e["step"], "<"),
        Column("ranks", lambda e: str(e["ranks"])),
        Column("s", _seconds),
        Column("ratio", lambda e: fmt_float(e.get("ratio"))),
        Column("peak MB", lambda e: fmt_float(e.get("peak_rss_mb"), 0)),
        Column("bytes", lambda e: f"{e['archive_bytes']:,}" if e.get("archive_bytes") else "-"),
        Column("x serial", lambda e: fmt_float(e.get("size_ratio"), 4)),
        Column("target", lambda e: e["target"], "<"),
        Column("", lambda e: e["verdict"], "<"),
        Column("status", lambda e: e["status"][:60], "<"),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    started = time.perf_counter()
    entries: list[dict[str, Any]] = []
    for trace in options.mpi_traces:
        entries += run_trace(trace, options)
    _summarise(entries)
    print(f"  mpi: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return entries
