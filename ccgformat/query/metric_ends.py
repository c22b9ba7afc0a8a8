"""Where each location's metrics end: which metrics a location samples at all, and the
raw value of each one's last sample.

From one walk of the locations' samples (`metric_integrals.walked_samples`, many
locations at a time); for a large graph of few locations (`streaming.streams`), whose walk
takes long, from the archive's index when it has one: the final snapshot of every
location (spec 4.4) holds the last value of every metric sampled before its end. (The
index of many small locations is slower to read than their events: 3 s against 2 s for
20,000 locations of 70 events.) The topology (paper 001) uses it to tell which resources carry a metric and to
hold a Paje variable's last value until its container ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.graph import roots_at
from .interior import SummaryIndex
from .metric_integrals import walked_samples
from .streaming import streams
from ..ordering import sorted_distinct

__all__ = ["MetricEnds", "metric_ends", "run_ends"]


@dataclass(frozen=True, eq=False)
class MetricEnds:
    """Per location ``locations[r]`` and metric ``m`` (the definitions' metrics):
    ``sampled[r, m]``, whether the location samples it anywhere, and ``last[r, m]``, the
    raw 64 bits of its last sample (0 where there is none)."""

    locations: np.ndarray
    sampled: np.ndarray
    last: np.ndarray


def _from_index(index: SummaryIndex, locations: np.ndarray, metrics: int,
                path: str | None) -> tuple[np.ndarray, np.ndarray]:
    sampled = np.zeros((len(locations), metrics), bool)
    last = np.zeros((len(locations), metrics), np.int64)
    for row, location in enumerate(locations.tolist()):
        rows = index.final_metrics(location)
        if len(rows) and (rows[:, 0].min() < 0 or rows[:, 0].max() >= metrics):
            raise CorruptArchiveError(f"location {location}: the final snapshot names a metric outside the "
                                      f"{metrics} defined", path=path)
        sampled[row, rows[:, 0]] = True
        last[row, rows[:, 0]] = rows[:, 1]
    return sampled, last


def run_ends(run: np.ndarray, samples: tuple[np.ndarray, ...], metrics: int,
             path: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``sampled`` and ``last`` (``[len(run), metrics]``) of the locations ``run`` from one
    run of `walked_samples` (``samples``: row, time, ref, raw, stop)."""
    row, _, ref, raw, _ = samples
    if len(ref) and (ref.min() < 0 or ref.max() >= metrics):
        raise CorruptArchiveError(f"a sample of metric {int(ref.max())} on the locations {int(run[0])}.."
                                  f"{int(run[-1])}, which define {metrics}", path=path)
    sampled = np.zeros(len(run) * metrics, bool)
    last = np.zeros(len(run) * metrics, np.int64)
    cell = row * metrics + ref
    latest = len(cell) - 1 - np.unique(cell[::-1], return_index=True)[1]  # a location's samples in time order
    sampled[cell[latest]] = True
    last[cell[latest]] = raw[latest]
    return sampled.reshape(-1, metrics), last.reshape(-1, metrics)


def _from_walk(source: Any, locations: np.ndarray, metrics: int) -> tuple[np.ndarray, np.ndarray]:
    sampled = np.zeros((len(locations), metrics), bool)
    last = np.zeros((len(locations), metrics), np.int64)
    for run, samples in walked_samples(source, locations):
        rows = np.searchsorted(locations, run)
        sampled[rows], last[rows] = run_ends(run, samples, metrics, getattr(source, "path", None))
    return sampled, last


def metric_ends(source: Any, locations: Iterable[int]) -> MetricEnds:
    """The `MetricEnds` of ``locations`` (each with a root) of a `Graph` or `Archive`."""
    chosen = sorted_distinct(np.fromiter(map(int, locations), np.int64))
    metrics = len(source.definitions.metrics)
    sampled = np.zeros((len(chosen), metrics), bool)
    last = np.zeros((len(chosen), metrics), np.int64)
    with_events = chosen[roots_at(source, chosen)[3] > 0]
    if metrics and len(with_events):
        index = SummaryIndex.of(source) if streams(source) else None
        found = _from_index(index, with_events, metrics, getattr(source, "path", None)) if index is not None \
            else _from_walk(source, with_events, metrics)
        rows = np.searchsorted(chosen, with_events)
        sampled[rows], last[rows] = found
    return MetricEnds(chosen, sampled, last)
