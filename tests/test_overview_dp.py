"""The overview's measures and optimal partitions against brute force (issue 16)."""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ccgformat.aggregate_model import Hierarchy
from ccgformat.query.overview_dp import partition
from ccgformat.query.overview_measures import interval_index, measures, proportions

from .overview_support import hierarchy_of, model_of, trees


def _definition(r: np.ndarray, hierarchy: Hierarchy, node: int, first: int, last: int) -> tuple[float, float]:
    """Gain and loss of one area from the definitions: entropy reduction and the
    Kullback-Leibler divergence to the mean (paper 000, Eq. 2 and 3 with V)."""
    cells = r[hierarchy.first_leaf[node]:hierarchy.stop_leaf[node], first:last + 1]
    size = cells.shape[0] * cells.shape[1]
    gain = loss = 0.0
    for x in range(r.shape[2]):
        values = [float(v) for v in cells[:, :, x].ravel()]
        total = sum(values)
        mean = total / size
        gain += (total * math.log2(total) if total > 0 else 0.0) - sum(v * math.log2(v) for v in values if v > 0)
        loss += sum(v * math.log2(v / mean) for v in values if v > 0)
    return gain, loss


def _all_partitions(hierarchy: Hierarchy, slices: int) -> set[frozenset[tuple[int, int, int]]]:
    """Every hierarchy-and-order-consistent partition of (root, 0..T-1), by enumeration."""
    @lru_cache(maxsize=None)
    def of(node: int, first: int, last: int) -> frozenset[frozenset[tuple[int, int, int]]]:
        found = {frozenset({(node, first, last)})}
        children = [int(c) for c in hierarchy.children(node)]
        if children:
            for choice in itertools.product(*(of(c, first, last) for c in children)):
                found.add(frozenset().union(*choice))
        for middle in range(first, last):
            for left in of(node, first, middle):
                for right in of(node, middle + 1, last):
                    found.add(left | right)
        return frozenset(found)
    return set(of(0, 0, slices - 1))


def _partitions_at_most(hierarchy: Hierarchy, slices: int) -> int:
    """An upper bound of the partitions `_all_partitions` enumerates (each way of making
    one counted, though several may make the same partition)."""
    @lru_cache(maxsize=None)
    def of(node: int, first: int, last: int) -> int:
        children = [int(c) for c in hierarchy.children(node)]
        count = 1 + (math.prod(of(c, first, last) for c in children) if children else 0)
        return count + sum(of(node, first, middle) * of(node, middle + 1, last) for middle in range(first, last))
    return of(0, 0, slices - 1)


@st.composite
def instances(draw: st.DrawFn) -> tuple[Hierarchy, np.ndarray, float]:
    hierarchy = hierarchy_of(draw(trees(5)))
    slices = draw(st.integers(1, 4))
    states = draw(st.integers(1, 3))
    values = np.array(draw(st.lists(st.integers(0, 10), min_size=hierarchy.leaves * slices * states,
                                    max_size=hierarchy.leaves * slices * states)), dtype=np.int64)
    values = values.reshape(hierarchy.leaves, slices, states)
    p = draw(st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 1.0)))
    return hierarchy, values, p


def _pic(r: np.ndarray, hierarchy: Hierarchy, parts: frozenset[tuple[int, int, int]], p: float) -> float:
    total = 0.0
    for node, first, last in parts:
        gain, loss = _definition(r, hierarchy, node, first, last)
        total += p * gain - (1 - p) * loss
    return total


@settings(max_examples=150)
@given(instances())
def test_measures_match_the_definitions(instance: tuple[Hierarchy, np.ndarray, float]) -> None:
    hierarchy, values, _ = instance
    r = proportions(model_of(hierarchy, values, np.arange(values.shape[1] + 1) * 10))
    got = measures(hierarchy, r)
    for node in range(len(hierarchy)):
        for last in range(values.shape[1]):
            for first in range(last + 1):
                gain, loss = _definition(r, hierarchy, node, first, last)
                column = interval_index(first, last)
                assert got.gain[node, column] == pytest.approx(gain, abs=1e-9)
                assert got.loss[node, column] == pytest.approx(loss, abs=1e-9)


@settings(max_examples=80)
@given(instances())
def test_the_dp_finds_the_best_partition_and_breaks_ties_to_the_fewest_parts(
        instance: tuple[Hierarchy, np.ndarray, float]) -> None:
    hierarchy, values, p = instance
    slices = values.shape[1]
    assume(_partitions_at_most(hierarchy, slices) <= 20_000)  # the enumeration stays seconds, not hours
    r = proportions(model_of(hierarchy, values, np.arange(slices + 1) * 10))
    scored = [(_pic(r, hierarchy, parts, p), len(parts), parts) for parts in _all_partitions(hierarchy, slices)]
    best = max(score for score, _, _ in scored)
    fewest = min(count for score, count, _ in scored if score >= best - 1e-9)
    result = partition(measures(hierarchy, r), p)
    parts = frozenset(zip(result.node.tolist(), result.first.tolist(), result.last.tolist()))
    assert result.pic == pytest.approx(best, abs=1e-9)
    assert _pic(r, hierarchy, parts, p) == pytest.approx(best, abs=1e-9)
    assert len(parts) == len(result) == fewest
    # the parts tile every (leaf, slice) cell exactly once
    cover = np.zeros((hierarchy.leaves, slices), dtype=np.int64)
    for node, first, last in parts:
        cover[hierarchy.first_leaf[node]:hierarchy.stop_leaf[node], first:last + 1] += 1
    assert (cover == 1).all()


def test_temporal_cuts_run_for_leaves_too() -> None:
    """One leaf whose two halves differ: at small p the leaf is cut in time."""
    hierarchy = hierarchy_of(None)
    values = np.array([[[100, 0], [100, 0], [0, 100], [0, 100]]])
    result = partition(measures(hierarchy, proportions(model_of(hierarchy, values))), 0.3)
    assert list(zip(result.first.tolist(), result.last.tolist())) == [(0, 1), (2, 3)]


@pytest.mark.parametrize("p", [0.0, 0.4, 1.0])
def test_ties_go_to_the_coarser_partition(p: float) -> None:
    """Homogeneous cells: every partition has loss 0, so at p = 0 all tie and the whole
    trace as one part must win; at p > 0 it wins outright."""
    hierarchy = hierarchy_of([[None, None], [None, None, None]])
    values = np.tile(np.array([30, 50], dtype=np.int64), (5, 6, 1))
    result = partition(measures(hierarchy, proportions(model_of(hierarchy, values))), p)
    assert (len(result), int(result.node[0]), int(result.first[0]), int(result.last[0])) == (1, 0, 0, 5)


def test_at_p_zero_the_coarsest_lossless_partition_wins() -> None:
    """Two leaves equal in slices 0-1 and different afterwards: the lossless partition with
    the fewest parts keeps slices 0-1 of both leaves together."""
    hierarchy = hierarchy_of([None, None])
    values = np.array([[[50, 50], [50, 50], [100, 0]], [[50, 50], [50, 50], [0, 100]]])
    result = partition(measures(hierarchy, proportions(model_of(hierarchy, values))), 0.0)
    assert result.loss == pytest.approx(0.0, abs=1e-12)
    assert sorted(zip(result.node.tolist(), result.first.tolist(), result.last.tolist())) == [
        (0, 0, 1), (1, 2, 2), (2, 2, 2)]


def test_normalizing_is_the_unnormalized_optimum_at_the_matching_p() -> None:
    """Dividing gain by G and loss by L maximizes p g / G - (1 - p) l / L, which is the
    unnormalized criterion at p' = (p / G) / (p / G + (1 - p) / L)."""
    rng = np.random.default_rng(3)
    hierarchy = hierarchy_of([[None, None], [None, None, None]])
    values = rng.integers(0, 50, size=(5, 4, 3))
    base = measures(hierarchy, proportions(model_of(hierarchy, values)))
    scaled = base.normalized()
    whole = interval_index(0, 3)
    total_gain, total_loss = base.gain[0, whole], base.loss[0, whole]
    assert (scaled.gain[0, whole], scaled.loss[0, whole]) == pytest.approx((1.0, 1.0))
    for p in (0.01, 0.1, 0.3, 0.6):
        matching = (p / total_gain) / (p / total_gain + (1 - p) / total_loss)
        assert partition(scaled, p).same_parts(partition(base, matching))
