"""The cached summary profile against a brute-force pass over the rebuilt events: random
traces (lossless and lossy, in memory and as archives, every caching policy), random
windows and location subsets, every corpus trace, and the bounds of lossy archives."""

from __future__ import annotations

import dataclasses
import importlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.query import profile
from ccgformat import Event, EventBatch, EventKind
from ccgformat.model import Location
from ccgformat.archive import SectionKind
from ccgformat.archive.indexes import INDEX_NODES_PER_LOCATION
from ccgformat.archive.verify import verify
from ccgformat.query.interior import SummaryIndex
from ccgformat.query.profile_engine import engine_for

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, converted, corpus_windows, windows

#: the module (the package's ``profile`` is the function of the same name)
engine_module = importlib.import_module("ccgformat.query.profile_engine")
SETTINGS = settings(max_examples=80, deadline=None)
LOSSY = Params(abs_dev=20, rel_dev=0.3)


def check(source, start, stop, locations, **policy):
    """Every field of the profile equals the brute-force answer."""
    events = {location: oracle.events_of(source, location) for location in locations}
    types = {i: m.value_type for i, m in enumerate(source.definitions.metrics)}
    regions, pairs, collectives, metrics = oracle.profile(events, start, stop, types)
    result = profile(source, start, stop, locations, **policy)
    got = {row.region: row for row in result.regions}
    want = {r: v for r, v in regions.items() if v["calls"] or v["inclusive"] or v["exclusive"]}
    assert set(got) == set(want)
    for region, expected in want.items():
        row = got[region]
        assert (row.calls, row.inclusive, row.exclusive) == (expected["calls"], expected["inclusive"],
                                                              expected["exclusive"])
        durations = expected["durations"]
        if durations:
            assert (row.min, row.max) == (min(durations), max(durations))
            assert row.mean == pytest.approx(sum(durations) / len(durations))
        else:
            assert row.min is row.max is row.mean is None
    assert {(m.sender, m.receiver): [m.sent, m.sent_bytes, m.received, m.received_bytes]
            for m in result.messages} == {k: v for k, v in pairs.items() if any(v)}
    assert {c.operation: [c.count, c.bytes_sent, c.bytes_received] for c in result.collectives} == \
        {k: v for k, v in collectives.items() if v[0]}
    names = {i: m.name for i, m in enumerate(source.definitions.metrics)}
    want_metrics = {names[m]: v for m, v in metrics.items()}
    for name in set(result.metrics) | set(want_metrics):
        assert result.metrics.get(name, 0) == pytest.approx(want_metrics.get(name, 0), nan_ok=True)
    group_exclusive = {}
    for row in result.regions:
        group_exclusive[row.group] = group_exclusive.get(row.group, 0) + row.exclusive
    assert {g.group: g.exclusive for g in result.groups} == group_exclusive
    return result


@SETTINGS
@given(traces.traces(), st.sampled_from([Params(), LOSSY]),
       st.sampled_from([(10, 5, 256), (1, 0, 0), (3, 1000, 0), (10, 1, 0)]), st.data())
def test_graph_profile_matches_brute_force(trace, params, policy, data):
    """Every caching policy, also memoizing the smallest sub-trees inside a pass."""
    with pytest.MonkeyPatch.context() as patch:  # undone after each example
        patch.setattr(engine_module, "MEMO_MIN_EVENTS", policy[2])
        graph = oracle.build(trace, params)
        for start, stop, locations in windows(data, trace, 3):
            check(graph, start, stop, locations, cache_modulus=policy[0], cache_references=policy[1])


@settings(max_examples=25, deadline=None)
@given(traces.traces(), st.data())
def test_archive_profile_matches_brute_force(tmp_path_factory, trace, data):
    path = tmp_path_factory.mktemp("profile") / "t.ccg"
    ccgformat.save_graph(oracle.build(trace, LOSSY), path, nodes_per_block=3)
    with ccgformat.open(path) as archive:
        for start, stop, locations in windows(data, trace, 3):
            check(archive, start, stop, locations)


def _checkpoint_windows(data, archive, trace, count):
    """Random windows whose bounds are often checkpoint times (ties included), so that
    interiors start and end exactly at a checkpoint as well as between two."""
    times = sorted({p["time"] for location in archive.locations
                    for p in archive.checkpoints(SectionKind.SUMMARY, location)})
    for start, stop, locations in windows(data, trace, count):
        if data.draw(st.booleans()):
            start = data.draw(st.sampled_from([None, *times]))
        if data.draw(st.booleans()):
            stop = data.draw(st.sampled_from([None, *times]))
        if start is not None and stop is not None and start > stop:
            start, stop = stop, start
        yield start, stop, locations


@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.integers(1, 12), st.data())
def test_summary_index_interior_matches_brute_force_and_the_graph(tmp_path_factory, trace, params, interval, data):
    """With checkpoints every few events the SUMMARY index answers the interior of most
    windows: the profile equals the brute force, the graph-only answer and the default
    (whichever the query picks) exactly."""
    path = tmp_path_factory.mktemp("interior") / "t.ccg"
    definitions = traces.definitions()
    definitions.metrics[2] = dataclasses.replace(definitions.metrics[2], value_type="double")
    ccgformat.write_trace(path, definitions, ((loc, traces.batches(e)) for loc, e in trace.items()),
                          params, nodes_per_block=5, checkpoint_interval=interval, index="always")
    with ccgformat.open(path) as archive:
        index = SummaryIndex.of(archive)
        assert index is not None
        for start, stop, locations in _checkpoint_windows(data, archive, trace, 4):
            result = check(archive, start, stop, locations, summary_index=True)
            graph_only = profile(archive, start, stop, locations, summary_index=False)
            assert json.dumps(result.to_json()) == json.dumps(graph_only.to_json())  # NaN equals NaN here
            assert json.dumps(profile(archive, start, stop, locations).to_json()) == json.dumps(result.to_json())


@settings(max_examples=40, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.integers(1, 12), st.data())
def test_a_small_graph_is_written_without_its_index(tmp_path_factory, trace, params, interval, data):
    """``index="auto"`` (the default) leaves the checkpoints out exactly when the graph
    holds at most INDEX_NODES_PER_LOCATION nodes (spec 4.8); the file then answers every
    profile like the one with its index, and verifies clean."""
    folder = tmp_path_factory.mktemp("auto")
    for index in ("auto", "always"):
        ccgformat.write_trace(folder / f"{index}.ccg", traces.definitions(),
                              ((loc, traces.batches(e)) for loc, e in trace.items()), params,
                              checkpoint_interval=interval, index=index)
    with ccgformat.open(folder / "auto.ccg") as auto, ccgformat.open(folder / "always.ccg") as always:
        kinds = {e.kind for e in auto.sections}
        assert (SectionKind.CHECKPOINT_TABLE in kinds) == (len(auto.pool) > INDEX_NODES_PER_LOCATION)
        assert SectionKind.CHECKPOINT_TABLE in {e.kind for e in always.sections}
        assert (SummaryIndex.of(auto) is None) == (len(auto.pool) <= INDEX_NODES_PER_LOCATION)
        assert not verify(auto.path)
        for start, stop, locations in _checkpoint_windows(data, always, trace, 3):
            for policy in (True, None):
                assert json.dumps(profile(auto, start, stop, locations, summary_index=policy).to_json()) == \
                    json.dumps(profile(always, start, stop, locations, summary_index=policy).to_json())


def test_a_small_graph_of_many_locations_has_no_index(tmp_path):
    """`write_table` and `save_graph` decide before making the checkpoints: 5,000
    locations sharing a few nodes get no index (more than one CHECKPOINT_TABLE block's
    worth), and answer like the file with it."""
    count = 5000
    events = [Event(10, EventKind.ENTER, 0), Event(20, EventKind.LEAVE, 0)] * count
    batch, offsets = EventBatch.from_events(events), np.arange(count + 1) * 2
    definitions = dataclasses.replace(traces.definitions(), locations=[Location(f"rank {i}") for i in range(count)])
    for index in ("auto", "always"):
        graph = ccgformat.write_table(tmp_path / f"{index}.ccg", definitions, batch, offsets, index=index)
        ccgformat.save_graph(graph, tmp_path / f"saved-{index}.ccg", index=index)
    for prefix in ("", "saved-"):
        with ccgformat.open(tmp_path / f"{prefix}auto.ccg") as auto, \
                ccgformat.open(tmp_path / f"{prefix}always.ccg") as always:
            assert len(auto.pool) <= INDEX_NODES_PER_LOCATION
            assert SectionKind.CHECKPOINT_TABLE not in {e.kind for e in auto.sections}
            assert len([e for e in always.sections if e.kind == SectionKind.CHECKPOINT_TABLE]) > 1
            assert not verify(auto.path)
            for window in ((None, None), (12, 18)):
                assert profile(auto, *window).to_json() == profile(always, *window, summary_index=True).to_json()


def test_a_large_graph_keeps_its_index(tmp_path):
    """Above INDEX_NODES_PER_LOCATION nodes the default writes the index."""
    rng = np.random.default_rng(5)
    events = [Event(0, EventKind.ENTER, 0)]
    for k in range(2 * INDEX_NODES_PER_LOCATION):  # calls of distinct lengths: a node each
        t = events[-1].time + 1
        events += [Event(t, EventKind.ENTER, 1), Event(t + int(rng.integers(1, 10 ** 9)), EventKind.LEAVE, 1)]
    events.append(Event(events[-1].time + 1, EventKind.LEAVE, 0))
    path = tmp_path / "t.ccg"
    ccgformat.write_trace(path, traces.definitions(), [(0, traces.batches(events))])
    with ccgformat.open(path) as archive:
        assert len(archive.pool) > INDEX_NODES_PER_LOCATION
        assert SectionKind.CHECKPOINT_TABLE in {e.kind for e in archive.sections}
        assert len(archive.checkpoints(SectionKind.SUMMARY, 0)) == 1


def test_full_window_reads_no_node_block(tmp_path, monkeypatch):
    """The whole trace's profile comes from the index alone: no node block is decoded,
    and it equals the graph's."""
    trace = {loc: _spmd(loc) for loc in range(3)}
    path = tmp_path / "t.ccg"
    ccgformat.write_trace(path, traces.definitions(), ((loc, traces.batches(e)) for loc, e in trace.items()),
                          checkpoint_interval=100)
    with ccgformat.open(path) as archive:
        def refuse(*args):
            raise AssertionError("a node block was read")
        monkeypatch.setattr(type(archive.pool), "block_of", refuse)
        full = profile(archive, summary_index=True).to_json()
        monkeypatch.undo()
        assert full == profile(archive, summary_index=False).to_json()
        check(archive, None, None, archive.locations)


def test_successive_queries_reuse_and_agree():
    """Zooming in (1, 1/3, 1/30, 1/300 of the trace) twice: the second round is answered
    from the memo and equals the first, which equals the brute force and every policy."""
    trace = {loc: _spmd(loc) for loc in range(3)}
    graph = oracle.build(trace)
    begin, end = min(e.time for e in trace[0]), max(e.time for e in trace[2])
    span = end - begin
    zoom = [(begin + span // 3 - span // (2 * k), begin + span // 3 + span // (2 * k)) for k in (1, 3, 30, 300)]
    first = [profile(graph, a, b).to_json() for a, b in zoom]
    engine = engine_for(graph)
    rows = engine._rows
    assert rows > 0
    assert [profile(graph, a, b).to_json() for a, b in zoom] == first
    assert engine._rows == rows  # the repeated round found every sub-tree in the memo
    assert [profile(graph, a, b, cache_modulus=1, cache_references=0).to_json() for a, b in zoom] == first
    for a, b in zoom:
        check(graph, a, b, sorted(trace))


def _spmd(location):
    """A regular trace with nested calls, messages, collectives and a metric."""
    E, L, S, R, CB, CE, M = (ccgformat.EventKind.ENTER, ccgformat.EventKind.LEAVE, ccgformat.EventKind.SEND,
                             ccgformat.EventKind.RECV, ccgformat.EventKind.COLL_BEGIN,
                             ccgformat.EventKind.COLL_END, ccgformat.EventKind.METRIC)
    t = 1000 * location
    rows = [ccgformat.Event(t, E, 0)]
    for i in range(200):
        for kind, kw, gap in ((E, dict(ref=1), 3), (E, dict(ref=2), 5 + i % 3), (L, dict(ref=2), 40),
                              (M, dict(ref=0, value=i * 7), 1), (S, dict(ref=(location + 1) % 3, size=64), 2),
                              (R, dict(ref=(location + 2) % 3, size=64), 9), (CB, {}, 1),
                              (CE, dict(ref=1, size=8, recv_size=8), 30), (L, dict(ref=1), 2)):
            t += gap
            rows.append(ccgformat.Event(t, kind, **kw))
    rows.append(ccgformat.Event(t + 5, L, 0))
    return rows


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_profiles(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    check(archive, None, None, archive.locations)
    for start, stop, locations in corpus_windows(archive, 7, 6):
        check(archive, start, stop, locations)


def test_lossy_profile_within_bounds_of_the_original():
    """Against the original events: calls, messages and collectives exact, every region's
    inclusive time within the relative bound (each call's duration is)."""
    trace = {loc: _spmd(loc) for loc in range(3)}
    graph = oracle.build(trace, Params(abs_dev=50, rel_dev=0.1))
    result = profile(graph)
    regions, pairs, collectives, _ = oracle.profile(trace)
    for row in result.regions:
        want = regions[row.region]
        assert row.calls == want["calls"]
        assert abs(row.inclusive - want["inclusive"]) <= 0.1 * want["inclusive"] + 1
    assert {(m.sender, m.receiver): [m.sent, m.sent_bytes, m.received, m.received_bytes]
            for m in result.messages} == pairs
    assert graph.metrics.n < graph.metrics.N  # the bounds did merge sub-trees


def test_empty_and_bad_windows():
    graph = oracle.build({0: _spmd(0)})
    empty = profile(graph, 10, 10)
    assert not empty.regions and not empty.messages and not empty.metrics
    with pytest.raises(ValueError):
        profile(graph, 10, 5)
    with pytest.raises(KeyError):
        profile(graph, locations=[7])
    assert profile(graph).region("r0").calls == 1
