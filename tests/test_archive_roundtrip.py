"""Archives: write, reopen lazily, and read back exactly what the graph holds."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.archive.native import builder as make_builder
from ccgformat.model import EventKind

from .query_oracle import NO_START, NO_STOP
from .query_support import windows
from .test_graph_lossy import check_location, lossy_params
from .traces import batches, call_stack_at, definitions, traces

archive_layout = st.fixed_dictionaries({"nodes_per_block": st.integers(1, 40),
                                        "checkpoint_interval": st.integers(1, 50),
                                        "level": st.sampled_from([1, 3])})


def write(tmp_path, trace, params=ccg.Params(), **layout):
    """The archive of ``trace``, with its checkpoint index however small the graph."""
    path = tmp_path / "t.ccg"
    graph = ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                            params, index="always", **layout)
    return path, graph


@given(traces(), archive_layout, st.data())
def test_lossless_archive_gives_back_the_input(tmp_path_factory, trace, layout, data):
    path, graph = write(tmp_path_factory.mktemp("a"), trace, **layout)
    with ccg.open(path) as archive:
        # every defined location, also those the writer was not given (spec 4.3)
        assert archive.locations == list(range(len(definitions().locations)))
        for location in set(archive.locations) - set(trace):
            assert archive.roots[location].events == len(archive.location(location)) == 0
            assert [c["index"] for c in archive.checkpoints(SectionKind.SUMMARY, location)] == [0]
        assert archive.stats.events == sum(len(e) for e in trace.values())
        assert (archive.stats.N, archive.stats.n) == (graph.metrics.N, graph.metrics.n)
        for location, events in trace.items():
            walker = archive.location(location)
            assert [e for b in walker.events() for e in b.rows()] == events
            assert [e for b in walker.events(reverse=True) for e in b.rows()][::-1] == events
            if events:
                i = data.draw(st.integers(0, len(events) - 1))
                assert walker.event(i) == events[i]
                times = np.array([e.time for e in events])
                t = data.draw(st.integers(int(times[0]) - 2, int(times[-1]) + 2))
                assert walker.find(t) == int(np.searchsorted(times, t))
                assert walker.call_stack(t) == call_stack_at(events, t)


@given(traces(max_locations=2), lossy_params)
def test_lossy_archive_equals_the_graph_it_was_built_from(tmp_path_factory, trace, params):
    path, graph = write(tmp_path_factory.mktemp("l"), trace, params, nodes_per_block=7)
    with ccg.open(path) as archive:
        assert archive.params == params
        for location, events in trace.items():
            rebuilt = [e for b in archive.location(location).events() for e in b.rows()]
            assert rebuilt == [e for b in graph.location(location).events() for e in b.rows()]
            check_location(events, rebuilt, params)


def brute_force_checkpoint(events, k, end):
    """Cumulative statistics of events [0, k) up to time T (event k's time, or the end)."""
    time = events[k].time if k < len(events) else end
    stack, regions = [], {}
    sent = [0, 0, 0, 0]
    for event in events[:k]:
        if event.kind == EventKind.ENTER:
            stack.append((event.ref, event.time))
            regions.setdefault(event.ref, [0, 0, 0])[0] += 1
        elif event.kind == EventKind.LEAVE:
            stack.pop()
        elif event.kind in (EventKind.SEND, EventKind.ISEND):
            sent[0] += 1
            sent[1] += event.size
        elif event.kind in (EventKind.RECV, EventKind.IRECV):
            sent[2] += 1
            sent[3] += event.size
    # inclusive / exclusive by sweeping the intervals between consecutive events
    active: list[int] = []
    previous = events[0].time if events else 0
    for event in events[:k] + [None]:
        now = event.time if event is not None else time
        if active:
            regions[active[-1]][2] += now - previous
            for region in active:
                regions[region][1] += now - previous
        previous = now
        if event is None:
            break
        if event.kind == EventKind.ENTER:
            active.append(event.ref)
        elif event.kind == EventKind.LEAVE:
            active.pop()
    return time, [[r, *regions[r]] for r in sorted(regions)], sent, [[r, t] for r, t in stack]


@given(traces(max_locations=2), st.integers(1, 30))
def test_summary_and_snapshot_checkpoints(tmp_path_factory, trace, interval):
    path, _ = write(tmp_path_factory.mktemp("s"), trace, checkpoint_interval=interval)
    with ccg.open(path) as archive:
        for location, events in trace.items():
            summary = archive.checkpoints(SectionKind.SUMMARY, location)
            snapshots = archive.checkpoints(SectionKind.SNAPSHOTS, location)
            expected_indexes = list(range(interval, len(events), interval)) + [len(events)]
            assert [c["index"] for c in summary] == expected_indexes
            end = archive.roots[location].end
            for point, snap in zip(summary, snapshots):
                time, regions, messages, stack = brute_force_checkpoint(events, point["index"], end)
                assert (point["time"], snap["time"]) == (time, time)
                assert point["regions"] == regions
                assert point["messages"] == messages
                assert snap["stack"] == stack


def test_open_reads_only_header_footer_and_bundle(tmp_path, monkeypatch):
    """Opening reads the footer and the one BUNDLE block of the small sections written
    last (spec 2.5), never a node block."""
    trace = {0: [ccg.Event(t, EventKind.SEND, 0, 0, 0, 0, t) for t in range(500)]}
    path, _ = write(tmp_path, trace, nodes_per_block=16)
    reads = []
    original = ccg.Archive.payload
    monkeypatch.setattr(ccg.Archive, "payload", lambda self, entry: reads.append(entry.kind) or original(self, entry))
    with ccg.open(path) as archive:
        assert reads == [SectionKind.DICTIONARY_BUNDLE]
        assert archive.location(0).event(250).size == 250
        blocks = sum(entry.kind in NODE_KINDS for entry in archive.sections)
        # one block per level on the path: root, two artificial levels, the send (500 > 20**2)
        assert blocks > 30 and sum(kind in NODE_KINDS for kind in reads) <= 4


def test_writing_is_atomic(tmp_path):
    target = tmp_path / "out.ccg"
    with ccg.Writer(target) as writer:
        writer.add_nodes(ccg.Builder().pool)
    assert not target.exists() and os.listdir(tmp_path) == []


def test_many_locations_overflow_the_pending_stack(tmp_path, monkeypatch):
    """Roots are never referenced, so with thousands of locations the pending stack runs
    past its limit and is trimmed (spec 5.3); decoding must follow it exactly."""
    count = 4200
    trace = {loc: [ccg.Event(loc, EventKind.SEND, 0, 0, 0, 0, loc)] for loc in range(count)}
    path = tmp_path / "many.ccg"
    definitions_ = definitions()
    definitions_.locations = [definitions_.locations[0]] * count
    ccg.write_trace(path, definitions_, ((loc, batches(events, 1)) for loc, events in trace.items()),
                    nodes_per_block=1000)
    from ccgformat.archive import codec

    replays = []
    replay = codec.children_by_replay
    monkeypatch.setattr(codec, "children_by_replay", lambda *args: replays.append(1) or replay(*args))
    with ccg.open(path) as archive:
        for loc in (0, 4095, 4096, count - 1):
            assert [e for b in archive.location(loc).events() for e in b.rows()] == trace[loc]
    if ccg.backend == "python":  # the C decoder always replays (tests/test_native_codec.py)
        assert replays  # the block past the limit was decoded by the replay


@pytest.mark.parametrize("tables", [False, True])
def test_index_blocks_find_locations_written_in_any_order(tmp_path, monkeypatch, tables):
    from ccgformat.archive import writer
    monkeypatch.setattr(writer, "LOCATIONS_PER_INDEX_BLOCK", 1)  # one location per index block
    monkeypatch.setattr(writer, "CHECKPOINTS_PER_TABLE_BLOCK", 1)
    trace = {loc: [ccg.Event(10 * loc + 1, EventKind.SEND, 0, 0, 0, 0, loc)] for loc in (2, 0, 1)}
    path = tmp_path / "order.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(events, 1)) for loc, events in trace.items()),
                    tables=tables)
    with ccg.open(path) as archive:
        assert archive.version == ((1, 5) if tables else (1, 3))  # the last table lies in a DICTIONARY_BUNDLE block
        assert sum(e.kind in (SectionKind.SUMMARY, SectionKind.CHECKPOINT_TABLE) for e in archive.sections) == 3
        for loc in trace:
            assert archive.checkpoints(SectionKind.SUMMARY, loc)[-1]["messages"] == [1, loc, 0, 0]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path):
    (tmp_path / "taken").mkdir()
    trace = {0: [ccg.Event(1, EventKind.SEND, 0)]}
    try:
        ccg.write_trace(tmp_path / "taken", definitions(), ((0, batches(trace[0], 1)),))
    except OSError:
        pass
    else:
        raise AssertionError("writing over a folder must fail")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


@given(traces(), st.data())
def test_global_time_order_across_locations(tmp_path_factory, trace, data):
    """The events of a window (its bounds on event times as often as not, or open) and of
    some locations, as `ccg cat` prints them: in time order, ties by location."""
    path, _ = write(tmp_path_factory.mktemp("g"), trace)
    with ccg.open(path) as archive:
        for start, stop, locations in windows(data, trace, 3):
            lo = NO_START if start is None else start
            hi = NO_STOP if stop is None else stop
            expected = sorted(((e.time, loc, i, e) for loc in locations for i, e in enumerate(trace[loc])
                               if lo <= e.time < hi), key=lambda row: row[:3])
            got = [(int(loc), e) for where, batch in archive.events(start, stop, locations=sorted(locations),
                                                                    batch_size=4)
                   for loc, e in zip(where, batch.rows())]
            assert got == [(loc, e) for _, loc, _, e in expected]
        everything = [(int(loc), e) for locations, batch in archive.events() for loc, e in zip(locations, batch.rows())]
    assert len(everything) == sum(len(events) for events in trace.values())


@given(traces(max_locations=2), lossy_params)
def test_same_input_same_bytes(tmp_path_factory, trace, params):
    folder = tmp_path_factory.mktemp("d")
    first, _ = write(folder, trace, params, nodes_per_block=5, checkpoint_interval=7)
    data = first.read_bytes()
    second, _ = write(folder, trace, params, nodes_per_block=5, checkpoint_interval=7)
    assert second.read_bytes() == data


def test_save_graph_lists_every_defined_location_and_refuses_a_graph_without_one(tmp_path):
    """Spec 4.3 (format 1.3): a defined location the builder was never given gets an empty
    root; a graph that lacks one is not written."""
    builder = make_builder(ccg.Params(), definitions())
    builder.add(1, batches([ccg.Event(5, EventKind.SEND, 0)], 1)[0])
    graph = builder.finish()
    assert sorted(graph.roots) == [0, 1, 2] and graph.roots[0].events == graph.roots[2].events == 0
    ccg.save_graph(graph, tmp_path / "all.ccg")
    with ccg.open(tmp_path / "all.ccg") as archive:
        # 1.5 for the DICTIONARY_BUNDLE block that holds the small sections
        assert archive.version == (1, 5) and archive.locations == [0, 1, 2]
    partial = dataclasses.replace(graph, roots={1: graph.roots[1]})
    with pytest.raises(ValueError, match=r"defined locations without a root: \[0, 2\]"):
        ccg.save_graph(partial, tmp_path / "partial.ccg")
    assert not (tmp_path / "partial.ccg").exists()
