"""The microscopic model (paper 000, section III.A; issue 15): for ``T`` time slices of a
window, per location and state, the exclusive time in ticks during which the state is the
innermost open region on the location.

Slice ``k`` is ``[b_k, b_(k+1))`` with ``b_k = t0 + floor(k * (t1 - t0) / T)``: the column
bounds of the timeline (`column_bounds`), whose walk (`exclusive_times`, formula 4.28 of
the dissertation) computes exactly these sums on the compressed graph. States are the
regions (``states="region"``, ids ``0..R-1``) or the timeline's region groups
(``states="group"``). The default window is the whole trace, first event time to last
event time + 1.

An archive with aggregation tables (spec 4.10) answers from them: of the pyramid's levels
and the level of any slice count (4.10.3: 3,000 slices, whose bounds every divisor of
3,000 shares), the one whose cells cover the asked slices best (the coarsest that covers
them exactly, else the finest), the cells inside a slice are summed, and only the pieces of a slice between its
bounds and the nearest cell bounds inside it come from the graph, computed with the same
walk. Pieces outside the trace hold no time and are not computed.

A large graph (`streaming.streams`) of not too many locations is not read into
columns over every node: the pieces are walked as time windows (`slice_stream`), each
entered with a time search, and without tables the whole window is walked event by event;
either way the memory is the cells' and the blocks the walk reads.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import numpy as np

from ..aggregate_model import AggregateModel, Hierarchy
from ..hierarchy import hierarchy_of
from ..archive.layout import AGGREGATION_KINDS
from .aggregate_tables import location_times, sliced_window, source_hierarchy, state_count, trace_window
from .bounds import column_bounds
from .slice_stream import windowed_times
from .streaming import streams
from .groups import region_groups
from .timeline_walk import _cell_sums
from ..ordering import sorted_distinct

__all__ = ["aggregate", "model_locations"]

STATES = ("region", "group")
#: the locations `_add_pieces` walks together
LOCATIONS_PER_WALK = 65536
#: a large graph's pieces are walked as windows when locations x pieces stay within this
#: many (each costs a few time searches; beyond, the node tables' walk is faster)
WINDOW_WALKS = 1 << 16


def model_locations(source: Any, locations: Iterable[int] | None) -> tuple[list[int], Hierarchy]:
    """The chosen locations, ascending, and the hierarchy over them."""
    every = set(range(len(source.definitions.locations))) | set(source.roots)
    if locations is None:
        return sorted(every), source_hierarchy(source)
    chosen = sorted(set(int(location) for location in locations))
    missing = [location for location in chosen if location not in every]
    if missing:
        raise ValueError(f"no location {missing[0]} in the trace")
    return chosen, hierarchy_of(source.definitions, chosen)


def _leaf_nodes(hierarchy: Hierarchy) -> dict[int, int]:
    """location -> the hierarchy node that is its leaf."""
    return dict(zip(np.asarray(hierarchy.leaf_locations).tolist(), hierarchy.leaf_nodes().tolist()))


def _from_tables(source: Any, tables: Any, chosen: list[int], bounds: np.ndarray, out: np.ndarray) -> list[tuple[int, int]]:
    """Add to ``out`` the table cells that lie inside a slice; return the pieces
    ``(from, to)`` of the slices left for the graph, inside the trace."""
    for level in tables.every_level:  # the coarsest level whose cells cover the slices exactly, else the finest
        fine = column_bounds(tables.start, tables.stop, level.slices)
        first = np.searchsorted(fine, bounds[:-1], "left")      # first cell bound at or after a slice's start
        last = np.searchsorted(fine, bounds[1:], "right") - 1   # last cell bound at or before its stop
        whole = first < last
        if (whole & (fine[np.minimum(first, level.slices)] == bounds[:-1])
                & (fine[np.maximum(last, 0)] == bounds[1:])).all():
            break
    slices = np.flatnonzero(whole)
    marks = np.zeros(level.slices + 1, np.int64)  # cell -> 1 + the slice it lies in, or 0
    np.add.at(marks, first[slices], slices + 1)
    np.add.at(marks, last[slices], -(slices + 1))
    slice_of_cell = np.cumsum(marks[:-1]) - 1
    row_of_node = np.full(level.nodes, -1, np.int64)
    leaf_of = _leaf_nodes(source_hierarchy(source))
    row_of_node[[leaf_of[location] for location in chosen]] = np.arange(len(chosen))
    row = row_of_node[level.cell // level.slices]
    where = slice_of_cell[level.cell % level.slices]
    keep = (row >= 0) & (where >= 0)
    flat = (row[keep] * out.shape[1] + where[keep]) * out.shape[2] + level.state[keep]
    cells, inverse = np.unique(flat, return_inverse=True)  # sums of the cells held only, not of every one
    out.reshape(-1)[cells] += _cell_sums(inverse, level.value[keep], len(cells))
    pieces = []
    for i, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        inner = [(a, int(fine[first[i]])), (int(fine[last[i]]), b)] if whole[i] else [(a, b)]
        pieces += [(max(x, tables.start), min(y, tables.stop)) for x, y in inner
                   if max(x, tables.start) < min(y, tables.stop)]
    return pieces


def _tables_save_a_walk(source: Any, bounds: np.ndarray) -> bool:
    """Whether reading the tables saves walking: always for a large graph, whose pieces are
    walked as windows; for another, whose walk over the node tables visits every node
    whatever the bounds, only where a level's bounds include every asked bound inside the
    trace (no piece at all), as the directory's slice counts say without reading a level."""
    if streams(source):
        return True
    first, last = trace_window(source)
    inside = bounds[(bounds > first) & (bounds < last)]
    return any(np.isin(inside, column_bounds(first, last, int(entry.count))).all()
               for entry in getattr(source, "directory", ()) if entry.kind in AGGREGATION_KINDS)


def _windowed(source: Any, chosen: list[int], windows: int) -> bool:
    """Whether ``windows`` windows of the ``chosen`` locations are walked as windows
    (`windowed_times`) rather than with the node tables."""
    return streams(source) and len(chosen) * windows <= WINDOW_WALKS


def _walked(source: Any, chosen: list[int], ends: np.ndarray, states: int,
            windows: list[tuple[int, int]] | None = None) -> Iterator[tuple[slice, np.ndarray]]:
    """`location_times` of the ``chosen`` locations between ``ends``, `LOCATIONS_PER_WALK`
    locations at a time (their rows of ``chosen`` and their times): their columns are
    held for so many only (at 10^6 locations all of them took gigabytes). Of a large
    graph (`_windowed`) only the ``windows`` (default: all of ``ends``) are walked, and
    the columns outside them are zero."""
    wanted = np.asarray(chosen, np.int64)
    if _windowed(source, chosen, 1 if windows is None else len(windows)):
        yield slice(0, len(wanted)), windowed_times(source, chosen, ends, states, windows)[:, :, :states]
        return
    for first in range(0, len(wanted), LOCATIONS_PER_WALK):
        rows = slice(first, first + LOCATIONS_PER_WALK)
        yield rows, location_times(source, wanted[rows], ends, states)


def _add_pieces(source: Any, chosen: list[int], bounds: np.ndarray, pieces: list[tuple[int, int]],
                out: np.ndarray) -> None:
    """Add the graph's times of ``pieces`` (disjoint, in order) to their slices."""
    ends = sorted_distinct(np.array(pieces, np.int64).ravel())
    starts = np.array([a for a, _ in pieces], np.int64)
    stops = np.array([b for _, b in pieces], np.int64)
    piece = np.searchsorted(starts, ends[:-1], "right") - 1
    wanted = np.flatnonzero(ends[1:] <= stops[piece])  # columns inside a piece (not between two)
    into = np.searchsorted(bounds, ends[wanted], "right") - 1
    for rows, times in _walked(source, chosen, ends, out.shape[2], pieces):
        for column, slot in zip(wanted.tolist(), into.tolist()):  # a few columns per slice: no ufunc.at
            out[rows, slot] += times[:, column]


def aggregate(source: Any, slices: int, start: int | None = None, stop: int | None = None,
              states: str = "region", locations: Iterable[int] | None = None) -> AggregateModel:
    """The model of ``[start, stop)`` (default: the whole trace) in ``slices`` slices over
    ``locations`` (default: all) of a `Graph` or `Archive`, exactly."""
    if states not in STATES:
        raise ValueError(f"states must be 'region' or 'group', not {states!r}")
    bounds = sliced_window(source, slices, start, stop)
    chosen, hierarchy = model_locations(source, locations)
    tables = getattr(source, "aggregation_tables", None) if _tables_save_a_walk(source, bounds) else None
    regions = tables.states if tables is not None else state_count(source)
    values = np.zeros((len(chosen), int(slices), regions), np.int64)
    if tables is None:
        for rows, times in _walked(source, chosen, bounds, regions):
            values[rows] = times
    else:
        pieces = _from_tables(source, tables, chosen, bounds, values)
        if pieces:
            _add_pieces(source, chosen, bounds, pieces, values)
    definitions = source.definitions
    resolution = int(definitions.timer_resolution or 1)
    if states == "region":
        names = tuple(definitions.regions[r].name if r < len(definitions.regions) else f"region {r}"
                      for r in range(regions))
        return AggregateModel(bounds, names, np.array(chosen, np.int64), values, hierarchy, resolution)
    groups, group_of = region_groups(definitions, regions)
    onehot = np.zeros((regions, len(groups)), np.int64)
    onehot[np.arange(regions), group_of] = 1
    return AggregateModel(bounds, tuple(groups), np.array(chosen, np.int64), values @ onehot, hierarchy, resolution)
