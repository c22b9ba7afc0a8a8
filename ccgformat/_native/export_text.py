"""What the exporters' C fast paths read (export.h): tables of rendered strings and the
clock that writes timestamps."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import load

ffi, lib = load()

__all__ = ["Strings", "clock_fits", "set_clock"]

#: |time - offset| is below 2^64; a scale or numerator below this keeps its product in 128 bits.
_FACTOR_LIMIT = 1 << 62
#: 10**digits must stay below 2^127.
_MOST_DIGITS = 38


class Strings:
    """A `ccg_strings` table over byte strings; keep it alive while C reads it."""

    def __init__(self, items: Sequence[bytes]):
        self.blob = b"".join(items)
        self.start = np.zeros(len(items) + 1, np.int64)
        np.cumsum([len(item) for item in items], out=self.start[1:])
        self.longest = max((len(item) for item in items), default=0)
        self._bytes = ffi.from_buffer(self.blob)
        self.struct = ffi.new("ccg_strings *", {"bytes": self._bytes, "count": len(items),
                                                "start": ffi.cast("const int64_t *", ffi.from_buffer(self.start))})

    def __len__(self) -> int:
        return len(self.start) - 1


def clock_fits(scale: int, numerator: int, digits: int) -> bool:
    """Whether the C clock computes this clock exactly (export.h)."""
    return 0 <= digits <= _MOST_DIGITS and (0 < scale < _FACTOR_LIMIT or scale == 0 and 0 < numerator < _FACTOR_LIMIT)


def set_clock(clock: Any, offset: int, scale: int, numerator: int, denominator: int, digits: int, half_even: bool,
              strip: bool) -> None:
    """Fill the `ccg_clock` ``clock`` (`clock_fits` must hold)."""
    clock.offset, clock.scale, clock.numerator, clock.denominator = offset, scale, numerator, denominator
    clock.digits, clock.half_even, clock.strip = digits, int(half_even), int(strip)
