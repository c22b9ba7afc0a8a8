"""The overview's optimal aggregation in C (overview.c): `measures` and `solve` give what
`ccgformat.query.overview_measures.measures_reference` and
`ccgformat.query.overview_dp.solve_reference` with `parts_reference` give."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import failure, load

ffi, lib = load()


def _tree(hierarchy: Any) -> Any:
    """The `ccg_overview_tree` of a `Hierarchy`, made once and kept with it."""
    struct = hierarchy.__dict__.get("_native_overview")
    if struct is None:
        offsets, children = hierarchy._child_index
        arrays = [np.ascontiguousarray(a, dtype=np.int64)
                  for a in (hierarchy.first_leaf, hierarchy.stop_leaf, offsets, children)]
        pointers = [ffi.cast("const int64_t *", ffi.from_buffer(a)) for a in arrays]
        struct = ffi.new("ccg_overview_tree *", {"nodes": len(hierarchy), "first_leaf": pointers[0],
                                                 "stop_leaf": pointers[1], "child_offset": pointers[2],
                                                 "child": pointers[3]})
        hierarchy.__dict__["_native_overview"] = struct
        hierarchy.__dict__["_native_overview_arrays"] = arrays  # the memory the struct points to
    return struct


def _doubles(array: np.ndarray) -> Any:
    return ffi.cast("double *", ffi.from_buffer(array))


def measures(hierarchy: Any, values: np.ndarray, infos: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Gain and loss ``[nodes, columns]`` from the prefix sums over leaves of the proportions
    (``values[leaves + 1, T, X]``) and of ``sum_x r log2 r`` (``infos[leaves + 1, T]``)."""
    _, slices, states = values.shape
    values = np.ascontiguousarray(values, dtype=np.float64)
    infos = np.ascontiguousarray(infos, dtype=np.float64)
    gain = np.empty((len(hierarchy), columns))
    loss = np.empty_like(gain)
    code = lib.ccg_overview_measures(_tree(hierarchy), slices, states, _doubles(values), _doubles(infos),
                                     _doubles(gain), _doubles(loss))
    if code:
        raise failure(code, "the overview measures ran out of memory")
    return gain, loss


def solve(measures: Any, p: float, tolerance: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The optimal pIC at ``p`` and its parts ``(node, first, last)`` (`overview_dp.solve`)."""
    hierarchy, slices = measures.hierarchy, measures.slices
    gain = np.ascontiguousarray(measures.gain, dtype=np.float64)
    loss = np.ascontiguousarray(measures.loss, dtype=np.float64)
    cut = np.empty(gain.shape, dtype=np.int32)
    whole = ffi.new("double *")
    whole_parts = ffi.new("int32_t *")
    tree = _tree(hierarchy)
    code = lib.ccg_overview_solve(tree, slices, _doubles(gain), _doubles(loss), float(p), tolerance, whole,
                                  whole_parts, ffi.cast("int32_t *", ffi.from_buffer(cut)))
    if code:
        raise failure(code, "the overview DP ran out of memory")
    count = int(whole_parts[0])
    node, first, last = (np.empty(count, dtype=np.int64) for _ in range(3))
    found = lib.ccg_overview_parts(tree, slices, ffi.cast("const int32_t *", ffi.from_buffer(cut)), count,
                                   ffi.cast("int64_t *", ffi.from_buffer(node)),
                                   ffi.cast("int64_t *", ffi.from_buffer(first)),
                                   ffi.cast("int64_t *", ffi.from_buffer(last)))
    if found != count:
        raise MemoryError("the overview partition could not be listed") if found == -2 else \
            RuntimeError(f"the overview partition has more parts than the DP counted ({count})")
    return float(whole[0]), node, first, last
