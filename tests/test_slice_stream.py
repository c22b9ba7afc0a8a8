"""Region times per slice from streamed events (`query.slice_stream`) and the aggregation
levels made from them: against the brute force over the rebuilt events, against the walk
over the node tables (the reference), on hypothesis traces and the corpus; and the memory
the levels take does not grow with the trace's length."""

from __future__ import annotations

import functools
import importlib
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.model import EventBatch
from ccgformat.query.slice_stream import SliceTimes, walked_times

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, with_tables
from .test_aggregation_tables import LOSSY, tree_definitions

tables_module = importlib.import_module("ccgformat.query.aggregate_tables")
slice_stream = importlib.import_module("ccgformat.query.slice_stream")
walk_module = importlib.import_module("ccgformat.graph.walk")
spans_module = importlib.import_module("ccgformat.graph.spans")


def pieces(batch: EventBatch, cuts: list[int]) -> list[EventBatch]:
    """``batch`` cut at the given event indexes (any, sorted or not, repeated or not)."""
    edges = sorted({0, len(batch), *(c % (len(batch) + 1) for c in cuts)})
    return [batch[a:b] for a, b in zip(edges, edges[1:])]


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.data())
def test_streamed_slices_match_brute_force(trace, data):
    """Any increasing bounds (outside the trace, on event times, uneven), any cuts of the
    event stream into batches: the cells are the brute force's."""
    graph = oracle.build(trace)
    times = sorted({e.time for events in trace.values() for e in events})
    lo, hi = times[0], times[-1] + 1
    bound = st.one_of(st.sampled_from(times), st.integers(lo - 5, hi + 5))
    boundaries = np.unique(np.array(data.draw(st.lists(bound, min_size=2, max_size=12)), np.int64))
    if len(boundaries) < 2:
        boundaries = np.array([lo, hi], np.int64)
    locations = sorted(trace)
    regions = 4
    cells = SliceTimes(len(locations), boundaries, 0)  # grows to the regions that hold time
    for row, location in enumerate(locations):
        batch = EventBatch.concat(list(graph.location(location).events()))
        for part in pieces(batch, data.draw(st.lists(st.integers(0, 64), max_size=5))):
            cells.add(row, part)
    events = {location: oracle.events_of(graph, location) for location in locations}
    expected = oracle.timeline(events, boundaries.tolist(), np.arange(regions), regions)
    got = np.zeros_like(expected)
    got[:, :, :cells.states] = cells.cells
    assert np.array_equal(got, expected)


def both_levels(source, monkeypatch, count=None):
    """The levels streamed and walked over the node tables (the reference)."""
    monkeypatch.setattr(tables_module, "STREAM_NODES", 0)
    streamed = list(tables_module.levels(source, count))
    monkeypatch.setattr(tables_module, "STREAM_NODES", 1 << 62)
    return streamed, list(tables_module.levels(source, count))


def assert_same_levels(streamed, reference):
    assert [level[:3] for level in streamed] == [level[:3] for level in reference]
    for (k, _, _, a), (_, _, _, b) in zip(streamed, reference):
        assert a.shape == b.shape and np.array_equal(a, b), k


@settings(max_examples=30, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.sampled_from([None, 1, 4]))
def test_streamed_levels_equal_the_reference(trace, params, count):
    monkeypatch = pytest.MonkeyPatch()
    try:
        graph = oracle.build_with(tree_definitions(), trace, params)
        assert_same_levels(*both_levels(graph, monkeypatch, count))
    finally:
        monkeypatch.undo()


def test_regions_beyond_the_definitions_count_as_the_reference_counts_them(monkeypatch):
    """A graph built without definitions: the region ids that hold time make the states
    (state_count)."""
    trace = {0: [ccgformat.model.Event(0, 0, 5), ccgformat.model.Event(10, 1, 5)],
             1: [ccgformat.model.Event(3, 0, 1), ccgformat.model.Event(4, 0, 7), ccgformat.model.Event(6, 1, 7),
                 ccgformat.model.Event(8, 1, 1)]}
    builder = ccgformat.Builder(Params())  # no definitions: any region id
    for location, events in trace.items():
        builder.add(location, EventBatch.from_events(events))
    streamed, reference = both_levels(builder.finish(), monkeypatch)
    assert streamed[0][3].shape[-1] == 8
    assert_same_levels(streamed, reference)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_levels_streamed_equal_the_reference(tmp_path_factory, monkeypatch, name):
    archive = with_tables(tmp_path_factory, name)
    streamed, reference = both_levels(archive, monkeypatch)
    assert_same_levels(streamed, reference)
    # and what the archive holds, as the writer made it
    for level in archive.aggregation_tables.levels:
        assert np.array_equal(level.dense(), streamed[level.level][3])


def test_walked_times_of_a_location_without_events_are_zero():
    graph = oracle.build({0: [ccgformat.model.Event(0, 0, 0), ccgformat.model.Event(9, 1, 0)]})
    cells = walked_times(graph, [0, 5], np.array([0, 5, 10]), 2)
    assert cells[1].sum() == 0 and cells[0, :, 0].tolist() == [5, 4]


def levels_peak(locations: int, events: int) -> tuple[int, int]:
    """The traced peak of making every level of a jittered ring trace of about ``events``
    events per location (tools/synth.py), and its node count."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import synth
    definitions, stream = synth.synthesize(locations, events, jitter=0.3, seed=1, pattern="ring")
    builder = ccgformat.Builder(Params(), definitions)
    for location in range(locations):
        for batch in stream(location):
            builder.add(location, batch)
    graph = builder.finish()
    tracemalloc.start()
    try:
        for _ in tables_module.levels(graph):
            pass
        return tracemalloc.get_traced_memory()[1], len(graph.pool)
    finally:
        tracemalloc.stop()


def test_the_levels_of_a_long_graph_take_memory_set_by_their_cells(monkeypatch):
    """The same jittered shape at two lengths, 4x apart: the graph grows about 4x, the
    memory the levels take does not (bound: the finest level's cells, 2 locations x 1,024
    slices x a few regions x 8 bytes, a few times over, plus a batch's columns: batches of
    1,024 events here, so that both lengths take many; and the Python walker's cache of
    expanded sub-trees, bounded by its own constant, made small, so that both fill it)."""
    monkeypatch.setattr(tables_module, "STREAM_NODES", 0)
    monkeypatch.setattr(slice_stream, "WALK_BATCH", 1024)
    monkeypatch.setattr(walk_module, "SpanReader", functools.partial(spans_module.SpanReader, cache_events=1 << 12))
    short_peak, short_nodes = levels_peak(2, 10_000)
    long_peak, long_nodes = levels_peak(2, 40_000)
    assert long_nodes > 3 * short_nodes
    bound = 4 << 20
    assert short_peak < bound and long_peak < bound, (short_peak, long_peak)
    assert long_peak < 1.3 * short_peak + (256 << 10), (short_peak, long_peak)
