"""PREDICTED_NODES blocks (spec/format.md 5.7): the reference codes, both codecs, the
writer's per-block choice, and archives that use them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind, codec
from ccgformat.archive.layout import NODE_KINDS, PREDICTED_KINDS, block_coding
from ccgformat.archive.verify import verify
from ccgformat.archive.writer import REFERENCE_CODINGS
from ccgformat.errors import CorruptArchiveError
from ccgformat.graph.pool import NodeKind, NodePool
from ccgformat.model import EventBatch, EventKind

from .test_native_codec import build
from .traces import batches, coded_minor, definitions, traces

native = pytest.importorskip("ccgformat._native.codec", reason="the native core is not built")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402


def child_codes(payload: bytes) -> list[int]:
    """The values of a payload's child_id stream."""
    stream = codec.stream_bytes(payload, "child_id")
    values, _ = codec.decode_stream(b"\0" * codec.BLOCK_START.size + stream, codec.BLOCK_START.size)
    return values.tolist()


def with_child_codes(payload: bytes, codes: list[int]) -> bytes:
    """``payload`` with its child_id stream replaced."""
    old = codec.stream_bytes(payload, "child_id")
    at = payload.index(old, codec.BLOCK_START.size)
    return payload[:at] + codec.encode_stream(np.array(codes, dtype=np.uint64)) + payload[at + len(old):]


def hand_pool() -> NodePool:
    """Eight nodes whose codes follow from spec 5.7 by hand (see the test)."""
    pool = NodePool()
    send = pool.add_atomic(EventKind.SEND, (1, 0, 0), (64,))                    # 0
    pool.add_inner(NodeKind.CALL, (5,), (send,), (1, 0, 1))                     # 1
    pool.add_inner(NodeKind.CALL, (5,), (send,), (2, 0, 2))                     # 2
    pool.add_inner(NodeKind.ARTIFICIAL, (), (1, 2, 1), (0, 2, 0, 4, 0, 2, 0))   # 3
    pool.add_inner(NodeKind.CALL, (5,), (send,), (3, 0, 3))                     # 4
    pool.add_inner(NodeKind.CALL, (5,), (1,), (1, 2, 1))                        # 5
    pool.add_inner(NodeKind.CALL, (5,), (send,), (4, 0, 4))                     # 6
    pool.add_inner(NodeKind.ARTIFICIAL, (), (4, 5, 6), (0, 6, 0, 4, 0, 8, 0))   # 7
    return pool


@pytest.mark.parametrize("encoder", [codec.NodeEncoder, native.NativeNodeEncoder])
def test_codes_follow_the_rule_of_the_spec(encoder):
    """Block 0..3: node 2's child 0 is not fresh (node 1 popped it), no list entry, no
    import: 0 + 0 + (2 - 1 - 0) = 1; node 3's child 1 at position 2 (its children 2 and
    1 at positions 1 and 0 are popped): 0 + 0 + (3 - 1 - 1) = 1. Block 4..7 imports 0
    and 1: node 4 references 0 (row 0) = 0; node 5 references 1 in the same context,
    whose list is [0]: 1 + row 1 = 2; node 6 references 0, now second in [1, 0]: 1."""
    pool, e = hand_pool(), encoder()
    ids, predicted = e.encode_both(pool, 0, 4)
    assert child_codes(ids) == [0, 1] and child_codes(predicted) == [1, 1]
    ids, predicted = e.encode_both(pool, 4, 8)
    assert child_codes(ids) == [0, 1, 0] and child_codes(predicted) == [0, 2, 1]
    assert ids.replace(codec.stream_bytes(ids, "child_id"), b"") == \
        predicted.replace(codec.stream_bytes(predicted, "child_id"), b"")


def pool_has_codable_soft(pool, first: int, stop: int) -> bool:
    """Whether nodes first..stop-1 have a soft value and all of them fit the coder (spec 5.9:
    zigzag-encoded below 2**62)."""
    values = [v for node in range(first, stop) for v in pool.soft[node]]
    return bool(values) and all(-(1 << 61) <= v < 1 << 61 for v in values)


def pool_children(pool, first: int, stop: int) -> list[int]:
    return [c for node in range(first, stop) for c in pool.children[node]]


@settings(max_examples=60, deadline=None)
@given(traces(), st.sampled_from([1, 2, 3, 7, 40, 4096]))
def test_both_codecs_give_the_same_bytes_and_read_back_the_children(trace, size):
    pool = build(trace)
    python, c = codec.NodeEncoder(), native.NativeNodeEncoder()
    plain = codec.NodeEncoder()
    coded_python, coded_c = codec.NodeEncoder(), native.NativeNodeEncoder()
    for first in range(0, len(pool), size):
        stop = min(first + size, len(pool))
        pair = python.encode_both(pool, first, stop)
        assert c.encode_both(pool, first, stop) == pair
        assert plain.encode(pool, first, stop) == pair[0]  # the pending stack moves on alike
        payloads = coded_python.encode_all(pool, first, stop)
        assert coded_c.encode_all(pool, first, stop) == payloads and payloads[:2] == pair
        for payload, kind in zip(payloads, (SectionKind.NODES, SectionKind.PREDICTED_NODES, SectionKind.CODED_NODES,
                                            SectionKind.CODED_SOFT_NODES)):
            if payload is None:  # no soft value, or one the coder cannot hold
                assert kind == SectionKind.CODED_SOFT_NODES
                assert not pool_has_codable_soft(pool, first, stop)
                continue
            block = codec.decode_nodes(payload, "x.ccg", 7, **block_coding(kind))
            assert block.children.tolist() == pool_children(pool, first, stop)
            assert np.asarray(block.soft).tolist() == [v for node in range(first, stop) for v in pool.soft[node]]
            twin = native.decode_native(payload, "x.ccg", 7, **block_coding(kind))
            assert np.asarray(twin.children).tolist() == block.children.tolist()
            assert np.array_equal(np.asarray(twin.durations), np.asarray(block.durations))


def test_a_code_that_points_nowhere_is_corruption():
    pool = hand_pool()
    encoder = codec.NodeEncoder()
    encoder.encode_both(pool, 0, 4)
    _, predicted = encoder.encode_both(pool, 4, 8)
    # node 4: list empty, 2 imports, 4 - 4 = 0 nodes of the block below it: codes >= 2 point nowhere
    for codes, reason in (([2, 2, 1], "points outside the block"), ([1, 2, 1], None)):
        damaged = with_child_codes(predicted, codes)
        for decode in (codec.decode_nodes, native.decode_native):
            if reason is None:
                assert decode(damaged, "x.ccg", 9, predicted=True).children.tolist()[0] == 1
            else:
                with pytest.raises(CorruptArchiveError, match=reason) as error:
                    decode(damaged, "x.ccg", 9, predicted=True)
                assert (error.value.path, error.value.offset) == ("x.ccg", 9)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 2**20))
def test_damaged_predicted_payloads_get_one_verdict(tail, code):
    """Random codes in a real block, and random bytes: both decoders agree."""
    pool = hand_pool()
    encoder = codec.NodeEncoder()
    encoder.encode_both(pool, 0, 4)
    _, predicted = encoder.encode_both(pool, 4, 8)
    for raw in (with_child_codes(predicted, [code, code % 7, code % 3]), predicted[:12] + tail):
        try:
            python = codec.decode_nodes(raw, "x.ccg", 7, predicted=True).children.tolist()
        except CorruptArchiveError:
            python = None
        try:
            c = np.asarray(native.decode_native(raw, "x.ccg", 7, predicted=True).children).tolist()
        except CorruptArchiveError:
            c = None
        assert python == c


def node_kinds(path: Path) -> list[int]:
    with ccg.open(path) as archive:
        return [entry.kind for entry in archive.sections if entry.kind in NODE_KINDS]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from([1, 3, 50, 4096]), st.sampled_from(REFERENCE_CODINGS), st.booleans())
def test_every_coding_reads_back_the_trace(tmp_path_factory, trace, nodes_per_block, references, tables):
    path = tmp_path_factory.mktemp("refs") / "t.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                    ccg.Params(branching=4), level=1, nodes_per_block=nodes_per_block, tables=tables,
                    references=references)
    kinds = node_kinds(path)
    if references == "ids" or (references == "auto" and not tables):
        assert set(kinds) == {SectionKind.NODES}
    elif references == "predicted":
        assert set(kinds) <= PREDICTED_KINDS
    with ccg.open(path) as archive:
        bundled = any(entry.kind == SectionKind.DICTIONARY_BUNDLE for entry in archive.directory)
        if len(archive.directory) == 1 and bundled:  # the compact layout (spec 2.7), 2.1 with LZMA2 (2.9)
            assert archive.version == (2, 1 if path.read_bytes()[16] == 3 else 0)
        else:
            assert archive.version[1] == coded_minor(kinds, 5 if bundled else 4 if SectionKind.PREDICTED_NODES in kinds
                                                     else 3)
        for location, events in trace.items():
            rebuilt = [e for batch in archive.location(location).events() for e in batch.rows()]
            assert rebuilt == [e for batch in batches(events) for e in batch.rows()]
    assert verify(path) == []


# ring lossless with every equal leaf call shared (leaf_window 0) and spmd lossy with every
# S-list searched (representatives 0), both as far back as L = 1000 reaches: many far
# references, what the predicted codes are for (by default the builder stores those leaves
# and jittered calls again)
@pytest.mark.parametrize("pattern,params", [("ring", ccg.Params(branching=20, leaf_window=0, search_length=1000)),
                                            ("spmd", ccg.Params(abs_dev=1000, rel_dev=0.05, branching=20,
                                                                representatives=0, search_length=1000))])
def test_auto_is_never_larger_than_either_coding_and_beats_ids(tmp_path, pattern, params):
    definitions_, events = synth.synthesize(3, 20_000, pattern=pattern, jitter=1.0 if pattern == "ring" else 0.2,
                                            seed=3)
    sizes = {}
    for references in ("ids", "predicted", "auto"):
        path = tmp_path / f"{references}.ccg"
        ccg.write_trace(path, definitions_, ((loc, events(loc)) for loc in range(3)), params,
                        nodes_per_block=1024, references=references, gaps="plain")
        sizes[references] = path.stat().st_size
        with ccg.open(path) as archive:
            walked = EventBatch.concat(list(archive.location(2).events()))
        if references == "ids":
            reference_events = walked
        else:
            assert walked.equals(reference_events)
    assert sizes["auto"] <= max(sizes["ids"], sizes["predicted"])
    assert sizes["auto"] <= min(sizes["ids"], sizes["predicted"]) * 1.01
    assert sizes["auto"] < 0.97 * sizes["ids"]
    assert SectionKind.PREDICTED_NODES in node_kinds(tmp_path / "auto.ccg")
