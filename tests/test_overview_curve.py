"""Exploring p: the quality curve holds every distinct optimum (brute force over a grid)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.query.overview_curve import coarsest, default_p, explore
from ccgformat.query.overview_dp import partition
from ccgformat.query.overview_measures import measures, proportions

from .overview_support import hierarchy_of, model_of, random_model, trees
from .test_overview_dp import _all_partitions, _pic


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 3))
def test_the_curve_lists_every_optimum_in_order(seed: int, leaves: int, slices: int) -> None:
    model = random_model(np.random.default_rng(seed), leaves, slices, 2, fanout=2)
    hierarchy, r = model.hierarchy, proportions(model)
    curve = explore(measures(hierarchy, r))
    # each partition's gain and loss from the definitions: its pIC at p is p G - (1 - p) L
    lines = {parts: (_pic(r, hierarchy, parts, 1.0), -_pic(r, hierarchy, parts, 0.0))
             for parts in _all_partitions(hierarchy, slices)}
    listed = [frozenset(zip(o.node.tolist(), o.first.tolist(), o.last.tolist())) for o in curve.optima]
    assert len(set(listed)) == len(listed)
    for p in np.linspace(0.0, 1.0, 201):
        best = max(p * gain - (1 - p) * loss for gain, loss in lines.values())
        holding = [k for k in range(len(listed)) if curve.low[k] <= p <= curve.high[k]]
        assert holding, p
        for k in holding:  # the optimum the curve names for p is optimal at p
            gain, loss = lines[listed[k]]
            assert p * gain - (1 - p) * loss == pytest.approx(best, abs=1e-7)
    assert curve.low[0] == 0.0 and curve.high[-1] == 1.0
    assert all(a.loss <= b.loss + 1e-9 and len(a) >= len(b) for a, b in zip(curve.optima, curve.optima[1:]))


def test_the_default_p_sits_before_the_largest_loss_jump() -> None:
    """Two blocks of leaves, each homogeneous, different from each other: the optimum that
    keeps the blocks apart loses nothing, the full aggregation loses much; the default p
    shows the two blocks."""
    model = random_model(np.random.default_rng(0), 8, 4, 2, fanout=4)
    values = np.zeros_like(model.values)
    values[:4, :, 0], values[4:, :, 1] = 80, 80
    model = type(model)(model.bounds, model.states, model.locations, values, model.hierarchy)
    found = measures(model.hierarchy, proportions(model))
    curve = explore(found)
    chosen = partition(found, default_p(curve))
    assert sorted(chosen.node.tolist()) == [1, 6] and chosen.loss == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=40)
@given(trees(6), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**32 - 1), st.booleans())
def test_the_optimum_at_p_1_is_the_whole_without_a_dp(tree: object, slices: int, states: int, seed: int,
                                                      normalize: bool) -> None:
    """`coarsest` stands for the DP at p = 1 in `explore` (either backend): the same part,
    pIC, gain and loss."""
    hierarchy = hierarchy_of(tree)
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 50, (hierarchy.leaves, slices, states)) * (rng.random((hierarchy.leaves, slices, 1)) > 0.3)
    found = measures(hierarchy, proportions(model_of(hierarchy, values)))
    found = found.normalized() if normalize else found
    solved = partition(found, 1.0)
    shortcut = coarsest(found)
    assert shortcut.same_parts(solved)
    assert (shortcut.pic, shortcut.gain, shortcut.loss) == pytest.approx((solved.pic, solved.gain, solved.loss),
                                                                        rel=1e-12, abs=1e-12)
