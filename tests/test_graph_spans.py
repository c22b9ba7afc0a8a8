"""The bulk reader of graph/spans.py against the event-by-event Cursor walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import Builder, Params
from ccgformat.graph.spans import SpanReader
from ccgformat.graph.walk import LocationWalker
from ccgformat.model import Event, EventBatch
from ccgformat.model import EventKind as K
from .test_graph_roundtrip import build
from .traces import traces


def rows(batches) -> list:
    return [e for batch in batches for e in batch.rows()]


@settings(max_examples=60)
@given(traces(max_locations=2), st.sampled_from([Params(branching=3), Params(abs_dev=50, rel_dev=0.2, branching=4,
                                                                                 rel_metric=0.3)]),
       st.data())
def test_bulk_ranges_equal_the_cursor_walk(trace, params, data):
    graph = build(trace, params)
    for location in trace:
        walker = graph.location(location)
        count = len(walker)
        start = data.draw(st.integers(0, count))
        stop = data.draw(st.integers(start, count))
        batch_size = data.draw(st.integers(1, 9))
        span_events = data.draw(st.integers(1, 12))    # small: also descend into sub-trees
        cache_events = data.draw(st.integers(1, 40))   # small: the cache starts over often
        if start == stop:
            continue
        cursor = walker.cursor(start)
        expected = rows(LocationWalker.cursor_events(cursor, stop - start, cursor.next, batch_size))
        reader = SpanReader(graph.pool, walker.root, walker.start, span_events=span_events,
                            cache_events=cache_events)
        batches = list(reader.batches(start, stop, walker.cursor(start).metrics, batch_size))
        assert rows(batches) == expected
        assert all(len(b) == batch_size for b in batches[:-1]) and 0 < len(batches[-1]) <= batch_size


def test_batches_own_their_arrays():
    # f runs twice alike, so both calls are one node with one cached span; the first batch
    # is exactly that span at time 0
    events = [Event(0, K.ENTER, 1), Event(2, K.METRIC, 0, value=7), Event(3, K.LEAVE, 1),
              Event(4, K.ENTER, 1), Event(6, K.METRIC, 0, value=14), Event(7, K.LEAVE, 1)]
    builder = Builder()
    builder.add(0, EventBatch.from_events(events))
    graph = builder.finish()
    assert graph.metrics.n < graph.metrics.N
    walker = graph.location(0)
    seen = []
    reader = SpanReader(graph.pool, walker.root, walker.start, span_events=3)
    for batch in reader.batches(0, len(walker), {}, 3):
        seen += batch.rows()
        batch.time[:] = -1   # a caller may scribble on what it got
        batch.kind[:] = 0
    assert seen == events
