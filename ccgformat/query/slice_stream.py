"""Region times per time slice from a stream of events, in memory bounded by the slices.

The microscopic model's cells (spec 4.10; paper 000) are, per location, slice and region,
the time during which the region is the innermost open one: the exclusive time of
formula 4.28. The timeline walk computes them on the graph with every node's memoized
sub-tree times (4.5.3), which needs columns over every node of the pool. Here they come
from the events themselves, one batch after another as a walker expands them (4.5.1), so
that what stays in memory is the cells and each location's call stack, whatever the
trace's length: between two consecutive events the innermost open region holds the time,
and an interval crossing slice bounds is split at them.

`SliceTimes` keeps the running state of the locations of one pass; `walked_times` makes
the cells of chosen locations from all their events, `windowed_times` from the events of
time windows only: a window is entered with the call stack at its start (a time search,
4.5.2) and left at its end, so that a few narrow windows of a long trace read a few
blocks.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .. import backends
from ..archive.samples import MetricSamples
from ..model import EventBatch, EventKind
from ..ordering import stable_order
from . import streaming
from .timeline_walk import _cell_sums

__all__ = ["SliceTimes", "walked_times", "windowed_times"]

_ENTER, _LEAVE = int(EventKind.ENTER), int(EventKind.LEAVE)
#: beyond this many windows (each a few time searches and small batches), a location is
#: walked from the first window's start to the last one's stop in full batches instead,
#: and the cells between the windows are cleared
WINDOWS_APART = 128


class SliceTimes:
    """The cells ``[locations, slices, states]`` (int64 ticks) of locations whose events
    arrive in batches, in time order per location, with any increasing ``bounds`` (the
    ``slices + 1`` slice bounds). ``states`` grows when a region beyond it holds time.
    ``native``: the events are added in C (`ccgformat._native.slice_cells`) or by the
    numpy code here, the reference (default: the active backend's)."""

    def __init__(self, locations: int, bounds: np.ndarray, states: int, native: bool | None = None):
        self.native = backends.native() if native is None else native
        self.bounds = np.asarray(bounds, np.int64)
        self.cells = np.zeros((locations, len(self.bounds) - 1, max(states, 0)), np.int64)
        self._stacks: list[np.ndarray] = [np.zeros(0, np.int64)] * locations
        self._last: list[tuple[int, int] | None] = [None] * locations  # (time, innermost region) of the last event

    @property
    def states(self) -> int:
        return self.cells.shape[2]

    def add(self, row: int, batch: EventBatch) -> None:
        """The next events of the location of ``row``."""
        n = len(batch)
        if not n:
            return
        if self.native:
            from .._native import slice_cells
            self._stacks[row], self._last[row] = slice_cells.add(
                lambda: self.cells[row], self._grow, self.bounds, batch.time, batch.kind, batch.ref,
                self._stacks[row], self._last[row])
            return
        kind = np.asarray(batch.kind)
        time = np.asarray(batch.time, np.int64)
        stack = self._stacks[row]
        step = np.where(kind == _ENTER, 1, np.where(kind == _LEAVE, -1, 0)).astype(np.int64)
        depth = len(stack) + np.cumsum(step)  # open regions after each event
        if int(depth.min()) < 0:
            raise ValueError("a LEAVE without an open region")
        innermost = self._innermost(stack, depth, kind == _ENTER, np.asarray(batch.ref, np.int64))
        self._stacks[row] = self._stack_after(stack, depth, kind == _ENTER, np.asarray(batch.ref, np.int64))
        last = self._last[row]
        if last is not None:
            time = np.concatenate(([last[0]], time))
            innermost = np.concatenate(([last[1]], innermost))
        self._last[row] = (int(time[-1]), int(innermost[-1]))
        self._intervals(row, time[:-1], time[1:], innermost[:-1])

    def enter(self, row: int, time: int, stack: list[int]) -> None:
        """Start the location of ``row`` at ``time`` with the regions ``stack`` open
        (outermost first): the state after its events before ``time`` (those at ``time``
        hold no time)."""
        self._stacks[row] = np.asarray(stack, np.int64)
        self._last[row] = (int(time), int(stack[-1]) if stack else -1)

    def leave(self, row: int, time: int) -> None:
        """End the location of ``row`` at ``time``: its innermost region holds the time
        since its last event."""
        last = self._last[row]
        if last is not None and time > last[0]:
            self._intervals(row, np.array([last[0]], np.int64), np.array([time], np.int64),
                            np.array([last[1]], np.int64))
        self._last[row] = None
        self._stacks[row] = np.zeros(0, np.int64)

    @staticmethod
    def _innermost(stack: np.ndarray, depth: np.ndarray, enter: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Per event, the innermost open region after it (-1: none): the region of the
        latest ENTER that reached the same depth, else of the frame open before the batch."""
        n = len(depth)
        order = stable_order(depth)  # by depth, then in event order
        by_depth = depth[order]
        group_start = np.flatnonzero(np.r_[True, by_depth[1:] != by_depth[:-1]])
        first_of = np.repeat(group_start, np.diff(np.r_[group_start, n]))
        positions = np.arange(n)
        latest = np.maximum.accumulate(np.where(enter[order], positions, -1))
        mine = latest >= first_of  # an ENTER of this depth came before, within the batch
        carried = np.full(n, -1, np.int64)
        open_before = (by_depth >= 1) & (by_depth <= len(stack))
        carried[open_before] = stack[by_depth[open_before] - 1]
        region = np.where(mine, ref[order][np.maximum(latest, 0)], carried)
        region[by_depth == 0] = -1
        out = np.empty(n, np.int64)
        out[order] = region
        return out

    @staticmethod
    def _stack_after(stack: np.ndarray, depth: np.ndarray, enter: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """The open regions after the batch, outermost first: at each depth the latest
        ENTER that reached it (the depth never fell below it since), else the frame
        open before."""
        end = int(depth[-1])
        out = np.empty(end, np.int64)
        kept = min(end, len(stack))
        out[:kept] = stack[:kept]
        entered = np.flatnonzero(enter & (depth <= end))
        if len(entered):
            levels = depth[entered]
            latest = np.zeros(end + 1, np.int64) - 1
            np.maximum.at(latest, levels, entered)
            at = np.flatnonzero(latest[1:] >= 0) + 1
            out[at - 1] = ref[latest[at]]
        return out

    def _grow(self, states: int) -> None:
        """Widen the cells to ``states`` regions."""
        grown = np.zeros(self.cells.shape[:2] + (states,), np.int64)
        grown[:, :, :self.states] = self.cells
        self.cells = grown

    def _intervals(self, row: int, starts: np.ndarray, stops: np.ndarray, region: np.ndarray) -> None:
        """Add ``stops - starts`` to the cells of ``region`` (>= 0), split at the bounds."""
        held = (region >= 0) & (stops > starts)
        starts, stops, region = starts[held], stops[held], region[held]
        if not len(starts):
            return
        b = self.bounds
        inside = (stops > b[0]) & (starts < b[-1])
        starts, stops, region = np.maximum(starts[inside], b[0]), np.minimum(stops[inside], b[-1]), region[inside]
        if not len(starts):
            return
        if int(region.max()) >= self.states:
            self._grow(int(region.max()) + 1)
        width, states = len(b) - 1, self.states
        slot = np.searchsorted(b, starts, "right") - 1  # the slice each interval starts in
        flat = slot * states + region
        self.cells[row].reshape(-1)[:] += _cell_sums(flat, stops - starts, width * states)
        # an interval crossing inner bound j moves its part after b[j] from slice j - 1 to j
        inner = np.arange(1, width)
        k = np.searchsorted(starts, b[inner], "left") - 1
        crossing = (k >= 0)
        crossing[crossing] &= stops[k[crossing]] > b[inner][crossing]
        if crossing.any():
            j, k = inner[crossing], k[crossing]
            moved = stops[k] - b[j]
            cells = self.cells[row]
            np.subtract.at(cells, (j - 1, region[k]), moved)
            np.add.at(cells, (j, region[k]), moved)


def walked_times(source: Any, locations: Iterable[int], bounds: np.ndarray, states: int,
                 samples: MetricSamples | None = None) -> np.ndarray:
    """``[len(locations), len(bounds) - 1, >= states]``: the region times of each location
    of a `Graph` or `Archive` per slice, from its events walked in batches (zero for a
    location without a root); more than ``states`` columns when a region beyond them
    holds time. ``samples``: gets the locations' metric samples from the same walk (the
    metric tables', spec 4.11)."""
    chosen = list(locations)
    cells = SliceTimes(len(chosen), bounds, states)
    roots = source.roots
    for row, location in enumerate(chosen):
        if location in roots and roots[location].events:
            for batch in source.location(location).events(batch_size=streaming.WALK_BATCH):
                cells.add(row, batch)
                if samples is not None:
                    samples.add((location,), batch, (0, len(batch)))
    return cells.cells


def windowed_times(source: Any, locations: Iterable[int], bounds: np.ndarray, states: int,
                   windows: Iterable[tuple[int, int]] | None = None) -> np.ndarray:
    """`walked_times` of the events inside ``windows`` only (disjoint ``(start, stop)``
    pairs in time order whose ends are among ``bounds``; default the whole span of the
    bounds): the cells outside every window are zero. Each location enters a window at
    its start with the regions open just before it, walks its events from the start to
    before the stop (`streaming.window_events`), and leaves it at the stop; windows that
    touch are walked as one, and more than `WINDOWS_APART` of them as one from the first
    start to the last stop."""
    chosen = list(locations)
    bounds = np.asarray(bounds, np.int64)
    spans: list[tuple[int, int]] = []
    for a, b in [(int(bounds[0]), int(bounds[-1]))] if windows is None else windows:
        if spans and spans[-1][1] == a:
            spans[-1] = (spans[-1][0], int(b))
        else:
            spans.append((int(a), int(b)))
    outside = None
    if len(spans) > WINDOWS_APART:
        inside = np.zeros(len(bounds), np.int64)
        np.add.at(inside, np.searchsorted(bounds, [a for a, _ in spans]), 1)
        np.add.at(inside, np.searchsorted(bounds, [b for _, b in spans]), -1)
        outside = np.cumsum(inside)[:-1] == 0  # per column
        spans = [(spans[0][0], spans[-1][1])]
    cells = SliceTimes(len(chosen), bounds, states)
    roots = source.roots
    for row, location in enumerate(chosen):
        root = roots.get(location)
        if root is None or not root.events:
            continue
        walker = source.location(location)
        for start, stop in spans:
            if stop <= root.start or start > root.end:
                continue
            stack, batches = streaming.window_events(walker, start, stop)
            cells.enter(row, start, stack)
            for batch in batches:
                cells.add(row, batch)
            cells.leave(row, stop)
    if outside is not None:
        cells.cells[:, outside] = 0
    return cells.cells
