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
    changes, by the rules of ccgformat.query.profile, one event at a time."""
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
    ccgformat.query.calltree, replaying each location's stack of open calls: every call
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


def request_times(events):
    """Per event index of one location: an ISEND's completion and an IRECV's post time.
    Per request id, in the location's order, the k-th ISEND is completed by the k-th
    REQUEST_COMPLETE and the k-th IRECV was posted by the k-th IRECV_REQUEST (first in,
    first out: a request id reused, even while an earlier use is open, pairs in order)."""
    started, ended = defaultdict(list), defaultdict(list)
    for index, e in enumerate(events):
        if e.kind == EventKind.ISEND:
            started[("send", e.request)].append(index)
        elif e.kind == EventKind.REQUEST_COMPLETE:
            ended[("send", e.request)].append(e.time)
        elif e.kind == EventKind.IRECV_REQUEST:
            started[("recv", e.request)].append(e.time)
        elif e.kind == EventKind.IRECV:
            ended[("recv", e.request)].append(index)
    times = {}
    for (side, request), firsts in started.items():
        for first, second in zip(firsts, ended.get((side, request), [])):
            if side == "send":
                times[first] = second   # the ISEND at index `first` completes at `second`
            else:
                times[second] = first   # the IRECV at index `second` was posted at `first`
    return times


def messages(events_by_location, start=None, stop=None):
    """Brute-force matching: per (sender, receiver, comm, tag) the k-th send (in the
    sender's order) with the k-th receive (in the receiver's); returns the multiset
    (a Counter: equal messages may repeat) of (sender, send_time, receiver, recv_time,
    comm, tag, size, send_done, recv_posted) with an end in ``[start, stop)`` and the
    leftover events in it. ``send_done`` is the completion of an ISEND, ``recv_posted``
    the post time of an IRECV (`request_times`), -1 for a blocking end or an open request."""
    lo = NO_START if start is None else start
    hi = NO_STOP if stop is None else stop
    inside = lambda t: lo <= t < hi  # noqa: E731
    sends, receives = defaultdict(list), defaultdict(list)
    for location, events in events_by_location.items():
        requests = request_times(events)
        for index, e in enumerate(events):
            extra = requests.get(index, -1)
            if e.kind in (EventKind.SEND, EventKind.ISEND):
                sends[(location, e.ref, e.comm, e.tag)].append((e, extra))
            elif e.kind in (EventKind.RECV, EventKind.IRECV):
                receives[(e.ref, location, e.comm, e.tag)].append((e, extra))
    matched, left = Counter(), []
    for key in set(sends) | set(receives):
        s, r = sends.get(key, []), receives.get(key, [])
        matched.update((key[0], a.time, key[1], b.time, key[2], key[3], a.size, done, posted)
                       for (a, done), (b, posted) in zip(s, r) if inside(a.time) or inside(b.time))
        left += [(key[0], e.time) for e, _ in s[len(r):] if inside(e.time)]
        left += [(key[1], e.time) for e, _ in r[len(s):] if inside(e.time)]
    return matched, sorted(left)


def message_rows(result):
    """The messages of a `ccgformat.query.messages` result as the multiset `messages` returns."""
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
