"""Metric integrals (spec 4.11, issue 15): `metric_integrals` from the graph and from the
METRIC_LEVEL tables against an exact brute force over the rebuilt events, the tables'
levels, verify, and damaged tables."""

from __future__ import annotations

import importlib
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.metric_tables import MetricLevel, decode_metric_level, encode_metric_level, join_metric_levels
from ccgformat.archive.verify import verify
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Definitions, EventKind, Metric
from ccgformat.query.metric_integrals import metric_integrals

from . import query_oracle as oracle
from . import traces
from .query_support import bounds, with_tables

MODES = [("accumulated", "int64"), ("absolute", "int64"), ("relative", "uint64")]


def definitions() -> Definitions:
    base = traces.definitions()
    return Definitions(regions=base.regions, locations=base.locations,
                       metrics=[Metric(f"m{i}", "", mode, kind) for i, (mode, kind) in enumerate(MODES)])


def brute(archive, bounds_, location):
    """``(exact, magnitude)`` per slice and metric: the integrals as Fractions from the
    rebuilt events (spec 4.11), and the sums of the magnitudes of the contributions and of
    the values an increase is computed from (the error bound of spec 4.11)."""
    events = oracle.events_of(archive, location) if location in archive.roots else []
    end = events[-1].time if events else 0
    slices = len(bounds_) - 1
    modes = [(metric.mode, metric.value_type) for metric in archive.definitions.metrics]
    exact = [[Fraction(0)] * len(modes) for _ in range(slices)]
    size = [[Fraction(0)] * len(modes) for _ in range(slices)]

    def add(t, m, amount, operands=0):
        exact[t][m] += amount
        size[t][m] += abs(amount) + operands

    for m, (mode, kind) in enumerate(modes):
        samples = [(e.time, _number(e.value, kind)) for e in events if e.kind == EventKind.METRIC and e.ref == m]
        for i, (time, value) in enumerate(samples):
            if mode not in ("accumulated", "relative"):
                stop = samples[i + 1][0] if i + 1 < len(samples) else end
                for t in range(slices):
                    overlap = min(stop, end, bounds_[t + 1]) - max(time, bounds_[t])
                    if overlap > 0:
                        add(t, m, value * overlap)
            elif bounds_[0] <= time < bounds_[-1]:
                t = next(t for t in range(slices) if time < bounds_[t + 1])
                if mode == "relative":
                    add(t, m, value)
                elif i:  # two values converted to float64, then subtracted (spec 4.11)
                    add(t, m, value - samples[i - 1][1], abs(value) + abs(samples[i - 1][1]))
    return exact, size


def _number(bits, kind):
    if kind == "double":
        return Fraction(float(np.array([bits], np.int64).view(np.float64)[0]))
    return bits % (1 << 64) if kind == "uint64" else bits


def check(archive, result):
    for row, location in enumerate(result.locations.tolist()):
        exact, size = brute(archive, result.bounds.tolist(), location)
        for t in range(len(result.bounds) - 1):
            for m in range(result.values.shape[2]):
                got = result.values[row, t, m]
                assert abs(Fraction(got) - exact[t][m]) <= Fraction(size[t][m]) * Fraction(1, 1 << 40), \
                    (location, t, m, got, exact[t][m])


@st.composite
def sampled_traces(draw):
    """Locations in one call of region 0 sampling the three metrics at random times (ties
    included) with random values: every slice rule gets work."""
    trace = {}
    for location in range(draw(st.integers(1, 3))):
        time = draw(st.integers(0, 10**9))
        events = [traces.Event(time, EventKind.ENTER, 0)]
        for _ in range(draw(st.integers(0, 30))):
            time += draw(st.sampled_from([0, 1, 3, 17, 100]))
            value = draw(st.one_of(st.integers(-1000, 1000), st.integers(traces.INT64_MIN, traces.INT64_MAX)))
            events.append(traces.Event(time, EventKind.METRIC, draw(st.integers(0, 2)), value=value))
        events.append(traces.Event(time + draw(st.integers(0, 50)), EventKind.LEAVE, 0))
        trace[location] = events
    return trace


def write(path, trace, params, tables=True):
    graph = oracle.build_with(definitions(), trace, params)
    ccgformat.save_graph(graph, path, nodes_per_block=3, aggregation=1000.0 if tables else None)
    return ccgformat.open(path)


@settings(max_examples=60, deadline=None)
@given(trace=st.one_of(traces.traces(), sampled_traces()), data=st.data(), lossy=st.booleans())
def test_integrals_equal_brute_force(tmp_path_factory, trace, data, lossy):
    params = Params(rel_metric=0.2) if lossy else Params()
    folder = tmp_path_factory.mktemp("metric")
    with write(folder / "t.ccg", trace, params) as archive, write(folder / "g.ccg", trace, params, False) as plain:
        assert archive.metric_tables is not None and plain.metric_tables is None
        assert not verify(archive.path)
        times = [e.time for events in trace.values() for e in events]
        start, stop = data.draw(bounds(times)), data.draw(bounds(times))
        low, high = min(times) if start is None else start, max(times) + 1 if stop is None else stop
        if high <= low:  # an empty window is refused; take one that is not
            start, stop = high, high + 1 + data.draw(st.integers(0, 50))
        slices = data.draw(st.sampled_from([1, 2, 3, 7, 16, 64]))
        for source in (archive, plain):
            check(source, source.metric_integrals(slices, start, stop))
        levels = archive.metric_tables.levels
        reference = metric_integrals(plain, 1 << levels[0].finest)  # the finest level, dense, from the graph
        expected = reference.values
        for level in reversed(levels):  # bit for bit: the finest, then the pairwise sums (spec 4.11)
            while expected.shape[1] > level.slices:
                expected = expected[:, 0::2] + expected[:, 1::2]
            assert np.array_equal(level.dense(reference.locations.tolist()), expected, equal_nan=True)
        for k, level in enumerate(levels):  # every table level against the brute force
            check(archive, metric_integrals(plain, 1 << k))
            first, last = archive.time_range
            dense = level.dense()
            for location in range(dense.shape[0]):
                exact, size = brute(archive, [first + j * (last + 1 - first) // (1 << k)
                                              for j in range((1 << k) + 1)], location)
                for t in range(1 << k):
                    for m in range(len(MODES)):
                        slack = Fraction(size[t][m]) * Fraction(1, 1 << 40)
                        assert abs(Fraction(dense[location, t, m]) - exact[t][m]) <= slack


def test_a_worked_example(tmp_path):
    """The spec's example: one location, samples of an absolute metric 2 at t=10, 5 at
    t=20 and of a counter 100 at t=10, 130 at t=25; last event at t=40."""
    E = traces.Event
    trace = {0: [E(10, EventKind.ENTER, 0), E(10, EventKind.METRIC, 1, value=2), E(10, EventKind.METRIC, 0, value=100),
                 E(20, EventKind.METRIC, 1, value=5), E(25, EventKind.METRIC, 0, value=130),
                 E(40, EventKind.LEAVE, 0)]}
    with write(tmp_path / "w.ccg", trace, Params()) as archive:
        result = archive.metric_integrals(2, 10, 30, metrics=[0, 1])
        # [10, 20): 2 x 10 ticks; [20, 30): 5 x 10; the counter rises by 30 at t=25
        assert result.values[0].tolist() == [[0.0, 20.0], [30.0, 50.0]]
        assert archive.metric_integrals(1).values[0, 0].tolist() == [30.0, 2 * 10 + 5 * 20, 0.0]


def encoded(level: int, finest: int, values: np.ndarray) -> bytes:
    """The payload of a level over [0, 10) from its dense ``[locations, 2^level, metrics]`` values."""
    locations, slices, metrics = values.shape
    cell, metric = np.nonzero(values.reshape(locations * slices, metrics))
    return encode_metric_level(MetricLevel(level, finest, 0, 10, metrics, locations, cell, metric,
                                           values.reshape(locations * slices, metrics)[cell, metric]))


def test_levels_that_do_not_add_up_are_refused():
    fine = np.array([[[1.0], [2.0]]])
    levels = [decode_metric_level(encoded(k, 1, values), "x", 0)
              for k, values in ((0, np.array([[[3.5]]])), (1, fine))]
    with pytest.raises(CorruptArchiveError, match="not the sums of level 1"):
        join_metric_levels(levels, "x", 0)
    levels[0] = decode_metric_level(encoded(0, 1, np.array([[[3.0]]])), "x", 0)
    assert join_metric_levels(levels, "x", 0).levels[1].dense().tolist() == fine.tolist()


def test_damaged_level_is_refused():
    with pytest.raises(CorruptArchiveError, match="metric level"):
        decode_metric_level(b"\0" * 10, "x", 0)
    raw = encoded(0, 0, np.ones((1, 1, 1)))
    with pytest.raises(CorruptArchiveError):
        decode_metric_level(raw[:-1], "x", 0)
    bad = encoded(2, 1, np.ones((1, 4, 1)))  # a level finer than its finest
    with pytest.raises(CorruptArchiveError, match="out of range"):
        decode_metric_level(bad, "x", 0)


@pytest.mark.parametrize("name", ["otf2-pingpong-papi"])
def test_corpus_trace_with_metrics(tmp_path_factory, name):
    archive = with_tables(tmp_path_factory, name)
    assert archive.metric_tables is not None
    assert not [p for p in verify(archive.path) if p.kind == SectionKind.METRIC_LEVEL]
    assert archive.definitions.metrics
    first, last = archive.time_range
    for slices, start, stop in ((8, None, None), (5, first + (last - first) // 3, last - (last - first) // 7)):
        check(archive, archive.metric_integrals(slices, start, stop))




@settings(max_examples=40, deadline=None)
@given(trace=st.one_of(traces.traces(), sampled_traces()), data=st.data())
def test_windows_of_short_locations_walked_whole_equal_their_window_walks(tmp_path_factory, trace, data):
    """A window of locations short enough (`WHOLE_WALK_EVENTS`) is read by walking them
    whole, many at a time, and clipping to the window: the brute force's integrals, bit
    for bit those of a window walk per location."""
    module = importlib.import_module("ccgformat.query.metric_integrals")
    with write(tmp_path_factory.mktemp("whole") / "t.ccg", trace, Params(), False) as archive:
        times = [e.time for events in trace.values() for e in events]
        start, stop = sorted([data.draw(bounds(times)) or min(times), data.draw(bounds(times)) or max(times) + 1])
        stop += start == stop
        slices = data.draw(st.sampled_from([1, 3, 16]))
        results = []
        monkeypatch = pytest.MonkeyPatch()
        try:
            for whole in (1 << 40, 0):
                monkeypatch.setattr(module, "WHOLE_WALK_EVENTS", whole)
                results.append(metric_integrals(archive, slices, start, stop))
        finally:
            monkeypatch.undo()
        check(archive, results[0])
        assert np.array_equal(results[0].values, results[1].values, equal_nan=True)


def test_ccg_aggregate_states_metric(capsys):
    """`ccg aggregate --states metric --json` on the golden vector gives the brute force's
    integrals (small integers: exact)."""
    from ccgformat.cli import main
    vector = Path(__file__).resolve().parent.parent / "spec" / "vectors" / "metric_integrals.ccg"
    assert main(["aggregate", str(vector), "--slices", "3", "--states", "metric", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    with ccgformat.open(vector) as archive:
        assert answer["states"] == ["power", "PAPI_TOT_CYC"]
        for row, location in enumerate(archive.locations):
            exact, _ = brute(archive, answer["bounds"], location)
            assert answer["values"][row] == [[float(x) for x in cells] for cells in exact]


@settings(max_examples=40, deadline=None)
@given(trace=sampled_traces(), interval=st.sampled_from([3, 1 << 16]), bulk=st.booleans())
def test_tables_from_the_input_samples_equal_a_walk(tmp_path_factory, trace, interval, bulk):
    """`write_trace` keeps a lossless conversion's samples as they pass (small locations in
    groups, large ones batch by batch: ``interval``), `write_table` takes them from its
    columns (``bulk``), and both build the metric tables from them; every level equals the
    one computed from a walk of the graph, bit for bit."""
    from ccgformat.archive.queries import run_query
    path = tmp_path_factory.mktemp("samples") / "t.ccg"
    defs = definitions()
    defs.locations.extend(ccgformat.model.Location(f"rank {i}") for i in range(len(defs.locations), max(trace) + 1))
    if bulk:
        order = sorted(trace)
        batch = ccgformat.EventBatch.concat([b for location in order for b in traces.batches(trace[location])])
        offsets = np.cumsum([0] + [len(trace[location]) for location in order])
        ccgformat.write_table(path, defs, batch, offsets, locations=np.array(order), checkpoint_interval=interval,
                              aggregation=1000.0)
    else:
        ccgformat.write_trace(path, defs, ((location, traces.batches(events)) for location, events in trace.items()),
                              checkpoint_interval=interval, aggregation=1000.0)
    with ccgformat.open(path) as archive:
        stored = archive.metric_tables.levels
        walked = list(run_query("metric_levels", archive, stored[0].finest))
        assert stored and len(walked) == stored[0].finest + 1  # levels 0..K of 0..finest are stored
        for level, expected in zip(stored, walked):
            assert np.array_equal(level.dense(), expected.dense(), equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(trace=st.one_of(traces.traces(), sampled_traces()), lossy=st.booleans(), batch=st.sampled_from([1, 4, 65536]))
def test_levels_of_a_large_graph_walked_a_location_at_a_time(tmp_path_factory, trace, lossy, batch):
    """A large graph (`streaming.streams`) walks a location at a time in batches and keeps
    its samples: the same levels, bit for bit, as the passes of many locations; the node
    tables are never read."""
    streaming = importlib.import_module("ccgformat.query.streaming")
    module = importlib.import_module("ccgformat.query.metric_integrals")
    params = Params(rel_metric=0.2) if lossy else Params()
    with write(tmp_path_factory.mktemp("streamed") / "t.ccg", trace, params, False) as archive:
        passes = list(module.metric_levels(archive))
        monkeypatch = pytest.MonkeyPatch()
        monkeypatch.setattr(streaming, "STREAM_NODES", 0)
        monkeypatch.setattr(streaming, "WALK_BATCH", batch)
        monkeypatch.setattr(module, "tables_for", None)
        try:
            walked = list(module.metric_levels(archive))
        finally:
            monkeypatch.undo()
    assert len(walked) == len(passes)
    for a, b in zip(walked, passes):
        assert np.array_equal(a.dense(), b.dense(), equal_nan=True)
