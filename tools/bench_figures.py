"""Figures benchmark (issue 37, item 3): large pictures, drawn as SVG (our writer) and as
PNG (matplotlib), each against a baseline measured in the same run.

- timelines of 1,000 rows x 20,000 columns (3 colour classes; rows one pixel high), the
  cells one image in both formats: "runs", each row runs of one class about 40 columns
  long (as calls look at this zoom), and "random", random shares in every cell (the
  worst case for PNG's compression). Baseline: `Timeline.rgb`, the blending of the
  cells' colours that any picture of them needs.
- the overview of a model of 1,000 leaves x 100 slices x 8 states at p = 0.05 (about
  95,000 parts, drawn as their visual aggregates). Baseline: `overview_of`, the
  aggregation itself.

Medians (min-max) of ``--repeat`` runs; ``--quick`` draws a tenth of the timeline.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench_overview import _model
from benchkit import Column, Stat, benchmark, fmt_float, run_repeated

ROWS, COLUMNS, CLASSES = 1000, 20_000, 3


def exclusive_times(rows: int, columns: int, pattern: str) -> np.ndarray:
    """(rows, columns, `CLASSES`) ticks of columns 100 ticks wide, by ``pattern`` (module docstring)."""
    rng = np.random.default_rng(0)
    if pattern == "random":
        return rng.integers(0, 40, size=(rows, columns, CLASSES)).astype(np.int64)
    runs = np.cumsum(rng.random((rows, columns)) < 1 / 40, axis=1)
    exclusive = np.zeros((rows, columns, CLASSES), np.int64)
    np.put_along_axis(exclusive, ((runs * 7 + np.arange(rows)[:, None]) % CLASSES)[..., None], 100, axis=2)
    return exclusive


def _timeline(rows: int, columns: int, pattern: str) -> Any:
    """A timeline of `exclusive_times`, rows named, a microsecond timer."""
    from ccgformat.query.timeline_query import Timeline
    exclusive = exclusive_times(rows, columns, pattern)
    return Timeline(0, columns * 100, "location", list(range(rows)), [f"class {c}" for c in range(CLASSES)],
                    np.arange(columns + 1, dtype=np.int64) * 100, exclusive, np.full((rows, columns), 100, np.int64),
                    np.arange(rows + 1), list(range(rows)), 1_000_000, [f"rank {r}" for r in range(rows)])


def _seconds(work: Callable[[], Any]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def _saving(result: Any, path: Path, repeat: int, *args: Any) -> Stat:
    """The seconds of ``result.save(path, *args)``, ``repeat`` times."""
    return run_repeated(partial(_seconds, partial(result.save, path, *args)), repeat)


def _entry(name: str, seconds: Stat, baseline: Stat, what: str, size: int) -> dict[str, Any]:
    return {"name": name, "seconds": seconds.as_dict(), "baseline": what, "baseline_seconds": baseline.as_dict(),
            "ratio": seconds.median / baseline.median, "bytes": size}


@benchmark("figures", "large pictures as SVG and PNG: a 1,000 x 20,000 timeline, a 95,000-part overview", [
    ("Pictures (seconds: median (min-max); ratio: over the same-run baseline's median)", [
        Column("picture", lambda e: e["name"], "<"),
        Column("seconds", lambda e: f"{e['seconds']['median']:.3f} ({e['seconds']['min']:.3f}-"
                                    f"{e['seconds']['max']:.3f})"),
        Column("baseline", lambda e: e["baseline"], "<"),
        Column("baseline s", lambda e: f"{e['baseline_seconds']['median']:.3f}"),
        Column("ratio", lambda e: fmt_float(e["ratio"])),
        Column("file MB", lambda e: fmt_float(e["bytes"] / 2**20, 2)),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    from ccgformat.query.overview_query import overview_of
    repeat = options.repeat
    columns = COLUMNS // 10 if getattr(options, "quick", False) else COLUMNS
    model = _model(1000, 100, 8, 10)
    overview = overview_of(model, 0.05)
    entries = []
    with tempfile.TemporaryDirectory() as folder:
        for pattern in ("runs", "random"):
            timeline = _timeline(ROWS, columns, pattern)
            rgb = run_repeated(partial(_seconds, timeline.rgb), repeat)
            for suffix in ("svg", "png"):
                path = Path(folder) / f"timeline.{suffix}"
                seconds = _saving(timeline, path, repeat, 1)
                entries.append(_entry(f"timeline {ROWS:,} x {columns:,} {pattern} {suffix}", seconds, rgb,
                                      "Timeline.rgb", path.stat().st_size))
            del timeline
        aggregation = run_repeated(partial(_seconds, partial(overview_of, model, 0.05)), repeat)
        for suffix in ("svg", "png"):
            path = Path(folder) / f"overview.{suffix}"
            seconds = _saving(overview, path, repeat)
            entries.append(_entry(f"overview 1,000 x 100, {len(overview.partition):,} parts {suffix}", seconds,
                                  aggregation, "overview_of", path.stat().st_size))
    return entries
