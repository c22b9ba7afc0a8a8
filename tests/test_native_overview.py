"""The overview kernels in C (ccgformat/_native/overview.c) against the numpy reference:
the same measures and the same optimal partitions, for random hierarchies and values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.query.overview_dp import TOLERANCE, parts_reference, solve_reference
from ccgformat.query.overview_measures import (Measures, interval_index, leaf_prefix, measures_reference, proportions,
                                               triangle)

from .overview_support import hierarchy_of, model_of, random_model, trees

try:
    from ccgformat._native import overview as native
except ImportError as error:  # pragma: no cover - only where the C core is not built
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.integers(1, 12), st.integers(1, 6), st.integers(2, 5),
       st.floats(0.0, 1.0), st.booleans())
def test_c_kernels_match_the_numpy_reference(seed: int, leaves: int, slices: int, states: int, fanout: int,
                                             p: float, normalize: bool) -> None:
    model = random_model(np.random.default_rng(seed), leaves, slices, states, fanout)
    hierarchy, r = model.hierarchy, proportions(model)
    reference = measures_reference(hierarchy, r)
    gain, loss = native.measures(hierarchy, *leaf_prefix(r), triangle(slices))
    np.testing.assert_allclose(gain, reference.gain, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(loss, reference.loss, rtol=1e-12, atol=1e-9)
    if normalize:
        reference = reference.normalized()
    solution = solve_reference(reference, p)
    pic, node, first, last = native.solve(reference, p, TOLERANCE)
    assert pic == pytest.approx(solution.pic[0, interval_index(0, slices - 1)], rel=1e-12, abs=1e-9)
    for got, want in zip((node, first, last), parts_reference(hierarchy, slices, solution.cut)):
        np.testing.assert_array_equal(got, want)


def test_the_c_dp_breaks_exact_ties_to_the_whole() -> None:
    """All-zero measures: every partition has pIC 0; the C kernel must keep one part."""
    model = random_model(np.random.default_rng(1), 16, 5, 2)
    zero = np.zeros((len(model.hierarchy), 15))
    pic, node, first, last = native.solve(Measures(model.hierarchy, 5, zero, zero), 0.5, TOLERANCE)
    assert (pic, node.tolist(), first.tolist(), last.tolist()) == (0.0, [0], [0], [4])


@settings(max_examples=60)
@given(trees(6).map(lambda tree: [tree] if tree is not None else tree), st.integers(1, 5), st.integers(1, 4),
       st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_c_kernels_match_the_reference_on_chains_and_idle_states(tree: object, slices: int, states: int, seed: int,
                                                                  p: float) -> None:
    """Nodes with one child over the same leaves (the C measures copy the child's row) and
    states idle in a whole node (the C measures skip them): still the reference's values,
    bit for bit, and its partition."""
    hierarchy = hierarchy_of(tree)
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 50, (hierarchy.leaves, slices, states)) * (rng.random((hierarchy.leaves, 1, states)) > 0.5)
    r = proportions(model_of(hierarchy, values))
    reference = measures_reference(hierarchy, r)
    gain, loss = native.measures(hierarchy, *leaf_prefix(r), triangle(slices))
    np.testing.assert_allclose(gain, reference.gain, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(loss, reference.loss, rtol=1e-12, atol=1e-12)
    solution = solve_reference(reference, p)
    pic, node, first, last = native.solve(reference, p, TOLERANCE)
    assert pic == pytest.approx(solution.pic[0, interval_index(0, slices - 1)], rel=1e-12, abs=1e-12)
    for got, want in zip((node, first, last), parts_reference(hierarchy, slices, solution.cut)):
        np.testing.assert_array_equal(got, want)
