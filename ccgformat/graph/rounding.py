"""The coarse grid lossy gaps are rounded onto (dissertation 3.5: any value within the
bounds may stand for the original; a few distinct values compress far better)."""

from __future__ import annotations

#: The largest gap a node may hold (durations are i64).
INT64_MAX = (1 << 63) - 1


def grid_mantissa(rel_numerator: int) -> int:
    """M of the rounding grid for a relative bound ``rel_numerator / 2**32``: the integers
    ``m * 2**e`` with ``M <= m < 2M`` (and every integer below 2M). Its step at x is at
    most x / M, so ``M = ceil(1 / (2 rel))`` leaves a grid point within the bound of every
    gap; 1 for a bound of 0."""
    return max(1, -(-(1 << 31) // rel_numerator)) if rel_numerator > 0 else 1


def round_to_grid(target: int, lo: int, hi: int, mantissa: int) -> int:
    """The grid point (`grid_mantissa`) in ``[lo, hi]`` nearest to ``target`` (the lower
    on a tie); else, where the range is narrower than the grid's step (the absolute bound
    binds), its multiple of ``2**k`` nearest to ``target`` (the lower on a tie), ``2**k``
    the largest power of two not above ``hi - lo + 1``, so that the range holds one and
    the gap still ends in k zero bits; requires ``0 <= lo <= hi``."""
    if lo == hi:
        return lo
    value = min(max(target, lo), hi)
    exponent = 0
    while value >> exponent >= 2 * mantissa:
        exponent += 1
    down = value >> exponent << exponent
    up = down + (1 << exponent) if down != value else down
    best = None
    for point in (down, up):
        if lo <= point <= hi and (best is None or abs(point - target) < abs(best - target)):
            best = point
    if best is not None:
        return best
    step = 1 << ((hi - lo + 1).bit_length() - 1)
    down = value // step * step
    up = down + step
    if down < lo or (up <= hi and abs(up - target) < abs(down - target)):
        return up
    return down
