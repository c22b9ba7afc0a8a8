"""The aggregation tables (spec 4.10, issue 15): every pyramid level against a brute force
over the rebuilt events, `Archive.aggregate` from the tables (with graph corrections)
against the same brute force, the size budget, and damaged tables."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.archive import writer as writer_module
from ccgformat.archive.aggregation import SLICES, decode_level, decode_slices, encode_level
from ccgformat.archive.layout import BLOCK_OVERHEAD, DIRECTORY_ENTRY, SectionKind
from ccgformat.archive.verify import verify
from ccgformat.errors import ChecksumError, CorruptArchiveError
from ccgformat.model import Definitions, Event, EventKind, Location, SystemTreeNode
from ccgformat.query.aggregate_tables import LEVELS
from ccgformat.query.timeline_walk import exclusive_times
from ccgformat.query.tables import tables_for

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, bounds, with_tables
from .test_query_aggregate import check

LOSSY = Params(abs_dev=20, rel_dev=0.3)
tables_module = importlib.import_module("ccgformat.query.aggregate_tables")
aggregate_module = importlib.import_module("ccgformat.query.aggregate_query")


def tree_definitions() -> Definitions:
    """The regions and locations of `traces.traces` under a two-level system tree:
    node a holds locations 0 and 2, node b location 1."""
    base = traces.definitions()
    tree = [SystemTreeNode("m", "machine"), SystemTreeNode("a", "node", 0), SystemTreeNode("b", "node", 0)]
    return Definitions(regions=base.regions, system_tree=tree, metrics=base.metrics,
                       locations=[Location("rank 0", "process", 1), Location("rank 1", "process", 2),
                                  Location("rank 2", "process", 1)])


def written(path, trace, params, budget=1000.0, **options):
    """An archive of ``trace`` with every pyramid level (a budget far above the graph's size),
    each level in a block of its own (no BUNDLE), where the damage tests find them."""
    graph = oracle.build_with(tree_definitions(), trace, params)
    ccgformat.save_graph(graph, path, nodes_per_block=3, aggregation=budget, **{"bundle": False, **options})
    return ccgformat.open(path)


def brute_level(archive, k, slices=None):
    """Level k from the rebuilt events: the whole trace in 2^k slices (or ``slices``), bound
    j at t0 + floor(j * (t1 - t0) / 2^k), every node the sum over the locations below it."""
    events = {location: oracle.events_of(archive, location) for location in archive.locations}
    times = [e.time for evs in events.values() for e in evs]
    t0, t1 = (min(times), max(times) + 1) if times else (0, 1)
    slices = 1 << k if slices is None else slices
    boundaries = [t0 + j * (t1 - t0) // slices for j in range(slices + 1)]
    regions = archive.aggregation_tables.states
    leaves = oracle.timeline(events, boundaries, np.arange(regions), regions)  # rows in location order
    h = archive.hierarchy
    rows = {location: row for row, location in enumerate(events)}
    return np.stack([sum((leaves[rows[int(loc)]] for loc in h.leaf_locations[h.first_leaf[n]:h.stop_leaf[n]]),
                         np.zeros(leaves.shape[1:], np.int64)) for n in range(len(h))])


@settings(max_examples=25, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]))
def test_every_level_matches_brute_force(tmp_path_factory, trace, params):
    with written(tmp_path_factory.mktemp("levels") / "t.ccg", trace, params) as archive:
        tables = archive.aggregation_tables
        assert len(tables.levels) == LEVELS + 1  # three locations: every level fits MAX_CELLS
        for level in tables.levels:
            assert np.array_equal(level.dense(), brute_level(archive, level.level))
        assert tables.sliced.slices == SLICES and tables.sliced.level == -1
        assert np.array_equal(tables.sliced.dense(), brute_level(archive, 0, SLICES))
        assert archive.version == (1, 8)
        assert verify(archive.path) == []


def pyramid_windows(data, archive, trace):
    """A window and T whose bounds fall on the bounds of a table level (the pyramid's or
    the 3,000 slices') or on event times as often as not."""
    tables = archive.aggregation_tables
    cells = data.draw(st.sampled_from([level.slices for level in tables.every_level]))
    fine = tables.start + np.arange(cells + 1) * (tables.stop - tables.start) // cells
    times = [e.time for events in trace.values() for e in events]
    bound = st.one_of(st.sampled_from(fine.tolist()), bounds(times))
    start, stop = data.draw(bound), data.draw(bound)
    if start is not None and stop is not None and stop <= start:
        start, stop = min(start, stop), max(start, stop) + 1
    if start is not None and stop is None and start >= tables.stop:
        stop = start + 1
    if stop is not None and start is None and stop <= tables.start:
        start = stop - 1
    divisors = [d for d in range(1, SLICES + 1) if SLICES % d == 0]
    slices = data.draw(st.one_of(st.integers(1, 40), st.sampled_from([1 << j for j in range(LEVELS + 1)]),
                                 st.sampled_from(divisors), st.integers(41, 1200)))
    return slices, start, stop


@settings(max_examples=40, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_aggregate_from_tables_matches_brute_force(tmp_path_factory, trace, params, data):
    with written(tmp_path_factory.mktemp("answers") / "t.ccg", trace, params) as archive:
        for _ in range(4):
            locations = data.draw(st.lists(st.sampled_from(archive.locations), min_size=1, unique=True))
            check(archive, *pyramid_windows(data, archive, trace), data.draw(st.sampled_from(["region", "group"])),
                  locations)


@settings(max_examples=20, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_tables_with_pieces_over_the_node_tables_match_brute_force(tmp_path_factory, trace, params, data):
    """The tables and the pieces between their cells and the slice bounds, the pieces walked
    over the node tables, as a large graph of many windows takes them."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(importlib.import_module("ccgformat.query.streaming"), "STREAM_NODES", 0)
    monkeypatch.setattr(aggregate_module, "WINDOW_WALKS", 0)
    try:
        with written(tmp_path_factory.mktemp("pieces") / "t.ccg", trace, params) as archive:
            for _ in range(3):
                check(archive, *pyramid_windows(data, archive, trace), "region", archive.locations)
    finally:
        monkeypatch.undo()


def test_tables_read_only_where_they_save_a_walk(tmp_path, monkeypatch):
    """A small graph's walk over the node tables visits every node whatever the bounds:
    the tables are read only when a level answers every slice (here 30 and 4, not 7)."""
    trace = {0: [Event(0, EventKind.ENTER, 0), Event(10000, EventKind.ENTER, 1), Event(35000, EventKind.LEAVE, 1),
                 Event(64000, EventKind.LEAVE, 0)],
             1: [Event(3000, EventKind.ENTER, 2), Event(40000, EventKind.LEAVE, 2)]}
    written(tmp_path / "t.ccg", trace, Params()).close()
    read = []
    from_tables = aggregate_module._from_tables
    monkeypatch.setattr(aggregate_module, "_from_tables", lambda *args: read.append(len(args[3]) - 1)
                        or from_tables(*args))
    with ccgformat.open(tmp_path / "t.ccg") as archive:
        for slices in (7, 30, 4):
            archive.aggregate(slices)
        assert archive.aggregate(2, 12800, 25600).values.sum() > 0  # bounds of the 3,000 slices' level
    assert read == [30, 4, 2]


def test_aligned_slices_read_no_node(tmp_path, monkeypatch):
    """Slices on table bounds (the whole trace in 2^k slices or in a divisor of `SLICES`,
    or whole cells) come from the tables alone: the graph is never walked, so no node
    block is read."""
    trace = {0: [Event(0, EventKind.ENTER, 0), Event(10000, EventKind.ENTER, 1), Event(35000, EventKind.LEAVE, 1),
                 Event(64000, EventKind.LEAVE, 0)],
             1: [Event(3000, EventKind.ENTER, 2), Event(40000, EventKind.LEAVE, 2)]}
    path = tmp_path / "t.ccg"
    written(path, trace, Params()).close()
    counts = (1, 3, 4, 30, 100, 1000, 1024, 3000)
    graph = oracle.build_with(tree_definitions(), trace)
    want = {T: ccgformat.query.aggregate(graph, T).values for T in counts}
    middle = ccgformat.query.aggregate(graph, 10, 12800, 25600).values
    with ccgformat.open(path) as archive:
        def walked(*args, **kwargs):
            raise AssertionError("the graph was read")
        monkeypatch.setattr(tables_module, "tables_for", walked)
        monkeypatch.setattr(aggregate_module, "location_times", walked)
        for T in (7, 37):  # neither a power of two nor a divisor of 3,000: pieces from the graph
            with pytest.raises(AssertionError, match="graph was read"):
                archive.aggregate(T)
        for T in counts:
            assert np.array_equal(archive.aggregate(T).values, want[T])
        model = archive.aggregate(2, 16000, 48000, states="group")  # cells 256..767 of level 10
        assert model.values[0].sum(axis=1).tolist() == [16000, 16000]
        assert archive.aggregate(3, -30, 0).values.sum() == 0  # before the trace: nothing to read
        # 10 slices of 60 cells of the 3,000, from cell 600 on
        assert np.array_equal(archive.aggregate(10, 12800, 25600).values, middle)


def test_written_by_default_within_the_budget(tmp_path):
    """The writer keeps levels while all of them take at most AGGREGATION_BUDGET of the
    bytes before them (level 0 whatever it costs)."""
    import synth
    definitions, streams = synth.synthesize(64, 2000, jitter=0.2, seed=3)
    path = tmp_path / "s.ccg"
    # the graph of every leaf shared (leaf_window 0) as far back as L = 1000 reaches, its
    # gaps in byte planes: its bytes leave room for the metric level 0
    ccgformat.write_trace(path, definitions, ((loc, streams(loc)) for loc in range(64)),
                          ccgformat.Params(leaf_window=0, search_length=1000), bundle=False, gaps="plain")
    with ccgformat.open(path) as archive:
        entries = [e for e in archive.directory if e.kind == SectionKind.AGGREGATE_LEVEL]
        metric = [e for e in archive.directory if e.kind == SectionKind.METRIC_LEVEL]
        cost = sum(e.length + BLOCK_OVERHEAD + DIRECTORY_ENTRY.size for e in entries + metric)
        assert [e.first for e in entries] == list(range(len(entries)))
        assert len(entries) > 1 and cost <= writer_module.AGGREGATION_BUDGET * entries[0].offset
        # the region pyramid stops before the budget, and the metric pyramid's level 0 still fits in it
        assert definitions.metrics and [e.first for e in metric] == list(range(len(metric))) and metric
        assert archive.version == (1, 4)
        assert verify(path) == []
    ccgformat.write_trace(path, definitions, ((loc, streams(loc)) for loc in range(64)), aggregation=None,
                         references="ids", bundle=False)  # PREDICTED_NODES blocks would make it 1.4 too
    with ccgformat.open(path) as archive:
        assert archive.aggregation_tables is None and archive.version == (1, 3)


def test_levels_walked_only_as_asked(monkeypatch):
    """`levels` walks level k only when it is asked for: the writer, whose budget stops
    after a few levels, never pays for the finest one (at 20,000 locations its dense cells
    took 0.6 s and 128 MiB for a file that kept three)."""
    graph = oracle.build_with(tree_definitions(), {0: [Event(0, EventKind.ENTER, 0), Event(900, EventKind.LEAVE, 0)],
                                                   1: [Event(300, EventKind.ENTER, 1), Event(700, EventKind.LEAVE, 1)]})
    walked = []
    location_times = tables_module.location_times
    monkeypatch.setattr(tables_module, "location_times",
                        lambda source, leaves, bounds, states: walked.append(len(bounds) - 1)
                        or location_times(source, leaves, bounds, states))
    pyramid = tables_module.levels(graph)
    for k in range(4):
        assert next(pyramid)[0] == k and walked == [1 << j for j in range(k + 1)]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_tables_verify(tmp_path_factory, name):
    archive = with_tables(tmp_path_factory, name)
    assert archive.aggregation_tables is not None
    assert np.array_equal(archive.aggregation_tables.levels[0].dense(), brute_level(archive, 0))
    assert verify(archive.path) == []


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(2, 200), min_size=1, max_size=30, unique=True), st.data())
def test_walk_with_uneven_column_bounds(bounds_inside, data):
    """exclusive_times takes any increasing bounds (the graph corrections are uneven
    pieces), not only those of the column formula."""
    trace = data.draw(traces.traces())
    graph = oracle.build(trace)
    times = [e.time for events in trace.values() for e in events]
    lo, hi = min(times), max(times) + 1
    boundaries = np.unique(np.array([lo - 1, hi + 1] + [lo + (hi - lo) * b // 200 for b in bounds_inside]))
    locations = sorted(trace)
    t = tables_for(graph.pool)
    regions = max(4, t.regions)
    got = exclusive_times(t, np.arange(regions), boundaries, regions,
                          np.array([graph.roots[loc].root for loc in locations]),
                          np.array([graph.roots[loc].start for loc in locations]), False)
    events = {loc: oracle.events_of(graph, loc) for loc in locations}
    assert np.array_equal(got, oracle.timeline(events, boundaries.tolist(), np.arange(regions), regions))


# ----------------------------------------------------------------- damaged tables

def damaged(tmp_path, monkeypatch, change):
    """An archive whose tables ``change(k, values)`` altered before encoding (valid CRCs)."""
    def encode(k, start, stop, values):
        values = values.copy()
        start, stop = change(k, start, stop, values)
        return encode_level(k, start, stop, values)
    monkeypatch.setattr(writer_module, "encode_level", encode)
    trace = {0: [Event(0, EventKind.ENTER, 0), Event(10, EventKind.ENTER, 1), Event(35, EventKind.LEAVE, 1),
                 Event(64, EventKind.LEAVE, 0)],
             1: [Event(3, EventKind.ENTER, 2), Event(40, EventKind.LEAVE, 2)]}
    return written(tmp_path / "bad.ccg", trace, Params())


def leaf(values):
    return values[-1]  # the last node in preorder is a leaf


@pytest.mark.parametrize("change, reason", [
    (lambda k, a, b, v: (leaf(v).__setitem__((0, 0), leaf(v)[0, 0] + 1), (a, b))[1] if k == 3 else (a, b),
     "sums of"),
    (lambda k, a, b, v: (v.__setitem__((0, 0, 0), 7), (a, b))[1] if k == 0 else (a, b), "sums of its children"),
    (lambda k, a, b, v: (a, b + 1), "cover"),
    (lambda k, a, b, v: (leaf(v).__setitem__((0, 0), leaf(v)[0, 0] + 1), (a, b))[1] if k == SLICES else (a, b),
     "sums of its children"),
    (lambda k, a, b, v: (v.__setitem__(([0, 4, 5], 0, 0), v[[0, 4, 5], 0, 0] + 1), (a, b))[1] if k == SLICES
     else (a, b), "do not add up to its level 0"),
    (lambda k, a, b, v: (a, b + 1) if k == SLICES else (a, b), "differ in window"),
])
def test_inconsistent_tables_are_corrupt(tmp_path, monkeypatch, change, reason):
    with damaged(tmp_path, monkeypatch, change) as archive:
        with pytest.raises(CorruptArchiveError, match=reason):
            archive.aggregate(4)
        problems = verify(archive.path)
        assert problems and all(p.kind == SectionKind.AGGREGATE_LEVEL for p in problems)


def test_tables_that_disagree_with_the_graph_fail_verify(tmp_path, monkeypatch):
    """Two regions' times swapped in one location at every level and in its ancestors: the
    pyramid is consistent, but not the graph's (and not the summary index's)."""
    def swap(k, a, b, values):
        values[:, :, [0, 1]] = values[:, :, [1, 0]]
        return a, b
    with damaged(tmp_path, monkeypatch, swap) as archive:
        archive.aggregate(4)  # readable
        assert any("differs from the times of the graph" in p.reason for p in verify(archive.path))


def test_a_sliced_level_that_disagrees_with_the_graph_fails_verify(tmp_path, monkeypatch):
    """Two regions' times swapped in the level of 3,000 slices alone: it reads (its sums
    hold), but `ccg verify` finds it differs from the graph."""
    def swap(k, a, b, values):
        if k == SLICES:
            values[:, :, [0, 1]] = values[:, :, [1, 0]]
        return a, b
    with damaged(tmp_path, monkeypatch, swap) as archive:
        archive.aggregate(30)  # readable
        reasons = [p.reason for p in verify(archive.path)]
        assert reasons == [f"aggregation level of {SLICES} slices differs from the times of the graph"]


def test_damaged_level_payloads(tmp_path):
    with written(tmp_path / "t.ccg", {0: [Event(0, EventKind.ENTER, 0), Event(9, EventKind.LEAVE, 0)]},
                 Params()) as archive:
        entry = next(e for e in archive.directory if e.kind == SectionKind.AGGREGATE_LEVEL and e.first == 1)
        raw = bytearray(archive.payload(entry))
        decode_level(bytes(raw), "x", 0)
    for cut, reason in [(raw[:20], "shorter than its header"), (raw + b"\0", "follow the last stream"),
                        (raw[:28] + b"\1\0\0\0" + raw[32:], "reserved"),
                        (raw[:16] + (30).to_bytes(4, "little") + raw[20:], "out of range")]:
        with pytest.raises(CorruptArchiveError, match=reason):
            decode_level(bytes(cut), "x", 0)
    two = bytes(raw[:16] + (2).to_bytes(4, "little") + raw[20:])  # level 1's payload as S = 2 slices ...
    assert decode_slices(two, "x", 0).slices == 2 and decode_slices(two, "x", 0).level == -1
    with pytest.raises(CorruptArchiveError, match="count"):  # ... not as S = 1: the count stream is longer
        decode_slices(bytes(raw), "x", 0)
    for field in (0, (1 << 20) + 1):
        with pytest.raises(CorruptArchiveError, match="out of range"):
            decode_slices(bytes(raw[:16] + field.to_bytes(4, "little") + raw[20:]), "x", 0)
    data = bytearray((tmp_path / "t.ccg").read_bytes())
    data[entry.offset + 14] ^= 1
    (tmp_path / "crc.ccg").write_bytes(bytes(data))
    with ccgformat.open(tmp_path / "crc.ccg") as archive:
        with pytest.raises(ChecksumError):
            archive.aggregate(2)


def test_levels_must_be_0_to_k(tmp_path, monkeypatch):
    with damaged(tmp_path, monkeypatch, lambda k, a, b, v: (a, b)) as archive:
        pass
    import zstandard  # noqa: F401 - the payloads are compressed; rebuild the file without level 1
    data = (tmp_path / "bad.ccg").read_bytes()
    with ccgformat.open(tmp_path / "bad.ccg") as archive:
        entries = [e for e in archive.directory if e.kind == SectionKind.AGGREGATE_LEVEL]
    assert len(entries) > 2
    from ccgformat.archive.sections import encode_directory
    from ccgformat.archive.blocks import frame_block
    from ccgformat.archive.layout import TRAILER, END_MAGIC, BlockFlags
    kept = [e for e in archive.directory if not (e.kind == SectionKind.AGGREGATE_LEVEL and e.first == 1)]
    footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND), encode_directory(kept))
    end = max(e.offset + e.length + BLOCK_OVERHEAD for e in archive.directory)
    (tmp_path / "gap.ccg").write_bytes(data[:end] + footer + TRAILER.pack(len(footer), END_MAGIC))
    with ccgformat.open(tmp_path / "gap.ccg") as archive:
        with pytest.raises(CorruptArchiveError, match="not 0..K"):
            archive.aggregate(2)


def test_old_archives_answer_from_the_graph():
    """The frozen 1.3 vectors have no tables; the model comes from the graph."""
    from pathlib import Path
    folder = Path(__file__).resolve().parent.parent / "spec" / "vectors" / "1.3"
    for path in sorted(folder.glob("*.ccg"))[:6]:
        try:
            archive = ccgformat.open(path)
        except ccgformat.CcgError:
            continue  # the vectors a reader must refuse
        with archive:
            assert archive.aggregation_tables is None
            if archive.locations:
                check(archive, 5, None, None, "region", archive.locations)
