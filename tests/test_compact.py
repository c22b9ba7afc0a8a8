"""The compact layout (spec 2.7, format 2.0): a file that one DICTIONARY_BUNDLE holds
whole is the header, with its CRC32C, and that bundle's frame."""

from __future__ import annotations

import pytest

import ccgformat as ccg
from ccgformat.archive import reader
from ccgformat.archive.bundle import compress_with_dictionary
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.verify import verify
from ccgformat.errors import CcgError, UnsupportedVersionError
from ccgformat.model import Definitions, EventBatch, EventKind as K, Location, Region
from tests.test_bundle import definitions, write

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


@pytest.mark.parametrize("params", [ccg.Params(), ccg.Params(abs_dev=3, rel_dev=0.1, branching=5)])
def test_the_compact_file_reads_as_its_bundle_in_a_block(tmp_path, params):
    compact = write(tmp_path / "c.ccg", bundle=True, compact=True, params=params)
    block = write(tmp_path / "b.ccg", bundle=True, params=params)
    alone = write(tmp_path / "a.ccg", bundle=False, params=params)
    with ccg.open(compact) as archive:
        assert archive.version == (2, 0)
        assert [e.kind for e in archive.directory] == [SectionKind.DICTIONARY_BUNDLE]
        assert archive.definitions == definitions() and archive.params == params
    with ccg.open(block) as archive:
        assert archive.version == (1, 5)
    assert read_everything(compact) == read_everything(block) == read_everything(alone)
    with ccg.open(compact) as c, ccg.open(block) as b:  # the same bundle
        assert c.payload(c.directory[0]) == b.payload(b.directory[0])
    data = compact.read_bytes()
    assert data[16] in (1, 2)  # the dictionary whose frame is the smaller (spec 2.7)
    frames = {number: compress_with_dictionary(bundled(compact), 19, number) for number in (1, 2)}
    assert data[17:] == frames[data[16]] and len(frames[data[16]]) == min(map(len, frames.values()))
    assert len(data) <= block.stat().st_size - BLOCK_LAYOUT_FRAMING + 1  # 1: the dictionary's number
    assert verify(compact) == []


def bundled(path) -> bytes:
    with ccg.open(path) as archive:
        return archive.payload(archive.directory[0])


def test_every_damaged_byte_and_every_cut_is_an_error(tmp_path):
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    data = path.read_bytes()
    damaged = tmp_path / "d.ccg"
    for position in range(len(data)):
        for change in (data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1:], data[:position]):
            damaged.write_bytes(change)
            with pytest.raises(CcgError):
                read_everything(damaged)


def test_a_reader_of_major_version_1_refuses_the_file(tmp_path, monkeypatch):
    path = write(tmp_path / "c.ccg", bundle=True, compact=True)
    monkeypatch.setattr(reader, "COMPACT_MAJOR_VERSION", None)
    with pytest.raises(UnsupportedVersionError, match="format version 2.0"):
        ccg.open(path)


def test_a_file_of_several_blocks_keeps_the_block_layout(tmp_path):
    path = tmp_path / "n.ccg"
    events = EventBatch.from_events([(10 * i, K.ENTER if i % 2 == 0 else K.LEAVE, i // 2) for i in range(6)])
    ccg.write_trace(path, Definitions(regions=[Region(f"r{i}") for i in range(3)], locations=[Location("rank 0")]),
                    [(0, [events])], nodes_per_block=1, aggregation=None)
    with ccg.open(path) as archive:
        assert archive.version[0] == 1 and len(archive.directory) > 1
        assert SectionKind.DICTIONARY_BUNDLE in {e.kind for e in archive.directory}
    assert verify(path) == []
