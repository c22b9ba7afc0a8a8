"""The calls of one segment in C (segment_calls.c): what `SegmentIndex._calls` of
`ccgformat.archive.indexes` (the reference) works out of one batch."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import CCG_ERR_INPUT, failure, load

ffi, lib = load()


class BatchCalls(NamedTuple):
    """The calls of a batch: the LEAVEs of calls open before it (level, time), the
    shortest and longest call per region it opened and closed, how many of the calls
    open before it stay open, and the calls it leaves open (region, enter)."""

    closed: list[tuple[int, int]]
    regions: np.ndarray
    shortest: np.ndarray
    longest: np.ndarray
    kept: int
    opened: list[tuple[int, int]]


def calls(time: np.ndarray, kind: np.ndarray, ref: np.ndarray, depth: int) -> BatchCalls:
    """The calls among the events (time, kind, ref) with ``depth`` calls open before them.
    Raises ValueError for a LEAVE without an open call."""
    time = np.ascontiguousarray(time, np.int64)
    kind = np.ascontiguousarray(kind, np.uint8)
    ref = np.ascontiguousarray(ref, np.int64)
    room = np.empty((7, len(time)), np.int64)
    pointers = [ffi.cast("int64_t *", ffi.from_buffer(row)) for row in room]
    out = ffi.new("ccg_segment_calls *", {
        "closed_level": pointers[0], "closed_time": pointers[1], "region": pointers[2], "shortest": pointers[3],
        "longest": pointers[4], "open_region": pointers[5], "open_enter": pointers[6]})
    code = lib.ccg_segment_calls_add(ffi.cast("const int64_t *", ffi.from_buffer(time)),
                                     ffi.cast("const uint8_t *", ffi.from_buffer(kind)),
                                     ffi.cast("const int64_t *", ffi.from_buffer(ref)), len(time), depth, out)
    if code == CCG_ERR_INPUT:
        raise ValueError("a LEAVE without an open call")
    if code:
        raise failure(code, "the segment's calls ran out of memory")
    closed, regions, opened = out.closed, out.regions, out.open
    return BatchCalls(list(zip(room[0, :closed].tolist(), room[1, :closed].tolist())), room[2, :regions].copy(),
                      room[3, :regions].copy(), room[4, :regions].copy(), int(out.kept),
                      list(zip(room[5, :opened].tolist(), room[6, :opened].tolist())))
