"""The call paths a call-path profile interns and the sums it adds per path: shared by the
walk of the graph (`calltree`) and the replay of a large graph's events
(`calltree_stream`)."""

from __future__ import annotations

import numpy as np

__all__ = ["CallPaths", "PathSums", "take_from_enclosing"]


class CallPaths:
    """Call paths of the query's locations, interned top-down: path ``i`` of location
    ``location[i]`` (an index into the query's locations) is ``parent[i]`` followed by
    region ``region[i]``, at ``depth[i]``; the first ``roots`` ids are the locations' empty
    paths. Columns grow by doubling; the keys ``parent * regions + region`` of the paths
    made are kept sorted, with their ids, for the lookups (``regions`` grows when a
    larger region id comes)."""

    def __init__(self, roots: int, regions: int):
        self.roots, self.regions, self.count = roots, max(regions, 1), roots
        self._columns = np.zeros((4, max(16, 2 * roots)), np.int64)  # parent, region, depth, location
        self._columns[:2, :roots] = -1
        self._columns[3, :roots] = np.arange(roots)
        self._keys = np.zeros(0, np.int64)
        self._ids = np.zeros(0, np.int64)

    def extend(self, parents: np.ndarray, regions: np.ndarray) -> np.ndarray:
        """The ids of the paths ``parents[i]`` followed by ``regions[i]``, made on first use."""
        if len(regions) and int(regions.max()) >= self.regions:
            self._rekey(2 * int(regions.max()) + 1)
        unique, inverse = np.unique(parents * self.regions + regions, return_inverse=True)
        at = np.searchsorted(self._keys, unique)
        known = np.zeros(len(unique), bool)
        inside = at < len(self._keys)
        known[inside] = self._keys[at[inside]] == unique[inside]
        ids = np.zeros(len(unique), np.int64)
        ids[known] = self._ids[at[known]]
        new = unique[~known]
        made = self.count + np.arange(len(new), dtype=np.int64)
        ids[~known] = made
        self._keys = np.insert(self._keys, at[~known], new)  # ``new`` is sorted: the keys stay sorted
        self._ids = np.insert(self._ids, at[~known], made)
        self._append(new // self.regions, new % self.regions)
        return ids[inverse.ravel()]

    def _rekey(self, regions: int) -> None:
        """The keys for region ids below ``regions``."""
        self.regions = regions
        keys = self._columns[0, self._ids] * regions + self._columns[1, self._ids]
        order = np.argsort(keys)
        self._keys, self._ids = keys[order], self._ids[order]

    def _append(self, parent: np.ndarray, region: np.ndarray) -> None:
        end = self.count + len(parent)
        if end > self._columns.shape[1]:
            grown = np.zeros((4, 2 * end), np.int64)
            grown[:, :self.count] = self._columns[:, :self.count]
            self._columns = grown
        depth, location = self._columns[2:, parent]
        self._columns[:, self.count:end] = (parent, region, depth + 1, location)
        self.count = end

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``parent``, ``region``, ``depth`` and ``location`` per path id (ids increase
        from a path to the paths that continue it)."""
        parent, region, depth, location = self._columns[:, :self.count]
        return parent, region, depth, location


class PathSums:
    """Calls, inclusive and exclusive ticks added per path id, summed at the end, or
    whenever `fold` is called (int64, wrapping like every sum of the format)."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, path: np.ndarray, calls: np.ndarray | int, inclusive: np.ndarray | int,
            exclusive: np.ndarray) -> None:
        self._parts.append(tuple(np.broadcast_to(np.asarray(v, np.int64), path.shape)
                                 for v in (path, calls, inclusive, exclusive)))

    def fold(self, paths: int) -> None:
        """Sum what was added into one part per path id: what the sums hold stays
        ``4 * paths`` numbers."""
        self._parts = [(np.arange(paths, dtype=np.int64), *self.totals(paths))]

    def totals(self, paths: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.zeros((3, paths), np.int64)
        if self._parts:
            path, *values = (np.concatenate(column) for column in zip(*self._parts))
            for row, value in zip(out, values):
                np.add.at(row, path, value)
        return out[0], out[1], out[2]


def take_from_enclosing(paths: CallPaths, sums: PathSums, path: np.ndarray, ticks: np.ndarray) -> None:
    """Subtract ``ticks`` from the exclusive time of the calls at ``path`` (not from a
    location's empty path, which is no call)."""
    enclosed = path >= paths.roots
    sums.add(path[enclosed], 0, 0, -ticks[enclosed])
