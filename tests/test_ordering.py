"""`ordering.stable_order` is numpy's stable argsort of the column, whatever its span."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ccgformat.ordering import stable_order


@given(hnp.arrays(np.int64, st.integers(0, 300), elements=st.sampled_from([-5, 0, 1, 2, 255, 256, 70000, -(1 << 40)]))
       | hnp.arrays(np.int64, st.integers(0, 300), elements=st.integers(-3, 3)))
def test_stable_order_is_the_stable_argsort(values):
    assert np.array_equal(stable_order(values), np.argsort(values, kind="stable"))
