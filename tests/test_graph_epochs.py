"""Conversion in bounded memory (Params.epoch_nodes, dissertation 4.7.2, docs/scale.md):
once ``epoch_nodes`` nodes were stored since the replacement index last started empty, it
starts empty again, in both builders alike; the graph still rebuilds every event exactly,
the archives of both builders are the same bytes, and what the index retains does not grow
with the trace's length."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive.reader import _absent_epoch_nodes
from ccgformat.archive.verify import verify
from ccgformat.graph.slist import ReplacementIndex
from ccgformat.model import EventBatch
from ccgformat.params import Params

from .test_graph_leaf_window import BUILDERS, build, leaf_calls, rebuilt
from .traces import definitions, traces

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402

#: what the replacement index may retain per node of an epoch, in bytes: an S-list each
#: (its entries, and with deviation bounds its rows of durations), a slot in each hash
#: table at most half full, and the per-node index columns (docs/scale.md)
INDEX_BYTES_PER_EPOCH_NODE = 512
#: the native builder runs, and lets written nodes go, under the native backend only (its
#: blocks are then encoded and read back in C)
streamed_natively = pytest.mark.skipif(len(BUILDERS) < 2 or ccg.backend != "native",
                                       reason="the native backend is not in use")


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_the_index_starts_empty_once_the_epoch_stored_its_nodes(builder_class):
    # ten equal leaf calls: the first is stored, the others share it; then the root and
    # the empty root of the other defined location. With the bound 1 every node after
    # the first starts an epoch, so every call is stored; with 2, only the empty root
    events = leaf_calls([5] * 10)
    for bound, nodes, epochs in ((0, 3, 0), (1, 13, 12), (2, 3, 1)):
        params = Params(branching=1000, leaf_window=0, epoch_nodes=bound)
        graph = build(builder_class, params, {0: events})
        assert (len(graph.pool), graph.epochs) == (nodes, epochs), bound
        assert rebuilt(graph, 0) == [tuple(e) for e in events]


@pytest.mark.skipif(len(BUILDERS) < 2, reason="the native extension is not built")
@settings(max_examples=40, deadline=None)
@given(traces(), st.integers(1, 12), st.sampled_from([Params(), Params(abs_dev=50, rel_dev=0.2)]))
def test_both_builders_start_epochs_alike_and_lossless_graphs_stay_exact(trace, bound, base):
    params = Params(**{**vars(base), "epoch_nodes": bound, "branching": 3, "search_length": 3})
    reference, native = (build(cls, params, trace) for cls in BUILDERS)
    assert reference.epochs == native.epochs and reference.metrics == native.metrics
    assert reference.roots == native.roots
    for location, events in trace.items():
        assert rebuilt(reference, location) == rebuilt(native, location)
        if params.lossless:
            assert rebuilt(native, location) == [tuple(e) for e in events]


@streamed_natively
@pytest.mark.parametrize("params", [Params(epoch_nodes=300), Params(abs_dev=200, rel_dev=0.1, epoch_nodes=300)])
@pytest.mark.parametrize("interval", [65536, 700])  # small locations built in groups; large ones alone
def test_archives_of_both_builders_are_the_same_bytes(tmp_path, monkeypatch, params, interval):
    """The native builder lets the records of written nodes go; the reference keeps
    them: the same file, its tables and late checkpoints read back from the blocks."""
    defs, stream = synth.synthesize(3, 4000, jitter=0.2, seed=5, batch_size=500)
    data = [(location, list(stream(location))) for location in range(3)]
    files = []
    for builder_class in BUILDERS:
        monkeypatch.setattr("ccgformat.archive.writer.make_builder",
                            lambda *args, cls=builder_class, **kwargs: cls(*args, **kwargs))
        path = tmp_path / f"{builder_class.__name__}.ccg"
        graph = ccg.write_trace(path, defs, data, params, nodes_per_block=256, checkpoint_interval=interval,
                                index="always")
        assert graph.epochs > 0
        files.append(path.read_bytes())
    assert files[0] == files[1]
    assert verify(path) == []  # import tables (of the pinned nodes too), checkpoints, aggregation tables
    with ccg.open(path) as archive:
        assert archive.parameters["epoch_nodes"] == archive.params.epoch_nodes == 300
        if params.lossless:
            for location, batches in data:
                expected = [row for batch in batches for row in batch.rows()]
                assert [row for batch in archive.location(location).events() for row in batch.rows()] == expected


def test_the_default_bound_is_left_out_where_the_index_never_started_empty(tmp_path):
    """Spec 4.2: absent, it reads as the default for a graph of at most that many nodes,
    else (a file written before the member, never reset) as 0."""
    path = tmp_path / "small.ccg"
    batches = [EventBatch.from_events(leaf_calls([5, 6, 7]))]
    for params, recorded in ((Params(), None), (Params(epoch_nodes=5), 5)):
        ccg.write_trace(path, definitions(), [(0, batches)], params)
        with ccg.open(path) as archive:
            assert archive.parameters.get("epoch_nodes") == recorded and archive.params == params
    assert _absent_epoch_nodes({"metrics": {"n": Params.epoch_nodes}}) == Params.epoch_nodes
    assert _absent_epoch_nodes({"metrics": {"n": Params.epoch_nodes + 1}}) == 0


def _index_bytes(builder) -> int:
    """What the replacement index retains: the native builder's own counter, or for the
    reference the memory tracemalloc sees freed when its index is dropped."""
    if hasattr(builder, "memory"):
        return builder.memory()[1]
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    builder.index = ReplacementIndex(builder.params.search_length, builder.pool.soft_key)
    builder._leaf_used.clear()
    gc.collect()
    return held - tracemalloc.get_traced_memory()[0]


@pytest.mark.parametrize("builder_class", BUILDERS)
@pytest.mark.parametrize("params", [Params(epoch_nodes=2048), Params(abs_dev=200, rel_dev=0.1, epoch_nodes=2048)])
def test_the_index_retains_the_same_at_two_lengths_four_times_apart(builder_class, params):
    """The same jittered shape, 4x longer: the index holds one epoch's nodes at both
    lengths, at most INDEX_BYTES_PER_EPOCH_NODE bytes each; without the bound it grows."""
    retained = {}
    for events in (6000, 24000):
        defs, stream = synth.synthesize(2, events, jitter=0.2, seed=6)
        tracemalloc.start()
        try:
            builder = builder_class(params, defs)
            for location in range(2):
                for batch in stream(location):
                    builder.add(location, batch)
                builder.end_location(location)
            assert builder.finish().epochs >= (events // 6000) - 1
            retained[events] = _index_bytes(builder)
        finally:
            tracemalloc.stop()
    assert max(retained.values()) <= INDEX_BYTES_PER_EPOCH_NODE * params.epoch_nodes, retained


#: what the native pool may keep per node it holds in full (an epoch's nodes and those not
#: yet in a written block), capacity included, beside its index (docs/scale.md)
POOL_BYTES_PER_KEPT_NODE = 512


@streamed_natively
@pytest.mark.parametrize("params", [Params(epoch_nodes=2048), Params(abs_dev=200, rel_dev=0.1, epoch_nodes=2048)])
def test_a_streamed_conversion_keeps_the_same_pool_at_two_lengths_four_times_apart(tmp_path, monkeypatch, params):
    """Through `write_trace`, the native builder lets written nodes of earlier epochs go:
    its pool and index (its own counters) stay within the bound at both lengths, and the
    file still holds every event."""
    native = BUILDERS[1]
    made = []
    monkeypatch.setattr("ccgformat.archive.writer.make_builder",
                        lambda *args, **kwargs: made.append(native(*args, **kwargs)) or made[-1])
    nodes_per_block = 256
    bound = POOL_BYTES_PER_KEPT_NODE * (params.epoch_nodes + nodes_per_block)
    for events in (6000, 24000):
        defs, stream = synth.synthesize(2, events, jitter=0.2, seed=6, batch_size=1000)
        path = tmp_path / f"{events}.ccg"
        graph = ccg.write_trace(path, defs, [(location, stream(location)) for location in range(2)], params,
                                nodes_per_block=nodes_per_block, checkpoint_interval=1000)
        pool, index = made[-1].memory()
        assert graph.epochs >= 1 and pool + index <= bound, (events, pool, index)
        with ccg.open(path) as archive:
            assert archive.stats.events == graph.event_count == sum(len(archive.location(location))
                                                                    for location in range(2))
