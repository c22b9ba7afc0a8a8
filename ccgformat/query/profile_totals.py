"""A profile being summed up: the totals that the graph's window pieces
(`ccgformat.query.profile_engine`) and the summary index's interiors
(`ccgformat.query.interior`) add into, before `ccgformat.query.profile_result` turns
them into rows."""

from __future__ import annotations

import numpy as np

#: The shortest call of a region with no call (any call is shorter).
NO_SHORTEST = np.iinfo(np.int64).max


class Totals:
    """A profile being summed up from pieces: per region (columns of ``regions`` slots)
    calls, inclusive, exclusive, extremes and the time of calls entered before the
    window; per (sender, receiver) messages; per operation collectives; per integer
    metric its summed change. Sums wrap like the format's."""

    def __init__(self, regions: int) -> None:
        self.calls, self.inclusive, self.exclusive, self.before = (np.zeros(regions, np.int64) for _ in range(4))
        self.low, self.high = np.full(regions, NO_SHORTEST, np.int64), np.full(regions, -1, np.int64)
        self.pairs: list[np.ndarray] = [np.zeros((0, 6), np.int64)]  # sender, receiver, 4 sums
        self.collectives: dict[int, list[int]] = {}
        self.metrics: dict[int, int] = {}

    def add_regions(self, region: np.ndarray | slice, calls: np.ndarray, inclusive: np.ndarray,
                    exclusive: np.ndarray, before: np.ndarray | int = 0) -> None:
        """Sums of the regions ``region`` (an array, repeats allowed, or a slice of them)."""
        columns = ((self.calls, calls), (self.inclusive, inclusive), (self.exclusive, exclusive),
                   (self.before, before))
        for column, values in columns:  # array sums wrap without a warning
            if isinstance(region, slice):
                column[region] += values
            else:
                np.add.at(column, region, values)

    def extremes(self, region: np.ndarray | slice, low: np.ndarray, high: np.ndarray) -> None:
        if isinstance(region, slice):
            np.minimum(self.low[region], low, out=self.low[region])
            np.maximum(self.high[region], high, out=self.high[region])
        else:
            np.minimum.at(self.low, region, low)
            np.maximum.at(self.high, region, high)

    def add_pairs(self, location: np.ndarray, peer: np.ndarray, sums: np.ndarray) -> None:
        """Messages of ``location[i]`` with ``peer[i]`` (any negative peer counts as -1),
        ``sums[i]`` = (sent, sent bytes, received, received bytes): sent ones for the pair
        (location, peer), received ones for (peer, location)."""
        n = len(peer)
        if not n:
            return
        peer = np.maximum(peer, -1)
        rows = np.zeros((2 * n, 6), np.int64)
        rows[:n, 0], rows[:n, 1], rows[:n, 2:4] = location, peer, sums[:, :2]
        rows[n:, 0], rows[n:, 1], rows[n:, 4:6] = peer, location, sums[:, 2:]
        self.pairs.append(rows)

    def add_collective(self, operation: int, count: int, sent: int, received: int) -> None:
        row = self.collectives.setdefault(operation, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + count, row[1] + sent, row[2] + received

    def add_metric(self, metric: int, change: int) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + change
