"""The communication events of logical time and the calls that hold them, against a walk
of the rebuilt events with a stack of open calls; batches of a few events, so that calls
span batches, and many small locations walked together."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.model import Definitions, Event, EventKind as K, Location, Region
from ccgformat.query import logical_walk
from ccgformat.query.logical_matching import partners
from ccgformat.query.logical_walk import COLLECTIVE_KINDS, POINT_TO_POINT_KINDS, communication_events
from ccgformat.query.messages_query import stream_kinds

from . import query_oracle as oracle
from . import traces
from .test_query_messages import message_traces, posted_receive_traces, request_traces

KINDS = POINT_TO_POINT_KINDS + COLLECTIVE_KINDS


def brute_force(graph) -> list[tuple[int, ...]]:
    """(location, index, time, kind, enter, exit, leave) of every wanted event: the
    innermost call open at it is the top of a stack of ENTERs, closed by its LEAVE."""
    out = []
    for location in sorted(graph.roots):
        events = oracle.events_of(graph, location)
        stack: list[int] = []
        found: list[list[int]] = []
        held: dict[int, list[int]] = {}  # ENTER index -> rows it holds innermost
        for i, e in enumerate(events):
            if e.kind == K.ENTER:
                stack.append(i)
            elif e.kind == K.LEAVE and stack:
                for row in held.pop(stack.pop(), []):
                    found[row][5:7] = [e.time, i]
            elif e.kind in KINDS:
                row = [location, i, e.time, int(e.kind), events[stack[-1]].time if stack else e.time, e.time, -1]
                if stack:
                    held.setdefault(stack[-1], []).append(len(found))
                found.append(row)
        out += [tuple(row) for row in found]
    return out


def walked(graph) -> list[tuple[int, ...]]:
    rows = communication_events(graph, KINDS)
    return list(zip(*(getattr(rows, name).tolist()
                      for name in ("location", "index", "time", "kind", "enter", "exit", "leave"))))


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([1, 2, 3, 7, 65536]))
def test_events_and_their_calls(trace, batch):
    graph = oracle.build(trace)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logical_walk, "WALK_BATCH", batch)  # locations longer than this are walked in batches
        assert walked(graph) == brute_force(graph)


@pytest.mark.skipif(ccgformat.backend != "native", reason="the native core is not built")
@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.sampled_from([1, 2, 3, 7, 65536]), st.sampled_from([1, 5, 1 << 22]))
def test_the_native_calls_are_the_references(trace, batch, group):
    """`Calls` by the native core's scan finds what its numpy reference finds, calls
    spanning batches and small locations walked together."""
    graph = oracle.build(trace)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logical_walk, "WALK_BATCH", batch)
        patch.setattr(logical_walk, "EVENTS_PER_GROUP", group)
        native = walked(graph)
        patch.setattr(logical_walk, "backends", SimpleNamespace(native=lambda: False))
        assert walked(graph) == native


@pytest.mark.parametrize("group", [1, 5, 1 << 22])
def test_many_small_locations_walked_together(group, monkeypatch):
    """Locations of a few events, walked many at once (and in groups of ``group`` events)."""
    trace = {location: [Event(0, K.ENTER, 0), Event(1, K.ENTER, 1),
                        Event(2, K.SEND, (location + 1) % 7, 0, 0, 0, 8), Event(3, K.LEAVE, 1),
                        Event(4, K.RECV, (location - 1) % 7, 0, 0, 0, 8), Event(5 + location, K.LEAVE, 0)]
             for location in range(7)}
    graph = oracle.build_with(Definitions(regions=[Region("main"), Region("MPI_Send")],
                                          locations=[Location(f"rank {i}") for i in range(7)]), trace)
    monkeypatch.setattr(logical_walk, "EVENTS_PER_GROUP", group)
    got = walked(graph)
    assert got == brute_force(graph)
    # the SEND is held by call 1 (events 1..3), the RECV by the outer call (0..5)
    assert got[:2] == [(0, 2, 2, int(K.SEND), 1, 3, 3), (0, 4, 4, int(K.RECV), 0, 5, 5)]


@settings(max_examples=60, deadline=None)
@given(st.one_of(traces.traces(), message_traces(), request_traces(), posted_receive_traces()),
       st.sampled_from([1, 2, 5, 65536]))
def test_partners_are_the_pairs_of_message_matching(trace, window):
    """Matching run over the walked events (windows of one event up) pairs what
    `messages` pairs - receives in the order they were posted - each end found by its
    place: the pairs as (sender, send time, receiver, receive time) are the brute force's."""
    graph = oracle.build(trace)
    found = partners(graph, communication_events(graph, stream_kinds(graph)), KINDS, window)
    events, message = found.events, found.message
    receives = np.flatnonzero(np.isin(events.kind, (K.RECV, K.IRECV)) & (message >= 0))
    sends = message[receives]
    assert np.all(message[sends] == receives) and np.all(np.isin(events.kind[sends], (K.SEND, K.ISEND)))
    got = Counter(zip(events.location[sends].tolist(), events.time[sends].tolist(),
                      events.location[receives].tolist(), events.time[receives].tolist()))
    want, _ = oracle.messages({location: oracle.events_of(graph, location) for location in sorted(graph.roots)})
    assert got == Counter([row[:4] for row, count in want.items() for _ in range(count)])
