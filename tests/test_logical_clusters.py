"""Per-phase clusters by lateness (paper 003 section 3.3.1): the distance in C and in
numpy against a brute force over every step, and farthest-point clusters of hand-made
phases whose distances the comments work out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import backends
from ccgformat.query.logical_clusters import cluster_locations, distances, distances_reference

IMPLEMENTATIONS = [distances_reference]
if backends.native():
    from ccgformat._native import logical as native

    IMPLEMENTATIONS.append(native.distances)


def brute_distance(a: dict[int, int], b: dict[int, int]) -> float:
    """Over the steps where a or b has an event: each one's value there, else its value at
    its last event before; a step where either has none is skipped; the mean of the
    squared differences (0 without a step)."""
    def at(events: dict[int, int], step: int) -> int | None:
        before = [s for s in events if s <= step]
        return events[max(before)] if before else None
    gaps = [(at(a, s) - at(b, s)) ** 2 for s in sorted(set(a) | set(b)) if at(a, s) is not None and at(b, s) is not None]
    return sum(gaps) / len(gaps) if gaps else 0.0


@st.composite
def member_sets(draw: st.DrawFn) -> tuple[list[dict[int, int]], list[int]]:
    count = draw(st.integers(1, 6))
    members = [draw(st.dictionaries(st.integers(0, 12), st.integers(0, 10**12), max_size=6)) for _ in range(count)]
    return members, draw(st.lists(st.integers(0, count - 1), min_size=count, max_size=count))


@settings(max_examples=200, deadline=None)
@given(member_sets())
def test_distances_against_brute_force(case):
    members, centre = case
    lengths = [len(m) for m in members]
    start = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    step = np.array([s for m in members for s in sorted(m)], np.int64)
    value = np.array([m[s] for m in members for s in sorted(m)], np.int64)
    want = [brute_distance(members[k], members[centre[k]]) for k in range(len(members))]
    for implementation in IMPLEMENTATIONS + [distances]:
        got = implementation(start, start + np.array(lengths, np.int64), np.array(centre, np.int64), step, value)
        assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_clusters_by_the_distance_of_section_3_3_1():
    """One phase, four ranks active at steps 1 and 3, lateness (0, 0), (0, 10), (50, 50),
    (50, 60); at most two clusters. Distances to the first centre, rank 0 (mean of squared
    differences): rank 1 (0 + 100) / 2 = 50, rank 2 (2500 + 2500) / 2 = 2500, rank 3
    (2500 + 3600) / 2 = 3050: rank 3 is the second centre. Rank 1: 50 to rank 0, (2500 +
    2500) / 2 to rank 3; rank 2: 2500 to rank 0, (0 + 100) / 2 to rank 3. Clusters {0, 1}
    and {2, 3}, numbered by their lowest rank."""
    phase = np.zeros(8, np.int64)
    location = np.repeat(np.arange(4), 2)
    step = np.tile([1, 3], 4)
    lateness = np.array([0, 0, 0, 10, 50, 50, 50, 60])
    assert cluster_locations(phase, location, step, lateness, 2).tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert cluster_locations(phase, location, step, lateness, 4).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert cluster_locations(phase, location, step, lateness, 1).tolist() == [0] * 8


# Rank 0 (0 at steps 1 and 3), rank 1 (100 at 1 and 3) and rank 2 (100 at step 1 only), two
# clusters. Rank 2 at step 3 takes its previous value, 100: its distance to rank 0 is
# (10000 + 10000) / 2, to rank 1 (0 + 0) / 2 - it joins rank 1, the second centre
# (farthest from rank 0: 10000). Were the missing value 0, both distances would be 5000
# and the tie would keep it with rank 0.
MISSING_STEP = ([1, 3, 1, 3, 1], [0, 0, 100, 100, 100])
# Rank 2's only event is at step 3 (100): at step 1 it has no previous value, so the step
# is skipped. To rank 0 (0 at 1 and 3) its distance is 10000 (step 3 alone); to rank 1 (0
# at step 1, 100 at step 3) 0. Rank 0 is the first centre, rank 2 the farthest (10000
# against rank 1's 5000), and rank 1 - 5000 from rank 0, 0 from rank 2 - joins rank 2.
# Counting the skipped step as 0 would give rank 2 a distance of 5000 to rank 0: a tie
# that makes rank 1 the second centre.
NO_PREVIOUS_STEP = ([1, 3, 1, 3, 3], [0, 0, 0, 100, 100])


@pytest.mark.parametrize("case", [MISSING_STEP, NO_PREVIOUS_STEP], ids=["missing step", "no previous step"])
def test_a_location_without_an_event_at_a_step(case):
    step, lateness = (np.array(column) for column in case)
    location = np.array([0, 0, 1, 1, 2])
    assert cluster_locations(np.zeros(5, np.int64), location, step, lateness, 2).tolist() == [0, 0, 1, 1, 1]


def test_phases_are_clustered_apart():
    """Two phases of three ranks (the exchange of the first test, twice), at most two
    clusters: each phase has its own, so rank 1 can be with rank 0 in one and with rank 2
    in the other."""
    first = [(0, 0), (0, 0), (90, 90)]   # phase 0 lateness at send and receive: ranks 0, 1 alike
    second = [(0, 0), (90, 90), (90, 90)]
    phase = np.array([0, 0, 1, 1] * 3)
    location = np.repeat(np.arange(3), 4)
    step = np.array([1, 3, 5, 7] * 3)
    lateness = np.array([v for rank in range(3) for v in (*first[rank], *second[rank])])
    got = cluster_locations(phase, location, step, lateness, 2).reshape(3, 4)
    assert got[:, 0].tolist() == [0, 0, 1] and got[:, 2].tolist() == [0, 1, 1]
