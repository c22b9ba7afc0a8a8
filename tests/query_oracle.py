"""Brute-force reference answers of the queries, from plain per-location event lists
(tests compare ccgformat.query with these)."""

from __future__ import annotations

from collections import Counter, defaultdict

from ccgformat.model import EventKind

NO_START, NO_STOP = -(1 << 63), (1 << 63) - 1


def events_of(source, location):
    """Every event of a location, as `Event` rows, rebuilt by the graph walker."""
    return [e for batch in source.location(location).events() for e in batch.rows()]


def profile(events_by_location, start=None, stop=None, metric_types=None):
    """Region rows {name-independent: region -> dict}, pairs, collectives and metric
    changes, by the rules of ccgformat.query.profile_query, one event at a time."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    if lo >= hi:
        return {}, {}, {}, {}
    regions = defaultdict(lambda: {"calls": 0, "inclusive": 0, "exclusive": 0, "durations": []})
    pairs = defaultdict(lambda: [0, 0, 0, 0])
    collectives = defaultdict(lambda: [0, 0, 0])
    metrics = defaultdict(int)
    inside = lambda t: lo <= t < hi  # noqa: E731
    clip = lambda a, b: max(0, min(b, hi) - max(a, lo))  # noqa: E731
    for location, events in events_by_location.items():
        stack = []  # [region, enter, callee part]
        before, after = {}, {}
        for e in events:
            if e.kind == EventKind.ENTER:
                stack.append([e.ref, e.time, 0])
            elif e.kind == EventKind.LEAVE:
                region, enter, callees = stack.pop()
                part = clip(enter, e.time)
                row = regions[region]
                row["inclusive"] += part
                row["exclusive"] += part - callees
                if inside(enter):
                    row["calls"] += 1
                    row["durations"].append(part)
                if stack:
                    stack[-1][2] += part
            elif inside(e.time) and e.kind in (EventKind.SEND, EventKind.ISEND):
                pairs[(location, e.ref)][0] += 1
                pairs[(location, e.ref)][1] += e.size
            elif inside(e.time) and e.kind in (EventKind.RECV, EventKind.IRECV):
                pairs[(e.ref, location)][2] += 1
                pairs[(e.ref, location)][3] += e.size
            elif inside(e.time) and e.kind == EventKind.COLL_END:
                row = collectives[e.ref]
                row[0] += 1
                row[1] += e.size
                row[2] += e.recv_size
            if e.kind == EventKind.METRIC:
                if e.time < lo:
                    before[e.ref] = e.value
                if e.time < hi:
                    after[e.ref] = e.value
        for metric in set(before) | set(after):
            metrics[metric] += _change((metric_types or {}).get(metric, "int64"), before.get(metric, 0),
                                       after.get(metric, 0))
    for metric, change in metrics.items():  # integer sums over the locations wrap to 64 bits too
        value_type = (metric_types or {}).get(metric, "int64")
        if value_type != "double":
            metrics[metric] = _change(value_type, 0, change)
    return dict(regions), dict(pairs), dict(collectives), dict(metrics)


def calltree(events_by_location, start=None, stop=None):
    """{(location, call path): [calls, inclusive, exclusive]} by the rules of
    ccgformat.query.calltree_query, replaying each location's stack of open calls: every call
    adds its part inside the window to its path (a call when entered inside it) and takes
    that part from its caller's exclusive time; the paths listed are those with a call or
    time and the paths they continue."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    rows = defaultdict(lambda: [0, 0, 0])
    if lo >= hi:
        return {}
    for location, events in events_by_location.items():
        stack = []  # [path, enter, callee part]
        for e in events:
            if e.kind == EventKind.ENTER:
                stack.append([(stack[-1][0] if stack else ()) + (e.ref,), e.time, 0])
            elif e.kind == EventKind.LEAVE:
                path, enter, callees = stack.pop()
                part = max(0, min(e.time, hi) - max(enter, lo))
                row = rows[(location, path)]
                row[0] += lo <= enter < hi
                row[1] += part
                row[2] += part - callees
                if stack:
                    stack[-1][2] += part
    listed = {(location, path[:end]) for (location, path), row in rows.items() if any(row)
              for end in range(1, len(path) + 1)}
    return {key: rows[key] for key in listed}


def _change(value_type, first, last):
    import numpy as np
    if value_type == "double":
        return float(np.int64(last).view(np.float64)) - float(np.int64(first).view(np.float64))
    change = ((last - first + (1 << 63)) % (1 << 64)) - (1 << 63)
    return change % (1 << 64) if value_type == "uint64" else change


def exclusive_pieces(events):
    """(from, to, region, level) for every stretch between two consecutive events during
    which a call is the innermost open one."""
    stack, pieces, last = [], [], None
    for e in events:
        if stack and last is not None and e.time > last:
            pieces.append((last, e.time, stack[-1], len(stack) - 1))
        last = e.time
        if e.kind == EventKind.ENTER:
            stack.append(e.ref)
        elif e.kind == EventKind.LEAVE:
            stack.pop()
    return pieces


def timeline(events_by_location, boundaries, group_of, groups, by="location"):
    """exclusive[row, column, group] by clipping every piece to every column."""
    import numpy as np
    width = len(boundaries) - 1
    rows = {}
    for row, (location, events) in enumerate(events_by_location.items()):
        for a, b, region, level in exclusive_pieces(events):
            r = row if by == "location" else level
            grid = rows.setdefault(r, np.zeros((width, groups), np.int64))
            for i in range(width):
                part = min(b, boundaries[i + 1]) - max(a, boundaries[i])
                if part > 0:
                    grid[i, group_of[region]] += part
    count = len(events_by_location) if by == "location" else (max(rows) + 1 if rows else 1)
    out = np.zeros((count, width, groups), np.int64)
    for r, grid in rows.items():
        out[r] = grid
    return out


def request_events(events):
    """Per event index of one location, the request event that gives it a time: an ISEND's
    REQUEST_COMPLETE, an IRECV's IRECV_REQUEST, as (time, index). Per request id, in the
    location's order, the k-th ISEND is completed by the k-th REQUEST_COMPLETE and the
    k-th IRECV was posted by the k-th IRECV_REQUEST (first in, first out: a request id
    reused, even while an earlier use is open, pairs in order)."""
    started, ended = defaultdict(list), defaultdict(list)
    for index, e in enumerate(events):
        if e.kind == EventKind.ISEND:
            started[("send", e.request)].append(index)
        elif e.kind == EventKind.REQUEST_COMPLETE:
            ended[("send", e.request)].append(index)
        elif e.kind == EventKind.IRECV_REQUEST:
            started[("recv", e.request)].append(index)
        elif e.kind == EventKind.IRECV:
            ended[("recv", e.request)].append(index)
    given = {}
    for (side, request), firsts in started.items():
        for first, second in zip(firsts, ended.get((side, request), [])):
            if side == "send":
                given[first] = (events[second].time, second)   # the ISEND at `first` completes at `second`
            else:
                given[second] = (events[first].time, first)    # the IRECV at `second` was posted at `first`
    return given


def request_times(events):
    """Per event index of one location: an ISEND's completion and an IRECV's post time
    (`request_events`)."""
    return {index: time for index, (time, _) in request_events(events).items()}


def receive_posts(events):
    """Per receive index of one location, the index it was posted at: an IRECV's
    IRECV_REQUEST (`request_events`) when that comes before it, else the receive itself."""
    given = request_events(events)
    return {index: given[index][1] if e.kind == EventKind.IRECV and given.get(index, (0, index))[1] < index else index
            for index, e in enumerate(events) if e.kind in (EventKind.RECV, EventKind.IRECV)}


def _by_channel(events_by_location):
    """(sends, receives): per channel (sender, receiver, comm, tag) its sends in the
    sender's order and its receives in the order they were posted (`receive_posts`), as
    (location, index)."""
    sends, receives = defaultdict(list), defaultdict(list)
    for location, events in events_by_location.items():
        posts = receive_posts(events)
        for index, e in enumerate(events):
            if e.kind in (EventKind.SEND, EventKind.ISEND):
                sends[(location, e.ref, e.comm, e.tag)].append((location, index))
        for index in sorted(posts, key=posts.get):
            e = events[index]
            receives[(e.ref, location, e.comm, e.tag)].append((location, index))
    return sends, receives


def messages(events_by_location, start=None, stop=None):
    """Brute-force matching: per (sender, receiver, comm, tag) the k-th send (in the
    sender's order) with the k-th receive (in the order the receiver posted them); returns the multiset
    (a Counter: equal messages may repeat) of (sender, send_time, receiver, recv_time,
    comm, tag, size, send_done, recv_posted) with an end in ``[start, stop)`` and the
    leftover events in it. ``send_done`` is the completion of an ISEND, ``recv_posted``
    the post time of an IRECV (`request_times`), -1 for a blocking end or an open request."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    inside = lambda t: lo <= t < hi  # noqa: E731
    requests = {location: request_times(events) for location, events in events_by_location.items()}
    sends, receives = ({key: [(events_by_location[location][index], requests[location].get(index, -1))
                              for location, index in ends] for key, ends in side.items()}
                       for side in _by_channel(events_by_location))
    matched, left = Counter(), []
    for key in set(sends) | set(receives):
        s, r = sends.get(key, []), receives.get(key, [])
        matched.update((key[0], a.time, key[1], b.time, key[2], key[3], a.size, done, posted)
                       for (a, done), (b, posted) in zip(s, r) if inside(a.time) or inside(b.time))
        left += [(key[0], e.time) for e, _ in s[len(r):] if inside(e.time)]
        left += [(key[1], e.time) for e, _ in r[len(s):] if inside(e.time)]
    return matched, sorted(left)


def message_rows(result):
    """The messages of a `ccgformat.query.messages_query` result as the multiset `messages` returns."""
    return Counter((m["sender"], m["send_time"], m["receiver"], m["recv_time"], m["comm"], m["tag"], m["size"],
                    m["send_done"], m["recv_posted"]) for m in result.rows())


def build(trace, params=None):
    """A graph of a `traces.traces` example, fed in a few batches per location."""
    from . import traces
    return build_with(traces.definitions(), trace, params)


def build_with(definitions, trace, params=None):
    """A graph of ``trace`` (location -> events) with ``definitions``, fed in a few
    batches per location."""
    from ccgformat import Builder, Params
    from . import traces
    builder = Builder(params or Params(), definitions)
    for location, events in trace.items():
        for batch in traces.batches(events):
            builder.add(location, batch)
    return builder.finish()


def stream_order(events_by_location):
    """Each event's place in the merged stream of `ccgformat.query.iter_messages`: by time,
    then location, then index; keyed by (location, index)."""
    rows = sorted((e.time, location, index) for location, events in events_by_location.items()
                  for index, e in enumerate(events))
    return {(location, index): place for place, (_, location, index) in enumerate(rows)}


def message_stream(events_by_location, start=None, stop=None):
    """Brute force of `iter_messages`: the messages (tuples of `message_rows` plus
    recv_size) with an end in ``[start, stop)`` in the order the stream completes them
    (by the place of the last of their ends, of the request events giving their times,
    and of the completions of the receives posted before theirs on the receiver; those
    missing a time they need, or after a receive posted that never completes, at the end,
    by the same place; ties, as when one completion lets several receives in, by the place
    of their send), and ``peak_pending``: walking the stream, +1 at a send or
    receive, -2 at the event that pairs a message (the later of its ends or of those
    completions; none for one paired only at the end), the most at once."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    place = stream_order(events_by_location)
    sends, receives = _by_channel(events_by_location)
    given, let_in = {}, {}
    for location, events in events_by_location.items():
        for index, extra in request_events(events).items():
            given[(location, index)] = extra
        completion = {first: second for second, (_, first) in request_events(events).items()
                      if events[second].kind == EventKind.IRECV}
        # per index: the last place of a completion of the requests posted before it (None: one never completes)
        latest, last = [], -1
        for index, e in enumerate(events):
            latest.append(last)
            if e.kind == EventKind.IRECV_REQUEST and last is not None:
                last = None if index not in completion else max(last, place[(location, index)],
                                                                place[(location, completion[index])])
        for index, post in receive_posts(events).items():
            let_in[(location, index)] = latest[post]
    rows, formed = [], Counter()
    for key in set(sends) | set(receives):
        for s, r in zip(sends.get(key, []), receives.get(key, [])):
            a, b = events_by_location[s[0]][s[1]], events_by_location[r[0]][r[1]]
            done, posted = given.get(s, (-1, None)), given.get(r, (-1, None))
            if let_in[r] is not None:
                formed[max(place[s], place[r], let_in[r])] += 1
            # a time the message needs but never gets, or a receive let in only at the end:
            # given out after the stream's last event
            missing = ((a.kind == EventKind.ISEND and done[1] is None) or (b.kind == EventKind.IRECV and posted[1] is None)
                       or let_in[r] is None)
            completed = (missing, max(place[s], place[r], let_in[r] or -1,
                                      *(place[(e[0], x[1])] for e, x in ((s, done), (r, posted)) if x[1] is not None)),
                         place[s])
            if lo <= a.time < hi or lo <= b.time < hi:
                rows.append((completed, (s[0], a.time, r[0], b.time, a.comm, a.tag, a.size,
                                         done[0] if a.kind == EventKind.ISEND else -1,
                                         posted[0] if b.kind == EventKind.IRECV else -1, b.size)))
    pending = peak = 0
    for (location, index), at in sorted(place.items(), key=lambda item: item[1]):
        if events_by_location[location][index].kind in (EventKind.SEND, EventKind.ISEND, EventKind.RECV,
                                                        EventKind.IRECV):
            pending += 1 - 2 * formed[at]
            peak = max(peak, pending)
    return [row for _, row in sorted(rows)], peak


def collectives(events_by_location, start=None, stop=None, members=None):
    """Brute force of the collectives of `ccgformat.query.messages_query`: per location, its k-th
    COLL_END on a communicator joins operation (comm, k), begun at the location's last
    COLL_BEGIN since its previous COLL_END (else at its end). The operations with a begin
    or end in ``[start, stop)``, ordered by their first end, then by their first
    participant in the locations' order; each as (comm, k, operation, participants in that
    order, complete)."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    members = members or {}
    parts = defaultdict(list)
    for row, (location, events) in enumerate(events_by_location.items()):
        begun, counts = None, Counter()
        for index, e in enumerate(events):
            if e.kind == EventKind.COLL_BEGIN:
                begun = e.time
            elif e.kind == EventKind.COLL_END:
                k = counts[e.comm]
                counts[e.comm] += 1
                parts[(e.comm, k)].append(((row, index), (location, e.time if begun is None else begun, e.time,
                                                           e.size, e.recv_size), (e.ref, e.tag)))
                begun = None
    out = []
    for (comm, k), found in parts.items():
        if not any(lo <= p[1] < hi or lo <= p[2] < hi for _, p, _ in found):
            continue
        found.sort()
        present = {p[0] for _, p, _ in found}
        complete = len({how for _, _, how in found}) == 1 and (comm not in members or present == members[comm])
        out.append(((min(p[2] for _, p, _ in found), found[0][0]),
                    (comm, k, found[0][2][0], [p for _, p, _ in found], complete)))
    return [operation for _, operation in sorted(out)]
