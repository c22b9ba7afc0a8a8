"""Block compression: the threads never change the bytes, the default levels per section,
and the default file within 2% of level 19's size (corpus and synthetic traces)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import DEFAULT_LEVEL, DEFAULT_NODES_SEARCH, DEFAULT_TABLES_LEVEL, SectionKind, Writer
from ccgformat.archive import compression
from ccgformat.archive.bundle import bundle_dictionary, compress_with_dictionary
from ccgformat.archive.layout import NODE_KINDS, BlockFlags

from .corpus import corpus_path
from .traces import batches, definitions, traces

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402

#: corpus traces of every format, among them those where the level matters most: the Chrome
#: trace's 625 KB of names (all at level 15: +26%) and the OTF trace of 96 processes
CORPUS = [
    ("chrome-json", "otf2_cli_chrome_trace_converter", "tests", "data", "memcpy-host-device.rocprofiler.json.gz"),
    ("otf", "otf-vis", "otf_traces", "out", "out.otf"),
    ("otf", "otf-vis", "otf_traces", "philosophers", "philosophers.otf"),
    ("otf2", "TraceR", "examples", "stencil4d-otf", "traces-32"),
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2-papi"),
    ("paje", "pajeng", "traces", "native_sample.trace"),
    ("paje", "paje", "Traces", "JavaTest.trace"),
    ("epilog", "GENERATED-by-scalasca-1.4-elg_rw", "ref_merged_le.elg"),
]


def write(path: Path, trace, *, threads: int | None, level: int | None = None, nodes_per_block: int = 4096) -> bytes:
    ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                    ccg.Params(branching=3), level=level, nodes_per_block=nodes_per_block, threads=threads)
    return path.read_bytes()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from([1, 2, 7, 4096]), st.sampled_from([None, 1, 19]))
def test_the_number_of_threads_never_changes_the_archive(tmp_path_factory, trace, nodes_per_block, level):
    folder = tmp_path_factory.mktemp("threads")
    written = {threads: write(folder / f"{threads}.ccg", trace, threads=threads, level=level,
                              nodes_per_block=nodes_per_block) for threads in (1, 2, 5)}
    assert written[2] == written[1] and written[5] == written[1]


def stored_blocks(path: Path) -> list[tuple[SectionKind, bytes, bytes]]:
    """(kind, raw payload, stored zstd frame) of every block of a file in the block layout."""
    blocks = []
    with ccg.open(path) as archive:
        assert archive.version[0] == 1
        for entry in archive.directory:
            stored = archive._storage.stored(entry)
            assert entry.flags & BlockFlags.ZSTD
            dictionary = bundle_dictionary(1) if entry.kind == SectionKind.DICTIONARY_BUNDLE else None
            blocks.append((SectionKind(entry.kind),
                           zstandard.ZstdDecompressor(dict_data=dictionary).decompress(bytes(stored)), bytes(stored)))
    return blocks


def zstd(raw: bytes, level: int) -> bytes:
    return zstandard.ZstdCompressor(level=level, write_content_size=True).compress(raw)


def zstd_searching(raw: bytes, level: int, search_log: int, target_length: int) -> bytes:
    """``raw`` compressed with the level's parameters for its size but the given search."""
    params = zstandard.ZstdCompressionParameters.from_level(level, source_size=len(raw), write_content_size=1,
                                                            search_log=search_log, target_length=target_length)
    return zstandard.ZstdCompressor(compression_params=params).compress(raw)


def synthetic(path: Path, level: int | None, jitter: float = 0.2, events: int = 6000, pattern: str = "spmd",
              params: ccg.Params | None = None, bundle: bool = True, gaps: str = "auto",
              compact: bool = True) -> int:
    defs, events_of = synth.synthesize(3, events, jitter=jitter, seed=3, pattern=pattern)
    ccg.write_trace(path, defs, ((loc, events_of(loc)) for loc in range(3)), params or ccg.Params(), level=level,
                    bundle=bundle, gaps=gaps, compact=compact)
    return path.stat().st_size


@pytest.mark.parametrize("pattern, jitter, gaps", [("ring", 0.0, "auto"), ("spmd", 0.2, "plain"),
                                                   ("spmd", 0.2, "auto")])
def test_the_default_compresses_nodes_with_a_shorter_search_the_tables_at_9_and_the_rest_at_19(
        tmp_path, pattern, jitter, gaps):
    # node blocks of their own
    synthetic(tmp_path / "a.ccg", None, jitter, 60_000, pattern, bundle=False, gaps=gaps)
    blocks = stored_blocks(tmp_path / "a.ccg")
    node_kinds = NODE_KINDS
    assert {kind for kind, _, _ in blocks} - node_kinds and {kind for kind, _, _ in blocks} & node_kinds
    assert (SectionKind.AGGREGATE_LEVEL in {kind for kind, _, _ in blocks}) == bool(jitter)  # regular: too small
    for kind, raw, stored in blocks:
        if kind in (SectionKind.AGGREGATE_LEVEL, SectionKind.METRIC_LEVEL):
            assert stored == zstd(raw, DEFAULT_TABLES_LEVEL), kind
            continue
        if kind not in node_kinds:
            assert stored == zstd(raw, DEFAULT_LEVEL), kind
            continue
        fast = zstd_searching(raw, DEFAULT_LEVEL, *DEFAULT_NODES_SEARCH)
        strong = zstd(raw, DEFAULT_LEVEL) if len(fast) * compression.STRONG_RATIO < len(raw) else fast
        assert stored == min(fast, strong, key=len)
    # the regular trace has blocks of both kinds, the jittered one has blocks the search
    # changes, or (by default) coded gaps
    if gaps == "auto" and jitter:
        assert any(kind in (SectionKind.CODED_NODES, SectionKind.CODED_SOFT_NODES) for kind, _, _ in blocks)
    else:
        assert any(stored != zstd_searching(raw, DEFAULT_LEVEL, *DEFAULT_NODES_SEARCH) if not jitter
                   else stored != zstd(raw, DEFAULT_LEVEL) for kind, raw, stored in blocks if kind in node_kinds)
    with ccg.open(tmp_path / "a.ccg") as archive:
        assert archive.parameters["zstd_level"] == DEFAULT_LEVEL


def test_an_explicit_level_compresses_every_block_at_it(tmp_path):
    # regular: the default would compress blocks at 19; the block layout, whose bundle is
    # a zstd frame (a compact file's may be LZMA2, spec 2.9)
    synthetic(tmp_path / "a.ccg", 4, 0.0, compact=False)
    blocks = stored_blocks(tmp_path / "a.ccg")
    assert SectionKind.DICTIONARY_BUNDLE in {kind for kind, _, _ in blocks}
    assert all(stored == (compress_with_dictionary(raw, 4, 1) if kind == SectionKind.DICTIONARY_BUNDLE
                          else zstd(raw, 4)) for kind, raw, stored in blocks)
    with ccg.open(tmp_path / "a.ccg") as archive:
        assert archive.parameters["zstd_level"] == 4


LOSSY = ccg.Params(abs_dev=1000, rel_dev=0.05)


@pytest.mark.parametrize("pattern, jitter, params", [("spmd", 0.0, None), ("spmd", 0.2, None), ("ring", 0.0, None),
                                                     ("ring", 1.0, None), ("spmd", 0.2, LOSSY), ("ring", 1.0, LOSSY)])
def test_the_default_is_within_2_percent_of_level_19_on_synthetic_traces(tmp_path, pattern, jitter, params):
    default = synthetic(tmp_path / "default.ccg", None, jitter, 60_000, pattern, params)
    assert default <= 1.02 * synthetic(tmp_path / "19.ccg", 19, jitter, 60_000, pattern, params)


@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_the_default_is_within_2_percent_of_level_19_on_the_corpus(tmp_path, parts):
    source = corpus_path(*parts)
    default = ccg.convert(source, tmp_path / "default.ccg").file_bytes
    assert default <= 1.02 * ccg.convert(source, tmp_path / "19.ccg", level=19).file_bytes


def test_a_failing_worker_fails_the_write_and_leaves_no_file(tmp_path, monkeypatch):
    real = compression.compress

    def failing(raw: bytes, level: int, search: tuple[int, int] | None = None) -> bytes:
        if search == DEFAULT_NODES_SEARCH or level == DEFAULT_LEVEL:  # CODED_NODES: DEFAULT_LEVEL's full search
            raise MemoryError("compressing a NODES block")
        return real(raw, level, search)

    monkeypatch.setattr(compression, "compress", failing)
    defs, events_of = synth.synthesize(2, 3000, jitter=0.2, seed=1)
    with pytest.raises(MemoryError, match="NODES"):
        ccg.write_trace(tmp_path / "x.ccg", defs, ((loc, events_of(loc)) for loc in range(2)),
                        nodes_per_block=16, threads=2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("threads", [0, -1])
def test_threads_must_be_positive(tmp_path, threads):
    with pytest.raises(ValueError, match="threads"):
        Writer(tmp_path / "x.ccg", threads=threads)
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 40), st.integers(0, 4000))
def test_a_recompressed_payload_stays_within_its_bound(chunk, repeat, before):
    """A payload compressed again (`compression.Recompressed`: a merge's moved node block)
    is the fast level's frame when that is within 1% of the bytes it was stored in before,
    else the given level's - never larger than the larger of the two bounds."""
    raw = chunk * repeat
    level = compression.Level(DEFAULT_LEVEL, DEFAULT_NODES_SEARCH)
    quick = zstandard.ZstdCompressor(level=compression.NEAR_LEVEL).compress(raw)
    strong = level.compress(raw)
    frame = compression.Recompressed(level, before).compress(raw)
    assert zstandard.ZstdDecompressor().decompress(frame) == raw
    assert frame == (quick if len(quick) <= before * (1 + compression.NEAR_SLACK) else strong)
    assert len(frame) <= max(before * (1 + compression.NEAR_SLACK), len(strong))


@pytest.mark.parametrize("pattern, locations, per_location", [("ring", 4, 40_000), ("ring", 400, 40)])
def test_a_merge_keeps_each_moved_block_within_1_percent_of_its_source(tmp_path, monkeypatch, pattern, locations,
                                                                      per_location):
    """The blocks a merge moves are compressed again within 1% of their source's frames or
    at the writer's level: a jittered trace (most blocks at the fast level) and one of
    many short locations (whose blocks need level 19's long matches) both merge to within
    1% of their parts' node bytes."""
    from ccgformat.archive.merge import plan as plan_module
    monkeypatch.setattr(plan_module, "COPY_NODES", 0)
    definitions, events = synth.synthesize(2 * locations, per_location, jitter=0.3, seed=3, pattern=pattern)
    parts = []
    for part in range(2):
        parts.append(tmp_path / f"part{part}.ccg")
        ccg.write_trace(parts[-1], definitions, ((location, events(location))
                                                 for location in range(part * locations, (part + 1) * locations)))
    assert ccg.merge(parts, tmp_path / "merged.ccg").way == "blocks"

    def node_bytes(path):
        with ccg.open(path) as archive:
            return [entry.length for entry in archive.sections if entry.kind in NODE_KINDS]

    sources, merged = node_bytes(parts[0]) + node_bytes(parts[1]), node_bytes(tmp_path / "merged.ccg")
    assert len(merged) == len(sources)
    assert sum(merged) <= 1.01 * sum(sources)
