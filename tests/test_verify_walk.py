"""`ccg verify`'s one walk of every location (`query.verify_walk`): its checkpoints, its
aggregation levels and its metric levels equal what `indexes.checkpoints` and the
queries' walks over the node tables (the references) give; and verify decodes each node
block once, checking it as the walk decodes it (the root blocks once more, when the
location is opened), when the block cache holds one block, where three walks and the
check of their own decoded it four times (native backend)."""

from __future__ import annotations

import bisect
import importlib

import numpy as np
import pytest

import ccgformat
from ccgformat.archive import indexes
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.archive.verify import verify
from ccgformat.query.metric_integrals import metric_levels
from ccgformat.query.verify_walk import joined_levels, verify_walk, walk_part

from .query_support import ring_archive, with_tables

tables_module = importlib.import_module("ccgformat.query.aggregate_tables")
streaming = importlib.import_module("ccgformat.query.streaming")
reader_module = importlib.import_module("ccgformat.archive.reader")
native_module = importlib.import_module("ccgformat.archive.native")


def walked(archive, monkeypatch, intervals):
    """``verify_walk`` of a graph that streams: the rebuilt checkpoints and the levels."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    rebuilt = {}
    levels = verify_walk(archive, intervals, lambda *key_points: rebuilt.setdefault(key_points[:2], key_points[2]),
                         len(archive.aggregation_tables.levels),
                         archive.metric_tables.levels[0].finest if archive.metric_tables else None)
    monkeypatch.setattr(streaming, "STREAM_NODES", 1 << 62)  # the references: the node tables
    return rebuilt, levels


def assert_same_walk(archive, monkeypatch):
    intervals = {location: {1, 5} for location in archive.roots}
    rebuilt, levels = walked(archive, monkeypatch, intervals)
    assert set(rebuilt) == {(location, interval) for location in archive.roots for interval in (1, 5)}
    for (location, interval), points in rebuilt.items():
        assert points == indexes.checkpoints(archive.location(location), interval)
    reference = list(tables_module.levels(archive, len(archive.aggregation_tables.levels)))
    assert levels.aggregation is not None and len(levels.aggregation) == len(reference)
    for (k, a, b, values), (k2, a2, b2, expected) in zip(levels.aggregation, reference):
        assert (k, a, b) == (k2, a2, b2) and np.array_equal(values, expected)
    if archive.metric_tables is None:
        assert levels.metrics is None
        return
    finest = archive.metric_tables.levels[0].finest
    expected_metrics = list(metric_levels(archive, finest))
    assert levels.metrics is not None and len(levels.metrics) == len(expected_metrics)
    for level, expected in zip(levels.metrics, expected_metrics):
        assert np.array_equal(level.dense(), expected.dense(), equal_nan=True)


#: the largest corpus OTF trace only where the walk is native: the pure-Python walk of it
#: and of its references takes 25 s and checks nothing the smaller traces do not
@pytest.mark.parametrize("name", ["otf2-pingpong-papi", "otf2-stencil", "paje-native"]
                         + (["otf-out"] if ccgformat.backend == "native" else []))
def test_corpus_walk_equals_the_references(tmp_path_factory, monkeypatch, name):
    assert_same_walk(with_tables(tmp_path_factory, name), monkeypatch)


def test_ring_walk_equals_the_references(tmp_path, monkeypatch):
    with ccgformat.open(ring_archive(tmp_path, 3, 3000, aggregation=1000.0)) as archive:
        assert len(archive.pool.block_first) > 10
        assert_same_walk(archive, monkeypatch)


def assert_walk_splits_into_shares(archive, monkeypatch):
    """The walk of consecutive shares of the locations (`walk_part`, as the ranks of ``ccg
    verify --mpi`` walk them; some shares empty) hands on the whole walk's checkpoints in
    its order, and its parts join (`joined_levels`) into the whole walk's levels."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    locations = sorted(archive.roots)
    intervals = {location: {1, 7} for location in locations}
    asked = (len(archive.aggregation_tables.levels),
             archive.metric_tables.levels[0].finest if archive.metric_tables else None,
             archive.aggregation_tables.sliced.slices if archive.aggregation_tables.sliced else None)
    whole_calls: list = []
    whole = verify_walk(archive, intervals, lambda *call: whole_calls.append(call), *asked)
    assert whole.aggregation and len(whole_calls) == 2 * len(locations)
    middle = locations[len(locations) // 2]
    for cuts in ([middle], [locations[0], locations[-1]], [middle, middle], [locations[-1] + 1]):
        bounds = [-np.inf, *cuts, np.inf]
        calls: list = []
        parts = [walk_part(archive, intervals, lambda *call: calls.append(call), *asked, between=share)
                 for share in zip(bounds[:-1], bounds[1:])]
        joined = joined_levels(archive, parts, *asked)
        assert calls == whole_calls
        assert [level[:3] for level in joined.aggregation] == [level[:3] for level in whole.aggregation]
        for level, expected in zip(joined.aggregation, whole.aggregation):
            assert np.array_equal(level[3], expected[3])
        assert (joined.metrics is None) == (whole.metrics is None) == (archive.metric_tables is None)
        for level, expected in zip(joined.metrics or (), whole.metrics or ()):
            assert np.array_equal(level.dense(), expected.dense(), equal_nan=True)


@pytest.mark.parametrize("name", ["otf2-pingpong-papi", "otf2-stencil", "paje-native"])
def test_corpus_walk_splits_into_shares(tmp_path_factory, monkeypatch, name):
    assert_walk_splits_into_shares(with_tables(tmp_path_factory, name), monkeypatch)


def test_ring_walk_splits_into_shares(tmp_path, monkeypatch):
    with ccgformat.open(ring_archive(tmp_path, 3, 3000, aggregation=1000.0)) as archive:
        assert_walk_splits_into_shares(archive, monkeypatch)


def test_a_small_graph_gets_no_levels_from_the_walk(tmp_path_factory):
    """Below `STREAM_NODES` the queries read node tables: verify asks them instead."""
    archive = with_tables(tmp_path_factory, "otf2-pingpong-papi")
    assert not streaming.streams(archive)
    levels = verify_walk(archive, {}, lambda *_: None, len(archive.aggregation_tables.levels),
                         archive.metric_tables.levels[0].finest)
    assert levels.aggregation is None and levels.metrics is None


@pytest.mark.skipif(ccgformat.backend == "python", reason="the native walk holds the blocks of its call; the "
                    "Python walk reads them through the cache as it goes up and down the tree")
def test_verify_decodes_each_block_once(tmp_path, monkeypatch):
    path = ring_archive(tmp_path, 3, 3000, aggregation=1000.0)
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    monkeypatch.setattr(reader_module, "BLOCK_CACHE_BYTES", 0)  # the cache holds one block
    decoded: dict[int, int] = {}
    original = native_module.decode_block

    def counted(raw, path, offset, **coding):
        decoded[offset] = decoded.get(offset, 0) + 1
        return original(raw, path, offset, **coding)

    for module in ("ccgformat.archive.reader", "ccgformat.archive.verify"):
        monkeypatch.setattr(importlib.import_module(module), "decode_block", counted)
    assert verify(path) == []
    with ccgformat.open(path) as archive:
        entries = sorted((e for e in archive.sections if e.kind in NODE_KINDS), key=lambda e: e.first)
        firsts = [entry.first for entry in entries]
        root_blocks = {entries[bisect.bisect_right(firsts, root.root) - 1].offset for root in archive.roots.values()}
    assert len(decoded) == len(entries) > 10
    # a root's block twice more: for the check of the roots and when its location is opened
    assert {offset: count for offset, count in decoded.items() if count > 1}.keys() <= root_blocks
    assert sum(decoded.values()) <= len(decoded) + 2 * len(root_blocks)
