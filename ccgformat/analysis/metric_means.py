"""The temporal aggregation of paper 001 (section 3.2.1): per location, the time-weighted
mean of every metric over a window ``[start, stop)``, ``sum(value x overlap) / (stop -
start)`` - the integral of the metric's step function over the window divided by its
length.

The integrals are the archive's (`Archive.metric_integrals`, spec 4.11: its stored
METRIC_LEVEL cells, and walks of just the pieces a window's bounds cut). A Paje variable
holds its last value until its container is destroyed or the trace ends, where the
archive stops at the location's last event: that remainder is added from the last value
(`query.metric_ends`, `formats.paje.lifetimes`). Metrics of equal names (a Paje variable
type per container type) are one metric here. For ``accumulated`` and ``relative``
metrics the integral is the increase, and the "mean" the increase per tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..formats.paje.lifetimes import container_lifetimes
from ..aggregate_model import Hierarchy
from ..graph.graph import root_rows, roots_at
from ..query.aggregate_tables import trace_window
from ..query.metric_ends import MetricEnds, metric_ends
from ..query.metric_integrals import sample_values
from .topology_walk import WalkedTopology

__all__ = ["LocationMeans", "location_means", "whole_window"]


@dataclass(frozen=True, eq=False)
class LocationMeans:
    """``values[r, k]`` (float64): the time-weighted mean of the metrics named
    ``names[k]`` on location ``locations[r]`` over ``[start, stop)``; ``carried[r, k]``:
    whether the location samples such a metric at all (a host carries ``power`` even
    while it is 0)."""

    start: int
    stop: int
    names: tuple[str, ...]
    locations: np.ndarray
    values: np.ndarray
    carried: np.ndarray

    def by_leaf(self, hierarchy: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
        """``values`` and ``carried`` with a row per leaf of ``hierarchy``, in its leaf
        order (zero, carrying nothing, for a leaf location without events)."""
        rows, found = root_rows(self.locations, np.asarray(hierarchy.leaf_locations, np.int64))
        values = np.zeros((hierarchy.leaves, len(self.names)))
        carried = np.zeros((hierarchy.leaves, len(self.names)), bool)
        values[found], carried[found] = self.values[rows[found]], self.carried[rows[found]]
        return values, carried


def whole_window(archive: Any) -> tuple[int, int]:
    """The default window: the first event to the last one (+ 1 tick), or for a Paje
    archive to its last container creation or destruction when that comes later."""
    first, stop = trace_window(archive)
    lives = container_lifetimes(archive.definitions)
    if lives is not None and lives[1] is not None:
        stop = max(stop, lives[1])
    return first, stop


def _paje_remainder(archive: Any, locations: np.ndarray, ends: MetricEnds, start: int,
                    stop: int) -> np.ndarray | None:
    """``[locations, metrics]``: what the Paje variables add past their location's last
    event, up to their container's end, within the window; None when nothing does (the
    container lifetimes are read only when a carried metric's location ends before
    ``stop``, and only for a Paje archive)."""
    last_event = roots_at(archive, locations)[2]
    if not (ends.sampled.any(axis=1) & (last_event < stop)).any():
        return None
    lives = container_lifetimes(archive.definitions)
    if lives is None:
        return None
    destroyed, latest = lives
    trace_end = max(trace_window(archive)[1] - 1, latest if latest is not None else -(1 << 63))
    known = locations < len(destroyed)
    holds = np.full(len(locations), trace_end, np.int64)
    holds[known] = np.minimum(destroyed[locations[known]], trace_end)
    overlap = np.maximum(np.minimum(holds, stop) - np.maximum(last_event, start), 0).astype(np.float64)
    types = [metric.value_type for metric in archive.definitions.metrics]
    values = np.column_stack([sample_values(ends.last[:, m], kind) for m, kind in enumerate(types)])
    return np.where(ends.sampled, values * overlap[:, None], 0.0)


def location_means(archive: Any, start: int, stop: int, walked: WalkedTopology | None = None) -> LocationMeans:
    """The `LocationMeans` of every location of ``archive`` over ``[start, stop)`` (not
    empty; `whole_window` gives the default), from ``walked`` when the window's walk
    (`topology_walk.walk_topology`) is at hand, else from the archive's metric integrals."""
    locations = np.array(sorted(archive.roots), np.int64)
    if walked is None:
        integrals = archive.metric_integrals(1, start, stop, locations=locations.tolist()).values[:, 0, :]
        ends = metric_ends(archive, locations)
    else:
        integrals = np.zeros((len(locations), len(archive.definitions.metrics)))
        sampled, last = np.zeros(integrals.shape, bool), np.zeros(integrals.shape, np.int64)
        rows = np.searchsorted(locations, walked.locations)
        integrals[rows], sampled[rows], last[rows] = walked.integrals, walked.metric_ends.sampled, \
            walked.metric_ends.last
        ends = MetricEnds(locations, sampled, last)
    remainder = _paje_remainder(archive, locations, ends, start, stop)
    if remainder is not None:
        integrals = integrals + remainder
    names = tuple(dict.fromkeys(metric.name for metric in archive.definitions.metrics))
    values = np.zeros((len(locations), len(names)))
    carried = np.zeros((len(locations), len(names)), bool)
    for m, metric in enumerate(archive.definitions.metrics):
        k = names.index(metric.name)
        values[:, k] += integrals[:, m]
        carried[:, k] |= ends.sampled[:, m]
    return LocationMeans(start, stop, names, locations, values / (stop - start), carried)
