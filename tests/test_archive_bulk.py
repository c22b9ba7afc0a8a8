"""Writing a whole trace held as columns (archive/bulk.py): the builder fed all locations
in one call, the locations walked back in one call and their end checkpoints computed
with numpy give the file the per-location path writes, under both backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccgformat.archive.bulk import write_table
from ccgformat.archive.checkpoint_columns import MEMBER_WIDTHS, CheckpointColumns, balanced, end_checkpoints
from ccgformat.archive.indexes import Checkpoint, reference_checkpoints
from ccgformat.archive.native import builder as make_builder, walk_locations
from ccgformat.archive.reader import open_archive
from ccgformat.archive.native import walker
from ccgformat.archive.writer import Writer, index_kept, save_graph
from ccgformat.errors import CorruptArchiveError, TraceError
from ccgformat.graph.walk import LocationWalker
from ccgformat.model import Event, EventBatch, EventKind
from ccgformat.params import Params

from .test_backend_differential import backend
from .traces import definitions, traces

BACKENDS = ("python", "native")
try:
    from ccgformat._native import load
    load()
except ImportError:  # pragma: no cover - a machine without a C compiler
    BACKENDS = ("python",)

params_strategy = st.builds(Params, abs_dev=st.sampled_from([0, 0, 3, 1000]), rel_dev=st.sampled_from([0.0, 0.5]),
                            branching=st.integers(2, 5), search_length=st.integers(1, 8))



def per_location_file(graph, path, *, level: int, checkpoint_interval: int, nodes_per_block: int = 4096,
                      index: str = "auto") -> None:
    """The reference: `save_graph`'s file with every location walked and indexed alone
    (`Writer.add_location`)."""
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval, nodes_per_block=nodes_per_block,
                metrics=len(graph.definitions.metrics), index=index) as writer:
        writer.add_nodes(graph.pool, final=True)
        if index_kept(index, graph):
            for location, root in graph.roots.items():
                writer.add_location(location, walker(graph.pool, root.root, root.start, location))
        writer.finish(graph)


def columns(trace: dict[int, list[Event]], order: list[int]) -> tuple[EventBatch, np.ndarray]:
    """The locations of ``order`` as one batch and their offsets."""
    parts = [EventBatch.from_events(trace[location]) for location in order]
    return EventBatch.concat(parts), np.cumsum([0] + [len(p) for p in parts])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), params_strategy, st.lists(st.booleans(), min_size=3, max_size=3), st.permutations([0, 1, 2]),
       st.sampled_from([2, 7, 65536]), st.sampled_from([3, 4096]))
def test_write_table_writes_the_per_location_file(tmp_path_factory, trace, params, empty, order, interval,
                                                  nodes_per_block):
    trace = {location: [] if empty[location] else trace.get(location, []) for location in range(3)}
    batch, offsets = columns(trace, order)
    folder = tmp_path_factory.mktemp("bulk")
    written = {}
    for name in BACKENDS:
        with backend(name):
            options = {"level": 1, "checkpoint_interval": interval, "nodes_per_block": nodes_per_block}
            graph = write_table(folder / f"{name}.ccg", definitions(), batch, offsets, params,
                                locations=np.array(order), **options)
            builder = make_builder(params, definitions())
            for location in order:
                builder.add(location, EventBatch.from_events(trace[location]))
                builder.end_location(location)
            reference = builder.finish()
            per_location_file(reference, folder / f"{name}-reference.ccg", **options)
            assert graph.roots == reference.roots and list(graph.roots) == sorted(reference.roots)
            written[name] = (folder / f"{name}.ccg").read_bytes()
            assert written[name] == (folder / f"{name}-reference.ccg").read_bytes()
    assert len(set(written.values())) == 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from([2, 7, 65536]), st.integers(1, 40))
def test_write_table_of_lossless_locations_in_order_needs_no_walk(tmp_path_factory, monkeypatch, trace, interval,
                                                                   per_pass):
    """Lossless locations 0, 1, ... fed in order: their checkpoints come from the input,
    a few locations' events per pass; the file is the one of the per-location path."""
    monkeypatch.setattr("ccgformat.archive.many.EVENTS_PER_PASS", per_pass)
    order = list(range(len(definitions().locations)))  # every defined location, some perhaps empty
    trace = {location: trace.get(location, []) for location in order}
    batch, offsets = columns(trace, order)
    folder = tmp_path_factory.mktemp("bulk")
    for name in BACKENDS:
        with backend(name):
            options = {"level": 1, "checkpoint_interval": interval}
            write_table(folder / f"{name}.ccg", definitions(), batch, offsets, **options)
            builder = make_builder(Params(), definitions())
            for location in order:
                builder.add(location, EventBatch.from_events(trace[location]))
                builder.end_location(location)
            per_location_file(builder.finish(), folder / f"{name}-reference.ccg", **options)
            assert (folder / f"{name}.ccg").read_bytes() == (folder / f"{name}-reference.ccg").read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), params_strategy, st.sampled_from([2, 7, 65536]), st.integers(1, 6))
def test_save_graph_indexes_runs_of_small_locations_as_one_at_a_time(tmp_path_factory, monkeypatch, trace, params,
                                                                     interval, per_block):
    """`save_graph` walks and indexes runs of small locations together, the larger ones
    alone (`groups.add_graph_locations`): the file is the one of every location indexed
    alone, with blocks of a few checkpoints, so that runs end at flushes and large
    locations."""
    monkeypatch.setattr("ccgformat.archive.writer.CHECKPOINTS_PER_TABLE_BLOCK", per_block)
    folder = tmp_path_factory.mktemp("runs")
    for name in BACKENDS:
        with backend(name):
            builder = make_builder(params, definitions())
            for location in sorted(trace):
                builder.add(location, EventBatch.from_events(trace[location]))
                builder.end_location(location)
            graph = builder.finish()
            graph.roots = dict(reversed(graph.roots.items()))  # blocks in this order, sorted within
            options = {"level": 1, "checkpoint_interval": interval, "index": "always"}
            save_graph(graph, folder / f"{name}.ccg", **options)
            per_location_file(graph, folder / f"{name}-reference.ccg", **options)
            assert (folder / f"{name}.ccg").read_bytes() == (folder / f"{name}-reference.ccg").read_bytes()


def depth_ok(kinds: list[int]) -> bool:
    depth = 0
    for kind in kinds:
        depth += 1 if kind == EventKind.ENTER else -1 if kind == EventKind.LEAVE else 0
        if depth < 0:
            return False
    return depth == 0


@given(st.lists(st.lists(st.sampled_from([0, 1, 2, 10]), max_size=8), min_size=1, max_size=6))
def test_balanced_says_which_locations_close_their_calls(locations):
    kinds = [k for location in locations for k in location]
    batch = EventBatch.from_columns(np.arange(len(kinds)), kinds)
    offsets = np.cumsum([0] + [len(location) for location in locations])
    assert balanced(batch, offsets).tolist() == [depth_ok(location) for location in locations]


def assert_same_columns(got: CheckpointColumns, expected: CheckpointColumns) -> None:
    for name in ("locations", "counts", "index", "time"):
        assert getattr(got, name).tolist() == getattr(expected, name).tolist(), name
    for name in MEMBER_WIDTHS:
        assert got.sizes[name].tolist() == expected.sizes[name].tolist(), name
        assert got.rows[name].tolist() == expected.rows[name].tolist(), name


@settings(max_examples=60, deadline=None)
@given(traces(max_locations=3), st.lists(st.booleans(), min_size=3, max_size=3))
def test_end_checkpoints_are_the_reference_checkpoints(trace, empty):
    trace = {location: [] if empty[location] else events for location, events in trace.items()}
    locations = sorted(trace)
    batch, offsets = columns(trace, locations)
    starts = np.array([events[0].time if events else 17 for events in trace.values()], np.int64)
    got = end_checkpoints(np.array(locations), starts, batch, offsets)

    class Walk:  # the events of one location, as the reference walks them
        def __init__(self, events: list[Event], start: int):
            self.start, self._events = start, events

        def events(self):
            return iter([EventBatch.from_events(self._events)] if self._events else [])

    expected = CheckpointColumns.from_checkpoints(
        (location, reference_checkpoints(Walk(trace[location], int(start)), 1 << 30))
        for location, start in zip(locations, starts))
    assert_same_columns(got, expected)


@given(st.lists(st.integers(0, 5), max_size=30), st.integers(1, 8))
def test_blocks_end_where_add_location_flushes(counts, per_block):
    columns = CheckpointColumns.from_checkpoints(
        (location, [Checkpoint(k, k, [], [], [], [0] * 4, [0] * 3) for k in range(n)])
        for location, n in enumerate(counts))
    expected, current, pending = [], [], 0
    for location, n in enumerate(counts):  # the rule of Writer.add_location
        current.append(location)
        pending += n
        if pending >= per_block:
            expected.append(current)
            current, pending = [], 0
    expected += [current] if current else []
    blocks = list(columns.blocks(per_block))
    assert [block.locations.tolist() for block in blocks] == expected
    assert [block.index.tolist() for block in blocks] == [[k for n in (counts[i] for i in part) for k in range(n)]
                                                         for part in expected]


def checkpoint_lists(sizes: list[list[list[int]]]) -> list[tuple[int, list[Checkpoint]]]:
    """Per location (its position), checkpoints whose row lists have the drawn sizes."""
    def point(k: int, counts: list[int]) -> Checkpoint:
        rows = {name: [[k + r] * MEMBER_WIDTHS[name] for r in range(count)]
                for name, count in zip(("stack", "metrics", "regions", "peers", "operations", "durations", "open"),
                                       counts)}
        return Checkpoint(k, 10 * k, messages=[k] * 4, collectives=[k] * 3, **rows)
    return [(location, [point(100 * location + k, counts) for k, counts in enumerate(points)])
            for location, points in enumerate(sizes)]


point_sizes = st.lists(st.lists(st.lists(st.integers(0, 2), min_size=7, max_size=7), max_size=3), min_size=1,
                       max_size=8)


@given(point_sizes, st.data())
def test_take_gives_the_chosen_locations_columns(sizes, data):
    indexes = checkpoint_lists(sizes)
    count = len(indexes)
    first = data.draw(st.integers(0, count - 1))
    stop = data.draw(st.integers(first, count))
    run = list(range(first, stop))
    order = data.draw(st.sampled_from([run, run[:1] + run[-2:0:-1] + run[-1:]]) |  # a run; its inside reversed
                      st.lists(st.integers(0, count - 1), max_size=10))
    got = CheckpointColumns.from_checkpoints(indexes).take(np.array(order, np.int64))
    assert_same_columns(got, CheckpointColumns.from_checkpoints([indexes[i] for i in order]))


@given(point_sizes, st.integers(1, 4))
def test_blocks_hold_their_locations_rows(sizes, per_block):
    indexes = checkpoint_lists(sizes)
    for block in CheckpointColumns.from_checkpoints(indexes).blocks(per_block):
        assert_same_columns(block, CheckpointColumns.from_checkpoints([indexes[i] for i in block.locations.tolist()]))


@pytest.mark.parametrize("name", BACKENDS)
def test_walk_locations_reads_many_locations_of_an_archive(tmp_path, name):
    trace = {0: [Event(5, EventKind.ENTER, ref=1), Event(9, EventKind.LEAVE, ref=1)], 1: [],
             2: [Event(3, EventKind.MARKER, ref=2, value=4)]}
    batch, offsets = columns(trace, [0, 1, 2])
    with backend(name):
        write_table(tmp_path / "a.ccg", definitions(), batch, offsets, nodes_per_block=1)
        with open_archive(tmp_path / "a.ccg") as archive:
            roots = [archive.roots[location] for location in (2, 0)]
            walked = walk_locations(archive.pool, np.array([2, 0]), np.array([r.root for r in roots]),
                                    np.array([r.start for r in roots]), np.array([0, 1, 3]))
            expected = [list(LocationWalker(archive.pool, r.root, r.start, location).events())[0]
                        for location, r in zip((2, 0), roots)]
            assert list(walked.rows()) == [row for part in expected for row in part.rows()]
            with pytest.raises(CorruptArchiveError, match="location 0"):
                walk_locations(archive.pool, np.array([0]), np.array([roots[1].root]), np.array([roots[1].start]),
                               np.array([0, 3]))


@pytest.mark.parametrize("name", BACKENDS)
def test_add_locations_checks_its_input_as_add_does(name):
    trace = {0: [Event(1, EventKind.ENTER, ref=0), Event(2, EventKind.LEAVE, ref=0)],
             1: [Event(1, EventKind.ENTER, ref=0), Event(2, EventKind.LEAVE, ref=1)]}
    batch, offsets = columns(trace, [0, 1])
    with backend(name):
        with pytest.raises(TraceError) as error:
            make_builder(Params(), definitions()).add_locations(np.array([0, 1]), batch, offsets)
        assert (error.value.location, error.value.index) == (1, 1)
        for locations, cuts in (([0, 0], offsets), ([0, 1], np.array([0, 3, 2])), ([0], offsets)):
            with pytest.raises(ValueError, match="already been finished|offsets must rise"):
                make_builder(Params(), definitions()).add_locations(np.array(locations), batch, cuts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from([1, 4, 1000]), st.integers(0, 100), st.integers(0, 100), st.integers(-1, 1),
       st.lists(st.integers(0, 2), unique=True, min_size=1))
def test_archive_events_walk_small_locations_together(tmp_path_factory, trace, batch_size, first, last, shift,
                                                      chosen):
    """Locations of at most a batch are walked in one call (archive/many.py), the others
    by a walker each; the merge is the per-location walks' events in (time, location) order."""
    folder = tmp_path_factory.mktemp("events")
    batch, offsets = columns(trace, sorted(trace))
    write_table(folder / "a.ccg", definitions(), batch, offsets, locations=np.array(sorted(trace)), level=1)
    times = sorted(e.time for events in trace.values() for e in events)
    window = tuple(times[len(times) * k // 101] + shift for k in sorted((first, last)))
    for name in BACKENDS:
        with backend(name), open_archive(folder / "a.ccg") as archive:
            rows = sorted((e.time, location, i, e) for location in chosen
                          for i, e in enumerate(trace.get(location, [])) if window[0] <= e.time < window[1])
            merged = [(int(where), event) for locations, part in archive.events(*window, locations=chosen,
                                                                                 batch_size=batch_size)
                      for where, event in zip(locations.tolist(), part.rows())]
            assert merged == [(location, event) for _, location, _, event in rows]
