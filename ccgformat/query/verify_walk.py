"""One walk of every location's events for `ccg verify` (registered as the query
``verify_walk``).

`verify` compares three things with what the graph's events give: each location's
checkpoints (spec 4.4, 4.5), the aggregation levels (4.10) and the metric levels (4.11).
Each used to walk every location on its own, and a long archive's node blocks do not fit
the reader's block cache, so every block was decoded once per walk. Here each location
is walked once and its batches feed all three: the checkpoint recorders, the row of the
finest aggregation level's cells (`slice_stream.SliceTimes`, as `aggregate_tables.levels`
walks a large graph) and the metric samples (`MetricSamples`, as the writer passes them
to `metric_integrals.metric_levels`). The walk runs ahead in a thread of its own
(`streaming.read_ahead`): block decoding and the C walk on one core, the consumers on
the other. A graph that `levels` or `metric_levels` answer from node tables instead (a
small one, or one of many locations) gets no levels here: `verify` asks those queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from ..archive.indexes import Checkpoint, recorder
from ..archive.samples import MetricSamples
from .aggregate_tables import StreamPlan, stream_plan, walked_levels
from .metric_integrals import MetricLevel, metric_levels
from .slice_stream import SliceTimes
from .streaming import WALK_BATCH, read_ahead, streams

__all__ = ["WalkPart", "WalkedLevels", "joined_levels", "verify_walk", "walk_part"]

#: hears a location's rebuilt checkpoints at one interval
Rebuilt = Callable[[int, int, list[Checkpoint]], None]


@dataclass(frozen=True)
class WalkedLevels:
    """The levels the walk made: None for those it did not (not asked, or answered from
    node tables)."""

    aggregation: list[tuple[Any, ...]] | None
    metrics: list[MetricLevel] | None


@dataclass(frozen=True)
class WalkPart:
    """What the walk of some of the locations made for the levels: their rows of the
    finest aggregation cells (rows of the plan's locations, and their cells; None without
    the plan) and their metric samples (columns by location; None when not wanted)."""

    rows: np.ndarray | None
    cells: np.ndarray | None
    samples: tuple[np.ndarray, ...] | None


def verify_walk(source: Any, intervals: dict[int, set[int]], rebuilt: Rebuilt, aggregation: int | None = None,
                metric_finest: int | None = None, sliced: int | None = None) -> WalkedLevels:
    """Walk every location once: hand ``rebuilt`` its checkpoints every interval of
    ``intervals[location]``, and make the ``aggregation`` coarsest aggregation levels (and
    the level of ``sliced`` slices) and the metric levels up to ``metric_finest`` (None:
    not wanted) where their queries would walk the events. Raises what the walk raises
    (`CcgError`, KeyError for a location without a root)."""
    part = walk_part(source, intervals, rebuilt, aggregation, metric_finest, sliced)
    return joined_levels(source, [part], aggregation, metric_finest, sliced)


def walk_part(source: Any, intervals: dict[int, set[int]], rebuilt: Rebuilt, aggregation: int | None = None,
              metric_finest: int | None = None, sliced: int | None = None,
              between: tuple[float, float] = (-np.inf, np.inf)) -> WalkPart:
    """`verify_walk` of the locations ``between`` (``[first, end)``) only: ``rebuilt``
    hears theirs, and the levels' share of them is returned, for `joined_levels` to join
    with the other locations' (the ranks of ``ccg verify --mpi`` each walk a share)."""
    plan = _plan(source, aggregation, sliced)
    samples = MetricSamples() if _samples_wanted(source, metric_finest) else None
    first, end = between
    roots = source.roots
    walked = set(intervals) | (set(plan.locations) if plan is not None else set()) | \
        (set(roots) if samples is not None else set())
    walked = sorted(location for location in walked if first <= location < end)
    rows = {location: row for row, location in enumerate(plan.locations)} if plan is not None else {}
    mine = [location for location in walked if location in rows]
    cells = SliceTimes(len(mine), plan.bounds, len(source.definitions.regions)) if plan is not None else None
    cell_rows = {location: row for row, location in enumerate(mine)}
    for location in walked:
        recorders = {interval: recorder(interval) for interval in sorted(intervals.get(location, ()))}
        row = cell_rows.get(location)
        root = roots.get(location)
        if recorders or (root is not None and root.events and (row is not None or samples is not None)):
            walker = source.location(location)
            for batch in read_ahead(walker.events(batch_size=WALK_BATCH)) if len(walker) else ():
                for accumulating in recorders.values():
                    accumulating.add(batch)
                if row is not None and cells is not None:
                    cells.add(row, batch)
                if samples is not None:
                    samples.add([location], batch, [0, len(batch)])
            for interval, accumulating in recorders.items():
                rebuilt(location, interval, accumulating.finish(walker.start))
    return WalkPart(None if cells is None else np.array([rows[location] for location in mine], np.int64),
                    None if cells is None else cells.cells, None if samples is None else samples.columns())


def joined_levels(source: Any, parts: Iterable[WalkPart], aggregation: int | None = None,
                  metric_finest: int | None = None, sliced: int | None = None) -> WalkedLevels:
    """The levels of `verify_walk` from the `walk_part` of every location's share (in
    location order, with the same arguments): their cells put side by side, their samples
    one after another."""
    parts = list(parts)
    plan = _plan(source, aggregation, sliced)
    aggregation_levels = None
    if plan is not None:
        states = max([len(source.definitions.regions), *(p.cells.shape[2] for p in parts if p.cells is not None)])
        cells = np.zeros((len(plan.locations), len(plan.bounds) - 1, states), np.int64)
        for part in parts:
            if part.rows is not None and part.cells is not None:
                cells[part.rows, :, :part.cells.shape[2]] = part.cells
        aggregation_levels = list(walked_levels(source, plan, cells))
    metrics = None
    if _samples_wanted(source, metric_finest):
        kept = [part.samples for part in parts if part.samples is not None]
        filled = [columns for columns in kept if len(columns[0])] or kept[:1]  # dtypes of the samples' columns
        samples = tuple(np.concatenate(column) for column in zip(*filled))
        metrics = list(metric_levels(source, metric_finest, samples))
    return WalkedLevels(aggregation_levels, metrics)


def _plan(source: Any, aggregation: int | None, sliced: int | None) -> StreamPlan | None:
    """The plan of the aggregation levels the walk makes (None: it makes none)."""
    return stream_plan(source, aggregation, sliced) if aggregation is not None else None


def _samples_wanted(source: Any, metric_finest: int | None) -> bool:
    """Whether the walk keeps the metric samples (the metric levels are made from them)."""
    return metric_finest is not None and streams(source)
