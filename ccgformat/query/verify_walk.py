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
from typing import Any, Callable

from ..archive.indexes import Checkpoint, recorder
from ..archive.samples import MetricSamples
from .aggregate_tables import stream_plan, walked_levels
from .metric_integrals import MetricLevel, metric_levels
from .slice_stream import SliceTimes
from .streaming import WALK_BATCH, read_ahead, streams

__all__ = ["WalkedLevels", "verify_walk"]

#: hears a location's rebuilt checkpoints at one interval
Rebuilt = Callable[[int, int, list[Checkpoint]], None]


@dataclass(frozen=True)
class WalkedLevels:
    """The levels the walk made: None for those it did not (not asked, or answered from
    node tables)."""

    aggregation: list[tuple[Any, ...]] | None
    metrics: list[MetricLevel] | None


def verify_walk(source: Any, intervals: dict[int, set[int]], rebuilt: Rebuilt, aggregation: int | None = None,
                metric_finest: int | None = None, sliced: int | None = None) -> WalkedLevels:
    """Walk every location once: hand ``rebuilt`` its checkpoints every interval of
    ``intervals[location]``, and make the ``aggregation`` coarsest aggregation levels (and
    the level of ``sliced`` slices) and the metric levels up to ``metric_finest`` (None:
    not wanted) where their queries would walk the events. Raises what the walk raises
    (`CcgError`, KeyError for a location without a root)."""
    plan = stream_plan(source, aggregation, sliced) if aggregation is not None else None
    samples = MetricSamples() if metric_finest is not None and streams(source) else None
    defined = len(source.definitions.regions)
    cells = SliceTimes(len(plan.locations), plan.bounds, defined) if plan is not None else None
    rows = {location: row for row, location in enumerate(plan.locations)} if plan is not None else {}
    roots = source.roots
    walked = set(intervals) | set(rows) | (set(roots) if samples is not None else set())
    for location in sorted(walked):
        recorders = {interval: recorder(interval) for interval in sorted(intervals.get(location, ()))}
        row = rows.get(location)
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
    return WalkedLevels(
        None if plan is None or cells is None else list(walked_levels(source, plan, cells.cells)),
        None if samples is None else list(metric_levels(source, metric_finest, samples.columns())))
