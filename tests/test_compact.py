"""The compact layout (spec 2.7, formats 2.0 and 2.1): a file that one DICTIONARY_BUNDLE
holds whole is the header, with its CRC32C, and that bundle compressed: a zstd frame with
bundle dictionary 1 or 2, or the primed LZMA2 body of dictionary 3 (spec 2.9)."""

from __future__ import annotations

import hashlib
import re
import subprocess
from importlib.resources import files

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import primed_lzma, reader
from ccgformat.archive.blocks import crc32c
from ccgformat.archive.bundle import compress_with_dictionary, dictionary_bytes
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.verify import verify
from ccgformat.errors import CcgError, CorruptArchiveError, UnsupportedVersionError
from ccgformat.model import Definitions, EventBatch, EventKind as K, Location, Region
from tests.corpus import require_tool
from tests.test_bundle import SPEC, definitions, write

#: what the block layout spends around a DICTIONARY_BUNDLE frame that the compact layout
#: does not (spec 2.2, 2.3): the block's header (12) and CRC (4), the footer block's framing
#: (16) and its one directory entry (48), and the trailer (16)
BLOCK_LAYOUT_FRAMING = 12 + 4 + 16 + 48 + 16


def read_everything(path) -> tuple:
    with ccg.open(path) as archive:
        return (archive.definitions, archive.parameters, dict(archive.roots),
                [archive.checkpoints(SectionKind.SUMMARY, location) for location in archive.locations],
                [[list(batch.rows()) for batch in archive.location(location).events()]
                 for location in archive.locations])


@pytest.fixture(params=["lzma2", "zstd"])
def codec(request, monkeypatch):
    """Either codec: the writer's choice, or zstd as where liblzma cannot make the stream."""
    if request.param == "zstd":
        monkeypatch.setattr(primed_lzma, "compress", lambda raw: None)
    return request.param


@pytest.mark.parametrize("params", [ccg.Params(), ccg.Params(abs_dev=3, rel_dev=0.1, branching=5)])
def test_the_compact_file_reads_as_its_bundle_in_a_block(tmp_path, params, codec):
    compact = write(tmp_path / "c.ccg", bundle=True, compact=True, params=params)
    block = write(tmp_path / "b.ccg", bundle=True, params=params)
    alone = write(tmp_path / "a.ccg", bundle=False, params=params)
    data = compact.read_bytes()
    with ccg.open(compact) as archive:
        # minor version 1 with the LZMA2 body of dictionary 3 (spec 2.7, 2.9)
        assert archive.version == ((2, 1) if data[16] == 3 else (2, 0))
        assert [e.kind for e in archive.directory] == [SectionKind.DICTIONARY_BUNDLE]
        assert archive.definitions == definitions() and archive.params == params
    with ccg.open(block) as archive:
        assert archive.version == (1, 5)
    assert read_everything(compact) == read_everything(block) == read_everything(alone)
    with ccg.open(compact) as c, ccg.open(block) as b:  # the same bundle
        raw = c.payload(c.directory[0])
        assert raw == b.payload(b.directory[0])
    # the smallest body (spec 2.7): here LZMA2 wherever liblzma makes it
    bodies = {number: compress_with_dictionary(raw, 19, number) for number in (1, 2)}
    if codec == "lzma2":
        bodies[3] = primed_lzma.compress(raw)
    assert data[16] == min(bodies, key=lambda n: (len(bodies[n]), n)) == (3 if codec == "lzma2" else data[16])
    assert data[17:] == bodies[data[16]]
    assert len(data) <= block.stat().st_size - BLOCK_LAYOUT_FRAMING + 1  # 1: the dictionary's number
    assert verify(compact) == []


def bundled(path) -> bytes:
    with ccg.open(path) as archive:
        return archive.payload(archive.directory[0])


def test_every_damaged_byte_and_every_cut_is_an_error(tmp_path, codec):
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    data = path.read_bytes()
    damaged = tmp_path / "d.ccg"
    for position in range(len(data)):
        for change in (data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1:], data[:position]):
            damaged.write_bytes(change)
            with pytest.raises(CcgError):
                read_everything(damaged)


def with_crc(data: bytes) -> bytes:
    """A compact file with its CRC made right again (spec 2.7)."""
    return data[:12] + crc32c(data[16:], crc32c(data[:12])).to_bytes(4, "little") + data[16:]


def test_a_damaged_lzma2_body_behind_a_right_crc_is_an_error_or_other_bytes(tmp_path):
    """Past the CRC, every changed byte and every cut of the body either decodes to other
    bytes or is an error naming the file; never a crash or a hang (spec 2.9)."""
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    data = path.read_bytes()
    assert data[16] == 3
    damaged = tmp_path / "d.ccg"
    errors = 0
    for position in range(17, len(data)):
        for change in (data[:position] + bytes([data[position] ^ 0x55]) + data[position + 1:], data[:position]):
            damaged.write_bytes(with_crc(change))
            try:
                read_everything(damaged)
            except CcgError as error:
                assert error.path == str(damaged)
                errors += 1
    assert errors >= len(data) - 17  # every cut at least
    damaged.write_bytes(with_crc(data + b"\0"))
    with pytest.raises(CorruptArchiveError, match="follow the LZMA2 stream's end"):
        ccg.open(damaged)


def test_a_reader_of_major_version_1_refuses_the_file(tmp_path, monkeypatch):
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    monkeypatch.setattr(reader, "COMPACT_MAJOR_VERSION", None)
    with pytest.raises(UnsupportedVersionError, match="format version 2.1"):
        ccg.open(path)


def test_a_reader_of_version_2_0_refuses_the_lzma2_body(tmp_path, monkeypatch):
    """A 2.0 reader knows dictionaries 1 and 2 only (spec 2.7): dictionary 3 means a newer
    reader."""
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    monkeypatch.setattr(reader, "DICTIONARY_FILES", {1: "bundle_dictionary_1.jsonl", 2: "bundle_dictionary_2.bin"})
    with pytest.raises(UnsupportedVersionError, match="bundle dictionary 3 is unknown"):
        ccg.open(path)


def test_the_stream_prefix_is_the_one_the_spec_names_and_this_liblzma_makes_it():
    """Spec 2.9 fixes the prefix by size and SHA-256; this machine's liblzma codes
    dictionary 3 into it, so the writer can write the LZMA2 body here."""
    text = SPEC.joinpath("format.md").read_text()
    section = text[text.index("### 2.9"):text.index("## 3. Versions")]
    size, digest = re.search(r"lzma2`\]\(dictionaries/\)\s+of this\s+specification, ([\d,]+) bytes, SHA-256\s+"
                             r"`([0-9a-f]{64})`", section).groups()
    data = files("ccgformat.archive").joinpath(primed_lzma.PREFIX_FILE).read_bytes()
    assert len(data) == int(size.replace(",", "")) and hashlib.sha256(data).hexdigest() == digest
    assert primed_lzma.code_dictionary(dictionary_bytes(3)) == data == primed_lzma.stream_prefix()


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.binary(max_size=3000), st.lists(st.sampled_from([b'{"name":', b'"regions"', b"\0\1", b"Paje"]),
                                                    max_size=200).map(b"".join)))
def test_lzma2_bodies_decode_as_xz_decodes_them(raw):
    """The reader's decoding against `xz`, the reference tool, on the prefix and the body
    as one raw LZMA2 stream (spec 2.9)."""
    body = primed_lzma.compress(raw)
    assert primed_lzma.decompress(body, "x.ccg", 17) == raw
    decoded = subprocess.run([require_tool("xz"), "--format=raw", "--lzma2=dict=1MiB,lc=3,lp=0,pb=0", "--decompress",
                              "--stdout"], input=primed_lzma.stream_prefix() + body, capture_output=True,
                             check=True).stdout
    assert decoded == dictionary_bytes(3) + raw


def test_an_lzma2_body_coding_too_much_is_refused():
    body = primed_lzma.compress(bytes(primed_lzma.LARGEST_RAW_LENGTH + 1))
    with pytest.raises(CorruptArchiveError, match="more than 1048576 bytes"):
        primed_lzma.decompress(body, "x.ccg", 17)
    assert primed_lzma.decompress(primed_lzma.compress(bytes(primed_lzma.LARGEST_RAW_LENGTH)), "x.ccg", 17) == \
        bytes(primed_lzma.LARGEST_RAW_LENGTH)


def test_a_file_of_several_blocks_keeps_the_block_layout(tmp_path):
    path = tmp_path / "n.ccg"
    events = EventBatch.from_events([(10 * i, K.ENTER if i % 2 == 0 else K.LEAVE, i // 2) for i in range(6)])
    ccg.write_trace(path, Definitions(regions=[Region(f"r{i}") for i in range(3)], locations=[Location("rank 0")]),
                    [(0, [events])], nodes_per_block=1, aggregation=None)
    with ccg.open(path) as archive:
        assert archive.version[0] == 1 and len(archive.directory) > 1
        assert SectionKind.DICTIONARY_BUNDLE in {e.kind for e in archive.directory}
    assert verify(path) == []
