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
    low: int   #: T_a
    high: int  #: T_b


class SummaryIndex:
    """The SUMMARY and SNAPSHOTS checkpoints of an archive, with the checkpoint at event 0
    (nothing before it) prepended to every location."""

    def __init__(self, archive: Any):
        self.archive = archive
        self._points: dict[int, tuple[np.ndarray, list[dict[str, Any]], list[dict[str, Any]]]] = {}
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

    def points(self, location: int) -> tuple[np.ndarray, list[dict[str, Any]], list[dict[str, Any]]]:
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
            found = self._points[location] = (times, [origin, *summary], [origin, *snapshots])
        return found

    def cut(self, location: int, lo: int, hi: int) -> Cut | None:
        """The clean checkpoints a < b with ``lo <= T_a`` and ``T_b < hi``, or None when
        the window holds no whole segment."""
        times, summary, _ = self.points(location)
        a = int(np.searchsorted(times, lo, "left"))
        b = int(np.searchsorted(times, hi, "left")) - 1
        while a < b and not self._is_clean(location, a, summary):
            a += 1
        while b > a and not self._is_clean(location, b, summary):
            b -= 1
        if a >= b:
            return None
        return Cut(location, a, b, int(times[a]), int(times[b]))

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
        start_rows, stop_rows = (self._rows(location, p, "regions", 4) for p in (first, last))
        for region, calls, inclusive, exclusive in _difference(start_rows, stop_rows):
            totals.add_region(region, calls, inclusive, exclusive)
        for peer, sent, sent_bytes, received, received_bytes in _difference(
                self._rows(location, first, "peers", 5), self._rows(location, last, "peers", 5)):
            totals.add_pair(location, peer, sent, sent_bytes, received, received_bytes)
        for operation, count, sent, received in _difference(
                self._rows(location, first, "operations", 4), self._rows(location, last, "operations", 4)):
            totals.add_collective(operation, count, sent, received)
        metrics_before = {m: v for m, v in self._rows(location, snapshots[cut.a], "metrics", 2).tolist()}
        for metric, value in self._rows(location, snapshots[cut.b], "metrics", 2).tolist():
            if metric not in doubles:
                totals.add_metric(metric, wrap64(value - metrics_before.get(metric, 0)))
        for point in summary[cut.a + 1:cut.b + 1]:
            for region, low, high in self._rows(location, point, "durations", 3).tolist():
                totals.extremes(region, low, high)
            for region, enter, leave in self._rows(location, point, "open", 3).tolist():
                if enter >= cut.low:
                    part = min(leave, hi) - enter
                    totals.extremes(region, part, part)
        for point, upto in ((first, cut.high), (last, hi)):  # calls entered before the window
            for region, enter, leave in self._rows(location, point, "open", 3).tolist():
                if enter < lo:
                    low = int(point["time"])
                    totals.add_before(region, max(0, min(leave, upto) - low))

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


def _difference(before: np.ndarray, after: np.ndarray) -> list[list[int]]:
    """Rows keyed by their first column: ``after - before`` (wrapping), for every key of
    ``after`` (cumulative rows never lose a key)."""
    earlier = {int(row[0]): row[1:] for row in before}
    out = []
    with np.errstate(over="ignore"):
        for row in after:
            key = int(row[0])
            change = row[1:] - earlier[key] if key in earlier else row[1:]
            if change.any():
                out.append([key, *change.tolist()])
    return out
