"""The C walker (ccgformat/_native/walk.c) against the Python reference `LocationWalker`,
and the native checkpoint pass against `reference_checkpoints`.

Every graph is walked from a single node table and from a provider that splits the
pool into blocks of a few nodes, each with the import table of its earlier-block
children, as an archive's decoded blocks are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import Params
from ccgformat.archive.indexes import native_checkpoints, reference_checkpoints
from ccgformat.errors import CorruptArchiveError, FormatError
from ccgformat.model import Event

from .test_graph_roundtrip import build
from .traces import INT64_MAX, INT64_MIN, traces

try:
    from ccgformat._native import load
    from ccgformat._native.tables import NodeTable
    from ccgformat._native.walk import NativeWalker
    ffi, lib = load()
except ImportError as error:
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

PARAMS = [Params(branching=2), Params(branching=3, search_length=2),
          Params(abs_dev=50, rel_dev=0.2, branching=4, rel_metric=0.3, rel_size=0.1)]


class SplitPool:
    """A block provider over a NodePool: blocks of ``size`` nodes, each a `ccg_block`
    whose import table lists its children from earlier blocks. ``broken`` maps a block
    index to the exception loading it raises."""

    def __init__(self, pool: Any, size: int):
        count = len(pool)
        self.block_first = np.array(list(range(0, count, size)) + [count], dtype=np.int64)
        self.broken: dict[int, Exception] = {}
        self.loads: list[int] = []
        self._blocks = []
        self._keep = []
        for first, stop in zip(self.block_first[:-1].tolist(), self.block_first[1:].tolist()):
            table = NodeTable.from_pool(pool, first, stop)
            imported = sorted({child for node in range(first, stop) for child in pool.children[node] if child < first})
            sums = [pool.metric_sums[child] for child in imported]
            arrays = {
                "id": np.array(imported, dtype=np.int64),
                "events": np.array([pool.events[c] for c in imported], dtype=np.int64),
                "total": np.array([pool.total[c] for c in imported], dtype=np.int64),
                "metric_start": np.cumsum([0] + [len(s) for s in sums], dtype=np.int64),
                "metric_id": np.array([m for s in sums for m, _ in s], dtype=np.int64),
                "metric_sum": np.array([v for s in sums for _, v in s], dtype=np.int64),
            }
            block = ffi.new("ccg_block *")
            block.nodes = table.struct[0]
            block.imports.count = len(imported)
            for name, array in arrays.items():
                setattr(block.imports, name, ffi.from_buffer("int64_t[]", array))
            self._blocks.append(block)
            self._keep.append((table, arrays))

    def native_block(self, index: int) -> Any:
        self.loads.append(index)
        if index in self.broken:
            raise self.broken[index]
        return self._blocks[index]


def walkers(graph: Any, location: int, block_size: int | None) -> tuple[Any, NativeWalker]:
    reference = graph.location(location)
    if block_size is None:
        table = NodeTable.from_pool(graph.pool)
        native = NativeWalker.from_table(table.struct, table, reference.root, reference.start, location)
    else:
        native = NativeWalker.from_blocks(SplitPool(graph.pool, block_size), reference.root, reference.start,
                                          location)
    return reference, native


def rows(batches: Any) -> list[Event]:
    return [event for batch in batches for event in batch.rows()]


block_sizes = st.sampled_from([None, 1, 2, 3, 7, 50])


@settings(max_examples=80, deadline=None)
@given(traces(), st.sampled_from(PARAMS), block_sizes, st.data())
def test_walk_equals_the_python_walker(trace, params, block_size, data):
    graph = build(trace, params)
    for location in trace:
        reference, native = walkers(graph, location, block_size)
        count = len(reference)
        assert len(native) == count
        assert (native.root, native.start, native.location) == (reference.root, reference.start, location)
        everything = rows(reference.events())
        assert rows(native.events()) == everything
        assert rows(native.events(batch_size=3)) == everything
        for _ in range(3):
            start = data.draw(st.integers(-2, count + 1))
            stop = data.draw(st.one_of(st.none(), st.integers(-2, count + 2)))
            batch_size = data.draw(st.sampled_from([1, 2, 3, 5, 8, 9, 17, 64, 1000]))
            for reverse in (False, True):
                got = list(native.events(start, stop, reverse=reverse, batch_size=batch_size))
                assert rows(got) == rows(reference.events(start, stop, reverse=reverse, batch_size=batch_size))
                assert all(len(b) == batch_size for b in got[:-1])
        for index in data.draw(st.lists(st.integers(-count, count - 1), max_size=8)) if count else []:
            assert native.event(index) == reference.event(index)
        times = sorted({e.time + shift for e in everything for shift in (-1, 0, 1)})
        probes = data.draw(st.lists(st.sampled_from(times), max_size=10)) if times else []
        probes += [INT64_MIN, reference.start - 1, reference.start, INT64_MAX]
        for time in probes:
            assert native.find(time) == reference.find(time), time
            assert native.call_stack(time) == reference.call_stack(time), time


@settings(max_examples=40, deadline=None)
@given(traces(), st.sampled_from(PARAMS), block_sizes, st.integers(1, 7))
def test_checkpoints_equal_the_reference(trace, params, block_size, interval):
    graph = build(trace, params)
    for location in trace:
        reference, native = walkers(graph, location, block_size)
        expected = reference_checkpoints(reference, interval)
        assert native_checkpoints(native, interval) == expected
        # a Python walker: the C accumulator over the reference walk's batches
        assert native_checkpoints(reference, interval) == expected


def test_every_event_is_read_once_per_batch_sequence():
    # a long location with deep artificial nodes: batches resume where the last one ended
    events = []
    time = 0
    for i in range(3000):
        events += [Event(time, 0, i % 3), Event(time + 1, 10, 1, value=i * i), Event(time + 2 + i % 5, 1, i % 3)]
        time += 10 + i % 7
    graph = build({0: events}, Params(branching=2))
    _, native = walkers(graph, 0, 5)
    assert rows(native.events(batch_size=1000)) == events
    assert rows(native.events(reverse=True, batch_size=999)) == events[::-1]
    assert native.event(-1) == events[-1] and native.event(4500) == events[4500]
    assert native.find(events[4500].time) == 4500


def test_repeated_sub_trees_are_copied_whole():
    # identical iterations with metric samples: sub-trees repeat (and are copied from
    # their expansion) unless a batch border cuts them
    iteration = [(0, 0, 1), (2, 10, 0), (3, 0, 2), (5, 2, 1), (6, 1, 2), (9, 11, 3), (10, 10, 0), (12, 1, 1)]
    events = []
    for i in range(400):
        start = 100 + 20 * i
        events += [Event(start + t, k, r, size=8 if k == 2 else 0, value=5 * i + 3 if k == 10 else 0)
                   for t, k, r in iteration]
    events[-1] = events[-1]._replace(time=events[-1].time + 1)   # one odd end
    graph = build({0: events}, Params(branching=3))
    assert graph.metrics.n < graph.metrics.N / 10
    for block_size in (None, 4):
        _, native = walkers(graph, 0, block_size)
        for batch_size in (1, 7, 64, 1000, 5000):
            assert rows(native.events(batch_size=batch_size)) == events
        for start, stop in ((5, 3001), (999, 1000), (1234, None)):
            assert rows(native.events(start, stop, batch_size=333)) == events[start:stop]


def test_out_of_range_index():
    graph = build({0: [Event(5, 0, 1), Event(7, 1, 1)]})
    _, native = walkers(graph, 0, None)
    for index in (2, -3):
        with pytest.raises(IndexError):
            native.event(index)
    with pytest.raises(ValueError):
        next(native.events(batch_size=0))


def test_a_load_error_comes_out_unchanged_and_the_walker_recovers():
    events = [Event(10 * i, k, 1) for i, k in enumerate([0, 0, 11, 1, 11, 1])]
    graph = build({0: events}, Params(branching=2))
    reference = graph.location(0)
    provider = SplitPool(graph.pool, 1)
    native = NativeWalker.from_blocks(provider, reference.root, reference.start, 0)
    failure = FormatError("disk on fire", path="x.ccg", offset=42)
    provider.broken[0] = failure   # node 0, the first marker
    for call in (lambda: native.event(2), lambda: list(native.events()), lambda: list(native.events(reverse=True))):
        with pytest.raises(FormatError) as raised:
            call()
        assert raised.value is failure
    provider.broken = dict.fromkeys(range(len(provider.block_first) - 1), failure)
    for call in (lambda: native.find(25), lambda: native.call_stack(25)):
        with pytest.raises(FormatError) as raised:
            call()
        assert raised.value is failure
    provider.broken.clear()
    assert rows(native.events()) == events
    # blocks are let go after every call: the next call asks the provider again
    provider.loads.clear()
    native.find(25)
    native.find(25)
    assert provider.loads.count(len(provider.block_first) - 2) == 2


def test_a_load_error_in_the_middle_of_a_batch_sequence():
    events = [Event(i, 11, 1, value=i % 2) for i in range(40)]
    graph = build({0: events}, Params(branching=2))
    reference = graph.location(0)
    provider = SplitPool(graph.pool, 2)
    native = NativeWalker.from_blocks(provider, reference.root, reference.start, 0)
    batches = native.events(batch_size=3)
    next(batches)
    provider.broken = {k: KeyError(k) for k in range(len(provider.block_first) - 1)}
    with pytest.raises(KeyError):
        next(batches)


def damaged(graph: Any, column: str, change: Any) -> NativeWalker:
    table = NodeTable.from_pool(graph.pool)
    change(table.arrays[column])
    root = graph.location(0)
    return NativeWalker.from_table(table.struct, table, root.root, root.start, 0)


@pytest.mark.parametrize("column, change", [
    ("children", lambda a: a.__setitem__(slice(None), 10**6)),           # a child past the end
    ("children", lambda a: a.__setitem__(-1, len(a) + 100)),             # a child that is not earlier
    ("child_start", lambda a: a.__setitem__(-2, -5)),                   # offsets out of order
    ("duration_start", lambda a: a.__setitem__(-1, a[-1] - 1)),         # not 2n+1 durations
    ("kind", lambda a: a.__setitem__(0, 77)),                           # an unknown kind
    ("events", lambda a: a.__setitem__(slice(None), a + 1)),            # counts that do not add up
])
def test_a_damaged_table_raises_corrupt_archive_error(column, change):
    events = [Event(0, 0, 1), Event(1, 2, 0, 0, 0, size=8), Event(2, 11, 0, value=1), Event(3, 1, 1)]
    graph = build({0: events}, Params(branching=2))
    with pytest.raises(CorruptArchiveError):
        native = damaged(graph, column, change)
        list(native.events())
        for i in range(len(events)):
            native.event(i)
        native.find(2)


def test_a_missing_import_raises_corrupt_archive_error():
    events = [Event(0, 0, 1), Event(1, 2, 0, 0, 0, size=8), Event(2, 11, 0, value=1), Event(3, 1, 1)]
    graph = build({0: events}, Params(branching=2))
    reference = graph.location(0)
    provider = SplitPool(graph.pool, 1)
    for block in provider._blocks:
        block.imports.count = 0
    native = NativeWalker.from_blocks(provider, reference.root, reference.start, 0)
    with pytest.raises(CorruptArchiveError, match="import table"):
        native.event(3)


def test_a_table_that_moves_between_calls():
    # a builder's arrays move as it grows: the walker reads the table afresh at every call
    events = [Event(i, k, 2) for i, k in enumerate([0, 11, 0, 11, 1, 11, 1])]
    graph = build({0: events}, Params(branching=2))
    reference = graph.location(0)
    current = [NodeTable.from_pool(graph.pool)]
    native = NativeWalker.from_table(lambda: current[0].struct, None, reference.root, reference.start, 0)
    batches = native.events(batch_size=2)
    seen = rows([next(batches)])
    for _ in range(3):
        current[0] = NodeTable.from_pool(graph.pool)   # the old arrays are freed
        seen += rows([next(batches)])
        assert native.event(3) == events[3]
    assert seen == events


def test_batch_memory_is_reused_only_when_let_go():
    events = [Event(i, 11, i % 3, value=i) for i in range(50)]
    graph = build({0: events}, Params(branching=2))
    _, native = walkers(graph, 0, None)
    kept = []
    for batch in native.events(batch_size=8):
        kept.append(batch.time[2:5])   # a slice of one column keeps the batch's memory
        batch.value[:] = -1            # a caller may scribble on what it got
    assert [t.tolist() for t in kept] == [list(range(i, min(i + 8, 50)))[2:5] for i in range(0, 50, 8)]
    assert rows(native.events(batch_size=8)) == events


def test_the_writer_makes_the_same_archive_with_either_backend(tmp_path, monkeypatch):
    from ccgformat import backends
    from ccgformat.archive.writer import write_trace
    from .traces import batches, definitions

    events = []
    for i in range(300):
        t = 1000 + 17 * i + (i * i) % 5
        events += [Event(t, 0, i % 2), Event(t + 2, 10, i % 3, value=i * 7), Event(t + 3, 2, 1, 0, 0, size=64),
                   Event(t + 5 + i % 3, 1, i % 2)]
    written = []
    for backend in ("python", "native"):
        monkeypatch.setattr(backends, "ACTIVE", backend)
        path = tmp_path / f"{backend}.ccg"
        write_trace(path, definitions(), [(0, batches(events)), (1, batches(events[40:]))], Params(branching=3),
                    checkpoint_interval=97, level=1)
        written.append(path.read_bytes())
    assert written[0] == written[1]
