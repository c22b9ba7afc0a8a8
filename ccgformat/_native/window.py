"""A profile window in C (window.c): `window_descend` has the interface and results of
`ccgformat.query.profile_window.descend` (its rows in depth-first order), `window_sums` those
of `ccgformat.query.profile_window.window_sums`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from . import failure, load

ffi, lib = load()


class _Walker:
    """One C `ccg_window` (its buffers are reused from call to call)."""

    def __init__(self) -> None:
        w = lib.ccg_window_new()
        if w == ffi.NULL:
            raise MemoryError("out of memory for a window descent")
        self.w = ffi.gc(w, lib.ccg_window_free)
        self.cuts, self.seeds = ffi.new("const int64_t **"), ffi.new("const int64_t **")
        self.cut_count, self.seed_count = ffi.new("int64_t *"), ffi.new("int64_t *")


_WALKER: _Walker | None = None


def _walker() -> _Walker:
    global _WALKER
    if _WALKER is None:
        _WALKER = _Walker()
    return _WALKER


def _pointer(array: np.ndarray) -> Any:
    return ffi.cast("const int64_t *", ffi.from_buffer(array))


def _tables(t: Any) -> Any:
    """The `ccg_query_tables` of NodeTables ``t``, made once and kept with it."""
    struct = t.__dict__.get("_native_query_tables")
    if struct is None:
        if t.child_start[-1] != len(t.children) or t.duration_start[-1] != len(t.durations):
            raise CorruptArchiveError("the node tables' offsets overrun their children or durations")
        arrays = [np.ascontiguousarray(a, dtype=np.int64) for a in
                  (t.kind, t.key0, t.total, t.child_start, t.children, t.duration_start, t.duration_prefix)]
        struct = ffi.new("ccg_query_tables *")
        struct.count = len(t)
        (struct.kind, struct.key0, struct.total, struct.child_start, struct.children, struct.duration_start,
         struct.duration_prefix) = (_pointer(a) for a in arrays)
        t.__dict__["_native_query_tables"] = struct
        t.__dict__["_native_query_arrays"] = arrays  # the memory the struct points to
    return struct


def window_descend(t: Any, root: np.ndarray, begin: np.ndarray, start: np.ndarray,
                   stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut calls (tag, region, enclosing region, enter, leave) and seeds (node, tag,
    depth, enclosing region) of the windows ``[start[i], stop[i])`` of the NodeTables ``t``."""
    walker = _walker()
    bounds = [np.ascontiguousarray(a, dtype=np.int64) for a in (root, begin, start, stop)]
    code = lib.ccg_window_walk(walker.w, _tables(t), len(root), *(_pointer(a) for a in bounds),
                               walker.cuts, walker.cut_count, walker.seeds, walker.seed_count)
    if code:
        raise failure(code, ffi.string(lib.ccg_window_error(walker.w)).decode("utf-8", "replace"))

    def rows(pointer: Any, count: int, width: int) -> np.ndarray:
        if not count:
            return np.zeros((0, width), np.int64)
        return np.frombuffer(ffi.buffer(pointer[0], 8 * width * count), dtype=np.int64).reshape(count, width).copy()
    return rows(walker.cuts, walker.cut_count[0], 5), rows(walker.seeds, walker.seed_count[0], 4)


def window_sums(memo: tuple[np.ndarray, ...], layout: tuple[int, ...], cuts: np.ndarray, seeds: np.ndarray,
                start: np.ndarray, stop: np.ndarray, keep_before: np.ndarray,
                reach: int) -> tuple[np.ndarray, ...]:
    """The sums of a walk's rows, as `ccgformat.query.profile_window.window_sums`: ``memo`` is
    (slot, calltime, sums, low, high) of the memoized sub-trees (every seed has a row),
    ``layout`` (size, regions, calls, inclusive, exclusive) the columns of a row. Returns
    (sums, low, high, early)."""
    walker = _walker()
    slot, calltime, sums, low_rows, high_rows = memo
    size, regions = layout[0], layout[1]
    m = ffi.new("ccg_window_memo *")
    m.nodes, m.rows = min(len(slot), len(calltime)), len(sums)
    held = [np.ascontiguousarray(a, dtype=np.int64) for a in (slot, calltime, sums, low_rows, high_rows)]
    if held[2].shape[1:] != (size,) or held[3].shape[1:] != (regions,) or held[4].shape[1:] != (regions,):
        raise ValueError("memo rows do not have the layout's widths")
    m.slot, m.calltime, m.vec, m.lo, m.hi = (_pointer(a) for a in held)
    l = ffi.new("ccg_window_layout *", layout)
    rows = [np.ascontiguousarray(a, dtype=np.int64) for a in (cuts, seeds, start, stop)]
    keep = np.ascontiguousarray(keep_before, dtype=np.uint8)
    tags = len(rows[2])
    if len(rows[3]) != tags or len(keep) != tags or rows[0].shape[1:] != (5,) or rows[1].shape[1:] != (4,):
        raise ValueError("a walk's rows and bounds do not fit together")
    out = (np.zeros(size, np.int64), np.full(regions, np.iinfo(np.int64).max, np.int64),
           np.full(regions, -1, np.int64), np.zeros(regions, np.int64))
    code = lib.ccg_window_sums(walker.w, m, l, _pointer(rows[0]), len(rows[0]), _pointer(rows[1]), len(rows[1]),
                               tags, _pointer(rows[2]), _pointer(rows[3]),
                               ffi.cast("const uint8_t *", ffi.from_buffer(keep)), reach,
                               *(ffi.cast("int64_t *", ffi.from_buffer(a)) for a in out))
    if code:
        raise failure(code, ffi.string(lib.ccg_window_error(walker.w)).decode("utf-8", "replace"))
    return out
