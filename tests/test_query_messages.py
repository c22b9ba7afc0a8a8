"""Message matching against pairing the k-th send with the k-th receive of every
(sender, receiver, comm, tag) over the rebuilt events; requests, collectives, windows,
the communication matrix and the corpus."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Event, EventKind as K
from ccgformat.query import messages
from ccgformat.query.select import select_events
from ccgformat.query.tables import tables_for

from . import query_oracle as oracle
from . import traces
from .corpus import corpus_path, require_tool
from .query_support import CORPUS, converted, event_bounds, windows

def check(source, locations=None, start=None, stop=None):
    chosen = sorted(source.roots) if locations is None else locations
    events = {location: oracle.events_of(source, location) for location in chosen}
    want, left = oracle.messages(events, start, stop)
    result = messages(source, start, stop, locations=locations)
    got = oracle.message_rows(result)
    assert got == want
    assert sum(got.values()) == len(result)
    assert sorted((u.location, u.time) for u in result.unmatched) == left
    return result


@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.data())
def test_matching_matches_brute_force(trace, data):
    graph = oracle.build(trace)
    check(graph)
    check(graph, sorted(trace)[:1])
    for start, stop, locations in windows(data, trace, 3, (K.SEND, K.ISEND, K.RECV, K.IRECV)):
        check(graph, locations, start, stop)


@st.composite
def message_traces(draw: st.DrawFn) -> dict[int, list[Event]]:
    """Locations that exchange many messages (most of them matched), each inside one call."""
    count = draw(st.integers(2, 3))
    rows: dict[int, list[Event]] = {location: [] for location in range(count)}
    for _ in range(draw(st.integers(1, 12))):
        sender, receiver = draw(st.permutations(range(count)))[:2]
        sent, delay, tag = draw(st.integers(1, 60)), draw(st.integers(0, 30)), draw(st.integers(0, 1))
        rows[sender].append(Event(sent, draw(st.sampled_from([K.SEND, K.ISEND])), receiver, 0, tag, 0, 8))
        if draw(st.integers(0, 5)):  # now and then a send nobody receives
            rows[receiver].append(Event(sent + delay, draw(st.sampled_from([K.RECV, K.IRECV])), sender, 0, tag, 0, 8))
    return {location: [Event(0, K.ENTER, 0), *sorted(events, key=lambda e: e.time), Event(100, K.LEAVE, 0)]
            for location, events in rows.items()}


@settings(max_examples=60, deadline=None)
@given(message_traces(), st.data())
def test_windows_keep_the_messages_with_an_end_inside(trace, data):
    """Against brute force, for windows whose bounds are often message times (or one off)."""
    graph = oracle.build(trace)
    for start, stop, locations in windows(data, trace, 4, (K.SEND, K.ISEND, K.RECV, K.IRECV)):
        check(graph, locations, start, stop)


@st.composite
def request_traces(draw: st.DrawFn) -> dict[int, list[Event]]:
    """Two ranks sending to and receiving from each other without blocking, on two request
    ids: each rank starts requests (ISEND, or IRECV_REQUEST for a receive) and completes
    one of its open ones (REQUEST_COMPLETE, or the IRECV) in an order drawn here, so the
    uses of a request id follow each other, nest (the id started again before its earlier
    use completes) and interleave with the other id's."""
    rows = {}
    for rank in range(2):
        peer, time, starts = 1 - rank, 0, draw(st.integers(1, 10))
        events, open_ = [Event(0, K.ENTER, 0)], []  # open_: (is a send, request, tag)
        while starts or open_:
            time += draw(st.integers(1, 3))
            if starts and (not open_ or draw(st.booleans())):
                starts -= 1
                send, request, tag = draw(st.booleans()), draw(st.integers(0, 1)), draw(st.integers(0, 1))
                events.append(Event(time, K.ISEND, peer, 0, tag, request, 8) if send
                              else Event(time, K.IRECV_REQUEST, request=request))
                open_.append((send, request, tag))
            else:
                send, request, tag = open_.pop(draw(st.integers(0, len(open_) - 1)))
                events.append(Event(time, K.REQUEST_COMPLETE, request=request) if send
                              else Event(time, K.IRECV, peer, 0, tag, request, 8))
        rows[rank] = [*events, Event(time + 1, K.LEAVE, 0)]
    return rows


@settings(max_examples=80, deadline=None)
@given(request_traces(), st.data())
def test_requests_complete_first_in_first_out(trace, data):
    """Against brute force, with reused request ids: a send completes after it was sent,
    a receive was posted before it completed, in every window."""
    graph = oracle.build(trace)
    result = check(graph)
    for m in result.rows():
        assert m["send_done"] >= m["send_time"] and -1 < m["recv_posted"] <= m["recv_time"]
    for start, stop, locations in windows(data, trace, 3, (K.ISEND, K.IRECV)):
        check(graph, locations, start, stop)


@st.composite
def posted_receive_traces(draw: st.DrawFn) -> dict[int, list[Event]]:
    """Ranks 0 and 1 send to rank 2 on two tags; rank 2 posts blocking receives,
    non-blocking ones (IRECV_REQUEST, its IRECV later, the open ones completing in an
    order drawn here), some never completed, and IRECVs without a request: completions
    reorder against the posting order."""
    receiver, time, posted = [Event(0, K.ENTER, 0)], 0, 0
    open_: list[tuple[int, int, int]] = []  # (request, sender, tag)
    for _ in range(draw(st.integers(1, 12))):
        time += draw(st.integers(1, 3))
        sender, tag = draw(st.integers(0, 1)), draw(st.integers(0, 1))
        what = draw(st.sampled_from(["recv", "post", "post", "bare", "complete"]))
        if what == "complete" and open_:
            request, sender, tag = open_.pop(draw(st.integers(0, len(open_) - 1)))
            receiver.append(Event(time, K.IRECV, sender, 0, tag, request, 8))
        elif what == "post":
            open_.append((posted % 3, sender, tag))
            receiver.append(Event(time, K.IRECV_REQUEST, request=posted % 3))
            posted += 1
        else:
            receiver.append(Event(time, K.RECV if what == "recv" else K.IRECV, sender, 0, tag, 9 * (what == "bare"), 8))
    while open_ and draw(st.booleans()):  # the rest complete, or stay open (a cancelled receive)
        time += 1
        request, sender, tag = open_.pop(draw(st.integers(0, len(open_) - 1)))
        receiver.append(Event(time, K.IRECV, sender, 0, tag, request, 8))
    rows = {2: [*receiver, Event(time + 1, K.LEAVE, 0)]}
    for rank in range(2):
        sends, t = [Event(0, K.ENTER, 0)], 0
        for _ in range(draw(st.integers(0, 8))):
            t += draw(st.integers(1, 4))
            sends.append(Event(t, K.SEND, 2, 0, draw(st.integers(0, 1)), 0, 8))
        rows[rank] = [*sends, Event(t + 1, K.LEAVE, 0)]
    return rows


@settings(max_examples=80, deadline=None)
@given(posted_receive_traces(), st.data())
def test_receives_match_in_the_order_they_were_posted(trace, data):
    """Against brute force, and by MPI's rule itself: on every channel, the messages in
    the order they were sent reach receives in the order those were posted."""
    graph = oracle.build(trace)
    result = check(graph)
    channels: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for m in result.rows():
        # a request met after its IRECV gives it a time, not its place
        posted = m["recv_posted"] if 0 <= m["recv_posted"] <= m["recv_time"] else m["recv_time"]
        channels.setdefault((m["sender"], m["comm"], m["tag"]), []).append((m["send_time"], posted))
    for pairs in channels.values():
        posts = [posted for _, posted in sorted(pairs)]
        assert posts == sorted(posts)
    for start, stop, locations in windows(data, trace, 3, (K.SEND, K.RECV, K.IRECV)):
        check(graph, locations, start, stop)


_PRINTED = re.compile(r"^(MPI_\w+) +(\d+) +(\d+) +(.*)$")
_PRINTED_FIELD = re.compile(r'(Sender|Receiver|Communicator|Tag|Request): (?:"[^"]*" <(\d+)>|(\d+))')


def printed_pairs(tool: str, anchor: Path) -> set[tuple[int, int, int, int, int]]:
    """The messages of an OTF2 trace as its records printed by otf2-print say MPI pairs
    them: per (sender, receiver, communicator, tag) the k-th MpiSend/MpiIsend with the
    k-th receive in posting order (an MpiIrecv posted at the first open MpiIrecvRequest
    of its location and request id, an MpiRecv where it is); (sender, send time,
    receiver, receive time, post time or -1)."""
    sends, receives, posts = defaultdict(list), defaultdict(list), defaultdict(list)
    for line in subprocess.run([tool, str(anchor)], capture_output=True, text=True, check=True).stdout.splitlines():
        found = _PRINTED.match(line)
        if not found:
            continue
        record, location, time = found.group(1), int(found.group(2)), int(found.group(3))
        field = {name: int(a or b) for name, a, b in _PRINTED_FIELD.findall(found.group(4))}
        if record in ("MPI_SEND", "MPI_ISEND"):
            sends[(location, field["Receiver"], field["Communicator"], field["Tag"])].append(time)
        elif record == "MPI_IRECV_REQUEST":
            posts[(location, field["Request"])].append(time)
        elif record in ("MPI_RECV", "MPI_IRECV"):
            open_ = posts[(location, field.get("Request"))] if record == "MPI_IRECV" else []
            posted = open_.pop(0) if open_ else -1
            receives[(field["Sender"], location, field["Communicator"], field["Tag"])].append(
                (time if posted < 0 else posted, time, posted))
    return {(key[0], sent, key[1], received, posted)
            for key, times in sends.items() for sent, (_, received, posted) in zip(times, sorted(receives[key]))}


@pytest.mark.parametrize("name", ["otf2-stencil", "otf2-pingpong"])
def test_corpus_otf2_pairs_as_its_printed_records_say(tmp_path_factory, name):
    """The pairs of the corpus OTF2 traces (the stencil's 512 MpiIrecv all posted by an
    MpiIrecvRequest) are those of MPI's rule applied to otf2-print's records."""
    want = printed_pairs(require_tool("otf2-print"), corpus_path(*CORPUS[name]))
    result = converted(tmp_path_factory, name).messages()
    got = {(m["sender"], m["send_time"], m["receiver"], m["recv_time"], m["recv_posted"]) for m in result.rows()}
    assert want and got == want and len(result) == len(want)


def test_a_reused_request_id_pairs_in_order():
    """Rank 0 reuses request 1 nested (two sends open at once) and then again; rank 1
    posts request 4 twice before either receive completes."""
    rank0 = [Event(0, K.ENTER, 0), Event(1, K.ISEND, 1, 0, 0, 1, 8), Event(2, K.ISEND, 1, 0, 1, 1, 8),
             Event(3, K.REQUEST_COMPLETE, request=1), Event(4, K.REQUEST_COMPLETE, request=1),
             Event(5, K.ISEND, 1, 0, 0, 1, 8), Event(6, K.REQUEST_COMPLETE, request=1), Event(9, K.LEAVE, 0)]
    rank1 = [Event(0, K.ENTER, 0), Event(1, K.IRECV_REQUEST, request=4), Event(2, K.IRECV_REQUEST, request=4),
             Event(5, K.IRECV, 0, 0, 1, 4, 8), Event(6, K.IRECV, 0, 0, 0, 4, 8),
             Event(7, K.IRECV_REQUEST, request=4), Event(8, K.IRECV, 0, 0, 0, 4, 8), Event(9, K.LEAVE, 0)]
    result = check(oracle.build({0: rank0, 1: rank1}))
    # the k-th use of an id completes at its k-th completion: sends 1, 2, 5 at 3, 4, 6; the
    # receives completing at 5, 6, 8 were posted at 1, 2, 7 (tag 1's receive is the first)
    assert sorted((m["send_time"], m["send_done"], m["recv_time"], m["recv_posted"]) for m in result.rows()) == \
        [(1, 3, 6, 2), (2, 4, 5, 1), (5, 6, 8, 7)]


@settings(max_examples=40, deadline=None)
@given(traces.traces())
def test_selected_events_are_the_events_of_those_kinds(trace):
    """The partial decompression gives exactly the full iteration's events of the kinds."""
    graph = oracle.build(trace)
    t = tables_for(graph.pool)
    kinds = (int(K.SEND), int(K.RECV), int(K.METRIC), int(K.COLL_END))
    for location, root in graph.roots.items():
        times, nodes = select_events(t, root.root, root.start, kinds)
        full = [(e.time, e.kind) for e in oracle.events_of(graph, location) if e.kind in kinds]
        assert list(zip(times.tolist(), t.kind[nodes].tolist())) == full


def _two_ranks():
    rank0 = [Event(0, K.ENTER, 0), Event(1, K.ISEND, 1, 0, 5, 77, 10), Event(2, K.SEND, 1, 0, 5, 0, 20),
             Event(3, K.REQUEST_COMPLETE, request=77), Event(4, K.COLL_BEGIN), Event(6, K.COLL_END, 1, 0, 0, 0, 8, 8),
             Event(7, K.SEND, 1, 0, 9, 0, 30), Event(9, K.LEAVE, 0)]
    rank1 = [Event(0, K.ENTER, 0), Event(1, K.IRECV_REQUEST, request=5), Event(2, K.RECV, 0, 0, 5, 0, 10),
             Event(3, K.IRECV, 0, 0, 5, 5, 20), Event(4, K.COLL_BEGIN), Event(5, K.COLL_END, 1, 0, 0, 0, 8, 8),
             Event(8, K.LEAVE, 0)]
    return oracle.build({0: rank0, 1: rank1})


def test_requests_collectives_and_unmatched():
    result = check(_two_ranks())
    rows = sorted(result.rows(), key=lambda m: m["send_time"])
    assert [(m["send_time"], m["recv_time"], m["send_done"], m["recv_posted"]) for m in rows] == \
        [(1, 3, 3, 1), (2, 2, -1, -1)]  # the IRECV posted at 1 takes the first message, though it completes later
    assert [(u.location, u.time, u.kind, u.tag) for u in result.unmatched] == [(0, 7, "SEND", 9)]
    (collective,) = result.collectives
    assert collective.complete and [p[:3] for p in collective.participants] == [(0, 4, 6), (1, 4, 5)]
    # in time order (ties by location): the ISEND at 1 and the SEND at 2 wait, and the RECV at
    # 2 behind the receive posted at 1; the IRECV at 3 pairs all four, the SEND at 7 waits alone
    assert result.peak_pending == 3
    counts, volume = result.matrix(2)
    assert counts.tolist() == [[0, 2], [0, 0]] and volume.tolist() == [[0, 30], [0, 0]]


def test_window_keeps_messages_with_an_end_inside():
    graph = _two_ranks()
    assert {(m["send_time"], m["recv_time"]) for m in messages(graph, 3, 4).rows()} == {(1, 3)}
    assert [u.time for u in messages(graph, 0, 7).unmatched] == []


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_messages(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    result = check(archive)
    assert all(c.complete for c in result.collectives)
    times = np.concatenate([result.send_time, result.recv_time, [u.time for u in result.unmatched]]).astype(np.int64)
    if len(times):  # windows whose bounds are the messages' own times
        for start, stop in np.sort(np.array(event_bounds(np.random.default_rng(3), times, 8)).reshape(4, 2)):
            check(archive, None, int(start), int(stop))
    if name == "otf2-stencil":
        assert len(result) == 512 and not result.unmatched
        assert np.array_equal(result.matrix()[0], result.matrix()[0].T)  # halo exchange is symmetric


@contextlib.contextmanager
def crossed_links(tmp_path):
    """The paje-links trace with two links between the same containers whose ends arrive
    in the other order, converted and opened."""
    source = Path(corpus_path(*CORPUS["paje-links"]))
    lines = source.read_text().splitlines()
    header = [line for line in lines if not line.startswith(("16 ", "19 "))]
    body = ["16 0.1 0 LINK p1 c k1", "16 0.2 0 LINK p1 c k2", "19 0.3 0 LINK p2 c k2", "19 0.4 0 LINK p2 c k1"]
    trace = tmp_path / "crossed.trace"
    trace.write_text("\n".join(header + body) + "\n")
    target = tmp_path / "crossed.ccg"
    ccgformat.convert(trace, target)
    with ccgformat.open(target) as archive:
        yield archive


def test_paje_links_pair_by_key(tmp_path):
    """Crossed links: their keys, not their order, pair them."""
    with crossed_links(tmp_path) as archive:
        result = messages(archive)
        ticks = archive.timer_resolution // 10
        assert sorted((m["send_time"], m["recv_time"]) for m in result.rows()) == \
            [(1 * ticks, 4 * ticks), (2 * ticks, 3 * ticks)]
        assert not result.unmatched


@pytest.mark.parametrize("text", ["not json", "[1]", '{"f": [1]}', '{"f": {"Value": "v"}}', None])
def test_a_malformed_paje_link_hint_is_reported(text):
    """A link end whose ``paje:fields`` hint cannot be read (or names no key, or points
    past the strings) is a corrupt archive, not a link paired by order."""
    strings = ["paje:fields", '{"f": {"Key": "k1", "Value": "v"}}'] + ([text] if text is not None else [])
    definitions = traces.definitions()
    definitions.strings.extend(strings)
    G = K.GENERIC
    graph = oracle.build_with(definitions, {
        0: [Event(1, G, 0, value=1), Event(1, K.SEND, 1, tag=5)],
        1: [Event(2, G, 0, value=2), Event(2, K.RECV, 0, tag=5)]})
    with pytest.raises(ccgformat.CorruptArchiveError, match="location 1, time 2: the 'paje:fields' hint"):
        messages(graph)
    definitions.strings[2:] = ['{"f": {"Key": "k1", "Value": "v"}}']  # the same hint, well formed
    graph = oracle.build_with(definitions, {
        0: [Event(1, G, 0, value=1), Event(1, K.SEND, 1, tag=5)],
        1: [Event(2, G, 0, value=2), Event(2, K.RECV, 0, tag=5)]})
    assert len(messages(graph)) == 1
