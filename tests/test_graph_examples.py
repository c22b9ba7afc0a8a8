"""The dissertation's worked examples (Figs. 3.2/3.4, 4.1, 4.19; section 5.1.3)."""

from __future__ import annotations

import numpy as np

from ccgformat import Builder, EventBatch, Params
from ccgformat.graph import NodeKind
from ccgformat.model import EventKind as K

MAIN, FOO, BAR, MPI_SEND, A, B, C = range(7)


def build(locations: dict[int, list], params: Params = Params()):
    builder = Builder(params)
    for location, rows in locations.items():
        builder.add(location, EventBatch.from_events(rows))
    return builder.finish()


def test_construction_example_of_fig_4_1():
    """enter A 10, enter B 20, leave B 30, enter C 50, send 60, leave C 70, leave A 90."""
    rows = [(10, K.ENTER, A), (20, K.ENTER, B), (30, K.LEAVE, B), (50, K.ENTER, C),
            (60, K.SEND, 1, 0, 0, 0, 0), (70, K.LEAVE, C), (90, K.LEAVE, A)]
    graph = build({0: rows})
    pool = graph.pool
    by_region = {pool.key[i][0]: i for i in range(len(pool)) if pool.kind[i] == NodeKind.CALL}
    # 2n+1 durations per call node (4.3): B has no child, C one atomic child, A two calls
    assert pool.durations[by_region[B]] == (10,)
    assert pool.durations[by_region[C]] == (10, 0, 10)
    assert pool.durations[by_region[A]] == (10, 10, 20, 20, 20)
    assert pool.children[by_region[A]] == (by_region[B], by_region[C])
    send = pool.children[by_region[C]][0]
    assert pool.kind[send] == K.SEND and pool.durations[send] == ()
    # bottom-up: children are finalized, and numbered, before their parents
    assert by_region[B] < by_region[A] and send < by_region[C] < by_region[A]
    root = graph.roots[0]
    assert (root.start, root.end, root.events) == (10, 90, 7)
    assert pool.children[root.root] == (by_region[A],)
    assert graph.metrics.N == graph.metrics.n == 5  # nothing repeats
    assert [tuple(e)[:3] for e in graph.location(0).events().__next__().rows()] == [r[:3] for r in rows]


def fig_3_2_trace(start: int = 0) -> list:
    """main calls foo once; foo calls bar twice; bar calls MPI_Send three times, each with a
    send event; the first send of each bar goes to another peer than the two others."""
    rows, t = [(start, K.ENTER, MAIN)], start + 5
    rows.append((t, K.ENTER, FOO))
    for _ in range(2):
        t += 5
        rows.append((t, K.ENTER, BAR))
        for peer in (1, 2, 2):
            rows += [(t + 1, K.ENTER, MPI_SEND), (t + 2, K.SEND, peer, 0, 0, 0, 8), (t + 4, K.LEAVE, MPI_SEND)]
            t += 6
        rows.append((t, K.LEAVE, BAR))
    rows += [(t + 5, K.LEAVE, FOO), (t + 10, K.LEAVE, MAIN)]
    return rows


def test_fig_3_4_seventeen_nodes_compress_to_eight():
    graph = build({0: fig_3_2_trace()})
    # root + main + foo + 2 bar + 6 MPI_Send + 6 send = 17; compressed: root, main, foo,
    # bar, two kinds of MPI_Send and two kinds of send = 8
    assert (graph.metrics.N, graph.metrics.n) == (17, 8)
    assert graph.metrics.r_nodes == 17 / 8
    assert graph.metrics.M > graph.metrics.m


def test_identical_processes_share_their_whole_graph_fig_4_19():
    one = build({0: fig_3_2_trace()})
    four = build({loc: fig_3_2_trace(start=1000 * loc) for loc in range(4)})
    assert four.metrics.n == one.metrics.n
    assert four.metrics.N == 4 * one.metrics.N
    assert len({root.root for root in four.roots.values()}) == 1
    for loc in range(4):
        assert [e for b in four.location(loc).events() for e in b.rows()] == \
            [e for e in EventBatch.from_events(fig_3_2_trace(start=1000 * loc)).rows()]


def repeated_calls(calls: int) -> EventBatch:
    """One function called over and over with constant timing (best case, 5.1.3)."""
    time = np.arange(2 * calls, dtype=np.int64) * 50 + 100
    kind = np.tile(np.array([K.ENTER, K.LEAVE], dtype=np.uint8), calls)
    return EventBatch.from_columns(time, kind, ref=np.ones(2 * calls, dtype=np.int64))


def test_best_case_grows_logarithmically():
    counts = {}
    for calls in (500, 5_000, 50_000, 500_000):
        builder = Builder(Params(branching=20))
        batch = repeated_calls(calls)
        for start in range(0, len(batch), 100_000):
            builder.add(0, batch[start:start + 100_000])
        graph = builder.finish()
        counts[2 * calls] = graph.metrics.n
        walker = graph.location(0)
        assert len(walker) == 2 * calls
        assert walker.event(2 * calls - 1) == batch.event(2 * calls - 1)
        assert walker.find(int(batch.time[12345 % (2 * calls)])) == 12345 % (2 * calls)
    assert counts[1_000_000] < 40  # 1,000,000 events at b = 20
    # each tenfold growth of the trace adds at most a handful of nodes
    sizes = sorted(counts)
    assert all(counts[b] - counts[a] <= 6 for a, b in zip(sizes, sizes[1:]))
    assert counts[1_000_000] >= counts[1_000]


def test_same_input_same_graph():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import synth

    pools = []
    for _ in range(2):
        definitions, events = synth.synthesize(3, 3000, jitter=0.3, seed=7)
        builder = Builder(Params(abs_dev=500, rel_dev=0.1, branching=5, search_length=20), definitions)
        for location in range(3):
            for batch in events(location):
                builder.add(location, batch)
        graph = builder.finish()
        pool = graph.pool
        columns = [[getattr(pool, name)[node] for node in range(len(pool))]
                   for name in ("kind", "key", "children", "durations", "soft")]
        pools.append((columns, graph.roots, graph.metrics))
    assert pools[0] == pools[1]
