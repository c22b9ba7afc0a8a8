"""The timeline by location in C (timeline.c): `paint` gives the image that
`ccgformat.query.timeline_walk._walk` paints with rows by location, `group_exclusive`
its memoized sub-tree times per group."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import failure, load
from .window import _pointer, _tables

ffi, lib = load()
_ERROR_SIZE = 256  # ERROR_SIZE of walk_support.h


def _runs(runs: Any) -> Any:
    """The `ccg_timeline_runs` of a `ChildRuns`, made once and kept with it."""
    struct = runs.__dict__.get("_native")
    if struct is None:
        slot = np.ascontiguousarray(runs.slot, dtype=np.int32)
        arrays = {name: np.ascontiguousarray(getattr(runs, name), dtype=np.int64)
                  for name in ("base", "total", "gap", "origin", "kids", "starts", "ends", "gaps", "prefix")}
        struct = ffi.new("ccg_timeline_runs *")
        struct.slot = ffi.cast("const int32_t *", ffi.from_buffer(slot))
        struct.parents = len(arrays["base"]) - 1
        for name, array in arrays.items():
            setattr(struct, name, _pointer(array))
        runs.__dict__["_native"] = struct
        runs.__dict__["_native_arrays"] = (slot, arrays)  # the memory the struct points to
    return struct


def paint(t: Any, group_of: np.ndarray, exclusive: np.ndarray, runs: Any, boundaries: np.ndarray, groups: int,
          roots: np.ndarray, begins: np.ndarray, row: np.ndarray, rows: int) -> np.ndarray:
    """The (rows, width, groups) image of the NodeTables ``t`` with ``roots[i]`` (starting
    at ``begins[i]``) painted into row ``row[i]``, between the column ``boundaries``;
    ``exclusive`` is `group_exclusive` and ``runs`` the `ChildRuns` of ``group_of``."""
    image = np.zeros((rows, len(boundaries) - 1, groups), np.int64)
    if exclusive.shape != (len(t), groups + 1) or runs.prefix.shape[1] != groups + 1:
        raise ValueError("the memoized group times do not match the groups")
    if len(row) != len(roots) or len(begins) != len(roots):
        raise ValueError("every root needs a start time and a row")
    arrays = [np.ascontiguousarray(a, dtype=np.int64) for a in (boundaries, group_of, exclusive, roots, begins, row)]
    bounds, regions, times, root, begin, where = (_pointer(a) for a in arrays)
    canvas = ffi.new("ccg_timeline_canvas *", {
        "width": len(boundaries) - 1, "bounds": bounds, "groups": groups, "rows": rows,
        "image": ffi.from_buffer("int64_t[]", image), "regions": len(group_of), "group_of": regions,
        "exclusive": times})
    error = ffi.new("char[]", _ERROR_SIZE)
    code = lib.ccg_timeline_paint(_tables(t), _runs(runs), canvas, len(roots), root, begin, where, error)
    if code:
        raise failure(code, ffi.string(error).decode("utf-8", "replace"))
    return image


def group_exclusive(t: Any, group_of: np.ndarray, groups: int) -> np.ndarray:
    """`ccgformat.query.timeline_walk.group_exclusive` of the NodeTables ``t`` without its
    last column (zero here): per node, its sub-tree's call time per group."""
    out = np.empty((len(t), groups + 1), np.int64)
    inner, regions = np.ascontiguousarray(t.inner, np.int64), np.ascontiguousarray(group_of, np.int64)
    error = ffi.new("char[]", _ERROR_SIZE)
    code = lib.ccg_group_exclusive(_tables(t), _pointer(inner), len(regions), _pointer(regions), groups,
                                   ffi.from_buffer("int64_t[]", out), error)
    if code:
        raise failure(code, ffi.string(error).decode("utf-8", "replace"))
    return out
