"""Queries at scale in locations (issue 14): many small locations through every query
of an archive - profile, message matching, timeline (rows grouped when there are more
locations than rows) and the merged event stream of ``cat`` - compared with the
brute-force oracle over the events written; 50,000 locations of 2 events in the suite,
and a hypothesis test with 1 to 2,000 locations."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Event, EventKind as K
from ccgformat.archive import tables as tables_module
from ccgformat.graph import graph as graph_module
from ccgformat.graph.graph import LocationRoot, root_columns
from ccgformat.model import Definitions, EventBatch, Location, Metric, Region
from ccgformat.query import messages, profile, timeline
from ccgformat.query.groups import region_groups
from ccgformat.query.bounds import column_bounds, row_bounds

from . import query_oracle as oracle


def make_trace(count: int, seed: int, nested: bool) -> dict[int, list[Event]]:
    """Even locations make a call (with a nested one when ``nested``), odd ones send one
    message round a ring of the odd locations and receive one; with ``nested`` every
    fifth location also samples a metric. Start times come from a small range, so that
    many events of different locations share a timestamp."""
    rng = np.random.default_rng(seed)
    odd = list(range(1, count, 2))
    trace = {}
    for location in range(count):
        t = int(rng.integers(0, 40))
        gap = lambda: int(rng.integers(0, 6))  # noqa: E731
        if location % 2 == 0:
            outer = location % 4
            events = [Event(t, K.ENTER, outer)]
            if nested:
                inner = int(rng.integers(0, 4))
                a = t + gap()
                b = a + gap()
                events += [Event(a, K.ENTER, inner), Event(b, K.LEAVE, inner)]
                t = b
            events.append(Event(t + gap(), K.LEAVE, outer))
        else:
            k = odd.index(location) if count < 5000 else (location - 1) // 2
            peer_out, peer_in = odd[(k + 1) % len(odd)], odd[(k - 1) % len(odd)]
            send = Event(t, K.SEND, peer_out, 0, 0, 0, int(rng.integers(1, 100)))
            events = [send, Event(t + gap(), K.RECV, peer_in, 0, 0, 0, 7)]
        if nested and location % 5 == 4:
            events.append(Event(events[-1].time + gap(), K.METRIC, 0, value=int(rng.integers(-50, 50))))
        trace[location] = events
    return trace


def write(path, trace: dict[int, list[Event]]) -> ccgformat.Archive:
    definitions = Definitions(regions=[Region(f"r{i}") for i in range(4)],
                              locations=[Location(f"rank {i}") for i in range(len(trace))],
                              metrics=[Metric("m0")])
    # zstd level 1: writing is not what is tested here, and level 19 triples its time
    ccgformat.write_trace(path, definitions, ((location, [EventBatch.from_events(events)])
                                              for location, events in trace.items()), level=1)
    return ccgformat.open(path)


def check_profile(archive, trace, start=None, stop=None):
    regions, pairs, _, metrics = oracle.profile(trace, start, stop)
    result = profile(archive, start, stop)
    want = {r: v for r, v in regions.items() if v["calls"] or v["inclusive"] or v["exclusive"]}
    got = {row.region: row for row in result.regions}
    assert set(got) == set(want)
    for region, expected in want.items():
        row = got[region]
        assert (row.calls, row.inclusive, row.exclusive) == (expected["calls"], expected["inclusive"],
                                                              expected["exclusive"])
        if expected["durations"]:
            assert (row.min, row.max) == (min(expected["durations"]), max(expected["durations"]))
    assert {(m.sender, m.receiver): [m.sent, m.sent_bytes, m.received, m.received_bytes]
            for m in result.messages} == {k: v for k, v in pairs.items() if any(v)}
    assert result.metrics.get("m0", 0) == metrics.get(0, 0)


def check_messages(archive, trace):
    want, left = oracle.messages(trace)
    result = messages(archive)
    got = oracle.message_rows(result)
    assert got == want and len(result) == sum(want.values())
    assert sorted((u.location, u.time) for u in result.unmatched) == left


def check_timeline(archive, trace, width, height):
    first = min(e.time for events in trace.values() for e in events)
    last = max(e.time for events in trace.values() for e in events)
    result = timeline(archive, first, last + 1, width, height=height)
    names, group_of = region_groups(archive.definitions, len(archive.definitions.regions))
    per_location = oracle.timeline(trace, column_bounds(first, last + 1, width).tolist(), group_of, len(names))
    starts = row_bounds(len(trace), height)
    assert len(result.exclusive) == min(len(trace), height) == len(starts) - 1
    assert np.array_equal(result.exclusive, np.add.reduceat(per_location, starts[:-1], axis=0))
    assert result.rows == [sorted(trace)[i] for i in starts[:-1].tolist()]
    assert sum((result.row_locations(r) for r in range(len(result.rows))), []) == sorted(trace)
    assert (result.shares.sum(axis=2) <= 1 + 1e-9).all()


def check_events(archive, trace, start=None, stop=None):
    """The merged stream equals every event of the window sorted by (time, location,
    position), column by column."""
    lo = -(1 << 63) if start is None else start
    hi = (1 << 63) - 1 if stop is None else stop
    rows = [(location, position, *e) for location, events in trace.items() for position, e in enumerate(events)]
    table = np.array(rows, np.int64).reshape(len(rows), 2 + len(Event._fields))
    table = table[(table[:, 2] >= lo) & (table[:, 2] < hi)]
    want = table[np.lexsort((table[:, 1], table[:, 0], table[:, 2]))]
    parts = [(locations, batch) for locations, batch in archive.events(start, stop, batch_size=4096)]
    got_locations = np.concatenate([locations for locations, _ in parts]) if parts else np.zeros(0, np.int64)
    assert np.array_equal(got_locations, want[:, 0])
    for i, name in enumerate(Event._fields):
        got = np.concatenate([getattr(batch, name) for _, batch in parts]) if parts else np.zeros(0, np.int64)
        assert np.array_equal(got.astype(np.int64), want[:, 2 + i]), name


def test_fifty_thousand_locations_of_two_events(tmp_path, monkeypatch):
    """Every query over 50,000 locations (a row of the timeline holds 50 of them). The
    whole-trace profile, message matching and timeline read the roots and the location
    table as columns: they make no `LocationRoot`, `Location` or `SystemTreeNode` (at a
    million locations each kind took seconds)."""
    trace = make_trace(50_000, 1, nested=False)
    with write(tmp_path / "wide.ccg", trace) as archive:
        made: Counter[str] = Counter()
        for module, name in ((graph_module, "LocationRoot"), (tables_module, "Location"),
                             (tables_module, "SystemTreeNode")):
            kind = getattr(module, name)
            monkeypatch.setattr(module, name, lambda *fields, kind=kind: made.update([kind.__name__]) or kind(*fields))
        profile(archive)
        messages(archive)
        timeline(archive, *archive.time_range, 100)
        assert archive.time_range[1] > archive.time_range[0] and not made
        monkeypatch.undo()
        assert len(archive.definitions.locations) == 50_000 and archive.definitions.locations[7].name == "rank 7"
        assert archive.roots[7] == LocationRoot(*(int(c[7]) for c in root_columns(archive.roots)[1:]))
        check_profile(archive, trace)
        check_profile(archive, trace, 10, 30)
        check_messages(archive, trace)
        check_timeline(archive, trace, 7, 1000)
        check_events(archive, trace)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 2000), st.integers(0, 2 ** 32 - 1), st.integers(1, 2100), st.integers(1, 12), st.data())
def test_many_locations_match_the_oracle(tmp_path_factory, count, seed, height, width, data):
    trace = make_trace(count, seed, nested=True)
    times = [e.time for events in trace.values() for e in events]
    start = data.draw(st.integers(min(times) - 2, max(times)))
    stop = data.draw(st.integers(start, max(times) + 2))
    with write(tmp_path_factory.mktemp("many") / "many.ccg", trace) as archive:
        check_profile(archive, trace)
        check_profile(archive, trace, start, stop)
        check_messages(archive, trace)
        check_timeline(archive, trace, width, height)
        check_events(archive, trace, start, stop)


def test_rows_are_the_column_split_on_the_location_axis():
    assert row_bounds(10, 4).tolist() == [0, 2, 5, 7, 10]
    assert row_bounds(3, 4).tolist() == [0, 1, 2, 3]
    assert row_bounds(0, 4).tolist() == [0]
    with pytest.raises(ValueError):
        timeline(oracle.build({0: [Event(0, K.ENTER, 0), Event(5, K.LEAVE, 0)]}), 0, 6, 3, height=0)


def test_a_double_metric_over_many_locations(tmp_path):
    """A floating-point metric's change is a difference of its values at both ends of the
    window, per location (all ends from one pass over the graph), summed location after
    location like the brute force: exactly equal for 3,000 locations and several windows."""
    rng = np.random.default_rng(3)
    trace = {}
    for location in range(3000):
        t = int(rng.integers(0, 40))
        samples = [Event(t + 1 + k, K.METRIC, 0, value=int(np.float64(v).view(np.int64)))
                   for k, v in enumerate(rng.normal(100, 30, int(rng.integers(0, 4))))]
        trace[location] = [Event(t, K.ENTER, 0), *samples, Event(t + 5, K.LEAVE, 0)]
    definitions = Definitions(regions=[Region("r0")], locations=[Location(f"rank {i}") for i in range(len(trace))],
                              metrics=[Metric("power", "W", "absolute", "double")])
    ccgformat.write_trace(tmp_path / "d.ccg", definitions, ((location, [EventBatch.from_events(events)])
                                                           for location, events in trace.items()), level=1)
    with ccgformat.open(tmp_path / "d.ccg") as archive:
        for start, stop in ((None, None), (3, 30), (20, None), (None, 12), (41, 44)):
            want = oracle.profile(trace, start, stop, {0: "double"})[3].get(0, 0.0)
            assert profile(archive, start, stop).metrics.get("power", 0.0) == want
