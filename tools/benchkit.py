"""Benchmark infrastructure shared by the tools/bench_*.py modules.

The registry (`BENCHMARKS`, filled by the `benchmark` decorator; `CHILD_TASKS` for work
done in a fresh interpreter), the common runner `run_repeated` (repeat a measurement,
keep every sample, report the median with min and max), memory probes and table
formatting. tools/bench.py is the command line.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

TOOLS = Path(__file__).resolve().parent
BENCH_SCRIPT = TOOLS / "bench.py"

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


def _rss_mb(pid: int | str) -> float | None:
    """The resident set size of process ``pid`` (or ``"self"``) in MiB (Linux), else None."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def rss_now_mb() -> float | None:
    """The current resident set size of this process in MiB (Linux), else None."""
    return _rss_mb("self")


def peak_rss_mb() -> float | None:
    """``ru_maxrss`` of this process in MiB (KiB on Linux, bytes on macOS), else None."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def reset_high_water() -> bool:
    """Reset this process's resident-set high-water mark (``VmHWM``) to its current resident
    set (Linux 4.0+, ``/proc/self/clear_refs``); False where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def high_water_mb() -> float | None:
    """This process's resident-set high-water mark in MiB (``VmHWM``, Linux), else None.
    Unlike ``ru_maxrss`` (`peak_rss_mb`) it is not inherited from the parent that forked
    a child before its ``exec``, and `reset_high_water` resets it."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_child(task: str, spec: dict[str, Any], timeout: float | None = None,
              backend: str | None = None) -> dict[str, Any]:
    """Run ``task`` of `CHILD_TASKS` in a fresh interpreter (with ``CCGFORMAT_BACKEND``
    set to ``backend`` if given); returns the JSON it prints."""
    command = [sys.executable, str(BENCH_SCRIPT), "--child", task, json.dumps(spec)]
    env = None if backend is None else dict(os.environ, CCGFORMAT_BACKEND=backend)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"child {task} {spec} failed with exit status {done.returncode}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"child {task} {spec} printed nothing")
    return json.loads(lines[-1])


@dataclass
class Measured:
    """One `run_measured` child: what it printed (None unless it finished), its wall time,
    its peak RSS (its own and its children's, from ``wait4``) and how it ended."""

    result: dict[str, Any] | None
    wall_seconds: float
    peak_rss_mb: float | None
    status: str  #: "ok", "timeout after N s", "killed above N MB RSS" or "failed (exit status N): last stderr line"
    cpu_seconds: float | None = None  #: user + system time (`run_process`)


def run_measured(task: str, spec: dict[str, Any], timeout: float, backend: str | None = None,
                 memory_limit_mb: float | None = None) -> Measured:
    """Run ``task`` of `CHILD_TASKS` in a fresh interpreter like `run_child`, but never
    raise: a child still running after ``timeout`` seconds, or (with ``memory_limit_mb``)
    found with a larger resident set (polled every 10 ms; Linux), is killed with its
    process group and reported as such. Its peak RSS is its own, whatever ran before.
    (An address-space limit would not do: native code may reserve far more than it uses.)"""
    import tempfile

    command = [sys.executable, str(BENCH_SCRIPT), "--child", task, json.dumps(spec)]
    env = None if backend is None else dict(os.environ, CCGFORMAT_BACKEND=backend)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        measured = run_process(command, timeout, memory_limit_mb, env=env, stdout=out, stderr=err)
        if measured.status != "ok":
            if measured.status.startswith("failed"):
                err.seek(0)
                lines = err.read().strip().splitlines()
                measured.status += f": {lines[-1][:200]}" if lines else ""
            return measured
        out.seek(0)
        lines = out.read().strip().splitlines()
        if not lines:
            return Measured(None, measured.wall_seconds, measured.peak_rss_mb, "failed: printed nothing")
        return Measured(json.loads(lines[-1]), measured.wall_seconds, measured.peak_rss_mb, "ok")


def run_process(command: list[str], timeout: float, memory_limit_mb: float | None = None, *,
                env: dict[str, str] | None = None, stdout: Any = subprocess.DEVNULL,
                stderr: Any = subprocess.DEVNULL, cwd: str | Path | None = None) -> Measured:
    """Run ``command`` (in ``cwd``; its output to ``stdout``, ``stderr``; default:
    discarded) and measure its wall time (start-up included), CPU time and peak RSS, killing it as
    `run_measured` does; ``result`` is None, ``status`` "ok" or why not. The peak is the
    child's ``ru_maxrss``, which Linux starts at the high-water mark of the process it was
    spawned from: this process's is reset to its current resident set first
    (`reset_high_water`), so that traces it wrote before do not count."""
    import signal
    import time

    reset_high_water()
    started = time.perf_counter()
    try:
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, env=env, cwd=cwd,
                                 start_new_session=True)
    except OSError as error:
        return Measured(None, 0.0, None, f"failed: {error}")
    killed = None
    while True:
        pid, wait_status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > timeout:
            killed = f"timeout after {timeout:g} s"
        elif memory_limit_mb and (_rss_mb(child.pid) or 0) > memory_limit_mb:
            killed = f"killed above {memory_limit_mb:g} MB RSS"
        if killed:
            os.killpg(child.pid, signal.SIGKILL)
            _, wait_status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.01)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(wait_status)
    peak = usage.ru_maxrss / 2**20 if sys.platform == "darwin" else usage.ru_maxrss / 2**10
    cpu = usage.ru_utime + usage.ru_stime
    if killed:
        return Measured(None, wall, peak, killed, cpu)
    if child.returncode != 0:
        return Measured(None, wall, peak, f"failed (exit status {child.returncode})", cpu)
    return Measured(None, wall, peak, "ok", cpu)


def repeated_process(command: list[str], repeat: int, timeout: float,
                     memory_limit_mb: float | None) -> dict[str, Any]:
    """Run ``command`` ``repeat`` times as a fresh process (stopping at the first failure)
    in the folder holding the ccgformat imported here, so that ``python -m ccgformat.cli``
    imports that one too: its ``status`` (a failure's ends with the last line the command
    wrote to stderr), the ``wall_seconds`` of every run, the largest ``peak_rss_mb`` and
    the ``seconds`` (median, min, max, samples) of the runs that succeeded."""
    import statistics
    import tempfile

    import ccgformat
    checkout = Path(ccgformat.__file__).resolve().parent.parent
    runs = []
    with tempfile.TemporaryFile("w+") as errors:   # a file, not a pipe: a pipe could fill and block it
        for _ in range(repeat):
            errors.seek(0)
            errors.truncate()
            runs.append(run_process(command, timeout, memory_limit_mb, cwd=checkout, stderr=errors))
            if runs[-1].status != "ok":
                break
        errors.seek(0)
        said = [line.strip() for line in errors.read().splitlines() if line.strip()]
    status = runs[-1].status + (f": {said[-1][:200]}" if runs[-1].status.startswith("failed") and said else "")
    samples = [run.wall_seconds for run in runs if run.status == "ok"]
    entry: dict[str, Any] = {"status": status, "wall_seconds": [run.wall_seconds for run in runs],
                             "peak_rss_mb": max((run.peak_rss_mb or 0 for run in runs), default=None)}
    if samples:
        entry["seconds"] = {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
                            "samples": samples}
    return entry


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
    #: (title, columns[, keep]): a table of the entries ``keep(entry)`` is true for (default all)
    tables: list[tuple[Any, ...]] = field(default_factory=list)


#: Every benchmark by name, in the order they run.
BENCHMARKS: dict[str, Benchmark] = {}
#: Work done in a fresh subprocess (``--child TASK SPEC``): spec dict -> result dict.
CHILD_TASKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def benchmark(name: str, description: str, tables: list[tuple[Any, ...]]):
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


