"""The metric samples of a lossless conversion, kept as they pass through `write_trace`,
so that the metric tables (spec 4.11) need no walk of the built graph: a lossless graph
gives back its input events, samples included."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..model import EventBatch, EventKind

__all__ = ["MetricSamples"]


class MetricSamples:
    """Every METRIC event of the locations added, as columns."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, locations: Sequence[int] | np.ndarray, batch: EventBatch, offsets: Sequence[int] | np.ndarray) -> None:
        """The samples of ``batch``, whose rows ``offsets[i]:offsets[i + 1]`` are events of
        ``locations[i]`` in their order."""
        rows = np.flatnonzero(batch.kind == EventKind.METRIC)
        if len(rows):
            location = np.asarray(locations, np.int64)[np.searchsorted(offsets, rows, "right") - 1]
            self._parts.append((location, batch.time[rows], batch.ref[rows], batch.value[rows]))

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(location, time, metric, raw value)`` of every sample, by location, each
        location's in event order."""
        if not self._parts:
            return tuple(np.zeros(0, np.int64) for _ in range(4))  # type: ignore[return-value]
        location, time, ref, value = (np.concatenate(column) for column in zip(*self._parts))
        order = np.argsort(location, kind="stable")
        return location[order], time[order], ref[order], value[order]
