"""BUNDLE and DICTIONARY_BUNDLE blocks (spec 2.5, 2.6) and the default values their
DEFINITIONS and PARAMETERS members leave out (spec 4.1, 4.2)."""

from __future__ import annotations

import hashlib
import json
import re
from importlib.resources import files
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

import ccgformat as ccg
from ccgformat.archive import reader
from ccgformat.archive.bundle import (DICTIONARY_FILES, bundle_dictionary, decode_bundle, dictionary_bytes,
                                     encode_bundle)
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.sections import DirectoryEntry
from ccgformat.archive.verify import verify
from ccgformat.errors import CorruptArchiveError, UnsupportedVersionError
from ccgformat.model import (Communicator, Definitions, EventBatch, EventKind as K, Location, Metric, Region,
                             SystemTreeNode)

SPEC = Path(__file__).resolve().parent.parent / "spec"
VECTORS = SPEC / "vectors"


def definitions() -> Definitions:
    """Records with default and other values in every field that has a default."""
    return Definitions(
        regions=[Region("main"), Region("MPI_Send", "function", "mpi", "MPI"), Region("loop", "loop", "user", "")],
        system_tree=[SystemTreeNode("node", "node"), SystemTreeNode("proc", "process", 0)],
        locations=[Location("rank 0"), Location("thread 1", "thread", 1)],
        communicators=[Communicator("WORLD", (0, 1)), Communicator("none")],
        metrics=[Metric("cycles"), Metric("energy", "J", "absolute", "double")],
        strings=["a"], timer_resolution=1000, clock_offset=-5, provenance={"source_format": "test"})


def write(path, *, bundle: bool, params: ccg.Params = ccg.Params(), compact: bool = False):
    """The test trace; with ``bundle``, in a DICTIONARY_BUNDLE block (``compact``: in the
    compact layout, spec 2.7)."""
    events = EventBatch.from_events([(10, K.ENTER, 0), (20, K.ENTER, 1), (25, K.SEND, 1, 0, 0, 0, 8),
                                     (30, K.LEAVE, 1), (90, K.LEAVE, 0)])
    ccg.write_trace(path, definitions(), [(0, [events])], params, bundle=bundle, compact=compact,
                    checkpoint_interval=2, aggregation=None,
                    index="always")  # without the tables (1.4), the file without a bundle is 1.3
    return path


@pytest.mark.parametrize("params", [ccg.Params(), ccg.Params(abs_dev=3, rel_dev=0.1, branching=5)])
def test_a_bundled_archive_reads_as_the_blocks_alone(tmp_path, params):
    bundled, alone = write(tmp_path / "b.ccg", bundle=True, params=params), \
        write(tmp_path / "a.ccg", bundle=False, params=params)
    with ccg.open(bundled) as b, ccg.open(alone) as a:
        assert [e.kind for e in b.directory] == [SectionKind.DICTIONARY_BUNDLE]
        assert b.version == (1, 5) and a.version == (1, 3)
        assert b.definitions == a.definitions == definitions()
        assert b.parameters == a.parameters and b.params == a.params == params
        assert b.roots == a.roots
        assert b.checkpoints(SectionKind.SUMMARY, 0) == a.checkpoints(SectionKind.SUMMARY, 0)
        assert len(b.checkpoints(SectionKind.SUMMARY, 0)) > 1
        assert [list(x.rows()) for x in b.location(0).events()] == [list(x.rows()) for x in a.location(0).events()]
    assert bundled.stat().st_size < alone.stat().st_size
    assert verify(bundled) == []


def test_members_leave_the_defaults_out(tmp_path):
    path = write(tmp_path / "b.ccg", bundle=True)
    with ccg.open(path) as archive:
        members = {e.kind: json.loads(archive.payload(e)) for e in archive.sections
                   if e.kind in (SectionKind.DEFINITIONS, SectionKind.PARAMETERS)}
    definitions_, parameters = members[SectionKind.DEFINITIONS], members[SectionKind.PARAMETERS]
    assert definitions_["regions"][0] == {"name": "main"}
    assert definitions_["regions"][2] == {"name": "loop", "role": "loop"}
    assert definitions_["locations"] == [{"name": "rank 0"}, {"name": "thread 1", "kind": "thread", "parent": 1}]
    assert definitions_["communicators"][1] == {"name": "none"} and "system_tree" in definitions_
    assert "strings" in definitions_ and "clock_offset" in definitions_ and "metrics" in definitions_
    assert definitions_["metrics"][0] == {"name": "cycles"}
    # the defaults and the definitions' provenance left out; checkpoint_interval 2 is not the default; leaf_window is always written;
    # search_length 16, the writer's default, is not the one a reader fills in (1000, spec 4.2)
    assert set(parameters) == {"converter", "metrics", "checkpoint_interval", "leaf_window", "search_length"}
    assert parameters["search_length"] == ccg.Params().search_length == 16


@pytest.mark.parametrize("path", [VECTORS / "1.4" / "bundle.ccg", None])
def test_a_reader_without_bundles_refuses_the_file(tmp_path, monkeypatch, path):
    """Spec 2.5, 2.6: BUNDLE and DICTIONARY_BUNDLE are MUST_UNDERSTAND, so a 1.3 reader
    refuses a file with a BUNDLE, and a 1.4 reader one with a DICTIONARY_BUNDLE, instead of
    missing its sections or failing on the frame."""
    kind = SectionKind.BUNDLE if path else SectionKind.DICTIONARY_BUNDLE
    path = path or write(tmp_path / "b.ccg", bundle=True)
    monkeypatch.setattr(reader, "_KNOWN_KINDS", reader._KNOWN_KINDS - {int(kind)})
    with pytest.raises(UnsupportedVersionError, match=f"kind {int(kind)}"):
        ccg.open(path)


def test_a_json_section_alone_keeps_every_member(tmp_path):
    """Outside a bundle a missing member is corruption, as in 1.3."""
    path = write(tmp_path / "a.ccg", bundle=False)
    with ccg.open(path) as archive:
        entry = next(e for e in archive.directory if e.kind == SectionKind.DEFINITIONS)
        assert '"role":"function"' in archive.payload(entry).decode()


members = st.lists(st.tuples(st.sampled_from([1, 2, 3, 7, 9, 12, 300, 65535]), st.sampled_from([0, 1]),
                             st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.binary(max_size=40)),
                   min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(members)
def test_bundles_round_trip_and_every_cut_is_corrupt(items):
    raw = encode_bundle(items)
    block = DirectoryEntry(int(SectionKind.BUNDLE), 3, 100, 0, len(raw), 0, len(items))
    decoded = decode_bundle(raw, block, "x.ccg")
    assert [(e.kind, e.flags, e.first, e.count, payload) for e, payload in decoded] == items
    assert [e.member for e, _ in decoded] == list(range(len(items)))
    for cut in range(len(raw)):
        with pytest.raises(CorruptArchiveError, match="at byte 100"):
            decode_bundle(raw[:cut], block, "x.ccg")
    with pytest.raises(CorruptArchiveError, match="after the last member"):
        decode_bundle(raw + b"\0", block, "x.ccg")


@pytest.mark.parametrize("number, heading, end", [(1, "### 2.6 DICTIONARY_BUNDLE", "### 2.7"),
                                                  (2, "### 2.8 Bundle dictionaries", "Bundle dictionary 3 (since"),
                                                  (3, "Bundle dictionary 3 (since", "### 2.9")])
def test_the_bundle_dictionaries_are_those_the_spec_names(number, heading, end):
    """Spec 2.6 and 2.8 fix the dictionaries by size and SHA-256; the package's files must
    be them."""
    text = SPEC.joinpath("format.md").read_text()
    section = text[text.index(heading):text.index(end)]
    size, digest = re.search(r"([\d,]+) bytes, SHA-256\s+`([0-9a-f]{64})`", section).groups()
    data = files("ccgformat.archive").joinpath(DICTIONARY_FILES[number]).read_bytes()
    assert len(data) == int(size.replace(",", "")) and hashlib.sha256(data).hexdigest() == digest
    assert dictionary_bytes(number) == data


def test_dictionary_2_ends_with_dictionary_1_and_3_begins_with_2():
    """Spec 2.8: dictionary 2 is samples, then the whole of dictionary 1; dictionary 3 is
    dictionary 2, then two more samples."""
    assert bundle_dictionary(2).as_bytes().endswith(b"\n" + bundle_dictionary(1).as_bytes())
    assert dictionary_bytes(3).startswith(dictionary_bytes(2) + b"\n")
    assert b"EntityType" in dictionary_bytes(3) and b"EntityType" not in dictionary_bytes(2)  # the old Paje names


def test_a_dictionary_bundle_needs_the_dictionary(tmp_path):
    """The frame of a DICTIONARY_BUNDLE block refers into the dictionary: without it, it
    does not decode to the bundle."""
    path = write(tmp_path / "b.ccg", bundle=True)
    with ccg.open(path) as archive:
        entry = archive.directory[0]
        stored = path.read_bytes()[entry.offset + 12:entry.offset + 12 + entry.length]
        raw = archive.payload(entry)
    assert len(decode_bundle(raw, entry, str(path))) == entry.count
    try:
        plain = zstandard.ZstdDecompressor().decompress(stored)
    except zstandard.ZstdError:
        plain = None
    assert plain != raw
