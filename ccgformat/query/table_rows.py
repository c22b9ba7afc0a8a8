"""A source's rows of the aggregation and metric tables over a given window (spec 4.10,
4.11): what a part of a merge computes where it was built - each rank of an MPI
conversion for its locations, over the window all ranks agreed on, and each archive a merge
of archives with other windows copies the blocks of - so that the merge puts them side by
side instead of walking the merged events again (`archive.merge.tables`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..archive.merge.tables import TableRows
from ..archive.samples import MetricSamples
from ..graph.graph import source_root_columns
from .aggregate_tables import leaf_rows, rows_plan, stream_plan
from .metric_integrals import finest_cells, finest_level
from .streaming import streams

__all__ = ["table_rows", "walked_window"]


def table_rows(source: Any, start: int, stop: int, walk: bool | None = None) -> TableRows:
    """The finest levels' rows over ``[start, stop)`` of the locations of ``source`` (a
    `Graph` or `Archive`) that have events, at the levels a merge of parts that all
    define the same locations makes (`aggregate_tables.rows_plan`, `finest_level`).
    ``walk``: whether the region times come from a walk of the events (default: when
    ``source`` streams, `streaming.streams`) rather than from the node tables - a part
    of a graph that streams walks as that graph's levels do: a part of 4 of the 8
    locations of 1 M jittered events takes 0.02 s walked, 0.04-0.09 s from its tables."""
    known, _, _, _, events = source_root_columns(source)
    locations = np.sort(known[events > 0]).astype(np.int64)
    finest, sliced = rows_plan(source)
    defined = len(source.definitions.metrics)
    walk = streams(source) if walk is None else walk
    samples = MetricSamples() if defined and walk else None  # taken from the rows' walk
    cells = leaf_rows(source, locations, start, stop, finest, sliced, samples, walk)
    metric_finest = finest_level(max(len(source.definitions.locations), max(source.roots, default=-1) + 1),
                                 max(defined, 1))
    key, value = finest_cells(source, start, stop, metric_finest, None if samples is None else samples.columns()) \
        if defined else (np.zeros(0, np.int64), np.zeros(0))
    cell, metric = np.divmod(key, max(defined, 1))
    return TableRows(start, stop, finest, locations, cells, metric_finest, cell >> metric_finest,
                     cell & ((1 << metric_finest) - 1), metric, value, sliced)


def walked_window(source: Any, slices: int | None) -> tuple[int, int] | None:
    """The window over which the aggregation levels of ``source`` with ``slices``
    (`aggregate_tables.levels`) walk its events - a large graph of few locations
    (`aggregate_tables.stream_plan`) - or None when they read its node tables: the rows of
    its locations over that window (`table_rows`) then give the levels the walk gives."""
    plan = stream_plan(source, None, slices)
    return None if plan is None else (plan.start, plan.stop)
