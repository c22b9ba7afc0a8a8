"""Event times: local to global seconds (OFFSET records), then integer ticks."""

from __future__ import annotations

import numpy as np

from .source import Source

_TIME_DIGITS = 9         # finest resolution tried: 10**9 ticks per second


def global_seconds(seconds: np.ndarray, offsets: list[tuple[float, float]]) -> np.ndarray:
    """Local to global time from the OFFSET records: the first offset, or the line through two."""
    if not offsets:
        return seconds
    (ltime0, offset0), (ltime1, offset1) = offsets[0], offsets[-1]
    if len(offsets) == 1 or ltime1 == ltime0:
        return seconds + offset0
    return seconds + ((offset1 - offset0) / (ltime1 - ltime0)) * (seconds - ltime0) + offset0


def to_ticks(source: Source, seconds: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, int, bool]:
    """Integer ticks, the resolution (ticks per second) and whether they reproduce every time exactly."""
    finest = 10 ** _TIME_DIGITS
    bad = np.flatnonzero(~np.isfinite(seconds) | (np.abs(seconds) * finest >= 2.0 ** 62))
    if len(bad):
        raise source.error(f"time {seconds[bad[0]]!r} s cannot be represented in 64-bit nanoseconds",
                           int(starts[bad[0]]))
    if not len(seconds):
        return np.zeros(0, np.int64), finest, True
    for digits in range(_TIME_DIGITS + 1):
        scale = 10.0 ** digits
        ticks = np.rint(seconds * scale)
        if np.array_equal(ticks / scale, seconds):
            return ticks.astype(np.int64), 10 ** digits, True
    return ticks.astype(np.int64), finest, False
