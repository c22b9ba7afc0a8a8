"""The coarse grid lossy gaps are rounded onto (dissertation 3.5: any value within the
bounds may stand for the original; a few distinct values compress far better)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

#: The largest gap a node may hold (durations are i64).
INT64_MAX = (1 << 63) - 1
#: The grid's mantissas have at most this many bits, whatever the bound.
GRID_BITS_LIMIT = 16
_SCALE = 1 << 32  # relative bounds are numerators of 2**32 (params.rel_numerator)


@dataclass(frozen=True)
class Grid:
    """The integers ``m * 2**e`` with ``m`` one of the chosen mantissas of ``bits`` bits
    (and every integer below ``2**(bits - 1)``): per mantissa ``m`` from ``2**(bits - 1)``,
    ``below[m - 2**(bits - 1)]`` is the largest chosen one ``<= m`` and ``above[...]`` the
    smallest ``>= m`` (one more entry, for ``2**bits``: the next power of two). Where two
    neighbouring points lie more than ``max_step`` apart, every mantissa of ``bits`` bits
    is a point between them."""

    bits: int
    below: tuple[int, ...]
    above: tuple[int, ...]
    max_step: int


@lru_cache(maxsize=16)
def grid(rel_numerator: int, abs_dev: int) -> Grid:
    """The grid for a relative bound ``rel_numerator / 2**32`` (dissertation 3.5; the
    sparsest grid of these mantissas within the bound, so few values, cheap to code, 5.8).
    ``bits`` is the fewest (at most GRID_BITS_LIMIT) for which integers from
    ``2**(bits - 1)`` can be skipped; the mantissas are chosen greedily from
    ``2**(bits - 1)``, each next one the largest ``t`` whose bound still reaches back to
    the previous ``s``: ``t (1 - r) <= s (1 + r)``, ``r`` the bound rounded up to the next
    2**-32 (the numerator is rounded down: 0.05 gets 9 mantissas per octave, not 10). So a
    gap has a grid point within its bound but where the integer tolerance falls short by
    that rounding (`round_to_grid`'s fallback takes it), and where two are, the builder's
    error diffusion has a choice. Where the step passes half the absolute bound ``abs_dev``
    every mantissa is a point (``max_step``): a rounding there would leave the error
    diffusion no room, and the drift of a regular trace's repeated nodes would add up to
    new nodes (docs/compression.md, "The grid")."""
    r = rel_numerator + 1 if rel_numerator > 0 else 0
    bits = 1
    if r > 0:
        while bits < GRID_BITS_LIMIT and (1 << (bits - 1)) * 2 * r < _SCALE - r:
            bits += 1
    half = 1 << (bits - 1)
    below, above = [0] * half, [0] * (half + 1)
    point = m = half
    while point < 2 * half:
        following = point * (_SCALE + r) // (_SCALE - r) if 0 < r < _SCALE else 2 * half
        following = min(max(following, point + 1), 2 * half)
        for m in range(m, following):
            below[m - half] = point
            above[m - half] = point if m == point else following
        m, point = following, following
    above[half] = 2 * half
    return Grid(bits, tuple(below), tuple(above), abs_dev // 2)


def round_to_grid(target: int, lo: int, hi: int, points: Grid) -> int:
    """The point of ``points`` in ``[lo, hi]`` nearest to ``target`` (the lower on a
    tie); else, where the range is narrower than the grid's step (the absolute bound
    binds), its multiple of ``2**k`` nearest to ``target`` (the lower on a tie), ``2**k``
    the largest power of two not above ``hi - lo + 1``, so that the range holds one and
    the gap still ends in k zero bits; requires ``0 <= lo <= hi``."""
    if lo == hi:
        return lo
    value = min(max(target, lo), hi)
    exponent = max(0, value.bit_length() - points.bits)
    half = 1 << (points.bits - 1)
    m = value >> exponent
    down = up = value
    if m >= half:
        down = points.below[m - half] << exponent
        if down != value:
            up = points.above[m - half + (m << exponent != value)] << exponent
            if up - down > points.max_step:  # too coarse for the absolute bound: every mantissa
                down = m << exponent
                up = down if down == value else down + (1 << exponent)
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
