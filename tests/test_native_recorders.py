"""What `verify`'s walk feeds its batches to, in C, against the numpy code (the reference),
whichever backend is active: the slice cells (`SliceTimes`, `_native.slice_cells`: the
same cells, states and running state after every batch, under any bounds) and the
checkpoint recorders' calls (`SegmentIndex`, `_native.segment_calls`: the same
checkpoints at any interval), on hypothesis traces cut into any batches and on the
corpus."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.archive.indexes import Recorder, _Accumulator
from ccgformat.model import EventBatch, EventKind
from ccgformat.query.slice_stream import SliceTimes

from . import query_oracle as oracle
from . import traces
from .query_support import converted
from .test_slice_stream import pieces

try:
    from ccgformat._native import segment_calls, slice_cells  # noqa: F401
except ImportError as error:
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)


def assert_same(c: SliceTimes, reference: SliceTimes) -> None:
    assert c.cells.shape == reference.cells.shape
    assert np.array_equal(c.cells, reference.cells)
    assert c._last == reference._last
    assert [stack.tolist() for stack in c._stacks] == [stack.tolist() for stack in reference._stacks]


@settings(max_examples=100, deadline=None)
@given(traces.traces(), st.data())
def test_c_cells_equal_the_reference_on_hypothesis_traces(trace, data):
    graph = oracle.build(trace)
    times = sorted({e.time for events in trace.values() for e in events})
    bound = st.one_of(st.sampled_from(times), st.integers(times[0] - 5, times[-1] + 5))
    bounds = np.unique(np.array(data.draw(st.lists(bound, min_size=2, max_size=12)), np.int64))
    if len(bounds) < 2:
        bounds = np.array([times[0], times[-1] + 1], np.int64)
    states = data.draw(st.integers(0, 3))
    locations = sorted(trace)
    c, reference = (SliceTimes(len(locations), bounds, states, native=native) for native in (True, False))
    for row, location in enumerate(locations):
        batch = EventBatch.concat(list(graph.location(location).events()))
        for part in pieces(batch, data.draw(st.lists(st.integers(0, 64), max_size=5))):
            c.add(row, part)
            reference.add(row, part)
            assert_same(c, reference)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 400), st.sampled_from([EventKind.ENTER, EventKind.LEAVE, EventKind.METRIC]),
                          st.integers(0, 3)), max_size=80),
       st.integers(-10, 100), st.integers(1, 40), st.lists(st.integers(-10, 410), max_size=10), st.data())
def test_c_cells_equal_the_reference_under_many_bounds(events, first, step, more, data):
    """Many slices, events at any times in order, ties and intervals over many bounds
    included (the C walks on from the slice of the interval before): the same cells."""
    depth, kept = 0, []
    for time, kind, ref in sorted(events, key=lambda event: event[0]):  # no LEAVE without an open region
        if kind != EventKind.LEAVE or depth:
            kept.append((time, kind, ref))
            depth += {EventKind.ENTER: 1, EventKind.LEAVE: -1}.get(kind, 0)
    batch = EventBatch.from_columns([e[0] for e in kept], [e[1] for e in kept], ref=[e[2] for e in kept])
    edges = np.union1d(np.arange(first, 420, step), more).astype(np.int64)  # up to 430 slices
    c, reference = (SliceTimes(1, edges, 2, native=native) for native in (True, False))
    for part in pieces(batch, data.draw(st.lists(st.integers(0, 80), max_size=3))):
        c.add(0, part)
        reference.add(0, part)
        assert_same(c, reference)


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out"])
def test_c_cells_equal_the_reference_on_the_corpus(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    start, end = archive.time_range
    locations = sorted(archive.roots)
    for slices in (1, 7, 100):
        bounds = np.unique(np.linspace(start, end + 1, slices + 1).astype(np.int64))
        c, reference = (SliceTimes(len(locations), bounds, 0, native=native) for native in (True, False))
        for row, location in enumerate(locations):
            if archive.roots[location].events:
                for batch in archive.location(location).events(batch_size=997):
                    c.add(row, batch)
                    reference.add(row, batch)
        assert c.cells.any()
        assert_same(c, reference)


@pytest.mark.parametrize("native", [True, False])
def test_a_leave_without_an_open_region_is_refused(native):
    cells = SliceTimes(1, np.array([0, 10], np.int64), 2, native=native)
    cells.add(0, EventBatch.from_columns([1, 2], [EventKind.ENTER, EventKind.LEAVE], ref=[1, 1]))
    with pytest.raises(ValueError, match="LEAVE without an open region"):
        cells.add(0, EventBatch.from_columns([3], [EventKind.LEAVE], ref=[1]))


def recorded(batches: list[EventBatch], interval: int, native: bool, start: int = 0):
    recorder = Recorder(interval, _Accumulator(), native=native)
    for batch in batches:
        recorder.add(batch)
    return recorder.finish(start)


@settings(max_examples=100, deadline=None)
@given(traces.traces(), st.integers(1, 7), st.data())
def test_c_segment_calls_give_the_reference_checkpoints_on_hypothesis_traces(trace, interval, data):
    graph = oracle.build(trace)
    for location in sorted(trace):
        batch = EventBatch.concat(list(graph.location(location).events()))
        parts = pieces(batch, data.draw(st.lists(st.integers(0, 64), max_size=5)))
        expected = recorded(parts, interval, native=False)
        assert recorded(parts, interval, native=True) == expected


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out"])
def test_c_segment_calls_give_the_reference_checkpoints_on_the_corpus(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    closed = 0
    for location in sorted(archive.roots):
        if archive.roots[location].events:
            batches = list(archive.location(location).events(batch_size=997))
            for interval in (50, 1000):
                expected = recorded(batches, interval, native=False)
                closed += sum(len(point.durations) for point in expected)
                assert recorded(batches, interval, native=True) == expected
    assert closed


def test_a_leave_without_an_open_call_is_refused():
    with pytest.raises(ValueError, match="LEAVE without an open call"):
        segment_calls.calls(np.array([1]), np.array([EventKind.LEAVE]), np.array([0]), 0)
