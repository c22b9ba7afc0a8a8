"""Messages paired a batch at a time (formats/channels.py) as a message at a time: the
Chrome export's flow counts and ids and the Paje export's link numbers, for random
messages on few channels, cut into batches anywhere."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.formats.channels import channel_ranks
from ccgformat.formats.chrome.flows import FlowCounts
from ccgformat.formats.paje.generic import LinkKeys
from ccgformat.model import Event, EventBatch, EventKind

K = EventKind
#: a location's events: messages on few channels (and other events between them)
EVENTS = st.lists(st.tuples(st.sampled_from([K.SEND, K.RECV, K.ISEND, K.IRECV, K.ENTER, K.MARKER]),
                            st.integers(0, 2), st.integers(-1, 1), st.sampled_from([0, 7, -3, 1 << 40])),
                  max_size=40)



def batch_of(rows) -> EventBatch:
    return EventBatch.from_events([Event(i, kind, ref, comm, tag) for i, (kind, ref, comm, tag) in enumerate(rows)])


def pieces(batch: EventBatch, cuts: list[int]) -> list[EventBatch]:
    edges = sorted({0, len(batch), *(c % (len(batch) + 1) for c in cuts)})
    return [batch[a:b] for a, b in zip(edges, edges[1:])]


def message(event: Event) -> tuple[int, int, int, int] | None:
    if event.kind in (K.SEND, K.RECV, K.ISEND, K.IRECV):
        return event.kind, event.ref, event.comm, event.tag
    return None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.sampled_from([0, 1, -5, 1 << 62])] * 4), max_size=30))
def test_channel_ranks_number_rows_by_first_appearance(rows):
    columns = [np.array([row[i] for row in rows], np.int64) for i in range(4)] if rows else [np.zeros(0, np.int64)] * 4
    if not rows:
        return
    channels, channel, rank = channel_ranks(columns)
    seen: dict[tuple, int] = {}
    expected = []
    for row in rows:
        number = seen.setdefault(row, len(seen))
        expected.append((number, sum(1 for earlier in rows[:len(expected)] if earlier == row)))
    assert channels == list(seen)
    assert list(zip(channel.tolist(), rank.tolist())) == expected



@settings(max_examples=150, deadline=None)
@given(st.lists(EVENTS, min_size=1, max_size=3), st.lists(st.integers(0, 60), max_size=4))
def test_flows_counted_and_numbered_by_batch_as_by_message(locations, cuts):
    batches = {loc: batch_of(rows) for loc, rows in enumerate(locations)}
    single, batched = FlowCounts(), FlowCounts()
    for location, batch in batches.items():
        for event in batch.rows():
            if message(event):
                single.add(location, message(event))
        for piece in pieces(batch, cuts):
            batched.add_batch(location, piece)
    assert (list(single.sends.items()), single.receives) == (list(batched.sends.items()), batched.receives)
    one, many = single.ids(), batched.ids()
    for location, batch in batches.items():
        expected = [one.next(location, message(e)) or 0 if message(e) else 0 for e in batch.rows()]
        got = np.concatenate([np.zeros(0, np.int64)] + [many.batch(location, piece)
                                                          for piece in pieces(batch, cuts)]).tolist()
        assert got == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([K.SEND, K.RECV, K.ISEND, K.IRECV, K.LEAVE]),
                          st.integers(0, 2), st.integers(0, 1), st.sampled_from([0, 5])), max_size=50),
       st.lists(st.integers(0, 60), max_size=4), st.integers(0, 3))
def test_link_numbers_of_a_merged_batch_are_those_of_each_message(rows, cuts, matched):
    batch = EventBatch.from_events([Event(i, kind, ref, comm, tag) for i, (_, kind, ref, comm, tag) in enumerate(rows)])
    locations = np.array([row[0] for row in rows], np.int64)
    keys = {(s, r, c, t) for s in range(3) for r in range(3) for c in range(2) for t in (0, 5)}
    limits = {key: (hash(key) + matched) % 4 for key in keys}
    single, batched = LinkKeys(limits), LinkKeys(limits)
    expected = []
    for location, event in zip(locations.tolist(), batch.rows()):
        if message(event):
            fields = single.fields(location, event)
            expected.append((int(fields["Key"].rsplit("-", 1)[1]) if fields else None))
        else:
            expected.append(None)
    got = []
    edges = sorted({0, len(batch), *(c % (len(batch) + 1) for c in cuts)})
    for a, b in zip(edges, edges[1:]):
        numbers, paired = batched.numbers(locations[a:b], batch[a:b])
        for index, event, number, partner in zip(range(a, b), batch[a:b].rows(), numbers.tolist(), paired.tolist()):
            if message(event):
                fields = batched.fields(int(locations[index]), event, number)
                assert (fields is not None) == partner
            got.append(number if message(event) and partner else None)
    assert got == expected
    assert batched.counts == single.counts
