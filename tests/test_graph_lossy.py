"""Lossy mode: every reconstructed value stays within the bounds it was built with."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from ccgformat import Builder, Params
from ccgformat.model import KIND_FIELDS, EventKind
from ccgformat.graph.pool import wrap64

from .traces import batches, traces

lossy_params = st.builds(
    Params,
    abs_dev=st.integers(0, 60),
    rel_dev=st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0]),
    rel_size=st.sampled_from([0.0, 0.05, 0.5]),
    rel_metric=st.sampled_from([0.0, 0.05, 0.5]),
    branching=st.integers(2, 5),
    search_length=st.integers(1, 8),
    representatives=st.sampled_from([0, 1, 2, 16]),
)


def within(new: int, old: int, rel: float) -> bool:
    return abs(new - old) <= rel * abs(old)


def check_location(original, rebuilt, params: Params) -> None:
    assert len(rebuilt) == len(original)
    stack = []
    previous_metric: dict[int, tuple[int, int]] = {}
    for i, (a, b) in enumerate(zip(original, rebuilt)):
        assert b.kind == a.kind, i
        fields = KIND_FIELDS[EventKind(a.kind)]
        for name in fields.hard:
            assert getattr(b, name) == getattr(a, name), (i, name)
        assert abs(b.time - a.time) <= params.abs_dev, (i, a.time, b.time)
        if i:  # every duration between neighbours, hence between any two events (3.6)
            assert b.time >= rebuilt[i - 1].time, i
            assert within(b.time - rebuilt[i - 1].time, a.time - original[i - 1].time, params.rel_dev), i
        if a.kind == EventKind.ENTER:
            stack.append((a.time, b.time))
        elif a.kind == EventKind.LEAVE:
            enter_a, enter_b = stack.pop()
            assert within(b.time - enter_b, a.time - enter_a, params.rel_dev), i
        elif a.kind == EventKind.METRIC:
            old_a, old_b = previous_metric.get(a.ref, (0, 0))
            assert within(wrap64(b.value - old_b), wrap64(a.value - old_a), params.rel_metric), i
            previous_metric[a.ref] = (a.value, b.value)
        for name in ("size", "recv_size"):
            if name in fields.soft:
                assert within(getattr(b, name), getattr(a, name), params.rel_size), (i, name)


@given(traces(), lossy_params)
def test_every_event_stays_within_the_bounds(trace, params):
    builder = Builder(params)
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    graph = builder.finish()
    assert graph.metrics.n <= graph.metrics.N
    for location, events in trace.items():
        walker = graph.location(location)
        rebuilt = [e for batch in walker.events() for e in batch.rows()]
        check_location(events, rebuilt, params)
        assert [walker.event(i) for i in range(len(events))] == rebuilt
        backward = [e for batch in walker.events(reverse=True, batch_size=3) for e in batch.rows()]
        assert backward[::-1] == rebuilt


@given(st.integers(0, 2**32 - 1), st.sampled_from([(100, 0.05), (1000, 0.2), (10, 0.5)]))
def test_jittered_repetitions_compress_more_when_lossy(seed, bounds):
    """A loop with timing noise: lossy bounds must merge what lossless cannot."""
    import numpy as np

    from ccgformat.model import EventBatch

    rng = np.random.default_rng(seed)
    rows, time = [(0, EventKind.ENTER, 0)], 0
    for _ in range(300):
        time += 100 + int(rng.integers(0, 3))
        rows.append((time, EventKind.ENTER, 1))
        time += 1000 + int(rng.integers(0, 5))
        rows.append((time, EventKind.LEAVE, 1))
    rows.append((time + 10, EventKind.LEAVE, 0))
    events = EventBatch.from_events(rows)
    abs_dev, rel_dev = bounds
    sizes = {}
    for params in (Params(branching=4), Params(abs_dev=abs_dev, rel_dev=rel_dev, branching=4)):
        builder = Builder(params)
        builder.add(0, events)
        graph = builder.finish()
        check_location(list(events.rows()), [e for b in graph.location(0).events() for e in b.rows()], params)
        sizes[params.lossless] = graph.metrics.n
    assert sizes[False] < sizes[True]



def _grid_points(rel_numerator: int, abs_dev: int, top: int) -> list[int]:
    """Every point of `rounding.grid` up to ``top``, from its definition: every integer
    below 2**(bits - 1), then per octave the mantissas chosen greedily, each the largest t
    with t (1 - r) <= s (1 + r) after s (r rounded up), times each power of two; and
    between two of those more than abs_dev // 2 apart, every mantissa of that octave."""
    from ccgformat.graph.rounding import grid

    bits = grid(rel_numerator, abs_dev).bits
    r = Fraction(rel_numerator + 1, 2**32) if rel_numerator else Fraction(0)
    half = 1 << (bits - 1)
    mantissas = [half]
    while True:
        following = max(mantissas[-1] + 1, int(mantissas[-1] * (1 + r) / (1 - r))) if 0 < r < 1 else 2 * half
        if following >= 2 * half:
            break
        mantissas.append(following)
    points = set(range(half))
    for e in range(top.bit_length() + 1):
        for s, t in zip(mantissas, [*mantissas[1:], 2 * half]):
            dense = (t - s) << e > abs_dev // 2
            points.update(m << e for m in (range(s, t) if dense else [s]) if m << e <= top)
    return sorted(points)


def test_the_grid_for_005_has_nine_mantissas_of_five_bits():
    """The sparsest grid within 5%: 16, 17, 18, 19, 21, 23, 25, 27, 29 (times 2**e); with
    abs_dev 20 every 5-bit mantissa from 512 on, where every step passes 10."""
    from ccgformat.graph.rounding import grid
    from ccgformat.params import rel_numerator

    numerator = rel_numerator(0.05)
    assert [x for x in _grid_points(numerator, 10**9, 64) if x >= 32] == [32, 34, 36, 38, 42, 46, 50, 54, 58, 64]
    assert grid(numerator, 10**9).below == (16, 17, 18, 19, 19, 21, 21, 23, 23, 25, 25, 27, 27, 29, 29, 29)
    assert [x for x in _grid_points(numerator, 20, 1024) if x >= 512] == list(range(512, 1025, 32))


@given(st.integers(-50, 5000), st.integers(0, 4000), st.integers(0, 400),
       st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.5, 3.0]), st.sampled_from([0, 1, 20, 100, 1000, 10**9]))
def test_round_to_grid_takes_the_nearest_grid_point_in_range(target, lo, width, rel, abs_dev):
    from ccgformat.graph.rounding import grid, round_to_grid
    from ccgformat.params import rel_numerator

    hi = lo + width
    numerator = rel_numerator(rel)
    points = [x for x in _grid_points(numerator, abs_dev, hi) if lo <= x <= hi]
    if not points:  # the range is narrower than the grid's step: the multiples of 2**k it holds
        step = 1 << ((width + 1).bit_length() - 1)
        points = [x for x in range(lo, hi + 1) if x % step == 0]
    expected = min(points, key=lambda x: (abs(x - target), x))
    assert round_to_grid(target, lo, hi, grid(numerator, abs_dev)) == expected


@given(st.sampled_from([0.01, 0.05, 0.2, 0.5, 1.0, 3.0]), st.integers(0, 10**12), st.sampled_from([0, 1000, 10**9]))
def test_every_gap_is_rounded_within_its_relative_bound_to_few_significant_bits(rel, gap, abs_dev):
    """The grid holds a point within the bound of every gap but where the integer
    tolerance falls short of the bound (then the fallback's multiple of a power of two):
    the value has at most bits + 1 significant bits either way."""
    from ccgformat.graph.rounding import grid, round_to_grid
    from ccgformat.params import rel_numerator, within_rel

    numerator = rel_numerator(rel)
    points = grid(numerator, abs_dev)
    tolerance = (numerator * gap) >> 32
    value = round_to_grid(gap, max(0, gap - tolerance), gap + tolerance, points)
    assert within_rel(value, gap, numerator)
    significant = value.bit_length() - ((value & -value).bit_length() - 1) if value else 0
    assert significant <= points.bits + 1


@given(st.integers(0, 2**32 - 1), st.sampled_from([(1000, 0.05), (100, 0.05), (300, 0.2)]))
def test_stored_lossy_gaps_lie_on_the_grid(seed, bounds):
    """Issue 17: the gaps of the nodes a lossy graph stores take few distinct values (the
    grid), whatever the jitter, so they compress towards the floor; bounds still hold."""
    import numpy as np

    from ccgformat.model import EventBatch
    from ccgformat.params import rel_numerator

    rng = np.random.default_rng(seed)
    rows, time = [(0, EventKind.ENTER, 0)], 0
    for _ in range(200):
        for region, work in ((1, 300), (2, 2000)):
            time += int(rng.integers(50, 400))
            rows.append((time, EventKind.ENTER, region))
            time += int(work * rng.lognormal(0, 0.25))
            rows.append((time, EventKind.LEAVE, region))
    rows.append((time + 10, EventKind.LEAVE, 0))
    events = EventBatch.from_events(rows)
    abs_dev, rel_dev = bounds
    params = Params(abs_dev=abs_dev, rel_dev=rel_dev, branching=4)
    builder = Builder(params)
    builder.add(0, events)
    graph = builder.finish()
    check_location(list(events.rows()), [e for b in graph.location(0).events() for e in b.rows()], params)
    gaps = [d for durations in graph.pool.durations if durations for d in durations[::2]]
    points = set(_grid_points(rel_numerator(rel_dev), abs_dev, max(gaps)))
    on_grid = sum(gap in points for gap in gaps)
    assert on_grid >= 0.9 * len(gaps), (on_grid, len(gaps))
