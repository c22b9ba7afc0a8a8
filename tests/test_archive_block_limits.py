"""Node blocks stay within the reader's limit on a block's metrics times its nodes and child
references (spec 7): a trace with thousands of metrics is written in smaller blocks and
reads back whole."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Builder, EventBatch
from ccgformat.archive.codec import METRIC_CELL_LIMIT
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.reader import open_archive
from ccgformat.archive.writer import DEFAULT_NODES_PER_BLOCK, _within_metric_limit
from ccgformat.model import Definitions, EventKind, Location, Metric, Region

from .traces import batches, definitions, traces

METRICS = 2000
SAMPLES = 12_000


def many_metrics_trace() -> tuple[Definitions, EventBatch]:
    """One call holding SAMPLES samples of METRICS metrics in turn, every difference new:
    METRICS x (its nodes + child references) is several times the reader's limit."""
    rng = np.random.default_rng(7)
    n = SAMPLES + 2
    kind = np.full(n, EventKind.METRIC, dtype=np.uint8)
    kind[0], kind[-1] = EventKind.ENTER, EventKind.LEAVE
    ref = np.zeros(n, dtype=np.int64)
    ref[1:-1] = np.arange(SAMPLES) % METRICS
    value = np.zeros(n, dtype=np.int64)
    value[1:-1] = np.cumsum(rng.integers(1, 1 << 20, SAMPLES))
    time = np.cumsum(rng.integers(1, 50, n))
    definitions = Definitions(regions=[Region("main")], locations=[Location("rank 0")],
                              metrics=[Metric(f"counter {m}") for m in range(METRICS)])
    return definitions, EventBatch.from_columns(time, kind, ref=ref, value=value)


def test_a_trace_of_thousands_of_metrics_reads_back_from_smaller_blocks(tmp_path):
    definitions, batch = many_metrics_trace()
    path = tmp_path / "metrics.ccg"
    graph = ccgformat.write_trace(path, definitions, [(0, [batch])])
    assert METRICS * len(graph.pool) > METRIC_CELL_LIMIT  # one block of them would be refused
    archive = open_archive(path)
    node_blocks = [entry for entry in archive.directory
                   if entry.count and entry.kind in (SectionKind.NODES, SectionKind.PREDICTED_NODES)]
    assert len(node_blocks) > 1 and all(entry.count < DEFAULT_NODES_PER_BLOCK for entry in node_blocks)
    back = EventBatch.concat(list(archive.location(0).events()))
    for column in ("time", "kind", "ref", "value"):
        assert np.array_equal(getattr(back, column), getattr(batch, column)), column


def cells(pool, first: int, stop: int) -> int:
    return sum(1 + len(pool.children[node]) for node in range(first, stop))


@settings(max_examples=40, deadline=None)
@given(traces(), st.data())
def test_a_block_ends_at_the_last_node_within_the_budget(trace, data):
    """The reference walk over the pool's children, and the C table's offsets when the C
    core is built, end the block where the next node would pass the budget."""
    builder = Builder(ccgformat.Params(), definitions())
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    pool = builder.finish().pool
    first = data.draw(st.integers(0, len(pool) - 1))
    stop = data.draw(st.integers(first + 1, len(pool)))
    budget = data.draw(st.integers(0, cells(pool, first, stop) + 2))
    end = _within_metric_limit(pool, first, stop, budget)
    assert first < end <= stop
    assert end == first + 1 or cells(pool, first, end) <= budget
    assert end == stop or cells(pool, first, end + 1) > budget
    native = native_table(trace)
    if native is not None:
        assert _within_metric_limit(native, first, stop, budget) == end


def native_table(trace):
    """The same graph built by the C builder (its pool is a table kept in C), or None."""
    try:
        from ccgformat._native.builder import NativeBuilder
    except ImportError:  # pragma: no cover - depends on the build
        return None
    builder = NativeBuilder(ccgformat.Params(), definitions())
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    return builder.finish().pool
