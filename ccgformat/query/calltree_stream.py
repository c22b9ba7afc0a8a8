"""The call-path profile of a large graph (`streaming.streams`) from its events, in memory
set by its answer: each location's window is entered with the call stack at its start (a
time search, 4.5.2) and its ENTER and LEAVE events are replayed batch by batch as a
walker expands them (4.5.1), with the calls still open carried from one batch to the
next. The rules are those of `ccgformat.query.calltree_query`; the paths are interned and summed
as there (`calltree_paths`), so the result is the same.

Within a batch, numpy replays the stack: the depth after each event is a running sum of
+1 (ENTER) and -1 (LEAVE), which gives the level of the frame an event opens or closes.
Sorted by level (stably), the events of one level alternate ENTER, LEAVE, ENTER, ...; with
the carried frames put first as ENTERs, every LEAVE closes the ENTER just before it in
that order, and the frame enclosing an ENTER is the last ENTER of the level above before
it. The paths are interned a level at a time, outermost first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph.graph import ChosenRoots
from ..model import EventBatch, EventKind
from .calltree_paths import CallPaths, PathSums, take_from_enclosing
from .profile_window import NO_START, NO_STOP
from .streaming import window_events

__all__ = ["replayed_calls"]

_ENTER, _LEAVE = int(EventKind.ENTER), int(EventKind.LEAVE)


def replayed_calls(source: Any, chosen: ChosenRoots, paths: CallPaths, sums: PathSums, lo: int, hi: int) -> None:
    """Add to ``paths`` and ``sums`` the calls of the window ``[lo, hi)`` (`NO_START`,
    `NO_STOP`: open) of every chosen location (location ``chosen.locations[i]``'s empty
    path being path ``i``), replayed from its events."""
    for row, (location, events) in enumerate(zip(chosen.locations, chosen.events.tolist())):
        if not events:
            continue
        walker = source.location(location)
        stack, batches = window_events(walker, None if lo == NO_START else lo, None if hi == NO_STOP else hi)
        replay = _Replay(paths, sums, row, stack, lo)
        for batch in batches:
            replay.add(batch)
            sums.fold(paths.count)
        replay.close(hi)


class _Replay:
    """One location's calls replayed in time order: the open ones (outermost first) as
    their paths and where their part inside the window begins - their ENTER, or the
    window's start for a call entered before it."""

    def __init__(self, paths: CallPaths, sums: PathSums, root: int, regions: list[int], lo: int):
        self.paths, self.sums, self.root = paths, sums, root
        self.path = np.zeros(len(regions), np.int64)
        parent = root
        for level, region in enumerate(regions):
            parent = paths.extend(np.array([parent], np.int64), np.array([region], np.int64))[0]
            self.path[level] = parent
        self.begin = np.full(len(regions), lo, np.int64)

    def add(self, batch: EventBatch) -> None:
        """The location's next events: a call counts at its ENTER and adds its time at its
        LEAVE."""
        kind = np.asarray(batch.kind)
        kept = np.flatnonzero((kind == _ENTER) | (kind == _LEAVE))
        if not len(kept):
            return
        carried = len(self.path)
        enter = np.concatenate((np.ones(carried, bool), kind[kept] == _ENTER))
        time = np.concatenate((self.begin, np.asarray(batch.time, np.int64)[kept]))
        region = np.concatenate((np.zeros(carried, np.int64), np.asarray(batch.ref, np.int64)[kept]))
        depth = np.cumsum(enter.astype(np.int64) * 2 - 1)
        top = int(depth.max())
        levels = (depth + ~enter).astype(np.min_scalar_type(top))  # of the frame an event opens or closes
        order = np.argsort(levels, kind="stable")  # a radix sort for 8- and 16-bit levels
        edges = np.searchsorted(levels[order], np.arange(1, top + 2))  # level l: order[edges[l-1]:edges[l]]
        path = np.concatenate((self.path, np.zeros(len(kept), np.int64)))
        above = np.zeros(0, np.int64)  # the ENTERs of the level above, in event order
        for level in range(1, len(edges)):
            at = order[edges[level - 1]:edges[level]]
            entered = at[enter[at]]
            new = entered[entered >= carried]
            if len(new):
                parent = path[above[np.searchsorted(above, new) - 1]] if level > 1 else np.full(len(new), self.root)
                path[new] = self.paths.extend(parent, region[new])
            above = entered
        self.sums.add(path[carried:][enter[carried:]], 1, 0, 0)
        left = np.flatnonzero(~enter[order])
        opened, closed = order[left - 1], order[left]
        self._closed(path[opened], time[closed] - time[opened])
        end = int(depth[-1])
        still = order[edges[1:end + 1] - 1]  # per level open at the end, its last ENTER
        self.path, self.begin = path[still], time[still]

    def close(self, hi: int) -> None:
        """End the window at ``hi``: the calls still open end there."""
        self._closed(self.path, hi - self.begin)
        self.path, self.begin = self.path[:0], self.begin[:0]

    def _closed(self, path: np.ndarray, part: np.ndarray) -> None:
        """Calls on ``path`` ended, ``part`` of each inside the window: their inclusive and
        exclusive time, taken from the exclusive time of the calls enclosing them."""
        self.sums.add(path, 0, part, part)
        take_from_enclosing(self.paths, self.sums, self.paths.columns()[0][path], part)
