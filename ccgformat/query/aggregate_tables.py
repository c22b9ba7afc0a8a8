"""The aggregation pyramid (spec 4.10) computed from the graph: level k splits the whole
trace into 2^k slices (the bounds of `column_bounds`, so level k's bound j is level
k+1's bound 2j and the levels nest), and holds the exclusive time of every region per
slice for every node of the resource hierarchy, a node the sum of its children.

`levels` feeds the writer (registered as the query ``aggregation_levels``) and
`ccg verify`; the writer keeps the levels while they fit its size budget. After the
pyramid, `levels` can make one level of any slice count S (AGGREGATE_SLICES, spec
4.10.3; the writer asks for `SLICES` = 3,000, whose bounds 30, 100 and 1,000 slices
share). A large graph of few locations is walked event by event instead
(`slice_stream`): the cells of the finest level's and S's bounds together then are all
the memory the levels take, not columns over every node, and one walk makes both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..aggregate_model import Hierarchy
from ..archive.aggregation import SLICES
from ..archive.samples import MetricSamples
from ..graph.graph import root_rows, source_root_columns
from ..hierarchy import hierarchy_of
from ..ordering import sorted_distinct
from .bounds import column_bounds
from .slice_stream import walked_times
from .streaming import streams
from .tables import tables_for
from .timeline_walk import exclusive_times, group_exclusive

__all__ = ["LEVELS", "MAX_CELLS", "SLICED", "SLICES", "StreamPlan", "leaf_rows", "levels", "location_times",
           "node_sums", "rows_plan", "source_hierarchy", "state_count", "stream_plan", "trace_window", "walked_levels"]

#: The finest level computed: 2^10 = 1,024 slices, a screen's width (dissertation 4.5.4:
#: displays of 10^3 to 10^4 pixels); finer slices are answered from the graph.
LEVELS = 10
#: A level is computed only while nodes x slices x regions stays within this many cells
#: (dense int64: 128 MiB).
MAX_CELLS = 1 << 24
#: The levels of a large graph (`streaming.streams`) come from its events walked in
#: batches when the finest level's cells of every location number at most this many (32 MiB)
STREAM_CELLS = 1 << 22
#: the level `levels` yields for the level of any slice count, after the pyramid's
SLICED = -1


def trace_window(source: Any) -> tuple[int, int]:
    """``(first event time, last event time + 1)``; ``(0, 1)`` without events."""
    _, _, starts, ends, events = source_root_columns(source)
    filled = events > 0
    if not filled.any():
        return 0, 1
    return int(starts[filled].min()), int(ends[filled].max()) + 1


def sliced_window(source: Any, slices: int, start: int | None, stop: int | None) -> np.ndarray:
    """The ``slices + 1`` bounds of ``[start, stop)`` (default: the whole trace) that the
    model queries answer, after checking ``slices`` and that the window is not empty."""
    if isinstance(slices, bool) or not isinstance(slices, (int, np.integer)) or slices < 1:
        raise ValueError(f"slices must be an integer >= 1, not {slices!r}")
    first, last = trace_window(source)
    start = first if start is None else int(start)
    stop = last if stop is None else int(stop)
    if stop <= start:
        raise ValueError(f"the window {start}..{stop} is empty")
    return column_bounds(start, stop, int(slices))


def state_count(source: Any) -> int:
    """The regions of the model (spec 4.10): the defined ones, and beyond them up to the
    largest region id that holds time anywhere in the trace."""
    defined = len(source.definitions.regions)
    locations = sorted(source.roots)
    if streams(source):  # the regions of the calls that hold time, from one walk
        held = walked_times(source, locations, np.array(trace_window(source), np.int64), 0).shape[2]
        return max(defined, held)
    regions = tables_for(source.pool).regions
    if regions <= defined:
        return defined
    held = np.flatnonzero(location_times(source, locations, np.array(trace_window(source), np.int64),
                                         regions).sum(axis=(0, 1)))
    return max(defined, int(held[-1]) + 1 if len(held) else 0)


def source_hierarchy(source: Any) -> Hierarchy:
    """The hierarchy over every location of a `Graph` or `Archive`."""
    hierarchy = getattr(source, "hierarchy", None)
    if isinstance(hierarchy, Hierarchy):
        return hierarchy
    return hierarchy_of(source.definitions, np.concatenate((np.arange(len(source.definitions.locations)),
                                                            source_root_columns(source)[0])))


def location_times(source: Any, locations: list[int] | np.ndarray, boundaries: np.ndarray, states: int) -> np.ndarray:
    """``[len(locations), columns, states]``: the region times of each location per column
    (the timeline walk, formula 4.28; zero for a location without a root). One column
    around the locations' whole spans takes their roots' memoized sub-tree times (4.26)
    without a walk."""
    out = np.zeros((len(locations), len(boundaries) - 1, states), np.int64)
    known, nodes, starts, ends, _ = source_root_columns(source)
    at, found = root_rows(known, np.asarray(locations, np.int64))
    rows = np.flatnonzero(found)
    if not states or not len(rows):
        return out
    at = at[rows]
    t, group_of = tables_for(source.pool), np.arange(states, dtype=np.int64)
    if len(boundaries) == 2 and boundaries[0] <= starts[at].min() and ends[at].max() < boundaries[1]:
        out[rows, 0] = group_exclusive(t, group_of)[nodes[at], :states]
    else:
        out[rows] = exclusive_times(t, group_of, boundaries, states, nodes[at], starts[at], False)
    return out


def node_sums(hierarchy: Hierarchy, leaves: np.ndarray) -> np.ndarray:
    """``[nodes, ...]``: each node's sum over its leaves (rows of ``leaves`` in leaf order);
    a node over one leaf copies its row, the others take differences of running sums."""
    first, stop = hierarchy.first_leaf, hierarchy.stop_leaf
    out = np.zeros((len(first),) + leaves.shape[1:], np.int64)
    single = np.flatnonzero(stop - first == 1)
    out[single] = leaves[first[single]]
    several = np.flatnonzero(stop - first > 1)
    if len(several):
        running = np.zeros((len(leaves) + 1,) + leaves.shape[1:], np.int64)
        np.cumsum(leaves, axis=0, out=running[1:])
        out[several] = running[stop[several]] - running[first[several]]
    return out


def _finest(nodes: int, states: int, count: int | None) -> int:
    """The finest level `levels` makes: ``count - 1``, else the finest up to `LEVELS`
    whose cells stay within `MAX_CELLS`."""
    finest = LEVELS if count is None else count - 1
    while count is None and finest and nodes * (1 << finest) * max(states, 1) > MAX_CELLS:
        finest -= 1
    return finest


@dataclass(frozen=True)
class StreamPlan:
    """How `levels` walks a large graph's events: the locations (the hierarchy's leaves,
    one row of cells each), the finest level's slice bounds, and those of the level of
    ``sliced`` slices (0: none)."""

    hierarchy: Hierarchy
    start: int
    stop: int
    finest: int
    count: int | None
    sliced: int = 0

    @property
    def locations(self) -> list[int]:
        return self.hierarchy.leaf_locations.tolist()

    @property
    def bounds(self) -> np.ndarray:
        """The bounds of the cells walked (`cell_bounds`)."""
        return cell_bounds(self.start, self.stop, self.finest, self.sliced)

    def level_cells(self, cells: np.ndarray, slices: int) -> np.ndarray:
        """The walked ``cells`` (between `bounds`) summed into ``slices`` slices, whose
        bounds are among them."""
        at = np.searchsorted(self.bounds, column_bounds(self.start, self.stop, slices))
        running = np.zeros((cells.shape[0], cells.shape[1] + 1, cells.shape[2]), np.int64)
        np.cumsum(cells, axis=1, out=running[:, 1:])
        return running[:, at[1:]] - running[:, at[:-1]]


def cell_bounds(start: int, stop: int, finest: int, sliced: int = 0) -> np.ndarray:
    """The bounds of the cells a walk of ``[start, stop)`` covers: those of level
    ``finest``'s 2^finest slices and of ``sliced`` slices (0: none), merged."""
    bounds = column_bounds(start, stop, 1 << finest)
    return sorted_distinct(np.concatenate((bounds, column_bounds(start, stop, sliced)))) if sliced else bounds


def _fits(nodes: int, states: int, slices: int) -> bool:
    """Whether a dense level of ``slices`` slices stays within `MAX_CELLS`."""
    return nodes * slices * max(states, 1) <= MAX_CELLS


def _sliced(nodes: int, defined: int, sliced: int | None) -> int:
    """The slices of the level of any slice count a walk covers: ``sliced`` when its
    level, with the defined regions, stays within `MAX_CELLS`, else 0 (none)."""
    return sliced if sliced and _fits(nodes, defined, sliced) else 0


def stream_plan(source: Any, count: int | None = None, sliced: int | None = None) -> StreamPlan | None:
    """The plan of `levels` (same ``count`` and ``sliced``) when it walks the events
    (`walked_levels` then gives its levels from the walked cells), else None."""
    if not streams(source):
        return None
    hierarchy = source_hierarchy(source)
    defined = len(source.definitions.regions)  # states may only grow
    finest = _finest(len(hierarchy), defined, count)
    plan = StreamPlan(hierarchy, *trace_window(source), finest, count, _sliced(len(hierarchy), defined, sliced))
    if len(hierarchy.leaf_locations) * (len(plan.bounds) - 1) * max(defined, 1) > STREAM_CELLS:
        return None
    return plan


def walked_levels(source: Any, plan: StreamPlan, cells: np.ndarray) -> Iterator[tuple[int, int, int, np.ndarray]]:
    """`levels` from ``cells``, the region times of ``plan.locations`` between
    ``plan.bounds`` (`slice_stream.walked_times`; the levels nest: level k's bound j is
    the finest's bound j * 2^(finest - k)), the states those of `state_count`."""
    defined = len(source.definitions.regions)
    states = cells.shape[2]
    if states > defined:  # as state_count: up to the largest region holding time
        held = np.flatnonzero(cells.sum(axis=(0, 1)))
        states = max(defined, int(held[-1]) + 1 if len(held) else 0)
        cells = cells[:, :, :states]
    finest, hierarchy = plan.finest, plan.hierarchy
    finest_cells = plan.level_cells(cells, 1 << finest) if plan.sliced else cells
    for k in range(min(finest, _finest(len(hierarchy), states, plan.count)) + 1):
        level = finest_cells.reshape(len(cells), 1 << k, 1 << (finest - k), states).sum(axis=2)
        yield k, plan.start, plan.stop, node_sums(hierarchy, level)
    if plan.sliced and _fits(len(hierarchy), states, plan.sliced):
        yield SLICED, plan.start, plan.stop, node_sums(hierarchy, plan.level_cells(cells, plan.sliced))


def rows_plan(source: Any, sliced: int | None = SLICES) -> tuple[int, int]:
    """The finest level of the leaf rows a part of a merge hands it (`leaf_rows`), and the
    slices of the level of any slice count they also cover (0: none): those of `levels`
    with ``sliced``, but at most the finest level whose cells of every location stay
    within `STREAM_CELLS` (the levels a file keeps are far coarser when there are many
    locations)."""
    hierarchy = source_hierarchy(source)
    regions = max(len(source.definitions.regions), 1)
    finest = _finest(len(hierarchy), regions, None)
    while finest and len(hierarchy.leaf_locations) * (1 << finest) * regions > STREAM_CELLS:
        finest -= 1
    return finest, _sliced(len(hierarchy), len(source.definitions.regions), sliced)


def leaf_rows(source: Any, locations: np.ndarray, start: int, stop: int, finest: int, sliced: int = 0,
              samples: MetricSamples | None = None, walk: bool = False) -> np.ndarray:
    """``[len(locations), cells, >= regions]``: the region times of ``locations`` between
    the bounds of `StreamPlan` (level ``finest``'s and those of ``sliced`` slices) over
    ``[start, stop)``, walked (``walk``: a large graph's, `streams`, or a part of one;
    ``samples`` then gets their metric samples) or from the node tables, as `levels`
    computes them (the same cells either way)."""
    bounds = cell_bounds(start, stop, finest, sliced)  # no hierarchy: 0.1 s at 20,000 locations
    if walk:
        return walked_times(source, locations, bounds, len(source.definitions.regions), samples)
    regions = max(len(source.definitions.regions), tables_for(source.pool).regions)
    return location_times(source, locations, bounds, regions)


def levels(source: Any, count: int | None = None, sliced: int | None = None, rows: Any = None
           ) -> Iterator[tuple[int, int, int, np.ndarray]]:
    """``(k, start, stop, values[nodes, 2^k, regions])`` for k = 0, 1, ... up to `LEVELS`
    while a level stays within `MAX_CELLS` (level 0 always), or for k < ``count``; then,
    when ``sliced`` is given and its level stays within `MAX_CELLS`, ``(SLICED, start,
    stop, values[nodes, sliced, regions])``, the level of that many slices. Each
    level is walked when it is asked for (level 0 from the roots' memoized times, 4.26),
    so a consumer that stops early, as the writer's size budget does, never makes the
    finer ones: the walk of 2^k slices costs about twice that of 2^(k-1), so all the levels
    cost about two finest ones, while a finest level made first would cost its dense
    nodes x 2^k x regions cells (107 MB at 20,000 ranks) for a file that keeps three.
    ``rows``: the finest level's leaf rows over the trace's window, known already (a
    merge's `archive.merge.tables.TableRows`, in leaf order, made with `rows_plan` for
    the same ``sliced``): the levels are their sums."""
    if rows is not None:
        if (rows.start, rows.stop) != trace_window(source):
            raise ValueError(f"table rows over [{rows.start}, {rows.stop}), not the trace's window")
        hierarchy = source_hierarchy(source) if rows.hierarchy is None else rows.hierarchy
        if rows.sliced != _sliced(len(hierarchy), len(source.definitions.regions), sliced):
            raise ValueError(f"table rows of the level of {rows.sliced} slices, not of {sliced}")
        yield from walked_levels(source, StreamPlan(hierarchy, rows.start, rows.stop, rows.finest, count,
                                                    rows.sliced), rows.cells)
        return
    plan = stream_plan(source, count, sliced)
    if plan is not None:
        cells = walked_times(source, plan.locations, plan.bounds, len(source.definitions.regions))
        yield from walked_levels(source, plan, cells)
        return
    hierarchy = source_hierarchy(source)
    start, stop = trace_window(source)
    leaves = hierarchy.leaf_locations
    states = state_count(source)
    finest = _finest(len(hierarchy), states, count)
    for k in range(finest + 1):
        slices = location_times(source, leaves, column_bounds(start, stop, 1 << k), states)
        yield k, start, stop, node_sums(hierarchy, slices)
    if sliced and _fits(len(hierarchy), states, sliced):
        slices = location_times(source, leaves, column_bounds(start, stop, sliced), states)
        yield SLICED, start, stop, node_sums(hierarchy, slices)
