"""The aggregation and metric tables of a merge joined from the sources' rows
(docs/merge.md, "Tables"; spec 4.10, 4.11).

A table cell of a location depends only on that location's events and on the window
``[t0, t1)`` the slices cut: when every source's rows were computed over the merged
window - the ranks of an MPI conversion agree on it before they compute them - the
merged finest level is the sources' rows put side by side in the merged locations'
order. The coarser levels and the resource hierarchy's inner nodes are sums of these
(`query.aggregate_tables.levels` and `query.metric_integrals.metric_levels` make them
from the rows), so no event is walked again. A merge not given the rows walks each
source's locations for them in threads of their own (`walked_rows`), while it copies the
blocks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

import numpy as np

from ...aggregate_model import Hierarchy
from ..queries import run_query
from .plan import Plan

__all__ = ["TableRows", "joined_rows", "plan_rows", "walked_rows"]


@dataclass(frozen=True)
class TableRows:
    """The finest levels' leaf rows of some locations over the window ``[start, stop)``:
    per location of ``locations`` (its row of ``cells``) the region times of the
    cells between the bounds of the ``2^finest`` slices and, when ``sliced``, those of the
    level of ``sliced`` slices (spec 4.10.3) merged (`cells[row, cell, region]`, spec
    4.10; `query.aggregate_tables.StreamPlan.bounds`), and the finest metric level (spec
    4.11, ``2^metric_finest`` slices) as columns: the cells of the locations' samples,
    ``(metric_location, metric_slice, metric)`` increasing, and their values.
    ``hierarchy``: the resource hierarchy whose leaves ``locations`` are, in order, when
    known (a merge's rows, `plan_rows`: the levels are summed over it rather than over
    a hierarchy made again, 0.012 s at 20,000 locations); None: the source's."""

    start: int
    stop: int
    finest: int
    locations: np.ndarray
    cells: np.ndarray
    metric_finest: int
    metric_location: np.ndarray
    metric_slice: np.ndarray
    metric: np.ndarray
    metric_value: np.ndarray
    sliced: int = 0
    hierarchy: Hierarchy | None = None

    @property
    def window(self) -> tuple[int, int, int, int, int]:
        return self.start, self.stop, self.finest, self.metric_finest, self.sliced


def joined_rows(parts: list[TableRows], moved: list[np.ndarray], leaves: np.ndarray) -> TableRows:
    """The rows of a merge of sources with disjoint locations: source ``i``'s rows
    ``parts[i]``, its locations renumbered by ``moved[i]`` (source location -> merged),
    side by side in the order ``leaves`` (the merged resource hierarchy's leaf locations;
    a leaf no part has a row of holds no time). Every part must have the same window and
    levels (ValueError otherwise)."""
    if len({part.window for part in parts}) != 1:
        raise ValueError(f"table rows of different windows or levels: {sorted({p.window for p in parts})}")
    first = parts[0]
    position = np.full(int(max(leaves.max(initial=-1), *(m.max(initial=-1) for m in moved))) + 1, -1, np.int64)
    position[leaves] = np.arange(len(leaves))
    states = max(part.cells.shape[2] for part in parts)
    cells = np.zeros((len(leaves), first.cells.shape[1], states), np.int64)
    columns: list[tuple[np.ndarray, ...]] = []
    for part, mapping in zip(parts, moved):
        rows = position[mapping[part.locations]]
        if len(rows) and int(rows.min()) < 0:
            raise ValueError("a location of the table rows is not a leaf of the merged hierarchy")
        cells[rows, :, :part.cells.shape[2]] = part.cells
        columns.append((mapping[part.metric_location], part.metric_slice, part.metric, part.metric_value))
    location, column, metric, value = (np.concatenate(c) for c in zip(*columns))
    order = np.lexsort((metric, column, location))
    return TableRows(first.start, first.stop, first.finest, np.asarray(leaves, np.int64), cells, first.metric_finest,
                     location[order], column[order], metric[order], value[order], first.sliced)


def plan_rows(plan: Plan, rows: Sequence[TableRows]) -> TableRows:
    """The merged table rows of ``plan``'s sources (disjoint locations) from each
    source's ``rows``, side by side in the merged resource hierarchy's leaf order."""
    if len(rows) != len(plan.archives):
        raise ValueError(f"{len(rows)} table rows for {len(plan.archives)} archives")
    joined = joined_rows(list(rows), [maps.locations for maps in plan.maps], plan.hierarchy.leaf_locations)
    return replace(joined, hierarchy=plan.hierarchy)


@contextmanager
def walked_rows(plan: Plan, start: int, stop: int, threads: int) -> Iterator[Callable[[], TableRows]]:
    """Each source's rows over the merged window ``[start, stop)`` (`query.table_rows`)
    walked on ``threads`` threads of their own, one source per thread at a time (an
    archive's block cache is not shared between threads; the C walk lets go of the GIL),
    from the start of the block: it gives the function that waits for them and returns
    the merged rows (`plan_rows`). The merge meanwhile reads the archives' stored blocks
    only. The window is that of a merged graph that streams: each source is walked as
    its levels are, however small (`query.table_rows` ``walk``)."""
    with ThreadPoolExecutor(threads, thread_name_prefix="ccg-rows") as walkers:
        parts = [walkers.submit(run_query, "table_rows", archive, start, stop, True) for archive in plan.archives]
        try:
            yield lambda: plan_rows(plan, [part.result() for part in parts])
        finally:
            for part in parts:  # on an error, the walks not yet started
                part.cancel()
