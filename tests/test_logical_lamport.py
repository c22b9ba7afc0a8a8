"""Lamport's scheme against brute force on the rebuilt events: messages matched with a
queue per (sender, receiver, communicator, tag) - a non-blocking receive where it was
posted, as message matching pairs it - and steps relaxed until nothing changes;
blocking and non-blocking messages whose completions reorder, equal times, the graph and
its archive; a cycle of messages is a `TraceError`."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings

import ccgformat
from ccgformat.errors import TraceError
from ccgformat.model import Event, EventBatch, EventKind as K
from ccgformat.query.logical_query import logical

from . import query_oracle as oracle
from .logical_support import build, calls, definitions, plans


def brute_force(graph) -> dict[tuple[int, int], int]:
    """(location, event index) -> Lamport step of every point-to-point event."""
    events = {location: oracle.events_of(graph, location) for location in sorted(graph.roots)}
    ends = [(location, i, e) for location, rows in events.items() for i, e in enumerate(rows)
            if e.kind in (K.SEND, K.ISEND, K.RECV, K.IRECV)]
    queues: dict[tuple[int, ...], deque] = {}
    send_of: dict[tuple[int, int], tuple[int, int]] = {}
    for location, i, e in ends:  # per location in order: the k-th send of a channel with its k-th receive
        if e.kind in (K.SEND, K.ISEND):
            queues.setdefault(("s", location, e.ref, e.comm, e.tag), deque()).append((location, i))
    for location, rows in events.items():  # receives in the order they were posted
        posts = oracle.receive_posts(rows)
        for i in sorted(posts, key=posts.get):
            e = rows[i]
            queue = queues.get(("s", e.ref, location, e.comm, e.tag))
            if queue:
                send_of[location, i] = queue.popleft()
    step = {(location, i): 0 for location, i, _ in ends}
    previous = {}
    for location in events:
        mine = [(loc, i) for loc, i, _ in ends if loc == location]
        previous.update(zip(mine[1:], mine[:-1]))
    for _ in range(len(ends) + 1):
        changed = False
        for key in step:
            want = max([0] + [step[before[key]] + 1 for before in (previous, send_of) if key in before])
            if want != step[key]:
                step[key], changed = want, True
        if not changed:
            return step
    raise TraceError("a cycle", location=0, index=0, time=None)


@settings(max_examples=120, deadline=None)
@given(plans())
def test_lamport_steps_match_brute_force(example):
    trace, _ = example
    graph = build(trace)
    want = brute_force(graph)
    result = logical(graph, "lamport")
    got = dict(zip(zip(result.location.tolist(), result.event.tolist()), result.step.tolist()))
    assert got == want
    assert set(result.phase.tolist()) <= {0}


@settings(max_examples=15, deadline=None)
@given(plans())
def test_an_archive_gives_its_graphs_steps(tmp_path_factory, example):
    trace, locations = example
    path = tmp_path_factory.mktemp("lamport") / "trace.ccg"
    ccgformat.write_trace(path, definitions(locations), [(location, [EventBatch.from_events(events)])
                                                         for location, events in trace.items()], ccgformat.Params())
    with ccgformat.open(path) as archive:
        got = archive.logical("lamport")
    want = logical(build(trace), "lamport")
    for name in ("location", "event", "step", "lateness", "partner"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist()


def test_receives_completing_out_of_order():
    """Rank 1 posts two receives from rank 0 and completes the second-posted first; message
    matching pairs receives in the order they were posted, so the first-posted takes the
    first send though it completes last. Rank 0: SEND (step 0), SEND (1). Rank 1: the
    IRECV completing first takes the second send (max(0, 1 + 1) = 2), the other the first
    (max(2 + 1, 0 + 1) = 3)."""
    trace = {0: calls([(K.SEND, 1, 0), (K.SEND, 1, 0)]),
             1: calls([(K.IRECV_REQUEST, 7), (K.IRECV_REQUEST, 8), (K.IRECV, 0, 0, 8), (K.IRECV, 0, 0, 7)])}
    result = logical(build(trace), "lamport")
    assert result.step.tolist() == [0, 1, 2, 3]
    assert result.partner.tolist() == [3, 2, 1, 0]


def test_a_cycle_of_messages_is_an_error():
    """Both ranks receive before they send (a deadlock no run can record): no clock orders it."""
    trace = {0: calls([(K.RECV, 1, 0), (K.SEND, 1, 0)]), 1: calls([(K.RECV, 0, 0), (K.SEND, 0, 0)])}
    with pytest.raises(TraceError, match="location 0, event 2.*cycle of messages"):
        logical(build(trace), "lamport")


def test_sends_at_one_time_pair_in_order():
    """Rank 0 sends twice to rank 1 at the same time; rank 1 receives at 10 and 20. The
    first send (step 0) pairs with the first receive: max(0, 0 + 1) = 1; the second
    (step 1) with the second: max(1 + 1, 1 + 1) = 2. Paired the other way round they
    would be 2 and 3."""
    send = [Event(0, K.ENTER, 0), Event(5, K.SEND, 1, 0, 0, 0, 8), Event(5, K.SEND, 1, 0, 0, 0, 8), Event(30, K.LEAVE, 0)]
    receive = [Event(0, K.ENTER, 0), Event(10, K.RECV, 0, 0, 0, 0, 8), Event(20, K.RECV, 0, 0, 0, 0, 8),
               Event(30, K.LEAVE, 0)]
    result = logical(build({0: send, 1: receive}), "lamport")
    assert result.step.tolist() == [0, 1, 1, 2]
    assert result.partner.tolist() == [2, 3, 0, 1]
