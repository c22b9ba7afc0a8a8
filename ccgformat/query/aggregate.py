"""The microscopic model (paper 000, section III.A; issue 15): for ``T`` time slices of a
window, per location and state, the exclusive time in ticks during which the state is the
innermost open region on the location.

Slice ``k`` is ``[b_k, b_(k+1))`` with ``b_k = t0 + floor(k * (t1 - t0) / T)``: the column
bounds of the timeline (`column_bounds`), whose walk (`exclusive_times`, formula 4.28 of
the dissertation) computes exactly these sums on the compressed graph. States are the
regions (``states="region"``, ids ``0..R-1``) or the timeline's region groups
(``states="group"``). The default window is the whole trace, first event time to last
event time + 1.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..aggregate_model import AggregateModel, Hierarchy
from ..hierarchy import hierarchy_of
from .groups import region_groups
from .tables import tables_for
from .timeline import column_bounds
from .timeline_walk import exclusive_times

__all__ = ["aggregate", "state_classes", "whole_window"]

STATES = ("region", "group")


def whole_window(source: Any) -> tuple[int, int]:
    """``(first event time, last event time + 1)`` of a `Graph` or `Archive`; ``(0, 1)``
    without events."""
    roots = [root for root in source.roots.values() if root.events]
    if not roots:
        return 0, 1
    return min(root.start for root in roots), max(root.end for root in roots) + 1


def state_classes(source: Any, states: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The state names and, per region id, its state (the shape of `region_groups`)."""
    if states not in STATES:
        raise ValueError(f"states must be 'region' or 'group', not {states!r}")
    definitions = source.definitions
    regions = max(len(definitions.regions), tables_for(source.pool).regions)
    if states == "group":
        names, group_of = region_groups(definitions, regions)
        return tuple(names), group_of
    names = [definitions.regions[r].name if r < len(definitions.regions) else f"region {r}" for r in range(regions)]
    return tuple(names), np.arange(regions, dtype=np.int64)


def _locations(source: Any, locations: Iterable[int] | None) -> tuple[list[int], Hierarchy]:
    """The chosen locations, ascending, and the hierarchy over them."""
    every = set(range(len(source.definitions.locations))) | set(source.roots)
    if locations is None:
        hierarchy = getattr(source, "hierarchy", None)
        chosen = sorted(every)
        return chosen, hierarchy if hierarchy is not None else hierarchy_of(source.definitions, chosen)
    chosen = sorted(set(int(location) for location in locations))
    missing = [location for location in chosen if location not in every]
    if missing:
        raise ValueError(f"no location {missing[0]} in the trace")
    return chosen, hierarchy_of(source.definitions, chosen)


def aggregate(source: Any, slices: int, start: int | None = None, stop: int | None = None,
              states: str = "region", locations: Iterable[int] | None = None) -> AggregateModel:
    """The model of ``[start, stop)`` (default: the whole trace) in ``slices`` slices over
    ``locations`` (default: all) of a `Graph` or `Archive`, exactly."""
    if isinstance(slices, bool) or not isinstance(slices, (int, np.integer)) or slices < 1:
        raise ValueError(f"slices must be an integer >= 1, not {slices!r}")
    first, last = whole_window(source)
    start = first if start is None else int(start)
    stop = last if stop is None else int(stop)
    if stop <= start:
        raise ValueError(f"the window {start}..{stop} is empty")
    names, group_of = state_classes(source, states)
    chosen, hierarchy = _locations(source, locations)
    bounds = column_bounds(start, stop, int(slices))
    values = np.zeros((len(chosen), int(slices), len(names)), np.int64)
    rows = [row for row, location in enumerate(chosen) if location in source.roots]
    if names and rows:
        roots = [source.roots[chosen[row]] for row in rows]
        values[rows] = exclusive_times(tables_for(source.pool), group_of, bounds, len(names),
                                       np.array([root.root for root in roots], np.int64),
                                       np.array([root.start for root in roots], np.int64), False)
    return AggregateModel(bounds, names, np.array(chosen, np.int64), values, hierarchy)
