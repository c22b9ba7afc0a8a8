"""Lossless build -> walk gives back exactly the input, by every access path."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ccgformat import Builder, Params
from .traces import batches, call_stack_at, traces


def build(trace: dict, params: Params = Params()):
    builder = Builder(params)
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    return builder.finish()


lossless_params = st.builds(Params, branching=st.integers(2, 6), search_length=st.integers(1, 6),
                            abs_dev=st.sampled_from([0, 100]))


@given(traces(), lossless_params)
def test_forward_and_backward_iteration_reproduce_the_input(trace, params):
    graph = build(trace, params)
    for location, events in trace.items():
        walker = graph.location(location)
        assert len(walker) == len(events)
        forward = [e for batch in walker.events(batch_size=7) for e in batch.rows()]
        assert forward == events
        backward = [e for batch in walker.events(reverse=True, batch_size=5) for e in batch.rows()]
        assert backward[::-1] == events


@given(traces(max_locations=2), lossless_params, st.data())
def test_random_access_and_cursor_moves_agree_with_the_input(trace, params, data):
    graph = build(trace, params)
    for location, events in trace.items():
        walker = graph.location(location)
        if not events:
            continue
        for i in data.draw(st.lists(st.integers(0, len(events) - 1), max_size=5)):
            assert walker.event(i) == events[i]
            cursor = walker.cursor(i)
            steps = data.draw(st.lists(st.booleans(), max_size=8))
            position = i
            for forward in steps:
                moved = cursor.next() if forward else cursor.prev()
                position += 1 if forward else -1
                assert moved == (0 <= position < len(events))
                if not moved:
                    break
                assert cursor.event() == events[position]


@given(traces(max_locations=2), lossless_params, st.data())
def test_find_and_call_stack_agree_with_a_plain_search(trace, params, data):
    graph = build(trace, params)
    for location, events in trace.items():
        walker = graph.location(location)
        times = np.array([e.time for e in events], dtype=np.int64)
        probes = [int(t) + d for t in times[:: max(1, len(times) // 6)] for d in (-1, 0, 1)]
        probes += data.draw(st.lists(st.integers(-5, 10**12 + 5000), max_size=4))
        for t in probes:
            assert walker.find(t) == int(np.searchsorted(times, t, side="left"))
            assert walker.call_stack(t) == call_stack_at(events, t)

