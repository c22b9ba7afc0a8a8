"""Streamed message matching (`iter_messages`): the message events of all locations merged
in time order, matched a window at a time with per-channel queues. Against brute force
(the stream's order, peak_pending, collectives), with windows of one event up, selected
from the node tables or walked; on hypothesis traces and the corpus; and the memory it
takes does not grow with the trace's length."""

from __future__ import annotations

import functools
import importlib
import io
import json
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Event, EventKind as K
from ccgformat.query import iter_messages, messages

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, converted, ring_graph, windows
from .test_query_messages import message_traces, posted_receive_traces, request_traces

events_module = importlib.import_module("ccgformat.query.messages_events")
streaming = importlib.import_module("ccgformat.query.streaming")
walk_module = importlib.import_module("ccgformat.graph.walk")
spans_module = importlib.import_module("ccgformat.graph.spans")


@st.composite
def collective_traces(draw: st.DrawFn) -> dict[int, list[Event]]:
    """Locations taking part in collectives on two communicators, some skipped by a
    location, some without a begin, with an operation and root of their own now and then;
    and point-to-point messages between them."""
    count = draw(st.integers(2, 3))
    rows: dict[int, list[Event]] = {}
    operations = draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 2)), min_size=1, max_size=8))
    for location in range(count):
        time, events = 0, [Event(0, K.ENTER, 0)]
        for comm, operation in operations:
            time += draw(st.integers(0, 4))
            if draw(st.integers(0, 5)) == 0:
                continue  # this location skips it
            if draw(st.integers(0, 3)):
                events.append(Event(time, K.COLL_BEGIN))
                time += draw(st.integers(0, 3))
            root = draw(st.sampled_from([0, 0, 1]))
            events.append(Event(time, K.COLL_END, operation, comm, root, 0, draw(st.sampled_from([0, 8])), 8))
            if draw(st.booleans()):
                time += draw(st.integers(0, 2))
                peer = (location + draw(st.integers(1, count - 1))) % count
                events.append(Event(time, draw(st.sampled_from([K.SEND, K.RECV])), peer, comm, 0, 0, 8))
        rows[location] = [*events, Event(time + 1, K.LEAVE, 0)]
    return rows


def answers(source, start=None, stop=None, locations=None, window=None, walked=False, ahead=False,
            small_batches=False):
    """The stream's messages in order (tuples of `oracle.message_stream`) and its rest,
    with any window size (1: one event a window), source, and the walk in this thread or
    ahead in its own (with ``small_batches``, the walk batches of many locations: the merge
    runs ahead with the walks)."""
    saved = events_module.SELECT_EVENTS, events_module.WALK_EVENTS
    events_module.SELECT_EVENTS = -1 if walked else 1 << 62
    if small_batches:
        events_module.WALK_EVENTS = 1
    try:
        stream = iter_messages(source, start, stop, locations, ahead=ahead, **({"window": window} if window else {}))
        rows = [(m["sender"], m["send_time"], m["receiver"], m["recv_time"], m["comm"], m["tag"], m["size"],
                 m["send_done"], m["recv_posted"], m["recv_size"]) for chunk in stream for m in chunk.rows()]
    finally:
        events_module.SELECT_EVENTS, events_module.WALK_EVENTS = saved
    rest = (stream.unmatched, [(c.comm, c.index, c.operation, c.participants, c.complete) for c in stream.collectives],
            stream.peak_pending, stream.events)
    return rows, rest


def check_stream(source, trace, start=None, stop=None, locations=None):
    """The stream equals brute force, the same with every window size and either source,
    and `messages` holds the same answer sorted by send time."""
    chosen = sorted(trace) if locations is None else locations
    events = {location: oracle.events_of(source, location) for location in chosen}
    want_rows, want_peak = oracle.message_stream(events, start, stop)
    rows, rest = answers(source, start, stop, locations)
    assert rows == want_rows
    assert rest[1] == oracle.collectives(events, start, stop)
    assert rest[2] == want_peak
    _, left = oracle.messages(events, start, stop)
    assert sorted((u.location, u.time) for u in rest[0]) == left
    for window, walked, ahead in ((1, False, True), (2, True, False), (3, True, True), (None, True, False)):
        assert answers(source, start, stop, locations, window, walked, ahead) == (rows, rest)
    assert answers(source, start, stop, locations, 2, True, True, small_batches=True) == (rows, rest)
    whole = messages(source, start, stop, locations)
    assert (whole.unmatched, whole.peak_pending, whole.events) == (rest[0], rest[2], rest[3])
    assert [(c.comm, c.index, c.operation, c.participants, c.complete) for c in whole.collectives] == rest[1]
    assert list(zip(*(whole.columns[name].tolist() for name in ("send_time", "sender")))) == \
        sorted((row[1], row[0]) for row in rows)
    assert sorted(tuple(m.values()) for m in whole.rows()) == \
        sorted(row[:7] + (row[9], row[7], row[8]) for row in rows)


@settings(max_examples=60, deadline=None)
@given(st.one_of(traces.traces(), message_traces(), request_traces(), posted_receive_traces(), collective_traces()),
       st.data())
def test_the_stream_is_the_brute_force_in_every_window(trace, data):
    graph = oracle.build(trace)
    check_stream(graph, trace)
    for start, stop, locations in windows(data, trace, 2, (K.SEND, K.ISEND, K.RECV, K.IRECV, K.COLL_END)):
        check_stream(graph, trace, start, stop, locations)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_stream_is_the_brute_force(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    chosen = sorted(archive.roots)
    events = {location: oracle.events_of(archive, location) for location in chosen}
    want_rows, want_peak = oracle.message_stream(events)
    members = {i: set(c.members) for i, c in enumerate(archive.definitions.communicators) if c.members}
    for window, walked in ((None, False), (5, True)):
        rows, (unmatched, collectives, peak, _) = answers(archive, window=window, walked=walked, ahead=walked)
        assert rows == want_rows and peak == want_peak
        assert collectives == oracle.collectives(events, members=members)
        assert len(rows) == len(messages(archive))


def test_paje_links_stream_by_key(tmp_path):
    """The crossed links of `test_query_messages.test_paje_links_pair_by_key`, a window of
    one event at a time: each hint is carried to the link end in the next window."""
    from .test_query_messages import crossed_links
    with crossed_links(tmp_path) as archive:
        ticks = archive.timer_resolution // 10
        for walked in (False, True):
            rows, (unmatched, *_) = answers(archive, window=1, walked=walked)
            assert sorted((row[1], row[3]) for row in rows) == [(1 * ticks, 4 * ticks), (2 * ticks, 3 * ticks)]
            assert not unmatched


def test_a_message_waits_for_its_request_times():
    """An ISEND matched at once but completed later comes out at its REQUEST_COMPLETE,
    after a message matched later; an ISEND never completed comes out at the end, -1."""
    rank0 = [Event(0, K.ENTER, 0), Event(1, K.ISEND, 1, 0, 0, 7, 8), Event(2, K.SEND, 1, 0, 1, 0, 8),
             Event(5, K.REQUEST_COMPLETE, request=7), Event(6, K.ISEND, 1, 0, 0, 9, 8), Event(9, K.LEAVE, 0)]
    rank1 = [Event(0, K.ENTER, 0), Event(2, K.RECV, 0, 0, 0, 0, 8), Event(3, K.RECV, 0, 0, 1, 0, 8),
             Event(7, K.RECV, 0, 0, 0, 0, 8), Event(9, K.LEAVE, 0)]
    graph = oracle.build({0: rank0, 1: rank1})
    for window in (1, 100):
        rows, _ = answers(graph, window=window)
        assert [(row[1], row[7]) for row in rows] == [(2, -1), (1, 5), (6, -1)]


@settings(max_examples=30, deadline=None)
@given(message_traces(), st.integers(1, 5))
def test_json_written_in_slices_is_the_whole_json(trace, rows):
    result = messages(oracle.build(trace))
    out = io.StringIO()
    result.write_json(out, rows_per_write=rows)
    assert out.getvalue() == json.dumps(result.to_json()) + "\n"


def test_json_of_the_stream_is_the_json_of_the_answer():
    graph = oracle.build({0: [Event(0, K.ENTER, 0), Event(1, K.SEND, 1, 0, 0, 0, 8), Event(3, K.SEND, 1, 0, 0, 0, 9),
                              Event(4, K.SEND, 2, 0, 0, 0, 9), Event(5, K.LEAVE, 0)],
                          1: [Event(0, K.ENTER, 0), Event(2, K.RECV, 0, 0, 0, 0, 8), Event(3, K.RECV, 0, 0, 0, 0, 9),
                              Event(5, K.LEAVE, 0)]})
    out = io.StringIO()
    iter_messages(graph, window=1).write_json(out)
    document = json.loads(out.getvalue())
    assert document == messages(graph).to_json()
    assert out.getvalue() == json.dumps(document) + "\n"
    counts, volume = iter_messages(graph).matrix()
    assert counts.tolist() == messages(graph).matrix()[0].tolist() == [[0, 2, 0], [0, 0, 0], [0, 0, 0]]
    assert volume.tolist()[0] == [0, 17, 0]


def stream_peak(locations: int, events: int) -> tuple[int, int]:
    """The traced peak of streaming every message of a jittered ring trace of about
    ``events`` events per location (tools/synth.py), walked in batches, and its message
    count."""
    graph = ring_graph(locations, events, seed=3)
    tracemalloc.start()
    try:
        matched = sum(len(chunk) for chunk in iter_messages(graph, window=256))
        return tracemalloc.get_traced_memory()[1], matched
    finally:
        tracemalloc.stop()


def test_streamed_matching_takes_memory_set_by_the_messages_in_flight(monkeypatch):
    """The same jittered ring shape at two lengths, 4x apart: 4x the messages, the same
    memory. Bound: windows of 256 message events, walk batches of 1,024 events, the
    walker's cache of expanded sub-trees held to 4,096 events, and the ring's few messages
    in flight. The answer held whole (`messages`) grows from 0.8 to 2.4 MB here."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)  # a large graph: walked, no node tables
    monkeypatch.setattr(streaming, "WALK_BATCH", 1024)
    monkeypatch.setattr(walk_module, "SpanReader", functools.partial(spans_module.SpanReader, cache_events=1 << 12))
    stream_peak(2, 1_000)  # what the first use allocates once
    short_peak, short_messages = stream_peak(2, 10_000)
    long_peak, long_messages = stream_peak(2, 40_000)
    assert long_messages > 3.5 * short_messages
    assert short_peak < 3 << 20 and long_peak < 3 << 20, (short_peak, long_peak)
    assert long_peak < 1.2 * short_peak + (128 << 10), (short_peak, long_peak)


def test_read_ahead_raises_what_the_producer_raises_and_stops_when_closed():
    def failing():
        yield 1
        raise ccgformat.CorruptArchiveError("broken block")

    with pytest.raises(ccgformat.CorruptArchiveError, match="broken block"):
        list(streaming.read_ahead(failing()))
    made = []

    def endless():
        while True:
            made.append(len(made))
            yield made[-1]

    ahead = streaming.read_ahead(endless(), depth=2)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()  # the producer stops: at most the queue's depth and one item beyond
    count = len(made)
    assert count <= 3 + 2 + 1
    time.sleep(0.2)
    assert len(made) == count


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.booleans()), max_size=60))
def test_fifo_pairing_native_and_reference(width, rows):
    """The C pairing and the numpy reference (and the reference's exact sort after a hash
    collision) give the same pairs: the k-th a and the k-th b of every key."""
    from ccgformat.query import messages_match
    keys = [np.array([r[0] + r[1] * c for r in rows], np.int64) for c in range(width)]
    side = np.array([r[2] for r in rows], bool)
    keys_a, keys_b = [k[~side] for k in keys], [k[side] for k in keys]
    want: dict = {}
    for position, key in enumerate(zip(*(k.tolist() for k in keys_a))):
        want.setdefault(key, [[], []])[0].append(position)
    for position, key in enumerate(zip(*(k.tolist() for k in keys_b))):
        want.setdefault(key, [[], []])[1].append(position)
    expected = sorted(pair for a, b in want.values() for pair in zip(a, b))
    reference = messages_match.pair_fifo_reference(keys_a, keys_b)
    assert list(zip(*(x.tolist() for x in reference))) == expected
    if ccgformat.backend == "native":
        from ccgformat._native import messages as native
        assert list(zip(*(x.tolist() for x in native.pair_fifo(keys_a, keys_b)))) == expected
    real_hash = messages_match.row_hash
    messages_match.row_hash = lambda columns: np.zeros(len(columns[0]), np.uint64)  # every row collides
    try:
        assert list(zip(*(x.tolist() for x in messages_match.pair_fifo_reference(keys_a, keys_b)))) == expected
    finally:
        messages_match.row_hash = real_hash


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=10, max_size=10), max_size=20))
def test_message_rows_text_is_json(rows):
    from ccgformat.query.messages_query import MESSAGE_COLUMNS, rows_text, rows_text_reference
    columns = [np.array([row[i] for row in rows], np.int64) for i in range(10)]
    text = rows_text(columns)
    assert text == rows_text_reference(columns)
    assert text == json.dumps([dict(zip(MESSAGE_COLUMNS, row)) for row in rows])[1:-1]


@pytest.mark.parametrize("options", [[], ["--location", "3", "--location", "1"], ["--start", "0", "--stop", "200000"]])
def test_the_command_writes_the_stream(tmp_path_factory, capsys, options):
    """`ccg messages` (JSON, text, matrix) on the corpus's halo exchange: the stream's
    messages in its order, the answer of `messages` otherwise."""
    from ccgformat.cli import main
    archive = converted(tmp_path_factory, "otf2-stencil")
    locations = sorted(int(x) for x in options[1::2]) if options[:1] == ["--location"] else None
    start, stop = (int(options[1]), int(options[3])) if options[:1] == ["--start"] else (None, None)
    whole = messages(archive, start, stop, locations)
    assert main(["messages", str(archive.path), "--json", *options]) == 0
    text = capsys.readouterr().out
    out = io.StringIO()
    iter_messages(archive, start, stop, locations).write_json(out)
    assert text == out.getvalue()
    document = json.loads(text)
    assert sorted(tuple(m.values()) for m in document.pop("messages")) == sorted(tuple(m.values()) for m in whole.rows())
    assert document == {key: value for key, value in whole.to_json().items() if key != "messages"}
    assert main(["messages", str(archive.path), *options]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(whole) + 1 + len(whole.unmatched)
    assert sorted(tuple(map(int, line.split())) for line in lines[1:1 + len(whole)]) == \
        sorted(tuple(m[name] for name in ("sender", "send_time", "receiver", "recv_time", "comm", "tag", "size"))
               for m in whole.rows())
    assert lines[1 + len(whole)].startswith(f"{len(whole):,} messages, {len(whole.unmatched):,} unmatched events")
    assert main(["messages", str(archive.path), "--matrix", "--json", *options]) == 0
    assert json.loads(capsys.readouterr().out) == whole.matrix()[0].tolist()
