"""The leaf-call sharing rule (Params.leaf_window, docs/compression.md): a leaf call equal
to a cached node made or last shared more than W nodes ago is stored again, in both
builders alike, and the graph still rebuilds every event exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive.layout import SectionKind
from ccgformat.graph import Builder
from ccgformat.graph.pool import NodeKind
from ccgformat.model import Event, EventBatch, EventKind
from ccgformat.params import Params

from .traces import definitions

try:
    from ccgformat._native import load
    from ccgformat._native.builder import NativeBuilder
    load()
    BUILDERS = [Builder, NativeBuilder]
except ImportError:  # pragma: no cover - a machine without a C compiler: the reference alone
    BUILDERS = [Builder]

ENTER, LEAVE = int(EventKind.ENTER), int(EventKind.LEAVE)


def leaf_calls(durations: list[int], region: int = 1, gap: int = 3) -> list[Event]:
    """Calls of ``region`` without children, one per duration, ``gap`` ticks apart."""
    return mixed_leaf_calls([(region, duration) for duration in durations], gap)


def mixed_leaf_calls(calls: list[tuple[int, int]], gap: int = 3) -> list[Event]:
    """Calls without children, one per (region, duration), ``gap`` ticks apart."""
    events, time = [], 0
    for region, duration in calls:
        events += [Event(time, ENTER, ref=region), Event(time + duration, LEAVE, ref=region)]
        time += duration + gap
    return events


def build(builder_class, params: Params, locations: dict[int, list[Event]]):
    builder = builder_class(params, definitions())
    for location, events in locations.items():
        builder.add(location, EventBatch.from_events(events))
    return builder.finish()


def rebuilt(graph, location: int) -> list[tuple]:
    return [row for batch in graph.location(location).events() for row in batch.rows()]


def copies(graph, duration: int) -> int:
    """How many pool nodes are a call of region 1 without children lasting ``duration``."""
    pool = graph.pool
    return sum(1 for node in range(len(pool)) if pool.kind[node] == NodeKind.CALL
               and pool.key[node] == (1,) and pool.durations[node] == (duration,))


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_a_far_exact_leaf_match_is_stored_again_and_a_near_one_shared(builder_class):
    # 5, then 40 distinct durations (40 new nodes), then 5 three times: the first of them
    # finds the node of the first 5 made 41 nodes ago and stores a copy in its place; the
    # next two share that copy (0 and 1 nodes ago)
    events = leaf_calls([5] + list(range(100, 140)) + [5, 5, 5])
    for window, expected in ((16, 2), (64, 1), (0, 1)):
        graph = build(builder_class, Params(branching=1000, leaf_window=window), {0: events})
        assert copies(graph, 5) == expected, window
        assert rebuilt(graph, 0) == [tuple(e) for e in events]


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_a_far_match_in_an_s_list_whose_durations_repeat_is_shared(builder_class):
    # region 1 alternates 5 and 6 (2 misses, then only hits), region 2 makes 40 new nodes,
    # then region 1 lasts 5 again: far, but its S-list has more hits than misses
    calls = [(1, 5), (1, 6)] * 3 + [(2, d) for d in range(100, 140)] + [(1, 5)]
    events = mixed_leaf_calls(calls)
    graph = build(builder_class, Params(branching=1000, leaf_window=4), {0: events})
    assert copies(graph, 5) == 1
    assert rebuilt(graph, 0) == [tuple(e) for e in events]


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_leaf_window_leaves_lossy_graphs_and_inner_nodes_alone(builder_class):
    events = leaf_calls([5] + list(range(100, 140)) + [5])
    lossy = Params(abs_dev=1000, rel_dev=0.01, branching=1000)
    graphs = [build(builder_class, Params(**{**vars(lossy), "leaf_window": w}), {0: events}) for w in (0, 1)]
    assert graphs[0].metrics == graphs[1].metrics


@st.composite
def leaf_traces(draw: st.DrawFn) -> dict[int, list[Event]]:
    """Locations of leaf calls (regions 1 and 2, durations from a few values, so exact
    matches recur at every age), some wrapped in calls of region 0."""
    locations = {}
    for location in range(draw(st.integers(1, 3))):
        events, time = [], draw(st.integers(0, 100))
        for _ in range(draw(st.integers(1, 40))):
            wrapped = draw(st.lists(st.tuples(st.integers(1, 2), st.integers(0, 5), st.integers(0, 2)),
                                    min_size=1, max_size=4))
            outer = draw(st.booleans())
            if outer:
                events.append(Event(time, ENTER, ref=0))
            for region, duration, gap in wrapped:
                time += gap
                events += [Event(time, ENTER, ref=region), Event(time + duration, LEAVE, ref=region)]
                time += duration
            time += draw(st.integers(0, 2))
            if outer:
                events.append(Event(time, LEAVE, ref=0))
        locations[location] = events
    return locations


@pytest.mark.skipif(len(BUILDERS) < 2, reason="the native extension is not built")
@settings(max_examples=60, deadline=None)
@given(leaf_traces(), st.integers(0, 6), st.integers(1, 8), st.integers(2, 5))
def test_both_builders_share_leaf_calls_alike(locations, window, search_length, branching):
    from ccgformat._native.tables import NodeTable

    params = Params(branching=branching, search_length=search_length, leaf_window=window)
    reference, native = (build(cls, params, locations) for cls in BUILDERS)
    assert {k: v.tolist() for k, v in NodeTable.from_pool(reference.pool).arrays.items()} == \
        {k: v.tolist() for k, v in NodeTable.from_pool(native.pool).arrays.items()}
    assert reference.roots == native.roots and reference.metrics == native.metrics
    for location, events in locations.items():
        assert rebuilt(reference, location) == rebuilt(native, location) == [tuple(e) for e in events]


def test_parameters_record_the_window_and_files_before_it_read_as_always_sharing(tmp_path):
    """Spec 4.2: a file records its window whatever it is (in a bundle too); a file
    without the member, a 1.3 file or one of 1.4 in a BUNDLE, reads as 0."""
    path = tmp_path / "leaves.ccg"
    events = leaf_calls([5] + list(range(100, 140)) + [5])
    for params in (Params(leaf_window=7), Params()):
        ccg.write_trace(path, definitions(), [(0, [EventBatch.from_events(events)])], params)
        with ccg.open(path) as archive:
            assert archive.directory[0].kind == SectionKind.DICTIONARY_BUNDLE
            assert archive.parameters["leaf_window"] == archive.params.leaf_window == params.leaf_window
    vectors = Path(__file__).resolve().parent.parent / "spec" / "vectors"
    for vector in (vectors / "1.3" / "minimal.ccg", vectors / "1.4" / "bundle.ccg"):
        with ccg.open(vector) as archive:
            assert "leaf_window" not in archive.parameters and archive.params.leaf_window == 0
