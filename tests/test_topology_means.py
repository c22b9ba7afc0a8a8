"""The metrics of the topology graph (issue 38, item 1): per container the time-weighted
mean of every variable over a window, at the leaves and summed (averaged, maximised) at
every depth - against pj_dump's Variable intervals of Paje traces (the corpus's and a
SimGrid-style platform), and against a brute force over the rebuilt events of generated
traces."""

from __future__ import annotations

import importlib
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.errors import FormatError, ParameterError
from ccgformat.formats.paje.lifetimes import container_lifetimes
from ccgformat.query.metric_ends import metric_ends
from ccgformat.model import Definitions, Event, EventKind, Location, Metric, Region, SystemTreeNode

from . import query_oracle as oracle
from .topology_support import container_paths, covering, drawn_window, paje_archive, pj_dump, saved, ticks

PAJE = ["variables.trace", "native_sample.trace", "platform"]


def variable_means(records, resolution, start, stop):
    """Per (container, variable name): the exact time-weighted mean of its pj_dump
    intervals over ``[start, stop)``, and the same of the values' magnitudes times 2^-23:
    pj_dump prints single-precision values (pajeng keeps a variable as a C float), so a
    mean of the trace's doubles may differ from its by that much."""
    means, slack = defaultdict(Fraction), defaultdict(Fraction)
    for fields in records:
        if fields[0] == "Variable":
            begin, end = ticks(fields[3], resolution), ticks(fields[4], resolution)
            overlap = max(min(end, stop) - max(begin, start), 0)
            means[(fields[1], fields[2])] += Fraction(fields[6]) * overlap / (stop - start)
            slack[(fields[1], fields[2])] += abs(Fraction(fields[6])) * overlap / (stop - start) / 2**23
    return {key: (mean, slack[key]) for key, mean in means.items()}


def expected_nodes(node_paths, paths, means, how):
    """Per node and variable, the ``how`` of the means of the containers it covers, and
    the sum of their slacks."""
    parts = defaultdict(list)
    for (container, name), mean in means.items():
        parts[(covering(node_paths, paths[container]), name)].append(mean)
    combine = {"sum": sum, "mean": lambda values: sum(values) / len(values), "max": max}[how]
    return {key: (combine([mean for mean, _ in values]), sum(slack for _, slack in values))
            for key, values in parts.items()}


def assert_close(got: float, exact: Fraction, what, slack: Fraction = Fraction(0)) -> None:
    bound = abs(exact) * Fraction(1, 10**12) + Fraction(1, 10**9) + slack
    assert abs(Fraction(got) - exact) <= bound, (what, got, float(exact))


def windows(records, resolution, first, last, count, rng):
    """The whole trace, and windows whose bounds cut variable intervals (an interval's
    bound, one tick off it, or anywhere)."""
    dates = sorted({ticks(f[i], resolution) for f in records if f[0] == "Variable" for i in (3, 4)})
    out = [(None, None)]
    for _ in range(count):
        a, b = (int(dates[rng.integers(len(dates))]) + int(rng.integers(-1, 2)) if rng.random() < 0.7
                else int(rng.integers(first, last)) for _ in range(2))
        if a != b:
            out.append((min(a, b), max(a, b)))
    return out


@pytest.mark.parametrize("name", PAJE)
def test_means_equal_pj_dump_variables(tmp_path_factory, name):
    source, archive = paje_archive(tmp_path_factory, name)
    records = pj_dump(source)
    resolution = archive.timer_resolution
    paths = container_paths(records)
    end = max(ticks(f[4], resolution) for f in records if f[0] == "Variable")
    rng = np.random.default_rng(38)
    for start, stop in windows(records, resolution, 0, int(end), 3, rng):
        leaves = archive.topology(start, stop)
        if start is None:  # the default window: the first event to the end of the trace pj_dump shows (the
            # last date, or a tick after it when that is an event: windows hold their start, not their stop)
            assert leaves.start == archive.time_range[0]
            assert leaves.stop - max(ticks(f[4], resolution) for f in records if f[0] == "Variable") in (0, 1)
        means = variable_means(records, resolution, leaves.start, leaves.stop)
        assert means, "the trace has variables"
        height = int(leaves.depths.max())
        cuts = [(depth, "sum") for depth in [None, *range(height + 1)]]
        for depth, how in cuts + [(depth, how) for depth in (None, 1) for how in ("mean", "max")]:
            topology = leaves if depth is None and how == "sum" else archive.topology(start, stop, depth, how)
            expected = expected_nodes(list(topology.paths), paths, means, how)
            for node in range(len(topology.paths)):
                carried = topology.node_metrics(node)
                assert set(carried) == {variable for (n, variable) in expected if n == node}, topology.paths[node]
                for variable, value in carried.items():
                    exact, slack = expected[(node, variable)]
                    assert_close(value, exact, (name, start, stop, depth, how, topology.paths[node], variable), slack)


def test_a_variable_holds_until_its_container_is_destroyed(tmp_path_factory):
    """variables.trace: p1's VAR is 10 from 0, 13 from 0.32, 11 from 0.53 s (its last
    event) until p1 is destroyed at 1.34 s."""
    _, archive = paje_archive(tmp_path_factory, "variables.trace")
    second = archive.timer_resolution
    assert archive.time_range[1] == 53 * second // 100  # the events end before the container
    whole = archive.topology()
    assert (whole.start, whole.stop, whole.paths) == (0, 134 * second // 100, ("p1",))
    assert whole.node_metrics(0) == pytest.approx({"VAR": (10 * 0.32 + 13 * 0.21 + 11 * 0.81) / 1.34}, rel=1e-12)
    tail = archive.topology(second, 2 * second)  # past the destruction: 11 for 0.34 of the 1 s
    assert tail.node_metrics(0) == pytest.approx({"VAR": 11 * 0.34}, rel=1e-12)


def test_the_platform_generator_writes_what_it_says(tmp_path_factory):
    source, archive = paje_archive(tmp_path_factory, "platform")
    records = pj_dump(source)
    kinds = defaultdict(int)
    for fields in records:
        if fields[0] == "Container":
            kinds[fields[2]] += 1
    assert (kinds["HOST"], kinds["LINK"], kinds["ROUTER"], kinds["L3"], kinds["L2"]) == (12, 12 + 4 + 4 + 2, 4 + 2 + 1,
                                                                                          4, 2)
    assert {f[2] for f in records if f[0] == "Variable"} == {"power", "power_used", "bandwidth", "bandwidth_used"}
    clusters = archive.topology(depth=2)
    assert sum(path.count("/cluster-") for path in clusters.paths) == 4


# --------------------------------------------------------------------------- generated traces

NAMES = ("load", "power", "load")  # two metrics share a name: one metric of the topology


@st.composite
def systems(draw):
    """A system tree of 1-4 nodes and 1-4 locations hanging anywhere in it, each sampling
    the metrics at random times inside one call."""
    tree = []
    for i in range(draw(st.integers(1, 4))):
        tree.append(SystemTreeNode(f"node{i}", "node", draw(st.sampled_from([None, *range(i)]))))
    trace, locations = {}, []
    for location in range(draw(st.integers(1, 4))):
        locations.append(Location(f"rank{location}", "thread", draw(st.sampled_from([None, *range(len(tree))]))))
        time = draw(st.integers(0, 1000))
        events = [Event(time, EventKind.ENTER, 0)]
        for _ in range(draw(st.integers(0, 8))):
            time += draw(st.sampled_from([0, 1, 5, 40]))
            events.append(Event(time, EventKind.METRIC, draw(st.integers(0, 2)), value=draw(st.integers(-100, 100))))
        events.append(Event(time + draw(st.integers(0, 30)), EventKind.LEAVE, 0))
        trace[location] = events
    definitions = Definitions(regions=[Region("main")], system_tree=tree, locations=locations,
                              metrics=[Metric(name, "", "absolute", "int64") for name in NAMES])
    return definitions, trace


def brute_means(archive, start, stop):
    """Per location: {name: exact mean} of the step functions of its rebuilt samples (each
    holds until the next sample of its metric, the last one until the location's last
    event), over the metrics it samples."""
    out = {}
    for location in archive.roots:
        events = oracle.events_of(archive, location)
        means = {}
        for metric, name in enumerate(NAMES):
            samples = [(e.time, e.value) for e in events if e.kind == EventKind.METRIC and e.ref == metric]
            total = Fraction(0)
            for i, (time, value) in enumerate(samples):
                until = samples[i + 1][0] if i + 1 < len(samples) else events[-1].time
                total += value * max(min(until, stop) - max(time, start), 0)
            if samples:
                means[name] = means.get(name, 0) + total / (stop - start)
        out[location] = means
    return out


@settings(max_examples=40, deadline=None)
@given(system=systems(), data=st.data())
def test_means_equal_brute_force(tmp_path_factory, system, data):
    definitions, trace = system
    start, stop, depth = drawn_window(data, trace)
    how = data.draw(st.sampled_from(["sum", "mean", "max"]))
    with ccgformat.open(saved(tmp_path_factory, definitions, trace)) as archive:
        topology = archive.topology(start, stop, depth, how)
        hierarchy = archive.hierarchy
        leaf_paths = {int(location): hierarchy.path(int(node))
                      for location, node in zip(hierarchy.leaf_locations, hierarchy.leaf_nodes())}
        parts = defaultdict(list)
        for location, means in brute_means(archive, start, stop).items():
            node = covering(list(topology.paths), leaf_paths[location])
            for name, mean in means.items():
                parts[(node, name)].append(mean)
        for node, path in enumerate(topology.paths):
            assert topology.depths[node] == path.count("/")
            assert depth is None or topology.depths[node] <= depth
            got = topology.node_metrics(node)
            assert set(got) == {name for (n, name) in parts if n == node}
            for name, value in got.items():
                values = parts[(node, name)]
                exact = {"sum": sum(values), "mean": sum(values) / len(values), "max": max(values)}[how]
                assert_close(value, Fraction(exact), (path, name))


@settings(max_examples=30, deadline=None)
@given(system=systems(), interval=st.sampled_from([2, 1 << 16]))
def test_metric_ends_from_the_index_equal_a_walk(tmp_path_factory, system, interval):
    """Which metrics a location samples and its last values: from the final snapshots of
    the index (as a large graph of few locations reads them) and from a walk of the
    samples, both as the rebuilt events say."""
    definitions, trace = system
    streaming = importlib.import_module("ccgformat.query.streaming")
    with ccgformat.open(saved(tmp_path_factory, definitions, trace, index="always",
                              checkpoint_interval=interval)) as archive:
        locations = sorted(archive.roots)
        walked = metric_ends(archive, locations)
        monkeypatch = pytest.MonkeyPatch()
        try:
            monkeypatch.setattr(streaming, "STREAM_NODES", 0)  # a large graph: its index is read
            indexed = metric_ends(archive, locations)
        finally:
            monkeypatch.undo()
        for ends in (walked, indexed):
            for row, location in enumerate(locations):
                last = {e.ref: e.value for e in oracle.events_of(archive, location) if e.kind == EventKind.METRIC}
                assert ends.sampled[row].tolist() == [m in last for m in range(len(NAMES))]
                assert ends.last[row].tolist() == [last.get(m, 0) for m in range(len(NAMES))]


def test_bad_parameters_are_parameter_errors(tmp_path_factory):
    _, archive = paje_archive(tmp_path_factory, "variables.trace")
    for arguments in [{"aggregate": "median"}, {"depth": -1}, {"depth": 1.5}, {"start": 5, "stop": 5},
                      {"within": "p1/nothing"}]:
        with pytest.raises(ParameterError):
            archive.topology(**arguments)


def test_a_malformed_paje_layout_is_a_format_error():
    locations = [Location("p", "thread", None)]
    for layout in [{"lifecycle": "no", "locations": [0]}, {"lifecycle": [], "locations": []},
                   {"lifecycle": [[1, 2, 3]], "locations": [1]}, {"lifecycle": [[1, 0]], "locations": [1]}]:
        definitions = Definitions(locations=locations, extensions={"paje": layout},
                                  provenance={"source_format": "paje"})
        with pytest.raises(FormatError, match="extensions"):
            container_lifetimes(definitions)
    other = Definitions(locations=locations, extensions={"paje": "anything"}, provenance={"source_format": "otf2"})
    assert container_lifetimes(other) is None
