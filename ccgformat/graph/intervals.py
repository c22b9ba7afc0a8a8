"""Interval arithmetic for deviation bounds (dissertation 4.2.4, Lemma 3).

An interval ``[lo, hi]`` (lo <= hi) stands for every deviation between its bounds; a
point interval ``[x, x]`` for one known deviation. Only the operations the builder needs
are defined: addition (4.6), subtraction (4.7), the inverse addition ``ominus`` (4.8),
the hull of a union and the inclusion test.
"""

from __future__ import annotations

from typing import NamedTuple


class Interval(NamedTuple):
    lo: int
    hi: int

    @classmethod
    def point(cls, x: int) -> Interval:
        return cls(x, x)

    def __add__(self, other: object) -> Interval:  # type: ignore[override]
        """[a_lo + b_lo, a_hi + b_hi] (4.6); an int is read as a point interval."""
        if isinstance(other, int):
            return Interval(self.lo + other, self.hi + other)
        assert isinstance(other, Interval)
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: Interval) -> Interval:
        """[a_lo - b_hi, a_hi - b_lo] (4.7)."""
        return Interval(self.lo - other.hi, self.hi - other.lo)

    def ominus(self, other: Interval) -> Interval:
        """The inverse of addition, [a_lo - b_lo, a_hi - b_hi] (4.8): the largest X with
        X + other within self. Defined only when other is no wider than self."""
        if self.hi - self.lo < other.hi - other.lo:
            raise ValueError(f"{other} is wider than {self}: no interval X with X + {other} inside")
        return Interval(self.lo - other.lo, self.hi - other.hi)

    def hull(self, other: Interval) -> Interval:
        """The smallest interval containing both (the union in Lemma 5)."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def within(self, bound: Interval) -> bool:
        """self is a subset of bound."""
        return bound.lo <= self.lo and self.hi <= bound.hi
