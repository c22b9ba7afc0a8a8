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
from ccgformat.query.slice_stream import SliceTimes, walked_times, windowed_times

from . import query_oracle as oracle
from . import traces
from .query_support import (CORPUS, assert_memory_set_by_the_answer, converted, ring_archive, ring_graph,
                            small_walks, with_tables)
from .test_aggregation_tables import LOSSY, pyramid_windows, tree_definitions, written
from .test_query_aggregate import check, draw_query

tables_module = importlib.import_module("ccgformat.query.aggregate_tables")
slice_stream = importlib.import_module("ccgformat.query.slice_stream")
streaming = importlib.import_module("ccgformat.query.streaming")
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


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_windowed_slices_match_brute_force_inside_the_windows(trace, params, data):
    """Windows between some of the bounds (on event times, outside the trace, touching
    each other; walked one by one, or as one span with the cells between them cleared):
    inside them the brute force's cells, outside them zero."""
    graph = oracle.build(trace, params)
    times = sorted({e.time for location in trace for e in oracle.events_of(graph, location)})
    bound = st.one_of(st.sampled_from(times), st.integers(times[0] - 5, times[-1] + 5))
    boundaries = np.unique(np.array(data.draw(st.lists(bound, min_size=2, max_size=10)) + [times[0] - 6],
                                    np.int64))
    chosen = data.draw(st.lists(st.booleans(), min_size=len(boundaries) - 1, max_size=len(boundaries) - 1))
    windows = [(int(boundaries[i]), int(boundaries[i + 1])) for i, keep in enumerate(chosen) if keep]
    locations = sorted(trace)
    regions = 4
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(slice_stream, "WINDOWS_APART", data.draw(st.sampled_from([0, 1, 64])))
    try:
        got = windowed_times(graph, locations + [9], boundaries, regions, windows)
    finally:
        monkeypatch.undo()
    events = {location: oracle.events_of(graph, location) for location in locations}
    expected = oracle.timeline(events, boundaries.tolist(), np.arange(regions), regions)
    expected[:, ~np.array(chosen, bool)] = 0
    assert np.array_equal(got[:len(locations)], expected) and not got[len(locations):].any()


@settings(max_examples=30, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_aggregate_of_a_large_graph_walks_windows_and_matches_brute_force(tmp_path_factory, trace, params, data):
    """`aggregate` as a large graph answers it (pieces walked as windows; without tables
    the whole window walked in batches), from the tables and from the graph alone."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    monkeypatch.setattr(tables_module, "tables_for", None)  # never the node tables
    monkeypatch.setattr(importlib.import_module("ccgformat.query.aggregate_query"), "location_times", None)
    try:
        with written(tmp_path_factory.mktemp("windows") / "t.ccg", trace, params) as archive:
            for _ in range(3):
                locations = data.draw(st.lists(st.sampled_from(archive.locations), min_size=1, unique=True))
                check(archive, *pyramid_windows(data, archive, trace), data.draw(st.sampled_from(["region", "group"])),
                      locations)
        graph = oracle.build(trace, params)
        check(graph, *draw_query(data, trace, graph))
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out"])
def test_corpus_aggregate_walked_as_windows(tmp_path_factory, monkeypatch, name):
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    for archive in (converted(tmp_path_factory, name), with_tables(tmp_path_factory, name)):
        assert streaming.streams(archive)
        check(archive, 17, None, None, "region", archive.locations)
        first, last = archive.time_range
        check(archive, 7, first + (last - first) // 3, last - (last - first) // 5, "group", archive.locations[1:])


def both_levels(source, monkeypatch, count=None, sliced=None):
    """The levels (and the level of ``sliced`` slices) streamed and walked over the node
    tables (the reference)."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    streamed = list(tables_module.levels(source, count, sliced))
    monkeypatch.setattr(streaming, "STREAM_NODES", 1 << 62)
    return streamed, list(tables_module.levels(source, count, sliced))


def assert_same_levels(streamed, reference):
    assert [level[:3] for level in streamed] == [level[:3] for level in reference]
    for (k, _, _, a), (_, _, _, b) in zip(streamed, reference):
        assert a.shape == b.shape and np.array_equal(a, b), k


@settings(max_examples=30, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.sampled_from([None, 1, 4]),
       st.sampled_from([None, 7, 30, 3000]))
def test_streamed_levels_equal_the_reference(trace, params, count, sliced):
    monkeypatch = pytest.MonkeyPatch()
    try:
        graph = oracle.build_with(tree_definitions(), trace, params)
        streamed, reference = both_levels(graph, monkeypatch, count, sliced)
        assert_same_levels(streamed, reference)
        assert [k for k, *_ in streamed][-1] == (tables_module.SLICED if sliced else len(streamed) - 1)
        if sliced:
            assert streamed[-1][3].shape[1] == sliced
    finally:
        monkeypatch.undo()


@settings(max_examples=15, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]))
def test_both_ways_of_making_the_tables_write_the_same_bytes(tmp_path_factory, trace, params):
    """The writer's tables from the node tables (a small graph) and from the event walk
    (`slice_stream`, a large one): the same archive, byte for byte, the level of 3,000
    slices included."""
    monkeypatch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("ways")
    try:
        graph = oracle.build_with(tree_definitions(), trace, params)
        for name, nodes in (("streamed", 0), ("tabulated", 1 << 62)):
            monkeypatch.setattr(streaming, "STREAM_NODES", nodes)
            ccgformat.save_graph(graph, folder / f"{name}.ccg", aggregation=1000.0, bundle=False)
    finally:
        monkeypatch.undo()
    data = (folder / "streamed.ccg").read_bytes()
    assert data == (folder / "tabulated.ccg").read_bytes()
    with ccgformat.open(folder / "streamed.ccg") as archive:
        assert archive.aggregation_tables.sliced is not None


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
    streamed, reference = both_levels(archive, monkeypatch, sliced=3000)
    assert_same_levels(streamed, reference)
    # and what the archive holds, as the writer made it
    tables = archive.aggregation_tables
    for level in tables.levels:
        assert np.array_equal(level.dense(), streamed[level.level][3])
    assert tables.sliced is None or np.array_equal(tables.sliced.dense(), streamed[-1][3])


def test_walked_times_of_a_location_without_events_are_zero():
    graph = oracle.build({0: [ccgformat.model.Event(0, 0, 0), ccgformat.model.Event(9, 1, 0)]})
    cells = walked_times(graph, [0, 5], np.array([0, 5, 10]), 2)
    assert cells[1].sum() == 0 and cells[0, :, 0].tolist() == [5, 4]


def levels_peak(locations: int, events: int) -> tuple[int, int]:
    """The traced peak of making every level of a jittered ring trace of about ``events``
    events per location (tools/synth.py), and its node count."""
    graph = ring_graph(locations, events, seed=1)
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
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    monkeypatch.setattr(streaming, "WALK_BATCH", 1024)
    monkeypatch.setattr(walk_module, "SpanReader", functools.partial(spans_module.SpanReader, cache_events=1 << 12))
    short_peak, short_nodes = levels_peak(2, 10_000)
    long_peak, long_nodes = levels_peak(2, 40_000)
    assert long_nodes > 3 * short_nodes
    bound = 4 << 20
    assert short_peak < bound and long_peak < bound, (short_peak, long_peak)
    assert long_peak < 1.3 * short_peak + (256 << 10), (short_peak, long_peak)


def same_timelines(source, monkeypatch, *arguments, **options):
    """The timeline of a large graph (the model's cells) and of the node tables' walk."""
    from ccgformat.query.timeline_query import timeline
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    streamed = timeline(source, *arguments, **options)
    monkeypatch.setattr(streaming, "STREAM_NODES", 1 << 62)
    reference = timeline(source, *arguments, **options)
    assert (streamed.rows, streamed.groups, streamed.locations) == (reference.rows, reference.groups,
                                                                    reference.locations)
    for name in ("boundaries", "exclusive", "normaliser", "row_starts"):
        assert np.array_equal(getattr(streamed, name), getattr(reference, name)), name


@settings(max_examples=40, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_timeline_by_location_of_a_large_graph_equals_the_walk(tmp_path_factory, trace, params, data):
    monkeypatch = pytest.MonkeyPatch()
    try:
        with written(tmp_path_factory.mktemp("timeline") / "t.ccg", trace, params) as archive:
            for source in (archive, oracle.build(trace, params)):
                slices, start, stop = pyramid_windows(data, archive, trace)
                first, last = archive.time_range
                start = first if start is None else start
                stop = last + 1 if stop is None else stop
                locations = data.draw(st.lists(st.sampled_from(archive.locations), min_size=1, unique=True))
                same_timelines(source, monkeypatch, start, stop, slices, locations,
                               color_by=data.draw(st.sampled_from(["group", "region"])),
                               height=data.draw(st.integers(1, 4)))
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out"])
def test_corpus_timeline_by_location_of_a_large_graph(tmp_path_factory, monkeypatch, name):
    for archive in (converted(tmp_path_factory, name), with_tables(tmp_path_factory, name)):
        first, last = archive.time_range
        # 1,000 slices: more windows than WINDOWS_APART, so one span is walked (200 do that
        # too, in a fifth of the time of the pure-Python walk)
        same_timelines(archive, monkeypatch, first, last + 1, 1000 if ccgformat.backend == "native" else 200)
        same_timelines(archive, monkeypatch, first + (last - first) // 3, last, 37, color_by="region", height=2)


def aggregate_peak(folder, locations: int, events: int) -> tuple[int, int]:
    """The traced peak of `aggregate` (30 slices) and of the timeline (37 columns) of a
    jittered ring trace of about ``events`` events per location, written as an archive
    with its pyramid (without the level of 3,000 slices, which would answer 30 slices with
    no walk and whose cells fill as the trace grows, up to its 3,000 x nodes x regions),
    and its node count."""
    path = ring_archive(folder, locations, events, aggregation=1000.0, slices=None)
    with ccgformat.open(path) as archive:
        nodes = archive.stats.n
        first, last = archive.time_range
        tracemalloc.start()
        try:
            archive.aggregate(30)
            archive.timeline(first, last + 1, 37)
            return tracemalloc.get_traced_memory()[1], nodes
        finally:
            tracemalloc.stop()


def test_the_model_and_timeline_of_a_long_archive_take_memory_set_by_their_answer(tmp_path, monkeypatch):
    """The same jittered shape at two lengths, 4x apart, as archives with their tables:
    the graph grows about 4x, the memory of the model and the timeline (the windows
    walked where the slices cut the tables' cells) does not. Bound: the tables' cells and
    the answer (2 locations x 1,024 cells x a few regions), a batch of 1,024 events, the
    block cache held to 1 MiB (blocks of 256 nodes; decoded blocks are numpy arrays under the
    Python backend), and the archive's facts per block."""
    small_walks(monkeypatch)
    # the archive's per-block facts (4x the blocks) grow a little; a walk of every node would 4x
    assert_memory_set_by_the_answer(functools.partial(aggregate_peak, tmp_path, 2), 1 << 20)
