"""Region times per time slice in C (slice_cells.c): `add` is `SliceTimes.add` of
`ccgformat.query.slice_stream` (the reference) for one batch of one location."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..model import EventKind
from . import load

ffi, lib = load()

#: why ccg_slice_add stopped (slice_cells.h)
_DONE, _GROW_STATES, _UNDERFLOW = 0, 1, 2


def add(cells: Callable[[], np.ndarray], grow: Callable[[int], None], bounds: np.ndarray, time: np.ndarray,
        kind: np.ndarray, ref: np.ndarray, stack: np.ndarray,
        last: tuple[int, int] | None) -> tuple[np.ndarray, tuple[int, int] | None]:
    """Add the events (time, kind, ref) of one location to its cells ``cells()`` (``[slices,
    states]``, C-contiguous int64; ``grow(states)`` widens them when a region beyond
    them holds time), from the state ``stack`` and ``last`` before them; returns the
    state after them. Raises ValueError for a LEAVE without an open region."""
    time = np.ascontiguousarray(time, np.int64)
    kind = np.ascontiguousarray(kind, np.uint8)
    ref = np.ascontiguousarray(ref, np.int64)
    room = np.empty(len(stack) + int(np.count_nonzero(kind == EventKind.ENTER)), np.int64)
    room[:len(stack)] = stack
    state = ffi.new("ccg_slice_state *", {
        "stack": ffi.cast("int64_t *", ffi.from_buffer(room)), "depth": len(stack), "capacity": len(room),
        "has_last": last is not None, "last_time": last[0] if last else 0, "last_region": last[1] if last else -1})
    why, need = ffi.new("int *"), ffi.new("int64_t *")
    bounds = np.ascontiguousarray(bounds, np.int64)
    slices = len(bounds) - 1
    arguments = (ffi.cast("const int64_t *", ffi.from_buffer(bounds)), ffi.cast("const int64_t *", ffi.from_buffer(time)),
                 ffi.cast("const uint8_t *", ffi.from_buffer(kind)), ffi.cast("const int64_t *", ffi.from_buffer(ref)))
    position = 0
    while True:
        target = cells()
        position = lib.ccg_slice_add(ffi.cast("int64_t *", ffi.from_buffer(target)), slices, target.shape[1],
                                     *arguments, position, len(time), state, why, need)
        if why[0] == _DONE:
            break
        if why[0] == _GROW_STATES:
            grow(int(need[0]))
        elif why[0] == _UNDERFLOW:
            raise ValueError("a LEAVE without an open region")
        else:  # the stack has room for every ENTER
            raise AssertionError(f"ccg_slice_add stopped: {why[0]}")
    after = room[:state.depth].copy()
    return after, ((int(state.last_time), int(state.last_region)) if state.has_last else None)
