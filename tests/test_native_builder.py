"""The native builder against the Python reference `ccgformat.graph.Builder`.

Every test builds the same input with both and compares everything a build yields: each
column of every pool node, the roots, the metrics N/n/M/m, the repairs - or the error
(type, message, location, index, time) for an invalid trace.
"""

from __future__ import annotations

import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccgformat import Builder, EventBatch, Params
from ccgformat.errors import TraceError
from ccgformat.graph import NodeKind
from ccgformat.model import Definitions, Event, EventKind, Metric

from . import test_graph_examples as examples
from .traces import definitions, traces

try:
    from ccgformat._native import load
    from ccgformat._native.builder import NativeBuilder
    from ccgformat._native.tables import NodeTable, table_arrays
    load()
except ImportError as error:  # pragma: no cover - depends on the build
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth

# --------------------------------------------------------------------------- helpers

params_strategy = st.builds(
    Params,
    abs_dev=st.sampled_from([0, 0, 1, 5, 60, 1000, 1 << 40]),
    rel_dev=st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0, 1e-12]),
    rel_size=st.sampled_from([0.0, 0.0, 0.05, 0.5]),
    rel_metric=st.sampled_from([0.0, 0.0, 0.05, 0.5]),
    branching=st.integers(2, 5),
    search_length=st.integers(1, 4),
    leaf_window=st.sampled_from([0, 1, 2, 16]),
    representatives=st.sampled_from([0, 1, 2, 16]),
    epoch_nodes=st.sampled_from([0, 1, 2, 7, 1 << 21]),  # tiny bounds: the index starts empty often
)


def trace_definitions(doubles: list[bool]) -> Definitions:
    """The definitions of `traces.traces`, with the chosen metrics floating-point."""
    defs = definitions()
    defs.metrics = [Metric(m.name, value_type="double" if double else "int64")
                    for m, double in zip(defs.metrics, doubles)]
    return defs


def outcome(builder_class, feed, params: Params, defs: Definitions | None, repair: bool = False):
    """What a build yields: the pool columns, roots, metrics and repairs, or the error."""
    builder = builder_class(params, defs, repair=repair)
    try:
        feed(builder)
        graph = builder.finish()
    except (TraceError, ValueError) as error:
        details = (error.location, error.index, error.time) if isinstance(error, TraceError) else ()
        return ("error", type(error).__name__, str(error), details, builder.metrics)
    if builder_class is NativeBuilder:
        assert graph.pool is builder.pool and builder.nodes().count == len(graph.pool)
        columns = table_arrays(builder.nodes())
    else:
        columns = NodeTable.from_pool(graph.pool).arrays
    return ({name: array.tolist() for name, array in columns.items()}, graph.roots, graph.metrics,
            graph.repairs, builder.repairs)


def assert_same(feed, params: Params, defs: Definitions | None = None, repair: bool = False):
    reference = outcome(Builder, feed, params, defs, repair)
    native = outcome(NativeBuilder, feed, params, defs, repair)
    if reference[0] != "error" and native[0] != "error":
        for name in reference[0]:
            assert native[0][name] == reference[0][name], name
    assert native == reference
    return reference


def feeder(locations: dict[int, list[EventBatch]], order: list[int] | None = None, ends: list[int] | None = None):
    """Feed batches, location after location or interleaved in ``order`` (one batch per
    entry), ending locations in ``ends`` first (finish ends the rest)."""
    def feed(builder) -> None:
        if order is None:
            for location, pieces in locations.items():
                for batch in pieces:
                    builder.add(location, batch)
        else:
            positions = dict.fromkeys(locations, 0)
            for location in order:
                builder.add(location, locations[location][positions[location]])
                positions[location] += 1
        for location in ends or ():
            builder.end_location(location)
    return feed


def split(events: list[Event], cuts: list[int]) -> list[EventBatch]:
    batch = EventBatch.from_events(events)
    bounds = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
    return [batch[a:b] for a, b in pairwise(bounds)] or [batch]


# --------------------------------------------------------------------------- valid traces

@given(traces(), params_strategy, st.lists(st.booleans(), min_size=3, max_size=3),
       st.lists(st.integers(0, 10**6), max_size=6), st.booleans(), st.data())
def test_same_graph_as_the_reference(trace, params, doubles, cuts, interleave, data):
    locations = {location: split(events, cuts) for location, events in trace.items()}
    order = ends = None
    if interleave:  # locations interleave batch by batch; some end early
        order = data.draw(st.permutations([loc for loc, pieces in locations.items() for _ in pieces]))
        ends = data.draw(st.lists(st.sampled_from(sorted(locations)), unique=True))
    assert_same(feeder(locations, order, ends), params, trace_definitions(doubles))


@given(traces(max_locations=2), params_strategy)
def test_same_graph_without_definitions(trace, params):
    """No definitions: nothing checks references and no metric is floating-point."""
    assert_same(feeder({loc: [EventBatch.from_events(ev)] for loc, ev in trace.items()}), params, None)


# --------------------------------------------------------------------------- repairs and errors

def damage(events: list[Event], draw) -> list[Event]:
    """Drop, duplicate or alter a few events, or insert stray LEAVEs and bad values."""
    events = list(events)
    for _ in range(draw(st.integers(1, 3))):
        if not events:
            break
        i = draw(st.integers(0, len(events) - 1))
        what = draw(st.sampled_from(["drop", "drop_leave", "stray_leave", "kind", "column", "time",
                                     "size", "reference", "truncate"]))
        e = events[i]
        if what == "drop":
            del events[i]
        elif what == "drop_leave":
            leaves = [j for j, x in enumerate(events) if x.kind == EventKind.LEAVE]
            if leaves:
                del events[draw(st.sampled_from(leaves))]
        elif what == "stray_leave":
            events.insert(i, Event(e.time, EventKind.LEAVE, draw(st.integers(0, 3))))
        elif what == "kind":
            events[i] = e._replace(kind=draw(st.integers(13, 255)))
        elif what == "column":
            events[i] = e._replace(**{draw(st.sampled_from(["ref", "comm", "tag", "request", "size",
                                                               "recv_size", "value"])): 7})
        elif what == "time":
            events[i] = e._replace(time=e.time - draw(st.integers(1, 100)))
        elif what == "size":
            events[i] = e._replace(size=-1)
        elif what == "reference":
            events[i] = e._replace(ref=draw(st.sampled_from([-1, 3, 4, 100])))
        else:
            del events[i:]
    return events


@given(traces(max_locations=2), params_strategy, st.booleans(), st.lists(st.integers(0, 10**6), max_size=4),
       st.data())
def test_same_errors_and_repairs(trace, params, repair, cuts, data):
    damaged = {loc: damage(events, data.draw) for loc, events in trace.items()}
    locations = {loc: split(events, cuts) for loc, events in damaged.items()}
    assert_same(feeder(locations), params, definitions(), repair)


def test_repairs_close_and_drop_like_the_reference():
    rows = [(10, EventKind.ENTER, 1), (12, EventKind.LEAVE, 2), (15, EventKind.ENTER, 0),
            (20, EventKind.SEND, 1, 0, 0, 0, 8), (30, EventKind.LEAVE, 3)]
    result = assert_same(feeder({0: [EventBatch.from_events(rows)]}), Params(branching=2), definitions(), True)
    assert [(r.region, r.time, r.action) for r in result[3]] == \
        [(2, 12, "dropped"), (3, 30, "dropped"), (0, 30, "closed"), (1, 30, "closed")]


def test_kind_columns_of_other_types_fail_alike():
    batch = EventBatch.from_events([(1, EventKind.ENTER, 0), (2, EventKind.LEAVE, 0)])
    batch.kind = np.array([0, 300], dtype=np.int64)
    assert_same(feeder({0: [batch]}), Params(), definitions())
    batch.kind = np.array([0, 1], dtype=np.int64)
    assert_same(feeder({0: [batch]}), Params(), definitions())


@given(st.data())
def test_many_locations_in_any_order(data):
    """Locations interleaved, with empty batches, some ended twice or never fed:
    the per-location states must come and go as in the reference."""
    trace = data.draw(traces(max_locations=3))
    motifs = list(trace.values())
    locations = {loc: split(motifs[loc % len(motifs)], [loc * 7, loc * 13]) + [EventBatch.empty()]
                 for loc in range(12)}
    order = data.draw(st.permutations([loc for loc, pieces in locations.items() for _ in pieces]))
    ends = data.draw(st.lists(st.integers(0, 14), max_size=6))  # 12-14 were never fed

    def feed(builder) -> None:
        positions = dict.fromkeys(locations, 0)
        for location in order:
            builder.add(location, locations[location][positions[location]])
            positions[location] += 1
        for location in ends:  # ending twice replaces the root by an empty one, as in the reference
            builder.end_location(location)
    assert_same(feed, data.draw(params_strategy), definitions())


def test_a_finished_location_takes_no_more_events():
    builder = NativeBuilder()
    builder.add(0, EventBatch.from_events([(1, EventKind.MARKER, 0, 0, 0, 0, 0, 0, 5)]))
    builder.end_location(0)
    with pytest.raises(ValueError, match="already been finished"):
        builder.add(0, EventBatch.from_events([(2, EventKind.MARKER)]))


def test_limits_of_the_native_arithmetic():
    from ccgformat.errors import ParameterError
    with pytest.raises(ParameterError):
        NativeBuilder(Params(abs_dev=(1 << 60) + 1, rel_dev=0.1))
    builder = NativeBuilder()
    with pytest.raises(TraceError, match="span more than") as caught:
        builder.add(0, EventBatch.from_events([(-(1 << 61), EventKind.MARKER), (1, EventKind.MARKER)]))
    assert (caught.value.index, caught.value.time) == (1, 1)


# --------------------------------------------------------------------------- dissertation examples

def test_fig_3_4_seventeen_nodes_compress_to_eight():
    result = assert_same(feeder({0: [EventBatch.from_events(examples.fig_3_2_trace())]}), Params())
    assert (result[2].N, result[2].n) == (17, 8)


def test_fig_4_19_identical_processes_share_their_whole_graph():
    locations = {loc: [EventBatch.from_events(examples.fig_3_2_trace(start=1000 * loc))] for loc in range(4)}
    result = assert_same(feeder(locations), Params())
    assert result[2].n == 8 and len({root.root for root in result[1].values()}) == 1


def test_fig_4_1_construction_and_the_walker_on_the_native_pool():
    rows = [(10, EventKind.ENTER, examples.A), (20, EventKind.ENTER, examples.B), (30, EventKind.LEAVE, examples.B),
            (50, EventKind.ENTER, examples.C), (60, EventKind.SEND, 1, 0, 0, 0, 0), (70, EventKind.LEAVE, examples.C),
            (90, EventKind.LEAVE, examples.A)]
    assert_same(feeder({0: [EventBatch.from_events(rows)]}), Params())
    builder = NativeBuilder()
    builder.add(0, EventBatch.from_events(rows))
    graph = builder.finish()
    calls = [i for i in range(len(graph.pool)) if graph.pool.kind[i] == NodeKind.CALL]
    assert [graph.pool.durations[i] for i in calls] == [(10,), (10, 0, 10), (10, 10, 20, 20, 20)]
    walked = [tuple(event)[:3] for batch in graph.location(0).events() for event in batch.rows()]
    assert walked == [row[:3] for row in rows]


def test_best_case_5_1_3_grows_logarithmically():
    batch = examples.repeated_calls(100_000)
    pieces = [batch[i:i + 65536] for i in range(0, len(batch), 65536)]
    result = assert_same(feeder({0: pieces}), Params(branching=20))
    assert result[2].n < 40


# --------------------------------------------------------------------------- synthetic traces

@pytest.mark.parametrize("locations, events, jitter, params", [
    (8, 125_000, 0.0, Params()),                                      # 1 M events, lossless
    (2, 20_000, 0.2, Params()),                                       # jittered, lossless
    (2, 20_000, 0.2, Params(abs_dev=1000, rel_dev=0.05)),             # jittered, lossy
    (2, 20_000, 0.3, Params(abs_dev=500, rel_dev=0.1, rel_metric=0.1, branching=5, search_length=20)),
])
def test_synthetic_spmd_trace(locations, events, jitter, params):
    defs, stream = synth.synthesize(locations, events, jitter=jitter, seed=3)
    data = {location: list(stream(location)) for location in range(locations)}
    assert_same(feeder(data), params, defs)


def stream_archive(builder_class, path: Path, defs: Definitions, data: dict[int, list[EventBatch]],
                   params: Params) -> bytes:
    """What archive.write_trace does, with the given builder: blocks written while building."""
    from ccgformat.archive.writer import Writer
    from ccgformat.graph import LocationWalker

    builder = builder_class(params, defs)
    with Writer(path, nodes_per_block=64) as writer:
        for location, batches in data.items():
            for batch in batches:
                builder.add(location, batch)
                writer.add_nodes(builder.pool)
            root = builder.end_location(location)
            writer.add_nodes(builder.pool)
            writer.add_location(location, LocationWalker(builder.pool, root.root, root.start, location))
        writer.finish(builder.finish())
    return path.read_bytes()


def test_streamed_archives_are_byte_identical(tmp_path):
    defs, stream = synth.synthesize(2, 5000, jitter=0.2, seed=4, batch_size=1000)
    data = {location: list(stream(location)) for location in range(2)}
    params = Params(abs_dev=300, rel_dev=0.1, branching=6, search_length=50)
    reference = stream_archive(Builder, tmp_path / "reference.ccg", defs, data, params)
    assert stream_archive(NativeBuilder, tmp_path / "native.ccg", defs, data, params) == reference

