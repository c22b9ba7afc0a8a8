"""The result of a profile query: its rows and their assembly from the `Totals` of a
window (the rules of what counts are in `ccgformat.query.profile_query`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..archive.queries import run_query
from ..graph.pool import wrap64
from .groups import group_name
from .profile_totals import Totals

if TYPE_CHECKING:
    import pandas as pd


@dataclass(slots=True)
class RegionProfile:
    region: int
    name: str
    group: str
    calls: int
    inclusive: int
    exclusive: int
    min: int | None
    max: int | None
    mean: float | None


@dataclass(slots=True)
class GroupProfile:
    group: str
    calls: int
    inclusive: int  #: the sum of its regions' inclusive times (nested calls count again)
    exclusive: int


@dataclass(slots=True)
class PairProfile:
    sender: int
    receiver: int
    sent: int
    sent_bytes: int
    received: int
    received_bytes: int


@dataclass(slots=True)
class CollectiveProfile:
    operation: int
    count: int
    bytes_sent: int
    bytes_received: int


@dataclass
class Profile:
    """The summary of a window over a set of locations (see the module docstring)."""

    start: int | None
    stop: int | None
    locations: list[int]
    regions: list[RegionProfile]
    groups: list[GroupProfile]
    messages: list[PairProfile]
    collectives: list[CollectiveProfile]
    metrics: dict[str, int | float] = field(default_factory=dict)

    def region(self, name: str) -> RegionProfile:
        """The row of the region called ``name``."""
        for row in self.regions:
            if row.name == name:
                return row
        raise KeyError(name)

    def to_pandas(self, table: str = "regions") -> pd.DataFrame:
        """One table as a pandas DataFrame: ``regions``, ``groups``, ``messages`` (per
        location pair), ``collectives`` or ``metrics``, with the columns of `to_json`
        (`ccgformat.interop.results`; extra ``pandas``)."""
        return run_query("profile_to_pandas", self, table)

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    def to_json(self) -> dict[str, Any]:
        """Plain lists and numbers (``ccg profile --json``); a region row names the region
        in ``region`` and gives its definition index in ``id``."""
        def rows(items: Iterable[Any]) -> list[dict[str, Any]]:
            return [asdict(item) for item in items]
        regions = [{"region": r.name, "id": r.region, "group": r.group, "calls": r.calls, "inclusive": r.inclusive,
                    "exclusive": r.exclusive, "min": r.min, "max": r.max, "mean": r.mean} for r in self.regions]
        return {"start": self.start, "stop": self.stop, "locations": self.locations, "regions": regions, "groups": rows(self.groups), "messages": rows(self.messages),
                "collectives": rows(self.collectives), "metrics": dict(self.metrics)}


def build_profile(definitions: Any, start: int | None, stop: int | None, chosen: list[int], totals: Totals,
                  metrics: dict[int, int | float]) -> Profile:
    """The `Profile` of the window ``[start, stop)`` over the locations ``chosen``: the
    regions with any call or time, their groups, the location pairs and operations with
    any message, and the ``metrics`` changes by name."""
    shown = np.flatnonzero(totals.calls | totals.inclusive | totals.exclusive)
    counted_times = totals.inclusive[shown] - totals.before[shown]  # array sums wrap, like the format's
    columns = (shown.tolist(), *(column[shown].tolist() for column in (
        totals.calls, totals.inclusive, totals.exclusive, totals.low, totals.high)), counted_times.tolist())
    regions, groups = [], {}
    defined = definitions.regions
    for region, count, inclusive, exclusive, low, high, counted_time in zip(*columns):
        name = defined[region].name if region < len(defined) else f"region {region}"
        group = group_name(definitions, region)
        row = (RegionProfile(region, name, group, count, inclusive, exclusive, low, high, counted_time / count)
               if count > 0 else RegionProfile(region, name, group, count, inclusive, exclusive, None, None, None))
        regions.append(row)
        entry = groups.get(group)
        if entry is None:
            groups[group] = [count, inclusive, exclusive]
        else:
            entry[0] += count
            entry[1] += inclusive
            entry[2] += exclusive
    collectives = [CollectiveProfile(op, *(wrap64(v) for v in values))
                   for op, values in sorted(totals.collectives.items()) if values[0]]
    names = {i: m.name for i, m in enumerate(definitions.metrics)}
    return Profile(start, stop, chosen, regions, [GroupProfile(g, *v) for g, v in groups.items()],
                   _pair_rows(totals.pairs), collectives,
                   {names.get(m, f"metric {m}"): v for m, v in sorted(metrics.items())})


def _pair_rows(parts: list[np.ndarray]) -> list[PairProfile]:
    """Rows (sender, receiver, 4 sums) summed per (sender, receiver), wrapping."""
    rows = np.concatenate(parts)
    rows = rows[rows[:, 2:].any(axis=1)]
    if not len(rows):
        return []
    rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
    first = np.flatnonzero(np.concatenate(([True], np.any(rows[1:, :2] != rows[:-1, :2], axis=1))))
    sums = np.add.reduceat(rows[:, 2:], first)
    return [PairProfile(*key, *values) for key, values in zip(rows[first, :2].tolist(), sums.tolist())]
