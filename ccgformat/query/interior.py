"""The interior of long profile windows, from an archive's SUMMARY index (format 1.2).

A SUMMARY checkpoint at event k holds the cumulative statistics of events ``[0, k)`` over
time ``[start, T_k)`` (spec 4.5), so the additive part of a profile between two
checkpoints a < b is the difference of the two (the additivity of 4.26), whatever the
number of events between them. A window ``[lo, hi)`` is cut at the first checkpoint with
``T_a >= lo`` and the last with ``T_b < hi``; the graph answers the two end pieces
``[lo, T_a)`` and ``[T_b, hi)``, the index the interior. A checkpoint is a clean cut only
when no earlier event shares its timestamp (else the events of that instant would fall
on both sides), which the walker checks for the two chosen ones.

The non-additive parts come from the same index: the shortest and longest calls closed
between two checkpoints (``durations``), and the calls open at a checkpoint with their
enter and leave times (``open``): a call entered in the interior either closes before
the next checkpoint or is open at one, so the extremes of its part inside the window
are found without events; so is the time of calls entered before ``lo`` (not counted,
left out of the mean).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..archive.layout import SectionKind
from ..errors import CorruptArchiveError
from ..graph.pool import wrap64


@dataclass(frozen=True)
class Cut:
    """The checkpoints a location's window is cut at: the interior is ``[T_a, T_b)``."""

    location: int
    a: int
    b: int
    low: int             #: T_a
    high: int            #: T_b
    starts_window: bool  #: no events of the window lie before T_a (no piece [lo, T_a))
    ends_window: bool    #: b is the final checkpoint (no piece [T_b, hi))


class SummaryIndex:
    """The SUMMARY and SNAPSHOTS checkpoints of an archive, with the checkpoint at event 0
    (nothing before it) prepended to every location."""

    def __init__(self, archive: Any):
        self.archive = archive
        self._points: dict[int, tuple[list[int], list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._clean: dict[tuple[int, int], bool] = {}

    @staticmethod
    def of(source: Any) -> SummaryIndex | None:
        """The index of an archive whose SUMMARY has the 1.2 members, else None (graphs,
        older archives)."""
        if not hasattr(source, "checkpoints") or not source.roots:
            return None
        if "_summary_index" not in source.__dict__:
            points = source.checkpoints(SectionKind.SUMMARY, next(iter(source.roots)))
            usable = points and isinstance(points[0], dict) and "open" in points[0]
            source.__dict__["_summary_index"] = SummaryIndex(source) if usable else None
        return source.__dict__["_summary_index"]

    def points(self, location: int) -> tuple[list[int], list[dict[str, Any]], list[dict[str, Any]]]:
        """Checkpoint times, summaries and snapshots of a location, event 0 first."""
        found = self._points.get(location)
        if found is None:
            summary = self.archive.checkpoints(SectionKind.SUMMARY, location)
            snapshots = self.archive.checkpoints(SectionKind.SNAPSHOTS, location)
            if len(summary) != len(snapshots) or any(
                    not isinstance(s, dict) or not isinstance(p, dict) or s.get("index") != p.get("index")
                    or "open" not in s for s, p in zip(summary, snapshots)):
                self._corrupt(location, "SUMMARY and SNAPSHOTS checkpoints do not correspond")
            start = self.archive.roots[location].start
            origin = {"index": 0, "time": start, "regions": [], "peers": [], "operations": [], "durations": [],
                      "open": [], "metrics": []}
            times = np.array([start] + [_integer(self, location, p, "time") for p in summary], np.int64)
            indexes = np.array([0] + [_integer(self, location, p, "index") for p in summary], np.int64)
            events = self.archive.roots[location].events
            if np.any(np.diff(times) < 0) or np.any(np.diff(indexes) <= 0) or indexes[-1] != events:
                self._corrupt(location, "checkpoint indexes or times are out of order, or the last checkpoint "
                                        f"is not at the location's {events} events")
            found = self._points[location] = (times.tolist(), [origin, *summary], [origin, *snapshots])
        return found

    def shortest_segment(self) -> int:
        """The shortest time between two successive checkpoints of any location: a window
        no longer than that holds no whole segment."""
        shortest = self.__dict__.get("_shortest")
        if shortest is None:
            gaps = [np.diff(self.points(location)[0]) for location in self.archive.roots]
            shortest = self.__dict__["_shortest"] = min((int(g.min()) for g in gaps if len(g)), default=0)
        return shortest

    def cut(self, location: int, lo: int, hi: int) -> Cut | None:
        """The clean checkpoints a < b with ``lo <= T_a`` and ``T_b < hi``, or None when
        the window holds no whole segment."""
        times, summary, _ = self.points(location)
        a, b = bisect_left(times, lo), bisect_left(times, hi) - 1
        while a < b and not self._is_clean(location, a, summary):
            a += 1
        while b > a and not self._is_clean(location, b, summary):
            b -= 1
        if a >= b:
            return None
        return Cut(location, a, b, int(times[a]), int(times[b]), lo >= times[a] or a == 0, b == len(times) - 1)

    def _is_clean(self, location: int, point: int, summary: list[dict[str, Any]]) -> bool:
        """No earlier event has the checkpoint's timestamp. The checkpoint at event 0 and
        the final one (every event lies before it, and no time after the last event
        belongs to a call) always are."""
        if point == 0 or point == len(summary) - 1:
            return True
        key = (location, point)
        clean = self._clean.get(key)
        if clean is None:
            index = _integer(self, location, summary[point], "index")
            clean = int(self.archive.location(location).event(index - 1).time) < int(summary[point]["time"])
            self._clean[key] = clean
        return clean

    # ------------------------------------------------------------------ the interior

    def add_interior(self, totals: Any, cut: Cut, lo: int, hi: int, doubles: set[int]) -> None:
        """Add what the index says of ``[T_a, T_b)`` to ``totals`` (a `profile.Totals`),
        with the extremes of the calls entered there clipped at ``hi`` and the time of
        calls entered before ``lo``."""
        _, summary, snapshots = self.points(cut.location)
        first, last = summary[cut.a], summary[cut.b]
        location = cut.location
        changes = _difference(self._rows(location, first, "regions", 4), self._rows(location, last, "regions", 4))
        totals.add_regions(self._regions(location, changes[:, 0], totals), changes[:, 1], changes[:, 2],
                           changes[:, 3])
        for peer, sent, sent_bytes, received, received_bytes in _difference(
                self._rows(location, first, "peers", 5), self._rows(location, last, "peers", 5)).tolist():
            totals.add_pair(location, peer, sent, sent_bytes, received, received_bytes)
        for operation, count, sent, received in _difference(
                self._rows(location, first, "operations", 4), self._rows(location, last, "operations", 4)).tolist():
            totals.add_collective(operation, count, sent, received)
        metrics_before = {m: v for m, v in self._rows(location, snapshots[cut.a], "metrics", 2).tolist()}
        for metric, value in self._rows(location, snapshots[cut.b], "metrics", 2).tolist():
            if metric not in doubles:
                totals.add_metric(metric, wrap64(value - metrics_before.get(metric, 0)))
        points = summary[cut.a + 1:cut.b + 1]
        closed = np.concatenate([self._rows(location, p, "durations", 3) for p in points])
        totals.extremes(self._regions(location, closed[:, 0], totals), closed[:, 1], closed[:, 2])
        opened = np.concatenate([self._rows(location, p, "open", 3) for p in points])
        opened = opened[opened[:, 1] >= cut.low]  # entered inside the interior
        extent = np.minimum(opened[:, 2], hi) - opened[:, 1]
        totals.extremes(self._regions(location, opened[:, 0], totals), extent, extent)
        for point, upto in ((first, cut.high), (last, hi)):  # calls entered before the window
            early = self._rows(location, point, "open", 3)
            early = early[early[:, 1] < lo]
            part = np.maximum(0, np.minimum(early[:, 2], upto) - int(point["time"]))
            zero = np.zeros(len(early), np.int64)
            totals.add_regions(self._regions(location, early[:, 0], totals), zero, zero, zero, part)

    def metric_bits(self, location: int, point: int, metrics: list[int]) -> np.ndarray:
        """The raw 64 bits of the values of ``metrics`` at a checkpoint (0 for a metric not
        sampled before it), from the snapshot."""
        _, _, snapshots = self.points(location)
        values = dict(self._rows(location, snapshots[point], "metrics", 2).tolist())
        return np.array([values.get(metric, 0) for metric in metrics], np.int64)

    def _regions(self, location: int, regions: np.ndarray, totals: Any) -> np.ndarray:
        """Region ids of index rows, which must name a region slot of ``totals``."""
        if len(regions) and (regions.min() < 0 or regions.max() >= len(totals.calls)):
            self._corrupt(location, f"the summary names region {int(regions.max())}, which is not defined")
        return regions

    def _rows(self, location: int, point: dict[str, Any], member: str, width: int) -> np.ndarray:
        rows = point.get(member)
        try:
            array = np.asarray(rows, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            array = None
        if array is None or (array.size and (array.ndim != 2 or array.shape[1] != width)):
            self._corrupt(location, f"checkpoint {point.get('index')}: '{member}' is not a list of "
                                    f"{width}-integer rows")
        return array.reshape(-1, width)

    def _corrupt(self, location: int, reason: str) -> None:
        raise CorruptArchiveError(f"location {location}: {reason}", path=str(self.archive.path))


def _integer(index: SummaryIndex, location: int, point: Any, member: str) -> int:
    value = point.get(member) if isinstance(point, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        index._corrupt(location, f"a checkpoint lacks an integer '{member}'")
    return value


def _difference(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Rows keyed by their first column: ``after - before`` (wrapping), for every key of
    ``after`` (cumulative rows never lose a key), without the rows that did not change."""
    change = after.copy()
    if len(before) and len(after):
        where = np.searchsorted(after[:, 0], before[:, 0])
        found = (where < len(after)) & (after[np.minimum(where, len(after) - 1), 0] == before[:, 0])
        with np.errstate(over="ignore"):
            change[where[found], 1:] -= before[found, 1:]
    return change[change[:, 1:].any(axis=1)]
