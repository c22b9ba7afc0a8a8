"""`ordering.stable_order` is numpy's stable argsort of the column, whatever its span;
`ordering.sorted_distinct` is `np.unique` of integers, whatever their shape and type."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ccgformat.ordering import sorted_distinct, stable_order


@given(hnp.arrays(np.int64, st.integers(0, 300), elements=st.sampled_from([-5, 0, 1, 2, 255, 256, 70000, -(1 << 40)]))
       | hnp.arrays(np.int64, st.integers(0, 300), elements=st.integers(-3, 3)))
def test_stable_order_is_the_stable_argsort(values):
    assert np.array_equal(stable_order(values), np.argsort(values, kind="stable"))


@given(hnp.arrays(st.sampled_from([np.int64, np.uint64, np.int8, np.int32]), hnp.array_shapes(min_dims=1, max_dims=2,
                                                                                              min_side=0, max_side=30),
                  elements=st.integers(0, 100)))
def test_sorted_distinct_is_numpy_unique(values):
    distinct = sorted_distinct(values)
    expected = np.unique(values)
    assert distinct.dtype == expected.dtype and np.array_equal(distinct, expected)
