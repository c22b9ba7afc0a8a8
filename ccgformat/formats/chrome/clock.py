"""Ticks to the microsecond text of Chrome's ``ts`` and ``dur``."""

from __future__ import annotations

import itertools


class Clock:
    """Ticks to microsecond text: exact where a few decimals can be, else with enough
    decimals that every tick has its own text (rounding back gives the same tick)."""

    def __init__(self, resolution: int, offset: int):
        self.resolution = resolution
        self.offset = offset
        rounded = next(d for d in itertools.count() if 10 ** (6 + d) > 2 * resolution)
        exact = [d for d in range(rounded + 1) if 10 ** (6 + d) % resolution == 0]
        self.digits = exact[0] if exact else rounded
        self.scale = 10 ** (6 + self.digits) // resolution if exact else 0
        self.numerator = 10 ** (6 + self.digits)

    def scaled(self, time: int) -> int:
        """The timestamp ``time`` in units of the last decimal written."""
        ticks = time - self.offset
        if self.scale:
            return ticks * self.scale
        quotient, remainder = divmod(ticks * self.numerator, self.resolution)
        twice = 2 * remainder
        return quotient + (twice > self.resolution or (twice == self.resolution and quotient % 2))

    def text(self, scaled: int) -> str:
        """A scaled value as decimal text, without trailing zeros after the point."""
        if not self.digits:
            return str(scaled)
        whole, fraction = divmod(abs(scaled), 10 ** self.digits)
        decimals = str(fraction).rjust(self.digits, "0").rstrip("0")
        return ("-" if scaled < 0 else "") + str(whole) + ("." + decimals if decimals else "")
