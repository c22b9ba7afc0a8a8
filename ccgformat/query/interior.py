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

import weakref
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..archive.indexes import ROW_WIDTHS
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
        #: weakly: the archive keeps its index (`of`), and a cycle would keep both, with the
        #: archive's map and decoded blocks, until the garbage collector's next full pass
        self.archive = weakref.proxy(archive)
        self._points: dict[int, tuple[list[int], list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._clean: dict[tuple[int, int], bool] = {}
        #: parsed row lists, by (id of the checkpoint object, member); the checkpoints live in _points
        self._arrays: dict[tuple[int, str], np.ndarray] = {}
        self._stacked: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
        self._differences: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray, list[list[int]],
                                                            list[list[int]]]] = {}
        #: region ids in the index must be defined (the builder refuses undefined ones)
        self.regions = len(archive.definitions.regions)

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
            times = [self._integer(location, p, "time") for p in summary]
            indexes = [self._integer(location, p, "index") for p in summary]
            events = self.archive.roots[location].events
            if events or not indexes:
                # the checkpoint at event 0 (nothing before it); the index holds it only as
                # the final checkpoint of a location without events (spec 4.4)
                origin = {"index": 0, "time": start, "regions": [], "peers": [], "operations": [],
                          "durations": [], "open": [], "metrics": []}
                summary, snapshots = [origin, *summary], [origin, *snapshots]
                times, indexes = [start, *times], [0, *indexes]
            if np.any(np.diff(times) < 0) or np.any(np.diff(indexes) <= 0) or indexes[-1] != events:
                self._corrupt(location, "checkpoint indexes or times are out of order, or the last checkpoint "
                                        f"is not at the location's {events} events")
            found = self._points[location] = (times, summary, snapshots)
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
            index = self._integer(location, summary[point], "index")
            clean = int(self.archive.location(location).event(index - 1).time) < int(summary[point]["time"])
            self._clean[key] = clean
        return clean

    # ------------------------------------------------------------------ the interior

    def add_interiors(self, totals: Any, cuts: list[Cut], lo: int, hi: int, doubles: set[int]) -> None:
        """Add what the index says of the interiors ``[T_a, T_b)`` to ``totals`` (a
        `profile_totals.Totals`), with the extremes of the calls entered there clipped at ``hi``
        and the time of calls entered before ``lo``; one step per kind of sum for all
        locations."""
        changes, closed, opened, early, parts = [], [], [], [], []
        for cut in cuts:
            regions, peers, operations, metrics = self._changes(cut.location, cut.a, cut.b)
            changes.append(regions)
            totals.add_pairs(np.full(len(peers), cut.location), peers[:, 0], peers[:, 1:])
            for operation, count, sent, received in operations:
                totals.add_collective(operation, count, sent, received)
            for metric, change in metrics:
                if metric not in doubles:
                    totals.add_metric(metric, change)
            closed.append(self._between(cut.location, "durations", cut))
            entered = self._between(cut.location, "open", cut)
            opened.append(entered[entered[:, 1] >= cut.low])  # entered inside the interior
            _, summary, _ = self.points(cut.location)
            for point, upto in ((cut.a, cut.high), (cut.b, hi)):  # calls entered before the window
                rows = self._rows(cut.location, summary[point], "open")
                rows = rows[rows[:, 1] < lo]
                early.append(rows[:, 0])
                parts.append(np.maximum(0, np.minimum(rows[:, 2], upto) - int(summary[point]["time"])))
        changes, closed, opened = np.concatenate(changes), np.concatenate(closed), np.concatenate(opened)
        totals.add_regions(changes[:, 0], changes[:, 1], changes[:, 2], changes[:, 3])
        totals.extremes(closed[:, 0], closed[:, 1], closed[:, 2])
        extent = np.minimum(opened[:, 2], hi) - opened[:, 1]
        totals.extremes(opened[:, 0], extent, extent)
        early = np.concatenate(early)
        zero = np.zeros(len(early), np.int64)
        totals.add_regions(early, zero, zero, zero, np.concatenate(parts))

    def _changes(self, location: int, a: int, b: int) -> tuple[np.ndarray, np.ndarray, list[list[int]],
                                                                 list[list[int]]]:
        """The cumulative members' differences between checkpoints a and b of a location:
        region rows, peer rows, operation rows and (metric, change) pairs (kept: a zoom
        reuses them)."""
        key = (location, a, b)
        found = self._differences.get(key)
        if found is None:
            _, summary, snapshots = self.points(location)
            first, last = summary[a], summary[b]
            regions = _difference(self._rows(location, first, "regions"), self._rows(location, last, "regions"))
            peers = _difference(self._rows(location, first, "peers"), self._rows(location, last, "peers"))
            operations = _difference(self._rows(location, first, "operations"),
                                     self._rows(location, last, "operations"))
            before = dict(self._rows(location, snapshots[a], "metrics").tolist())
            metrics = [[metric, wrap64(value - before.get(metric, 0))]
                       for metric, value in self._rows(location, snapshots[b], "metrics").tolist()]
            found = self._differences[key] = (regions, peers, operations.tolist(), metrics)
        return found

    def sampled_metrics(self) -> set[int]:
        """The metrics sampled anywhere in the trace: those of every location's final snapshot."""
        sampled: set[int] = set()
        for location in self.archive.roots:
            sampled.update(self.final_metrics(location)[:, 0].tolist())
        return sampled

    def final_metrics(self, location: int) -> np.ndarray:
        """Rows (metric, raw 64 bits of its last sample) of every metric the location
        samples, by metric: its final snapshot (spec 4.4)."""
        _, _, snapshots = self.points(location)
        return self._rows(location, snapshots[-1], "metrics")

    def metric_bits(self, location: int, point: int, metrics: list[int]) -> np.ndarray:
        """The raw 64 bits of the values of ``metrics`` at a checkpoint (0 for a metric not
        sampled before it), from the snapshot."""
        _, _, snapshots = self.points(location)
        values = dict(self._rows(location, snapshots[point], "metrics").tolist())
        return np.array([values.get(metric, 0) for metric in metrics], np.int64)

    def _between(self, location: int, member: str, cut: Cut) -> np.ndarray:
        """The rows of ``member`` (3 columns) of the checkpoints after a up to b, from one
        array per location and member made on first use."""
        key = (location, member)
        found = self._stacked.get(key)
        if found is None:
            _, summary, _ = self.points(location)
            parts = [self._rows(location, point, member) for point in summary]
            found = self._stacked[key] = (np.concatenate(parts),
                                          np.concatenate(([0], np.cumsum([len(part) for part in parts]))))
        rows, offsets = found
        return rows[offsets[cut.a + 1]:offsets[cut.b + 1]]

    def _rows(self, location: int, point: dict[str, Any], member: str) -> np.ndarray:
        """A checkpoint's row list ``member`` as an array, parsed and checked once."""
        key = (id(point), member)
        found = self._arrays.get(key)
        if found is None:
            found = self._arrays[key] = self._parse(location, point, member)
        return found

    def _parse(self, location: int, point: dict[str, Any], member: str) -> np.ndarray:
        width = ROW_WIDTHS[member]
        rows = point.get(member)
        try:
            array = np.asarray(rows, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            array = None
        if array is None or (array.size and (array.ndim != 2 or array.shape[1] != width)):
            self._corrupt(location, f"checkpoint {point.get('index')}: '{member}' is not a list of "
                                    f"{width}-integer rows")
        array = array.reshape(-1, width)
        if member in _BY_REGION and len(array) and not (0 <= array[:, 0].min() <= array[:, 0].max() < self.regions):
            self._corrupt(location, f"checkpoint {point.get('index')}: '{member}' names a region that is not "
                                    f"defined")
        return array

    def _integer(self, location: int, point: Any, member: str) -> int:
        value = point.get(member) if isinstance(point, dict) else None
        if not isinstance(value, int) or isinstance(value, bool):
            self._corrupt(location, f"a checkpoint lacks an integer '{member}'")
        return value

    def _corrupt(self, location: int, reason: str) -> None:
        raise CorruptArchiveError(f"location {location}: {reason}", path=str(self.archive.path))


#: the members whose rows start with a region id
_BY_REGION = ("regions", "durations", "open")


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
