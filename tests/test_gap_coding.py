"""Coded gaps streams, CODED_NODES blocks (spec/format.md 5.8): the range coder in Python
and C gives the same bytes and decodes back; archives written with every gap coding read
back the trace under both backends, byte-identical across them; damaged coded streams are
refused alike by both decoders; and on jittered gaps, exact or rounded onto the lossy
grid, the coded stream comes near the entropy and beats the byte planes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind, codec
from ccgformat.archive.blocks import compress
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.archive.gapcoder import code_gaps, decode_gaps
from ccgformat.archive.writer import GAP_CODINGS, REFERENCE_CODINGS, save_graph
from ccgformat.errors import CorruptArchiveError

from .test_backend_differential import backend
from .traces import batches, coded_minor, definitions, traces

try:
    from ccgformat._native import load
    load()
    from ccgformat._native.codec import code_gaps_native, decode_gaps_native, decode_native
except ImportError as error:  # pragma: no cover - a machine without a C compiler
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)



@st.composite
def rows_of_values(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    """Gap-like values (small, jittered around a few bases, or anything below 2**62) cut
    into rows."""
    base = draw(st.sampled_from([0, 1, 7, 300, 10_000, 1 << 40]))
    values = draw(st.lists(st.one_of(st.integers(0, (1 << 62) - 1), st.integers(base, base + 600)), max_size=300))
    cuts = sorted(draw(st.lists(st.integers(0, len(values)), max_size=6)))
    rows = [b - a for a, b in zip([0] + cuts, cuts + [len(values)])]
    return np.array(values, dtype=np.uint64), rows


@settings(max_examples=200, deadline=None)
@given(rows_of_values())
def test_python_and_c_code_the_same_bytes_and_decode_back(case):
    values, rows = case
    coded = code_gaps(values, rows)
    assert code_gaps_native(values, np.array(rows, dtype=np.int64)) == coded
    assert decode_gaps(coded, rows, len(values)).tolist() == values.tolist()


@st.composite
def long_rows(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    """Rows long enough for every probability to reach its steady rate, of values of one
    or a few bit lengths (each length from 0 to 62: bit trees of 1 to 4 levels for the
    top bits, 0 to 57 low bits), with empty rows and rows of one value between them."""
    rows, values = [], []
    for _ in range(draw(st.integers(1, 4))):
        lengths = draw(st.lists(st.integers(0, 62), min_size=1, max_size=3))
        count = draw(st.sampled_from([0, 1, 40, 700]))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        length = rng.choice(lengths, count)
        top = np.where(length > 0, np.left_shift(np.uint64(1), np.maximum(length, 1).astype(np.uint64) - np.uint64(1)), 0)
        low = rng.integers(0, 1 << 62, count, dtype=np.uint64) & np.where(top > 0, top.astype(np.uint64) - np.uint64(1), 0)
        values.extend((top.astype(np.uint64) | low).tolist())
        rows.append(count)
    return np.array(values, dtype=np.uint64), rows


@settings(max_examples=60, deadline=None)
@given(st.one_of(rows_of_values(), long_rows()))
def test_c_decodes_what_the_reference_decodes(case):
    values, rows = case
    coded = code_gaps(values, rows)
    assert decode_gaps_native(coded, np.array(rows, dtype=np.int64), len(values)).tolist() == values.tolist()


@settings(max_examples=200, deadline=None)
@given(st.one_of(rows_of_values(), long_rows()), st.data())
def test_c_refuses_damaged_gap_streams_as_the_reference_does(case, data):
    values, rows = case
    raw = bytearray(code_gaps(values, rows))
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    try:
        reference = decode_gaps(bytes(raw), rows, len(values)).tolist()
    except ValueError:
        reference = None
    native = decode_gaps_native(bytes(raw), np.array(rows, dtype=np.int64), len(values))
    assert (native if native is None else native.tolist()) == reference


def test_uniform_values_cost_their_entropy():
    """i.i.d. uniform 12-bit values carry 12 bits each: the coder must come within 3% of
    that (and cannot go below it); byte planes need 16 bits before zstd."""
    values = np.random.default_rng(5).integers(0, 1 << 12, 20_000).astype(np.uint64)
    coded = code_gaps(values, [len(values)])
    assert 12 * len(values) / 8 <= len(coded) <= 1.03 * 12 * len(values) / 8


def test_jittered_gaps_code_near_their_entropy():
    """80 rows of 150 log-normal gaps (sigma 0.2, as tools/synth.py's jittered trace)
    around bases from 200 to 100,000: a gap carries about log2(base 0.2 sqrt(2 pi e)) bits
    (its differential entropy; the bins are 1 wide); the coded rows stay within 8% of
    that (the noise in the low bits costs a little over a bit each: their probabilities
    keep moving) and below zstd 19 of the byte planes."""
    rng = np.random.default_rng(3)
    bases = np.exp(rng.uniform(np.log(200), np.log(100_000), 80))
    rows = [np.rint(base * np.exp(0.2 * rng.standard_normal(150))).astype(np.uint64) for base in bases]
    values = np.concatenate(rows)
    entropy = sum(150 * np.log2(base * 0.2 * np.sqrt(2 * np.pi * np.e)) for base in bases) / 8
    coded = len(code_gaps(values, [150] * len(rows)))
    assert coded <= 1.08 * entropy
    assert coded < 0.95 * len(compress(codec.encode_stream(values), 19))


def test_gaps_rounded_onto_the_lossy_grid_code_near_their_entropy():
    """The gaps of a lossy file: log-normal jitter (sigma 0.2) rounded onto the grid of
    `rounding.round_to_grid` for rel 0.05, 20 rows of 2,000 (as in a node block) around
    bases from 200 to 10^7. Their trailing zeros are learnt by the low bits' probabilities: the coded rows stay
    within 15% of the values' order-0 entropy per row (the coder learns each distribution
    as it goes) and take at most 0.8 of zstd 19 of the byte planes."""
    from ccgformat.graph.rounding import grid, round_to_grid
    points = grid(round(0.05 * 2**32), 2**62)  # no absolute bound
    rng = np.random.default_rng(4)
    rows = []
    for base in np.exp(rng.uniform(np.log(200), np.log(1e7), 20)):
        exact = np.rint(base * np.exp(0.2 * rng.standard_normal(2000))).astype(np.int64)
        rows.append(np.array([round_to_grid(int(x), int(x * 0.95), int(x * 1.05), points) for x in exact],
                             dtype=np.uint64))
    entropy = 0.0
    for row in rows:
        counts = np.unique(row, return_counts=True)[1]
        entropy -= float((counts * np.log2(counts / len(row))).sum()) / 8
    values = np.concatenate(rows)
    coded = len(code_gaps(values, [2000] * len(rows)))
    assert coded <= 1.15 * entropy
    assert coded <= 0.8 * len(compress(codec.encode_stream(values), 19))


def build(trace) -> ccg.Graph:
    builder = ccg.Builder(ccg.Params(branching=4), definitions())
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    return builder.finish()


def coded_blocks(path: Path) -> list[tuple[SectionKind, bool]]:
    """Per node block its kind and whether its gaps are coded."""
    with ccg.open(path) as archive:
        return [(entry.kind, codec.stream_bytes(archive.payload(entry), "gaps")[0] == codec.CODED)
                for entry in archive.directory if entry.kind in NODE_KINDS]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from([1, 3, 50, 4096]), st.sampled_from(GAP_CODINGS), st.sampled_from(REFERENCE_CODINGS))
def test_every_gap_coding_reads_back_the_trace_on_both_backends(tmp_path_factory, trace, nodes_per_block, gaps,
                                                                references):
    assume(not (gaps == "coded" and references == "ids"))
    folder = tmp_path_factory.mktemp("gaps")
    graph = build(trace)
    written = {}
    for name in ("python", "native"):
        with backend(name):
            path = folder / f"{name}.ccg"
            save_graph(graph, path, level=1, nodes_per_block=nodes_per_block, references=references, gaps=gaps)
            written[name] = path.read_bytes()
    assert written["python"] == written["native"]
    blocks = coded_blocks(path)
    if gaps != "auto" or references == "ids":
        assert {coded for _, coded in blocks} == {gaps == "coded"}
    assert all((kind in (SectionKind.CODED_NODES, SectionKind.CODED_SOFT_NODES)) == coded for kind, coded in blocks)
    for name in ("python", "native"):
        with backend(name), ccg.open(path) as archive:
            assert archive.version[1] == coded_minor((kind for kind, _ in blocks), 5)
            for location, events in trace.items():
                rebuilt = [e for batch in archive.location(location).events() for e in batch.rows()]
                assert rebuilt == [e for batch in batches(events) for e in batch.rows()]


def coded_payload(seed: int) -> bytes:
    """A CODED_NODES payload of a small random-ish graph."""
    rng = np.random.default_rng(seed)
    events = []
    t = 0
    for _ in range(40):
        region = int(rng.integers(0, 3))
        t += int(rng.integers(1, 500))
        events.append((t, ccg.model.EventKind.ENTER, region))
        t += int(rng.integers(1, 500))
        events.append((t, ccg.model.EventKind.LEAVE, region))
    graph = build({0: events})
    return codec.NodeEncoder().encode_all(graph.pool, 0, len(graph.pool))[2]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), st.data())
def test_damaged_coded_gaps_are_refused_alike(seed, data):
    """Both decoders accept exactly the same damaged payloads, with the same values."""
    raw = bytearray(coded_payload(seed))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    try:
        python = codec.decode_nodes(bytes(raw), "x.ccg", 7, coded=True).durations.tolist()
    except CorruptArchiveError:
        python = None
    try:
        native = list(decode_native(bytes(raw), "x.ccg", 7, coded=True).durations)
    except CorruptArchiveError:
        native = None
    assert (python is None) == (native is None)
    if python is not None:
        assert python == native


@pytest.mark.parametrize("predicted", [False, True])
def test_coded_gaps_only_in_coded_blocks(predicted):
    """Coded gaps in a NODES or PREDICTED_NODES block are corrupt (their readers could not
    tell them from damage), and so are plain gaps in a CODED_NODES block: both decoders
    refuse them."""
    raw = coded_payload(0)
    with pytest.raises(CorruptArchiveError, match="width 0"):
        codec.decode_nodes(raw, "x.ccg", 7, predicted=predicted)
    with pytest.raises(CorruptArchiveError, match="width 0"):
        decode_native(raw, "x.ccg", 7, predicted=predicted)
    graph = build({0: [(10, ccg.model.EventKind.ENTER, 0), (25, ccg.model.EventKind.LEAVE, 0)]})
    plain = codec.NodeEncoder().encode_both(graph.pool, 0, len(graph.pool))[1]
    for decode in (codec.decode_nodes, decode_native):
        with pytest.raises(CorruptArchiveError, match="not coded"):
            decode(plain, "x.ccg", 7, coded=True)


def test_a_coded_stream_with_bytes_to_spare_or_missing_is_corrupt():
    raw = coded_payload(0)
    start = codec._stream_span(raw, "gaps")[0]
    length = codec.CODED_LENGTH.unpack_from(raw, start + codec.STREAM_HEADER.size)[0]
    assert codec.decode_nodes(raw, "x.ccg", 7, coded=True).durations.tolist() == \
        list(decode_native(raw, "x.ccg", 7, coded=True).durations)
    for delta in (-1, 1):
        data = raw[start + 9:start + 9 + length]
        changed = data[:-1] if delta < 0 else data + b"\0"
        bad = (raw[:start + 5] + codec.CODED_LENGTH.pack(len(changed)) + changed + raw[start + 9 + length:])
        for decode in (lambda b: codec.decode_nodes(b, "x.ccg", 7, coded=True),
                       lambda b: decode_native(b, "x.ccg", 7, coded=True)):
            with pytest.raises(CorruptArchiveError):
                decode(bad)
