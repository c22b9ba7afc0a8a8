"""Coded soft values, CODED_SOFT_NODES blocks (spec/format.md 5.9): the rows of the soft
contexts as the spec defines them; archives whose counters and message sizes vary are
written with coded soft values, read back the trace under both backends and are
byte-identical across them; soft values the coder cannot hold keep CODED_NODES blocks;
damaged or misplaced coded soft streams are refused alike by both decoders; and on a
counter's jittered increments the coded stream beats zstd."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind, codec
from ccgformat.archive.blocks import compress
from ccgformat.archive.gapcoder import code_gaps
from ccgformat.archive.layout import NODE_KINDS, block_coding
from ccgformat.archive.verify import verify
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Event, EventKind

from .test_backend_differential import backend
from .traces import batches, definitions

try:
    from ccgformat._native import load
    load()
    from ccgformat._native.codec import NativeNodeEncoder, decode_native
except ImportError as error:  # pragma: no cover - a machine without a C compiler
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

K = EventKind


def test_soft_rows_follow_the_contexts_in_order_of_first_appearance():
    """Worked from the definition of 5.9: nodes M0(5), S(size 8 to peer 1, tag 2), M1(-3),
    M0(7), C(4, 9), S(16 to peer 1, tag 3), S(3 to peer 2, tag 2) hold soft stream
    positions 0, 1, 2, 3, 4-5, 6, 7; the contexts (METRIC, 0), (SEND, peer 1: both tags),
    (METRIC, 1), (COLL_END, column 0), (COLL_END, column 1), (SEND, peer 2) first appear in
    that order."""
    kind = np.array([K.METRIC, K.SEND, K.METRIC, K.METRIC, K.COLL_END, K.SEND, K.SEND], dtype=np.uint8)
    keys = [[0], [1, 0, 2], [1], [0], [0, 0, 0], [1, 0, 3], [2, 0, 2]]
    softs = [1, 1, 1, 1, 2, 1, 1]
    key_start = np.concatenate(([0], np.cumsum([len(k) for k in keys])))
    soft_start = np.concatenate(([0], np.cumsum(softs)))
    order, rows = codec.soft_rows(kind, key_start, np.array(sum(keys, []), dtype=np.int64), soft_start)
    assert order.tolist() == [0, 3, 1, 6, 2, 4, 5, 7]
    assert rows == [2, 2, 1, 1, 1, 1]


def counters(seed: int, iterations: int = 300, sigma: float = 0.3) -> dict[int, list[Event]]:
    """Two locations sampling metric 0 (a counter with log-normal increments) and metric 1
    (a small signed value) in every iteration of a loop, and sending messages of varying
    size to each other."""
    rng = np.random.default_rng(seed)
    trace = {}
    for location in (0, 1):
        t, counter, events = 0, 0, [Event(0, K.ENTER, 0)]
        for i in range(iterations):
            counter += int(2_000_000 * np.exp(sigma * rng.standard_normal()))
            t += int(rng.integers(100, 200))
            events += [Event(t, K.ENTER, 1), Event(t + 50, K.METRIC, 0, value=counter),
                       Event(t + 50, K.METRIC, 1, value=int(rng.integers(-40, 40))),
                       Event(t + 60, K.SEND, 1 - location, 0, i % 4, size=int(rng.integers(1, 1 << 16))),
                       Event(t + 90, K.LEAVE, 1)]
            t += 90
        trace[location] = events + [Event(t + 1, K.LEAVE, 0)]
    return trace


def node_blocks(path) -> list[tuple[SectionKind, bytes]]:
    with ccg.open(path) as archive:
        return [(entry.kind, archive.payload(entry)) for entry in archive.directory if entry.kind in NODE_KINDS]


@pytest.mark.parametrize("seed", [1, 2])
def test_varying_soft_values_are_coded_and_read_back_on_both_backends(tmp_path, seed):
    trace = counters(seed)
    written = {}
    for name in ("python", "native"):
        with backend(name):
            path = tmp_path / f"{name}.ccg"
            ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                            ccg.Params(), level=3, nodes_per_block=256)
            written[name] = path.read_bytes()
    assert written["python"] == written["native"]
    kinds = [kind for kind, _ in node_blocks(path)]
    assert kinds.count(SectionKind.CODED_SOFT_NODES) >= len(kinds) // 2
    for name in ("python", "native"):
        with backend(name), ccg.open(path) as archive:
            assert archive.version == (1, 7)
            for location, events in trace.items():
                assert [e for batch in archive.location(location).events() for e in batch.rows()] == events
    assert verify(path) == []


def test_soft_values_beyond_the_coder_keep_coded_nodes(tmp_path):
    """A double metric's bit pattern differences reach 2**63: such a block is not coded
    (5.9), and reads back."""
    events = [Event(0, K.ENTER, 0)]
    for i in range(200):
        bits = np.float64(-1.5 ** (i % 7)).view(np.int64).item()
        events += [Event(10 * i + 1, K.METRIC, 2, value=bits), Event(10 * i + 2 + i % 5, K.METRIC, 2, value=i)]
    trace = {0: events + [Event(5_000, K.LEAVE, 0)]}
    path = tmp_path / "t.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(e)) for loc, e in trace.items()), ccg.Params(), level=3,
                    nodes_per_block=64, gaps="coded")
    assert SectionKind.CODED_SOFT_NODES not in {kind for kind, _ in node_blocks(path)}
    with ccg.open(path) as archive:
        assert [e for batch in archive.location(0).events() for e in batch.rows()] == trace[0]


def payloads(seed: int) -> tuple[bytes, bytes, bytes, bytes | None]:
    """The NODES, PREDICTED_NODES, CODED_NODES and CODED_SOFT_NODES payloads of the graph
    of a few iterations of `counters`."""
    builder = ccg.Builder(ccg.Params(branching=4), definitions())
    for location, events in counters(seed, iterations=12).items():
        for batch in batches(events):
            builder.add(location, batch)
    pool = builder.finish().pool
    return NativeNodeEncoder().encode_all(pool, 0, len(pool))


def coded_soft_payload(seed: int) -> bytes:
    payload = payloads(seed)[3]
    assert payload is not None
    return payload


def decoded_soft(decode, raw: bytes, kind: SectionKind) -> list[int] | None:
    try:
        return np.asarray(decode(raw, "x.ccg", 7, **block_coding(kind)).soft).tolist()
    except CorruptArchiveError:
        return None


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), st.data())
def test_damaged_coded_soft_values_are_refused_alike(seed, data):
    """Both decoders accept exactly the same damaged payloads, with the same values."""
    raw = bytearray(coded_soft_payload(seed))
    start, end = codec._stream_span(bytes(raw), "soft")
    for _ in range(data.draw(st.integers(1, 3))):  # mostly inside the coded soft values
        at = data.draw(st.one_of(st.integers(start, end - 1), st.integers(0, len(raw) - 1)))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    python = decoded_soft(codec.decode_nodes, bytes(raw), SectionKind.CODED_SOFT_NODES)
    assert python == decoded_soft(decode_native, bytes(raw), SectionKind.CODED_SOFT_NODES)


def test_coded_soft_values_only_in_coded_soft_blocks():
    """Coded soft values in a CODED_NODES block are corrupt, and so are plain ones in a
    CODED_SOFT_NODES block; bytes to spare or missing in the coded stream too."""
    raw = coded_soft_payload(0)
    for decode in (codec.decode_nodes, decode_native):
        assert decoded_soft(decode, raw, SectionKind.CODED_SOFT_NODES) is not None
        with pytest.raises(CorruptArchiveError, match="width 0"):
            decode(raw, "x.ccg", 7, **block_coding(SectionKind.CODED_NODES))
    start, end = codec._stream_span(raw, "soft")
    length = codec.CODED_LENGTH.unpack_from(raw, start + codec.STREAM_HEADER.size)[0]
    data = raw[start + 9:start + 9 + length]
    for changed in (data[:-1], data + b"\0"):
        bad = raw[:start + 5] + codec.CODED_LENGTH.pack(len(changed)) + changed + raw[end:]
        for decode in (codec.decode_nodes, decode_native):
            assert decoded_soft(decode, bad, SectionKind.CODED_SOFT_NODES) is None


def test_plain_soft_values_in_a_coded_soft_block_are_refused():
    coded = payloads(3)[2]
    for decode in (codec.decode_nodes, decode_native):
        with pytest.raises(CorruptArchiveError, match="soft of a coded block are not coded"):
            decode(coded, "x.ccg", 7, **block_coding(SectionKind.CODED_SOFT_NODES))


def test_jittered_counter_increments_code_smaller_than_zstd():
    """A counter's log-normal increments (sigma 0.25): coded, within 5% of their
    information; zstd at level 19 of their byte planes needs at least 4% more."""
    rng = np.random.default_rng(4)
    increments = np.rint(2_000_000 * np.exp(0.25 * rng.standard_normal(20_000))).astype(np.int64)
    zigzag = codec.zigzag(increments)
    coded = len(code_gaps(zigzag, [len(zigzag)]))
    information = len(increments) * (np.log2(2_000_000) + 0.5 * np.log2(2 * np.pi * np.e * 0.25 ** 2)) / 8
    assert information <= coded <= 1.05 * information
    assert len(compress(codec.encode_stream(zigzag), 19)) >= 1.04 * coded
