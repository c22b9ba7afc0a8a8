"""Messages grouped by channel in C (export_channels.c): `channel_ranks` gives what
ccgformat.formats.channels.channel_ranks gives, in one pass."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import CCG_OK, load

ffi, lib = load()

__all__ = ["channel_ranks"]


def _pointer(array: np.ndarray) -> Any:
    return ffi.cast("int64_t *", ffi.from_buffer(array))


def channel_ranks(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows of the four columns: each row's channel (numbered by first row), its rank
    in its channel, and the first row of every channel."""
    a, b, c, d = (np.ascontiguousarray(column, np.int64) for column in columns)
    n = len(a)
    channel, rank, first = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    count = ffi.new("int64_t *")
    if lib.ccg_channel_ranks(n, _pointer(a), _pointer(b), _pointer(c), _pointer(d), _pointer(channel),
                             _pointer(rank), _pointer(first), count) != CCG_OK:
        raise MemoryError("out of memory for a table of message channels")
    return channel, rank, first[:count[0]]
