"""The kernels of logical time in C (logical.c): `longest_paths` and `components` give
what `ccgformat.query.logical_graph.longest_paths_reference` and `components_reference`
give, `distances` what `ccgformat.query.logical_clusters.distances_reference` gives,
`calls` what `ccgformat.query.logical_walk.Calls` finds with numpy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import load

ffi, lib = load()


def _int64(array: np.ndarray) -> tuple[np.ndarray, Any]:
    array = np.ascontiguousarray(array, dtype=np.int64)
    return array, ffi.cast("int64_t *", ffi.from_buffer(array))


def _check(code: int, what: str) -> int:
    if code == -1:
        raise MemoryError(f"out of memory for the {what}")
    if code == -2:
        raise ValueError(f"the {what} name a node that does not exist")
    return code


def longest_paths(count: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
                  base: np.ndarray) -> np.ndarray:
    """Per node the longest path value, INT64_MIN behind a cycle."""
    (src, p_src), (dst, p_dst), (weight, p_weight), (base, p_base) = (_int64(a) for a in (src, dst, weight, base))
    value = np.empty(count, np.int64)
    _check(lib.ccg_logical_longest(count, len(src), p_src, p_dst, p_weight, p_base,
                                   ffi.cast("int64_t *", ffi.from_buffer(value))), "longest paths' edges")
    return value


def components(count: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Per node its strongly connected component (numbered as Tarjan completes them)."""
    (src, p_src), (dst, p_dst) = _int64(src), _int64(dst)
    component = np.empty(count, np.int64)
    _check(lib.ccg_logical_scc(count, len(src), p_src, p_dst, ffi.cast("int64_t *", ffi.from_buffer(component))),
           "components' edges")
    return component


def distances(start: np.ndarray, stop: np.ndarray, centre: np.ndarray, step: np.ndarray,
              value: np.ndarray) -> np.ndarray:
    """Per member its section 3.3.1 distance to ``centre[member]``."""
    arrays = [_int64(a) for a in (start, stop, centre, step, value)]
    distance = np.empty(len(start), np.float64)
    _check(lib.ccg_logical_distances(len(start), *(pointer for _, pointer in arrays),
                                     ffi.cast("double *", ffi.from_buffer(distance))), "cluster distances")
    return distance


@dataclass
class FoundCalls:
    """`calls`' answer: per wanted event its position in the chunk (``rows``), ``index``
    in its location, ``enter``, ``exit`` and ``leave`` of its call, and the ``level`` it
    waits at (0: none); ``closes`` per level open before the chunk the position of its
    LEAVE (-1: none); the ``location``, ``seen`` events and ``opened`` calls (their
    ENTER times) carried on."""

    rows: np.ndarray
    index: np.ndarray
    enter: np.ndarray
    exit: np.ndarray
    leave: np.ndarray
    level: np.ndarray
    closes: np.ndarray
    location: int
    seen: int
    opened: np.ndarray


def calls(owner: np.ndarray, kind: np.ndarray, time: np.ndarray, wanted: np.ndarray, location: int, seen: int,
          opened: list[int]) -> FoundCalls:
    """The calls holding the events of kinds ``wanted`` (a table of 256) of a chunk,
    ``location`` having ``seen`` events and the calls ``opened`` (ENTER times, outermost
    first) open before it."""
    n = len(owner)
    (owner, p_owner), (time, p_time) = _int64(owner), _int64(time)
    kind = np.ascontiguousarray(kind, dtype=np.uint8)
    state = np.array([location, seen, len(opened)], np.int64)
    stack = np.empty(len(opened) + n + 1, np.int64)
    stack[:len(opened)] = opened
    out = np.empty((6, n), np.int64)
    closes = np.empty(len(opened) + 1, np.int64)
    count = lib.ccg_logical_calls(n, p_owner, ffi.cast("uint8_t *", ffi.from_buffer(kind)), p_time,
                                  ffi.cast("uint8_t *", ffi.from_buffer(wanted)),
                                  *(ffi.cast("int64_t *", ffi.from_buffer(a)) for a in (state, stack, *out, closes)))
    _check(count, "calls of the events")
    rows, index, enter, exit_, leave, level = (column[:count] for column in out)
    return FoundCalls(rows, index, enter, exit_, leave, level, closes[:len(opened)], int(state[0]), int(state[1]),
                      stack[:int(state[2])])
