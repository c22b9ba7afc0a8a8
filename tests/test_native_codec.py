"""The node block codec in C against the Python reference: the same payload bytes, the same
decoded values, and the same verdict on damaged payloads (spec/format.md section 5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind, codec
from ccgformat.archive.layout import NODE_KINDS, block_coding
from ccgformat.archive.reader import Archive
from ccgformat.errors import CorruptArchiveError
from ccgformat.graph.builder import Builder
from ccgformat.model import EventBatch, EventKind

from .query_support import CORPUS, converted
from .test_vectors import vector_names
from .traces import batches, definitions, traces

native = pytest.importorskip("ccgformat._native.codec", reason="the native core is not built")
NativeNodeEncoder, decode_native = native.NativeNodeEncoder, native.decode_native
from ccgformat._native.tables import NodeTable  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VECTORS = [ROOT / "spec" / "vectors" / f"{name}.ccg" for name in vector_names()]  # the readable ones


def build_graph(trace):
    builder = Builder(ccg.Params(branching=4), definitions())
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
        builder.end_location(location)
    return builder.finish()


def build(trace):
    return build_graph(trace).pool


def blocks(encoder, source, size, count):
    return [encoder.encode(source, first, min(first + size, count)) for first in range(0, count, size)]


def assert_same_block(python, native_block):
    """Every value a consumer of NodeBlock reads (archive/reader.py, archive/verify.py)."""
    assert native_block.first == python.first and len(native_block) == len(python)
    for name in ("kind", "child_start", "children", "duration_start", "durations", "key_start", "key",
                 "soft_start", "soft"):
        assert np.asarray(getattr(native_block, name)).tolist() == np.asarray(getattr(python, name)).tolist(), name
    assert native_block.events.tolist() == list(python.events)
    assert native_block.total.tolist() == list(python.total)
    assert native_block.child_events[:] == list(python.child_events)
    for i in range(len(python)):
        assert native_block.metric_sums(i) == python.metric_sums(i)
        assert native_block.child_metric_sums(i) == python.child_metric_sums(i)
    for name in ("ids", "events", "total"):
        assert getattr(native_block.imports, name).tolist() == getattr(python.imports, name).tolist()
    for node in python.imports.ids.tolist():
        assert native_block.imports.sums(node) == python.imports.sums(node)


def same_verdict(raw):
    """Both decoders refuse ``raw`` with CorruptArchiveError, or give the same block."""
    try:
        python = codec.decode_nodes(raw, "x.ccg", 7)
    except CorruptArchiveError as error:
        with pytest.raises(CorruptArchiveError) as refused:
            decode_native(raw, "x.ccg", 7)
        assert (refused.value.path, refused.value.offset) == (error.path, error.offset)
        assert refused.value.reason.startswith("node block: ")
        return None
    assert_same_block(python, decode_native(raw, "x.ccg", 7))
    return python


@given(traces(), st.sampled_from([1, 2, 3, 7, 40, 4096]))
def test_encoder_gives_the_reference_bytes_and_the_decoders_agree(trace, size):
    pool = build(trace)
    expected = blocks(codec.NodeEncoder(), pool, size, len(pool))
    assert blocks(NativeNodeEncoder(), pool, size, len(pool)) == expected
    # a table of the whole pool, as a NodeTable, a ccg_nodes * or a pool kept in C: imports
    # come from the table itself
    table = NodeTable.from_pool(pool)
    assert blocks(NativeNodeEncoder(), table, size, len(pool)) == expected
    assert blocks(NativeNodeEncoder(), table.struct, size, len(pool)) == expected
    kept_in_c = type("NativePool", (), {"native_nodes": lambda self: table.struct})()
    assert blocks(NativeNodeEncoder(), kept_in_c, size, len(pool)) == expected
    for raw in expected:
        assert same_verdict(raw) is not None


def test_many_roots_overflow_the_pending_stack_identically():
    """Roots are never referenced: past 4096 of them the stack drops its bottom (spec 5.3)."""
    pool = build({loc: [ccg.Event(loc, EventKind.SEND, 0, 0, 0, 0, loc)] for loc in range(4200)})
    expected = blocks(codec.NodeEncoder(), pool, 1000, len(pool))
    assert blocks(NativeNodeEncoder(), pool, 1000, len(pool)) == expected
    for raw in expected:
        same_verdict(raw)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.name)
def test_every_vector_block_decodes_identically(path):
    archive = Archive(path)
    nodes = [entry for entry in archive.sections if entry.kind in NODE_KINDS]
    assert nodes
    for entry in nodes:
        raw, coding = archive.payload(entry), block_coding(entry.kind)
        assert_same_block(codec.decode_nodes(raw, str(path), entry.offset, **coding),
                          decode_native(raw, str(path), entry.offset, **coding))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_corpus_block_decodes_identically(tmp_path_factory, name):
    """The corpus converted at the default level: coded gaps (and soft values) from real
    traces, in blocks of every fill."""
    archive = converted(tmp_path_factory, name)
    nodes = [entry for entry in archive.sections if entry.kind in NODE_KINDS]
    if not len(archive.pool):
        pytest.skip("a trace without events has no node block")
    assert nodes
    for entry in nodes:
        raw, coding = archive.payload(entry), block_coding(entry.kind)
        assert_same_block(codec.decode_nodes(raw, archive.path, entry.offset, **coding),
                          decode_native(raw, archive.path, entry.offset, **coding))


# --------------------------------------------------------------------------- damaged payloads

SEEDS: list[bytes] = []


def seeds() -> list[bytes]:
    """Payloads with every stream in use: the vectors' blocks and a few built graphs."""
    if not SEEDS:
        for path in VECTORS:
            archive = Archive(path)
            SEEDS.extend(archive.payload(e) for e in archive.sections if e.kind == SectionKind.NODES)
        metric = [ccg.Event(t, EventKind.METRIC, ref=t % 3, value=5 * t - 40) for t in range(12)]
        calls = [ccg.Event(0, EventKind.ENTER, 0), *metric[:4], ccg.Event(19, EventKind.LEAVE, 0)]
        pool = build({0: calls, 1: calls, 2: metric})
        SEEDS.extend(blocks(codec.NodeEncoder(), pool, 5, len(pool)))
    return SEEDS


@st.composite
def damaged(draw):
    raw = bytearray(draw(st.sampled_from(seeds())))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "set", "cut", "insert", "delete"]))
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        if action == "flip" and raw:
            raw[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "set" and raw:
            raw[at] = draw(st.sampled_from([0, 1, 2, 0x7F, 0x80, 0xFF]))
        elif action == "cut":
            del raw[at:]
        elif action == "insert":
            raw[at:at] = draw(st.binary(min_size=1, max_size=9))
        elif action == "delete":
            del raw[at:at + draw(st.integers(1, 9))]
    return bytes(raw)


@settings(max_examples=400)
@given(damaged())
def test_damaged_payloads_get_the_same_verdict(raw):
    same_verdict(raw)


def payload(first, count, **values):
    """A node block payload from stream values (unlisted streams are empty)."""
    parts = [codec.BLOCK_START.pack(first, count)]
    for name in codec.STREAMS:
        column = np.array(values.get(name, []), dtype=np.int64 if name in codec.SIGNED else np.uint64)
        parts.append(codec.encode_stream(codec.zigzag(column) if name in codec.SIGNED else column))
    return b"".join(parts)


def artificial_over_imports(first, imports, import_id=None):
    """One ARTIFICIAL node referencing every imported node once."""
    return payload(first, 1, kind=[1], child_count=[len(imports)], child_fresh=[0] * len(imports),
                   child_id=imports, gaps=[0] * (len(imports) + 1),
                   import_id=codec._deltas(imports) if import_id is None else import_id,
                   import_total=[1] * len(imports), import_events=[1] * len(imports),
                   import_metric_count=[0] * len(imports))


def test_a_valid_handmade_payload_decodes():
    assert same_verdict(artificial_over_imports(10, [2, 5])).total == [2]


@pytest.mark.parametrize("raw, reason", [
    # delta-coded ids that wrap past 2**64 back below ``first``
    (artificial_over_imports(10, [0, 1, 2, 3, 4], import_id=[(1 << 62) - 1] * 4 + [7]), "import ids"),
    (payload(10, 1, kind=[11], key=[0, 0], pending=[(1 << 62) - 1] * 4 + [7]), "pending ids"),
    # the metric ids of one imported node out of order, or repeated
    (payload(10, 1, kind=[1], child_count=[1], child_fresh=[0], child_id=[3], gaps=[0, 0], import_id=[3],
             import_total=[0], import_events=[1], import_metric_count=[2], import_metric_id=[2, 1],
             import_metric_sum=[5, 6]), "not increasing"),
    (payload(10, 1, kind=[1], child_count=[1], child_fresh=[0], child_id=[3], gaps=[0, 0], import_id=[3],
             import_total=[0], import_events=[1], import_metric_count=[2], import_metric_id=[1, 1],
             import_metric_sum=[5, 6]), "not increasing"),
    # a total that wraps past 2**64 back to a positive value
    (payload(10, 1, kind=[1], child_count=[5], child_fresh=[0] * 5, child_id=[3] * 5, gaps=[0] * 6, import_id=[3],
             import_total=[(1 << 62) - 1], import_events=[1], import_metric_count=[0]), "overflows"),
    # an event count just past 2**63 - 1
    (payload(10, 1, kind=[0], key=[0], child_count=[2], child_fresh=[0, 0], child_id=[3, 4], gaps=[0] * 3,
             import_id=[3, 1], import_total=[0, 0], import_events=[(1 << 62) - 1, (1 << 62) - 1],
             import_metric_count=[0, 0]), "overflows"),
    # more metrics x nodes than the reader's bound on their memory
    (payload(0, 5000, kind=[10] * 5000, key=list(range(5000)), soft=[1] * 5000), "limit"),
], ids=["import-wrap", "pending-wrap", "metrics-unsorted", "metrics-repeated", "total-wrap", "events-overflow",
        "metric-cells"])
def test_both_decoders_refuse(raw, reason):
    with pytest.raises(CorruptArchiveError, match=reason):
        codec.decode_nodes(raw, "x.ccg", 0)
    with pytest.raises(CorruptArchiveError):
        decode_native(raw, "x.ccg", 0)


def test_an_event_count_of_exactly_two_to_the_63_minus_one_is_accepted():
    raw = payload(10, 1, kind=[0], key=[0], child_count=[2], child_fresh=[0, 0], child_id=[3, 4], gaps=[0] * 3,
                  import_id=[3, 1], import_total=[0, 0], import_events=[(1 << 62) - 1, (1 << 62) - 2],
                  import_metric_count=[0, 0])
    assert same_verdict(raw).events == [(1 << 63) - 1]


def test_regions_far_below_zero_keep_their_own_gap_groups():
    """Two call shapes whose regions differ by 2**42 once collided in the reference's
    packed shape key; the gaps must stay with their own nodes."""
    regions = [-(1 << 62) - 1, 0, -(1 << 62) + (1 << 42) - 1]
    raw = payload(0, 4, kind=[0, 0, 0, 1], key=regions, child_count=[0, 0, 0, 3], child_fresh=[1, 1, 1],
                  gaps=[10, 20, 30, 0, 0, 0, 0])
    block = same_verdict(raw)
    assert block.durations[:3].tolist() == [10, 20, 30]


def test_metric_presence_does_not_wrap_in_a_doubling_chain():
    """Node k references node k-1 twice: a count of samples would double per level and
    wrap to zero after 64 levels; presence must survive."""
    depth = 70
    kind = [1] * depth
    raw = payload(10, depth, kind=kind, child_count=[2] * depth, child_fresh=[0] * (2 * depth),
                  child_id=[3, 3] + [v for k in range(1, depth) for v in (9 + k, 9 + k)], gaps=[0] * (3 * depth),
                  import_id=[3], import_total=[0], import_events=[0], import_metric_count=[1], import_metric_id=[1],
                  import_metric_sum=[1])
    block = same_verdict(raw)
    assert block.metric_sums(depth - 1) == ((1, (1 << (depth - 1 + 1)) % (1 << 64)),)


# --------------------------------------------------------------------------- the pool's native access

def test_native_blocks_outlive_their_eviction_and_walks_read_through_a_tiny_cache(tmp_path, monkeypatch):
    from ccgformat import backends
    from ccgformat.archive import reader
    monkeypatch.setattr(backends, "ACTIVE", "native")   # native block access, whatever the suite's backend
    path = tmp_path / "a.ccg"
    trace = {loc: [ccg.Event(loc, EventKind.SEND, 0, 0, 0, 0, loc)] for loc in range(40)}
    ccg.write_trace(path, definitions(), ((loc, batches(events, 1)) for loc, events in trace.items()),
                    nodes_per_block=3)
    monkeypatch.setattr(reader, "BLOCK_CACHE_BYTES", 1)  # one block at a time
    with ccg.open(path) as archive:
        pool = archive.pool
        count = len(pool.block_first) - 1
        assert pool.block_first.tolist() == [e.first for e in archive.sections if e.kind == SectionKind.NODES] + [len(pool)]
        taken = [pool.native_block(k) for k in range(count)]   # all but one leave the cache meanwhile
        assert [int(block.nodes.first) for block in taken] == pool.block_first[:-1].tolist()
        with pytest.raises(CorruptArchiveError, match="does not exist"):
            pool.native_block(count)
        for location, events in trace.items():
            walker = archive.location(location)
            assert [walker.event(i) for i in range(len(walker))] == events
            assert list(EventBatch.concat(list(walker.events(batch_size=1))).rows()) == events


def test_the_encoder_refuses_a_table_without_the_children_it_imports():
    calls = [ccg.Event(0, EventKind.ENTER, 1), ccg.Event(5, EventKind.LEAVE, 1)]
    send = ccg.Event(7, EventKind.SEND, 1, 0, 0, 0, 0)
    graph = build_graph({0: calls, 1: calls + [send]})  # location 1's root shares location 0's call node
    pool = graph.pool
    later = 2  # nodes 0, 1: location 0's call and root
    assert graph.roots[0].root == 1 and 0 in pool.children[graph.roots[1].root]
    with pytest.raises(ValueError, match="neither the table"):
        NativeNodeEncoder().encode(NodeTable.from_pool(pool, later, len(pool)), later, len(pool))
    with pytest.raises(ValueError, match="not all in the table"):
        NativeNodeEncoder().encode(NodeTable.from_pool(pool, later, len(pool)), 0, len(pool))



def _damage(arrays, what, node, imported):
    """Break one thing of ``node`` (a call or artificial node) in a table's arrays."""
    if what == "negative gap":
        arrays["durations"][arrays["duration_start"][node]] = -1
    elif what == "has child":
        arrays["children"][arrays["child_start"][node]] = node
    elif what == "durations":
        arrays["duration_start"][node + 1] += 1
    else:
        arrays["events"][imported] = -1


@pytest.mark.parametrize("reason", ["negative gap", "has child", "durations", "negative event count"])
def test_a_refused_block_leaves_the_pending_stack_as_it_was(reason):
    calls = [ccg.Event(0, EventKind.ENTER, 1), ccg.Event(2, EventKind.ENTER, 2), ccg.Event(3, EventKind.LEAVE, 2),
             ccg.Event(5, EventKind.LEAVE, 1)]
    graph = build_graph({0: calls, 1: calls + [ccg.Event(7, EventKind.SEND, 1, 0, 0, 0, 0)]})
    pool = graph.pool
    last = graph.roots[1].root  # location 1's root, which imports its call node from the first block
    imported = min(pool.children[last])
    assert pool.kind[last] <= 1 and pool.kind[imported] <= 1 and imported + 1 < last
    reference = codec.NodeEncoder()
    expected = [reference.encode(pool, 0, imported + 1), reference.encode(pool, imported + 1, len(pool))]
    encoder = NativeNodeEncoder()
    assert encoder.encode(NodeTable.from_pool(pool), 0, imported + 1) == expected[0]
    damaged = NodeTable.from_pool(pool)
    _damage(damaged.arrays, reason, last, imported)
    with pytest.raises(ValueError, match=reason):
        encoder.encode(damaged, imported + 1, len(pool))
    assert encoder.encode(NodeTable.from_pool(pool), imported + 1, len(pool)) == expected[1]
