"""A source's rows of the aggregation and metric tables over a given window (spec 4.10,
4.11): what a part of a merge computes where it was built - each rank of an MPI
conversion for its locations, over the window all ranks agreed on - so that the merge
puts them side by side instead of walking the events again (`archive.merge.tables`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..archive.merge.tables import TableRows
from ..graph.graph import source_root_columns
from .aggregate_tables import leaf_rows, rows_plan
from .metric_integrals import finest_cells, finest_level

__all__ = ["table_rows"]


def table_rows(source: Any, start: int, stop: int) -> TableRows:
    """The finest levels' rows over ``[start, stop)`` of the locations of ``source`` (a
    `Graph` or `Archive`) that have events, at the levels a merge of parts that all
    define the same locations makes (`aggregate_tables.rows_plan`, `finest_level`)."""
    known, _, _, _, events = source_root_columns(source)
    locations = np.sort(known[events > 0]).astype(np.int64)
    finest, sliced = rows_plan(source)
    cells = leaf_rows(source, locations, start, stop, finest, sliced)
    defined = len(source.definitions.metrics)
    metric_finest = finest_level(max(len(source.definitions.locations), max(source.roots, default=-1) + 1),
                                 max(defined, 1))
    key, value = finest_cells(source, start, stop, metric_finest) if defined else (np.zeros(0, np.int64),
                                                                                  np.zeros(0))
    cell, metric = np.divmod(key, max(defined, 1))
    return TableRows(start, stop, finest, locations, cells, metric_finest, cell >> metric_finest,
                     cell & ((1 << metric_finest) - 1), metric, value, sliced)
