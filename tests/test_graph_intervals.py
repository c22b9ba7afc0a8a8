"""Interval arithmetic of Lemma 3 (4.6-4.8)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccgformat.graph import Interval


@st.composite
def intervals(draw, low=-1000, high=1000):
    a, b = sorted(draw(st.lists(st.integers(low, high), min_size=2, max_size=2)))
    return Interval(a, b)


@given(intervals(), intervals())
def test_addition_and_subtraction_bound_every_pointwise_result(a, b):
    for x in (a.lo, a.hi, (a.lo + a.hi) // 2):
        for y in (b.lo, b.hi):
            assert Interval.point(x + y).within(a + b)
            assert Interval.point(x - y).within(a - b)
    assert (a + b) == Interval(a.lo + b.lo, a.hi + b.hi)
    assert (a - b) == Interval(a.lo - b.hi, a.hi - b.lo)


@given(intervals(), intervals())
def test_ominus_inverts_addition(a, b):
    """(a + b) (-) b == a, while (a + b) - b is wider unless b is a point (4.8)."""
    assert (a + b).ominus(b) == a
    if b.lo != b.hi:
        assert ((a + b) - b) != a


@given(intervals(), intervals())
def test_ominus_is_the_largest_shift_range_that_stays_inside(t, e):
    if e.hi - e.lo > t.hi - t.lo:
        with pytest.raises(ValueError):
            t.ominus(e)
        return
    allowed = t.ominus(e)
    assert (allowed + e).within(t)
    assert not (Interval.point(allowed.hi + 1) + e).within(t)
    assert not (Interval.point(allowed.lo - 1) + e).within(t)


@given(intervals(), intervals())
def test_hull_contains_both(a, b):
    h = a.hull(b)
    assert a.within(h) and b.within(h)
    assert h.lo in (a.lo, b.lo) and h.hi in (a.hi, b.hi)
