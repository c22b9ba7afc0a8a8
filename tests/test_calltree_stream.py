"""The call tree of a large graph, replayed from its events (`query.calltree_stream`):
the same `CallTree` as the walk over the node tables (the reference) and as the brute
force, on hypothesis traces with batches that cut calls, windows whose bounds fall on
event times and location subsets, and on every corpus trace; a window walks only its
events; and its memory does not grow with the trace's length."""

from __future__ import annotations

import functools
import importlib
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Event, EventKind as K, Params
from ccgformat.query import calltree
from ccgformat.query.streaming import window_events

from . import query_oracle as oracle
from . import traces
from .query_support import (CORPUS, assert_memory_set_by_the_answer, converted, corpus_windows, ring_archive,
                            small_walks, synth, windows)
from .test_calltree import LOSSY, as_rows, check

calltree_module = importlib.import_module("ccgformat.query.calltree_query")
calltree_stream = importlib.import_module("ccgformat.query.calltree_stream")
streaming = importlib.import_module("ccgformat.query.streaming")

FIELDS = ("parent", "region", "path", "location", "calls", "inclusive", "exclusive")


def both(monkeypatch, source, *query):
    """The call tree replayed from the events (node tables forbidden) and walked over the
    node tables (the reference)."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    with monkeypatch.context() as patched:
        patched.setattr(calltree_module, "tables_for", None)
        streamed = calltree(source, *query)
    monkeypatch.setattr(streaming, "STREAM_NODES", 1 << 62)
    return streamed, calltree(source, *query)


def assert_same(streamed, reference) -> None:
    assert (streamed.start, streamed.stop, streamed.locations, streamed.timer_resolution, streamed.region_names) == \
        (reference.start, reference.stop, reference.locations, reference.timer_resolution, reference.region_names)
    for name in FIELDS:
        a, b = getattr(streamed, name), getattr(reference, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.sampled_from([1, 2, 3, 7, 64]), st.data())
def test_replayed_calltree_equals_the_reference(tmp_path_factory, trace, params, batch, data):
    """Graphs and archives (small blocks), batches of a few events (cutting calls),
    windows on event times or anywhere, any locations: the reference's tree, and the
    brute force's rows."""
    path = tmp_path_factory.mktemp("replay") / "t.ccg"
    ccgformat.write_trace(path, traces.definitions(), ((loc, traces.batches(e)) for loc, e in trace.items()),
                          params, nodes_per_block=3)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(streaming, "WALK_BATCH", batch)
    try:
        with ccgformat.open(path) as archive:
            for source in (oracle.build(trace, params), archive):
                for start, stop, locations in windows(data, trace, 3):
                    assert_same(*both(monkeypatch, source, start, stop, locations))
                    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
                    check(source, start, stop, locations)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_replayed_calltrees_equal_the_reference(tmp_path_factory, monkeypatch, name):
    """The whole trace and windows with bounds anywhere and on event times, over half of
    the locations; batches of 1,000 events."""
    archive = converted(tmp_path_factory, name)
    monkeypatch.setattr(streaming, "WALK_BATCH", 1000)
    assert_same(*both(monkeypatch, archive, None, None, None))
    for start, stop, locations in corpus_windows(archive, 5, 4):
        assert_same(*both(monkeypatch, archive, start, stop, locations))


def nested(depth: int, repeats: int) -> list[Event]:
    """``repeats`` times: region 0 called from itself ``depth`` deep, each level calling
    region 700 on its way in."""
    events, time = [], 0
    for _ in range(repeats):
        for _ in range(depth):
            events += [Event(time, K.ENTER, 0), Event(time + 1, K.ENTER, 700), Event(time + 3, K.LEAVE, 700)]
            time += 5
        for _ in range(depth):
            events.append(Event(time, K.LEAVE, 0))
            time += 2
    return events


@pytest.mark.parametrize("depth", [3, 300])  # levels held in 8 and in 16 bits
def test_deep_recursion_and_regions_beyond_the_definitions(monkeypatch, depth):
    """A graph without definitions (its region ids grow the paths' keys) and calls nested
    deeper than 255 levels, cut by batches of 50 events and by windows."""
    builder = ccgformat.Builder(Params())
    trace = {0: nested(depth, 3), 1: nested(depth // 2 + 1, 2)}
    for location, events in trace.items():
        builder.add(location, ccgformat.model.EventBatch.from_events(events))
    graph = builder.finish()
    monkeypatch.setattr(streaming, "WALK_BATCH", 50)
    last = max(e.time for e in trace[0])
    for window in ((None, None), (7, last // 2), (last // 3, None)):
        streamed, reference = both(monkeypatch, graph, *window, None)
        assert_same(streamed, reference)
        assert as_rows(streamed) == oracle.calltree(trace, *window)
    assert max(len(p) for p in streamed.paths) == depth + 1


def test_a_window_is_entered_with_the_calls_open_at_its_start(monkeypatch):
    """Calls open before the window count their part inside it, no call; a zero-length call
    entered at the start counts; the ones left at the start only lead to it."""
    events = [Event(0, K.ENTER, 0), Event(5, K.ENTER, 1), Event(10, K.ENTER, 2), Event(10, K.LEAVE, 2),
              Event(10, K.LEAVE, 1), Event(12, K.ENTER, 3), Event(30, K.LEAVE, 3), Event(40, K.LEAVE, 0)]
    graph = oracle.build({0: events})
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    assert as_rows(calltree(graph, 10, 20)) == {(0, (0,)): [0, 10, 2], (0, (0, 1)): [0, 0, 0],
                                                (0, (0, 1, 2)): [1, 0, 0], (0, (0, 3)): [1, 8, 8]}
    assert as_rows(calltree(graph, 11, 13)) == {(0, (0,)): [0, 2, 1], (0, (0, 3)): [1, 1, 1]}


@settings(max_examples=40, deadline=None)
@given(traces.traces(), st.data())
def test_window_events_are_those_of_the_window(trace, data):
    """The events at or after the start and before the stop, and the regions that the
    events before the start leave open."""
    graph = oracle.build(trace)
    rebuilt = {location: oracle.events_of(graph, location) for location in trace}
    for start, stop, locations in windows(data, trace, 3):
        for location in locations:
            events = rebuilt[location]
            stack, batches = window_events(graph.location(location), start, stop)
            walked = [e for batch in batches for e in batch.rows()]
            lo = oracle.NO_START if start is None else start
            hi = oracle.NO_STOP if stop is None else stop
            assert walked == [e for e in events if lo <= e.time < hi]
            want: list[int] = []
            for e in events:
                if e.time >= lo:
                    break
                if e.kind == K.ENTER:
                    want.append(e.ref)
                elif e.kind == K.LEAVE:
                    want.pop()
            assert stack == want


def test_a_window_walks_its_events_only(monkeypatch):
    """A tenth of a long location is a tenth of its events walked (the window is entered
    by a time search, not walked to)."""
    definitions, stream = synth.synthesize(1, 20_000, jitter=0.3, seed=4)
    builder = ccgformat.Builder(Params(), definitions)
    for batch in stream(0):
        builder.add(0, batch)
    graph = builder.finish()
    walked = []

    def counted(batches):
        for batch in batches:
            walked.append(len(batch))
            yield batch

    def counting(walker, start, stop):
        stack, batches = window_events(walker, start, stop)
        return stack, counted(batches)

    monkeypatch.setattr(calltree_stream, "window_events", counting)
    first, last = graph.roots[0].start, graph.roots[0].end
    start, stop = first + (last - first) // 2, first + (last - first) * 6 // 10
    streamed, reference = both(monkeypatch, graph, start, stop, None)
    assert_same(streamed, reference)
    inside = sum(1 for e in oracle.events_of(graph, 0) if start <= e.time < stop)
    assert sum(walked) == inside and 1_000 < inside < 3_000


def calltree_peak(folder, locations: int, events: int) -> tuple[int, int]:
    """The traced peak of the call tree of a jittered ring trace of about ``events``
    events per location, written as an archive, and its node count."""
    path = ring_archive(folder, locations, events)
    with ccgformat.open(path) as archive:
        first, _ = archive.time_range
        archive.calltree(first, first + 1)  # the modules' first use, outside the trace
        tracemalloc.start()
        try:
            tree = archive.calltree()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert int(tree.calls.sum()) > events // 4
        return peak, archive.stats.n


def test_the_calltree_of_a_long_archive_takes_memory_set_by_its_answer(tmp_path, monkeypatch):
    """The same jittered shape at two lengths, 4x apart: the graph grows about 4x, the
    memory of the replayed call tree does not. Bound: under 8 MiB, the longer within 1.3x
    the shorter plus 512 KiB - a batch of 1,024 events and its working columns, the paths
    and their sums (a few dozen), the block cache held to 1 MiB (blocks of 256 nodes;
    under the Python backend the decoded blocks and the walker's per-node memos, about
    4 MB) and the archive's facts per block, which grow a little. Measured: 0.31 and
    0.33 MB (native), 3.9 and 4.7 MB (Python); the node tables' walk, 0.44 and 1.7 MB,
    fails it."""
    small_walks(monkeypatch)
    assert_memory_set_by_the_answer(functools.partial(calltree_peak, tmp_path, 2), 512 << 10)
