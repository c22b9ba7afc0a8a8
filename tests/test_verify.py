"""`ccgformat.archive.verify`: every invariant is checked, damage is located by block
offset and kind, and the check goes on past a problem where it safely can."""

from __future__ import annotations

import dataclasses
import json
import struct
import sys
from pathlib import Path
from typing import Callable

import pytest

import ccgformat as ccg
from ccgformat.archive import SectionKind
from ccgformat.archive.blocks import compress, frame_block
from ccgformat.archive.layout import (BLOCK_HEADER, END_MAGIC, FILE_HEADER, MAGIC, ROOT_ENTRY, TRAILER,
                                      BlockFlags)
from ccgformat.archive.sections import DirectoryEntry, encode_directory
from ccgformat.archive.tables import decode_root_table, encode_root_table
from ccgformat.archive.verify import Problem, verify
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Definitions, EventKind

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402

LOCATIONS = 3


def synthetic(locations: int = LOCATIONS, events: int = 700, jitter: float = 0.3, seed: int = 5):
    return synth.synthesize(locations, events, jitter=jitter, seed=seed, batch_size=256)


def write_synthetic(path: Path, **layout) -> Path:
    """The synthetic trace in the JSON layout (ROOTS, JSON indexes) unless ``tables``."""
    definitions, events = synthetic()
    layout = {"nodes_per_block": 300, "checkpoint_interval": 100, "level": 3, "tables": False, **layout}
    ccg.write_trace(path, definitions, ((loc, events(loc)) for loc in range(LOCATIONS)), **layout)
    return path


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    return write_synthetic(tmp_path_factory.mktemp("verify") / "good.ccg")


def directory(path: Path) -> list[DirectoryEntry]:
    with ccg.open(path) as ar:
        return sorted(ar._directory, key=lambda e: e.offset)


def entries_of(path: Path, kind: SectionKind) -> list[DirectoryEntry]:
    return [e for e in directory(path) if e.kind == kind]


def rebuild(source: Path, target: Path, payload: Callable[[DirectoryEntry, bytes], bytes] = lambda e, raw: raw,
            entry: Callable[[DirectoryEntry], DirectoryEntry] = lambda e: e, *, padding: bytes = b"",
            extra: list[tuple[int, int, bytes]] = ()) -> Path:
    """Re-frame every block of ``source`` (with valid CRCs and footer) after passing its
    raw payload through ``payload`` and its new directory entry through ``entry``;
    ``padding`` goes after the first block, ``extra`` (kind, flags, raw) blocks at the end."""
    with ccg.open(source) as ar:
        blocks = [(e.kind, e.flags, e.first, e.count, payload(e, ar.payload(e)))
                  for e in sorted(ar._directory, key=lambda e: e.offset)]
    blocks += [(kind, flags, 0, 0, raw) for kind, flags, raw in extra]
    out = bytearray(FILE_HEADER.pack(MAGIC, 1, 0, 0))
    listed = []
    for i, (kind, flags, first, count, raw) in enumerate(blocks):
        stored = compress(raw, 3) if flags & BlockFlags.ZSTD else raw
        listed.append(entry(DirectoryEntry(kind, flags, len(out), len(stored), len(raw), first, count)))
        out += frame_block(kind, flags, stored)
        if i == 0:
            out += padding
    footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND), encode_directory(listed))
    out += footer + TRAILER.pack(len(footer), END_MAGIC)
    target.write_bytes(bytes(out))
    return target


def json_payload(kind: SectionKind, change: Callable[[dict], None]) -> Callable[[DirectoryEntry, bytes], bytes]:
    def transform(e: DirectoryEntry, raw: bytes) -> bytes:
        if e.kind != kind:
            return raw
        document = json.loads(raw)
        change(document)
        return json.dumps(document).encode()
    return transform


def flip(source: Path, target: Path, position: int) -> Path:
    data = bytearray(source.read_bytes())
    data[position] ^= 0x40
    target.write_bytes(bytes(data))
    return target


def payload_middle(e: DirectoryEntry) -> int:
    return e.offset + BLOCK_HEADER.size + e.length // 2


# --------------------------------------------------------------------------- sound files

def test_a_written_archive_is_sound_and_has_several_blocks_of_each_kind(archive):
    assert verify(archive) == []
    assert len(entries_of(archive, SectionKind.NODES)) >= 3


def test_rebuilding_unchanged_gives_a_sound_archive(archive, tmp_path):
    # the test helper itself must not introduce problems, or the tests below prove nothing
    assert verify(rebuild(archive, tmp_path / "same.ccg")) == []


def test_empty_locations_and_a_single_event_location_are_sound(tmp_path):
    from ccgformat.model import Location, Region
    from ccgformat.model import EventBatch
    defs = Definitions(regions=[Region("r")], locations=[Location("a"), Location("b")])
    one = EventBatch.from_events([(7, EventKind.MARKER, 1, 0, 0, 0, 0, 0, 3)])
    ccg.write_trace(tmp_path / "e.ccg", defs, [(0, []), (1, [one])], checkpoint_interval=1)
    assert verify(tmp_path / "e.ccg") == []


def test_optional_unknown_sections_are_accepted_but_their_checksum_is_checked(archive, tmp_path):
    extra = [(31, int(BlockFlags.ZSTD), b"future aggregation table")]
    path = rebuild(archive, tmp_path / "extra.ccg", extra=extra)
    assert verify(path) == []
    block = [e for e in directory(path) if e.kind == 31][0]
    problems = verify(flip(path, tmp_path / "bad.ccg", payload_middle(block)))
    assert [(p.offset, p.kind_name) for p in problems] == [(block.offset, "AGGREGATION_31")]
    assert "CRC32C" in problems[0].reason


# --------------------------------------------------------------------------- framing

@pytest.mark.parametrize("kind", [SectionKind.NODES, SectionKind.SNAPSHOTS, SectionKind.SUMMARY,
                                  SectionKind.DEFINITIONS, SectionKind.PARAMETERS, SectionKind.ROOTS])
def test_a_flipped_payload_byte_is_reported_at_its_block(archive, tmp_path, kind):
    target = entries_of(archive, kind)[-1]
    problems = verify(flip(archive, tmp_path / "f.ccg", payload_middle(target)))
    assert problems, kind
    assert (problems[0].offset, problems[0].kind) == (target.offset, kind)
    assert "CRC32C" in problems[0].reason
    assert str(target.offset) in str(problems[0])


def test_checking_goes_on_after_a_bad_block_and_reports_in_offset_order(archive, tmp_path):
    nodes = entries_of(archive, SectionKind.NODES)
    summary = entries_of(archive, SectionKind.SUMMARY)[0]
    path = flip(archive, tmp_path / "f1.ccg", payload_middle(nodes[1]))
    path = flip(path, tmp_path / "f2.ccg", payload_middle(summary))
    problems = verify(path)
    offsets = [p.offset for p in problems]
    assert offsets == sorted(offsets)
    assert {(nodes[1].offset, SectionKind.NODES), (summary.offset, SectionKind.SUMMARY)} <= \
        {(p.offset, p.kind) for p in problems}


@pytest.mark.parametrize("cut", [1, 10, 100, 0.5])
def test_a_truncated_file_is_one_problem(archive, tmp_path, cut):
    data = archive.read_bytes()
    keep = int(len(data) * cut) if isinstance(cut, float) else len(data) - cut
    path = tmp_path / "t.ccg"
    path.write_bytes(data[:keep])
    problems = verify(path)
    assert len(problems) == 1 and problems[0].kind is None
    assert "truncated" in problems[0].reason or "too short" in problems[0].reason


def test_not_an_archive_and_an_unsupported_version_are_one_problem(archive, tmp_path):
    (tmp_path / "text.ccg").write_bytes(b"hello world, this is not an archive at all" * 3)
    [problem] = verify(tmp_path / "text.ccg")
    assert problem.offset == 0 and "magic" in problem.reason
    data = bytearray(archive.read_bytes())
    struct.pack_into("<H", data, 8, 9)
    (tmp_path / "v9.ccg").write_bytes(bytes(data))
    [problem] = verify(tmp_path / "v9.ccg")
    assert problem.offset == 8 and "version 9" in problem.reason


def test_bytes_no_block_accounts_for_are_reported(archive, tmp_path):
    path = rebuild(archive, tmp_path / "pad.ccg", padding=b"\0" * 13)
    first = directory(archive)[0]
    problems = verify(path)
    assert [(p.kind, p.offset) for p in problems] == [(None, first.offset + first.length + 16)]
    assert "13 bytes" in problems[0].reason


def test_missing_node_ids_are_found_at_open(archive, tmp_path):
    def shift(e: DirectoryEntry) -> DirectoryEntry:
        if e.kind == SectionKind.NODES and e.first > 0:
            return DirectoryEntry(e.kind, e.flags, e.offset, e.length, e.raw_length, e.first + 1, e.count)
        return e
    [problem] = verify(rebuild(archive, tmp_path / "gap.ccg", entry=shift))
    assert "consecutive" in problem.reason


# --------------------------------------------------------------------------- contents

def roots_transform(change: Callable[[list[list[int]]], None]) -> Callable[[DirectoryEntry, bytes], bytes]:
    def transform(e: DirectoryEntry, raw: bytes) -> bytes:
        if e.kind != SectionKind.ROOTS:
            return raw
        rows = [list(row) for row in ROOT_ENTRY.iter_unpack(raw)]
        change(rows)
        return b"".join(ROOT_ENTRY.pack(*row) for row in rows)
    return transform


def test_roots_must_agree_with_their_root_nodes(archive, tmp_path):
    def damage(rows):
        rows[0][4] += 1         # location 0: one event too many
        rows[1][3] += 5         # location 1: end != start + total
        rows[2][1] = 10 ** 9    # location 2: root node outside the pool
    problems = verify(rebuild(archive, tmp_path / "roots.ccg", roots_transform(damage)))
    roots = entries_of(tmp_path / "roots.ccg", SectionKind.ROOTS)[0]
    reasons = " | ".join(p.reason for p in problems if (p.kind, p.offset) == (SectionKind.ROOTS, roots.offset))
    assert "location 0" in reasons and "events listed" in reasons
    assert "location 1" in reasons and "end" in reasons
    assert "location 2" in reasons and "outside" in reasons


def with_minor(path: Path, minor: int) -> Path:
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 10, minor)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("damage, words", [
    (lambda rows: rows.pop(1), "locations 1 have no root"),
    (lambda rows: rows[2].__setitem__(0, 7), "locations 7 are not defined"),
])
def test_since_1_3_the_roots_list_every_defined_location_and_only_those(archive, tmp_path, damage, words):
    """Spec 4.3: a file of format 1.3 or later lists every location of the definitions;
    a file of 1.2 may leave out locations without events (minimal.ccg of 1.2 does)."""
    def recount(e: DirectoryEntry) -> DirectoryEntry:
        return dataclasses.replace(e, count=2 if "no root" in words else 3) if e.kind == SectionKind.ROOTS else e
    path = rebuild(archive, tmp_path / "roots.ccg", roots_transform(damage), recount)
    roots = entries_of(path, SectionKind.ROOTS)[0]
    for minor, found in ((3, True), (2, False)):
        problems = verify(with_minor(path, minor))
        reasons = [p.reason for p in problems if (p.kind, p.offset) == (SectionKind.ROOTS, roots.offset)]
        assert any(words in reason for reason in reasons) == found, (minor, problems)


@pytest.mark.parametrize("damage, words", [
    (lambda roots: roots.pop(1), "locations 1 have no root"),
    (lambda roots: roots.__setitem__(7, roots.pop(2)), "locations 2 have no root"),
])
def test_the_root_table_lists_every_defined_location_too(tmp_path, damage, words):
    """Spec 4.6: ROOT_TABLE obeys the rule of 4.3 (1.3 files only have it)."""
    def change(e: DirectoryEntry, raw: bytes) -> bytes:
        if e.kind != SectionKind.ROOT_TABLE:
            return raw
        roots = dict(decode_root_table(raw, "x", 0))
        damage(roots)
        return encode_root_table(dict(sorted(roots.items())))
    source = write_synthetic(tmp_path / "tables.ccg", tables=True, bundle=False)  # the table in a block of its own
    path = with_minor(rebuild(source, tmp_path / "roots.ccg", change,
                              lambda e: dataclasses.replace(e, count=2 if "1 have" in words else 3)
                              if e.kind == SectionKind.ROOT_TABLE else e), 3)
    table = entries_of(path, SectionKind.ROOT_TABLE)[0]
    reasons = [p.reason for p in verify(path) if (p.kind, p.offset) == (SectionKind.ROOT_TABLE, table.offset)]
    assert any(words in reason for reason in reasons), reasons
    assert any("not defined" in reason for reason in reasons) == ("2 have" in words), reasons


def test_node_keys_must_be_defined(archive, tmp_path):
    def trim(document):
        document["regions"] = document["regions"][:2]     # main, iteration
        document["locations"] = document["locations"][:1]  # rank 0 only
        document["metrics"] = []
    path = rebuild(archive, tmp_path / "defs.ccg", json_payload(SectionKind.DEFINITIONS, trim))
    found = verify(path)
    nodes = {e.offset for e in entries_of(path, SectionKind.NODES)}
    problems = [p for p in found if p.kind == SectionKind.NODES and p.offset in nodes]
    # the checkpoints name the regions too (what a profile of a long window reads)
    indexes = [p for p in found if p not in problems]
    assert {p.kind for p in indexes} == {SectionKind.SNAPSHOTS, SectionKind.SUMMARY}
    assert all("names a region that is not defined" in p.reason for p in indexes)
    reasons = " | ".join(p.reason for p in problems)
    assert "region" in reasons and "(2 defined)" in reasons
    assert "peer location" in reasons and "(1 defined)" in reasons
    assert "metric 0 is not defined (0 defined)" in reasons


def test_definitions_and_parameters_must_parse(archive, tmp_path):
    def break_definitions(document):
        del document["regions"]

    def break_metrics(document):
        document["metrics"]["n"] += 1
        document["branching"] = 1

    path = rebuild(archive, tmp_path / "p.ccg", json_payload(SectionKind.DEFINITIONS, break_definitions))
    [problem] = verify(path)
    assert problem.kind == SectionKind.DEFINITIONS and "definitions" in problem.reason
    path = rebuild(archive, tmp_path / "q.ccg", json_payload(SectionKind.PARAMETERS, break_metrics))
    [problem] = verify(path)
    assert problem.kind == SectionKind.PARAMETERS and "branching" in problem.reason
    path = rebuild(archive, tmp_path / "r.ccg",
                   json_payload(SectionKind.PARAMETERS, lambda d: d["metrics"].update(n=d["metrics"]["n"] - 1)))
    [problem] = verify(path)
    assert problem.kind == SectionKind.PARAMETERS and "build metric n" in problem.reason


@pytest.mark.parametrize("kind", [SectionKind.SNAPSHOTS, SectionKind.SUMMARY])
@pytest.mark.parametrize("damage, words", [
    (lambda d: d["locations"][1]["checkpoints"][1].update(index=100), "do not increase"),
    (lambda d: d["locations"][0]["checkpoints"].pop(), "last checkpoint"),
    (lambda d: d["locations"][2]["checkpoints"][-1].update(index=10 ** 6), "outside"),
    (lambda d: d["locations"][0]["checkpoints"][0].update(index=99), "expected 100"),
    (lambda d: d["locations"][0]["checkpoints"][1].update(time=0), "time 0"),
    (lambda d: d["locations"][1].update(location=7), "no such location"),
    (lambda d: d.pop("locations"), "'locations' list"),
    (lambda d: d["locations"][0]["checkpoints"][0].update(stack=[[1]], open=[[1]]), "-integer rows"),
])
def test_index_checkpoints_must_match_the_roots(archive, tmp_path, kind, damage, words):
    path = rebuild(archive, tmp_path / "i.ccg", json_payload(kind, damage))
    problems = verify(path)
    block = entries_of(path, kind)[0]
    assert problems and all((p.kind, p.offset) == (kind, block.offset) for p in problems)
    assert any(words in p.reason for p in problems), problems


def test_an_index_that_is_not_json_is_reported(archive, tmp_path):
    path = rebuild(archive, tmp_path / "j.ccg",
                   lambda e, raw: b"{not json" if e.kind == SectionKind.SUMMARY else raw)
    [problem] = verify(path)
    assert problem.kind == SectionKind.SUMMARY and "JSON" in problem.reason


def _with_budgets(path: Path, summary_bytes: int, ledger_bytes: int) -> list[Problem]:
    """`verify` keeping at most ``summary_bytes`` of block columns and ``ledger_bytes`` of
    waiting claims (at least the latest block is always kept)."""
    from ccgformat.archive import verify as verify_module

    saved = verify_module.SUMMARY_BYTES, verify_module.LEDGER_BYTES
    verify_module.SUMMARY_BYTES, verify_module.LEDGER_BYTES = summary_bytes, ledger_bytes
    try:
        return verify(path)
    finally:
        verify_module.SUMMARY_BYTES, verify_module.LEDGER_BYTES = saved


@pytest.mark.parametrize("column, lie, words", [
    ("events", lambda events: events + 1, "events and duration"),
    ("metric_sums", lambda sums: tuple((metric, total + 1) for metric, total in sums), "metric sums"),
])
def test_import_tables_must_agree_with_the_nodes_they_name(tmp_path, monkeypatch, column, lie, words):
    # a writer bug: blocks after the first misstate what earlier nodes hold in their imports;
    # the lie is told through the reference builder's and encoder's Python lists (the
    # reading side, which must notice, is the backend's)
    from ccgformat.archive import writer
    from ccgformat.archive.codec import NodeEncoder
    from ccgformat.graph import Builder

    monkeypatch.setattr(writer, "make_builder", Builder)
    monkeypatch.setattr(writer, "node_encoder", NodeEncoder)
    encoder = NodeEncoder
    original = encoder.encode_both

    def lying(self, pool, first, stop):
        if first == 0:
            return original(self, pool, first, stop)
        values = getattr(pool, column)
        saved = list(values)
        values[:first] = [lie(value) for value in saved[:first]]
        try:
            return original(self, pool, first, stop)
        finally:
            values[:] = saved

    monkeypatch.setattr(encoder, "encode_both", lying)
    path = write_synthetic(tmp_path / "imp.ccg")
    monkeypatch.undo()
    problems = verify(path)
    first = min(entries_of(path, SectionKind.NODES) + entries_of(path, SectionKind.PREDICTED_NODES),
                key=lambda entry: entry.first)
    assert any(p.kind in (SectionKind.NODES, SectionKind.PREDICTED_NODES) and p.offset != first.offset
               and "import table" in p.reason and words in p.reason for p in problems), problems
    # the same problems when only the latest block's columns are kept: claims on the others
    # wait in the ledger, settled after every block or only at the end
    assert _with_budgets(path, 1, 1) == problems
    assert _with_budgets(path, 1, 1 << 40) == problems


def test_verify_in_bounded_memory_checks_the_same_claims(archive, tmp_path):
    # a sound archive of many blocks stays sound when every claim on an earlier block
    # is checked by decoding that block again; a damaged one reports the same problems
    assert _with_budgets(archive, 1, 1) == []
    damaged = rebuild(archive, tmp_path / "d.ccg", lambda e, raw: raw[:-3] + bytes([raw[-3] ^ 0x40]) + raw[-2:]
                      if e.kind in (SectionKind.NODES, SectionKind.PREDICTED_NODES) and e.first > 0 else raw)
    problems = verify(damaged)
    assert problems and _with_budgets(damaged, 1, 1) == problems


def test_problem_renders_kind_and_offset():
    problem = Problem(1234, int(SectionKind.NODES), "CRC32C mismatch")
    assert str(problem) == "NODES block at byte 1234: CRC32C mismatch"
    assert problem.to_dict() == {"offset": 1234, "kind": "NODES", "reason": "CRC32C mismatch"}
    assert str(Problem(5, None, "x")) == "byte 5: x"


# --------------------------------------------------------------------------- agreement with the reader

def read_all(path: Path) -> None:
    """Everything a user can read from an archive."""
    with ccg.open(path) as ar:
        ar.definitions.extensions, ar.params, ar.stats, ar.time_range  # extensions: decoded on first use (1.4)
        for location in ar.locations:
            walker = ar.location(location)
            for _ in walker.events():
                pass
            if len(walker):
                walker.event(len(walker) // 2)
            for kind in (SectionKind.SNAPSHOTS, SectionKind.SUMMARY):
                ar.checkpoints(kind, location)
        ar.aggregation_tables, ar.metric_tables


SAMPLES = sorted([*(ROOT / "tests" / "data" / "bad").glob("*.ccg"), *(ROOT / "spec" / "vectors").glob("*.ccg"),
                  *(ROOT / "spec" / "vectors" / "1.2").glob("*.ccg")])


def test_the_sample_archives_are_present():
    assert len(SAMPLES) >= 20, "spec/vectors and tests/data/bad come with the checkout"


#: the damaged files the reader reads through and verify alone reports (their README says so)
VERIFIED = {line.split("`")[1] for line in (ROOT / "tests" / "data" / "bad" / "README.md").read_text().splitlines()
            if line.startswith("| `") and "| reads; `ccg verify` reports it |" in line}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_verify_agrees_with_the_reader_on_the_sample_archives(path):
    """Where reading fails, verify reports a problem at the same offset (and it is the
    first problem when the reader names the block); where reading works, verify finds
    nothing, the samples being sound apart from their one planted defect, except the
    damaged files the reader reads through (spec 4.3, 4.5), where verify finds it."""
    try:
        read_all(path)
    except ccg.CcgError as error:
        problems = verify(path)
        assert problems, error
        offset = getattr(error, "offset", None)
        if offset is not None:
            assert offset in [p.offset for p in problems], (error, problems)
    else:
        if path.parent.name == "bad" and path.name in VERIFIED:
            assert verify(path), path.name
        else:
            assert verify(path) == []


@pytest.mark.parametrize("member, rows", [("peers", [[1, 2, 3]]), ("operations", "x"), ("durations", [[1, 2, "3"]]),
                                          ("open", [[1, 2, None]])])
def test_summary_rows_of_format_1_2_are_checked(archive, tmp_path, member, rows):
    path = rebuild(archive, tmp_path / "s.ccg", json_payload(
        SectionKind.SUMMARY, lambda d: d["locations"][0]["checkpoints"][0].update({member: rows})))
    [problem] = verify(path)
    assert problem.kind == SectionKind.SUMMARY and f"'{member}' is not a list" in problem.reason


@pytest.mark.parametrize("damage", [
    lambda p: p.update(open=[[0, 1, None]]),
    lambda p: p.update(peers=[[1, 2]]),
    lambda p: p.update(regions="none"),
    lambda p: p.update(index=10 ** 9),
    lambda p: p.pop("time"),
])
def test_a_profile_of_a_damaged_summary_raises_a_ccg_error(archive, tmp_path, damage):
    """A SUMMARY block with valid CRCs but malformed 1.2 checkpoints: the profile that
    reads it names the file instead of failing inside numpy."""
    path = rebuild(archive, tmp_path / "p.ccg", json_payload(
        SectionKind.SUMMARY, lambda d: [damage(p) for p in d["locations"][0]["checkpoints"]]))
    with ccg.open(path) as damaged:
        with pytest.raises(CorruptArchiveError, match="location 0"):
            damaged.profile(summary_index=True)


def _one_summary_location_fewer(e: DirectoryEntry) -> DirectoryEntry:
    return dataclasses.replace(e, count=e.count - 1) if e.kind == SectionKind.SUMMARY else e


@pytest.mark.parametrize("kind, damage, entry, words", [
    (SectionKind.SUMMARY, lambda d: d["locations"][1]["checkpoints"][-1].pop("open"), None, "members of format 1.2"),
    (SectionKind.SUMMARY, lambda d: [p["regions"].append([99, 1, 1, 1]) for p in d["locations"][0]["checkpoints"]],
     None, "names a region that is not defined"),
    (SectionKind.SUMMARY, lambda d: d["locations"].pop(), _one_summary_location_fewer,
     "no SUMMARY checkpoints for location 2"),
], ids=["1.2-members-in-some", "undefined-region", "location-missing"])
def test_what_a_profile_trips_on_is_found_by_verify(archive, tmp_path, kind, damage, entry, words):
    """Index blocks sound one by one (CRCs, JSON, each location's checkpoints), but not as
    the queries read them: verify reports each at its block, as the profile fails."""
    path = rebuild(archive, tmp_path / "q.ccg", json_payload(kind, damage), entry or (lambda e: e))
    [problem] = verify(path)
    assert (problem.kind, problem.offset) == (kind, entries_of(path, kind)[0].offset)
    assert words in problem.reason
    with ccg.open(path) as damaged:
        with pytest.raises(CorruptArchiveError):
            damaged.profile(summary_index=True)


def test_summary_and_snapshots_must_be_at_the_same_events(archive, tmp_path):
    """Each index sound alone, but at other events: SNAPSHOTS every 200 events."""
    def sparser(document):
        document["interval"] = 200
        for item in document["locations"]:
            points = item["checkpoints"]
            item["checkpoints"] = [p for p in points[:-1] if p["index"] % 200 == 0] + points[-1:]
    path = rebuild(archive, tmp_path / "h.ccg", json_payload(SectionKind.SNAPSHOTS, sparser))
    problems = verify(path)
    assert problems and all(p.kind == SectionKind.SUMMARY for p in problems)
    assert all("other events than the SNAPSHOTS" in p.reason for p in problems)
    with ccg.open(path) as damaged:
        with pytest.raises(CorruptArchiveError):
            damaged.profile(summary_index=True)


@pytest.mark.parametrize("kind, damage, member", [
    (SectionKind.SNAPSHOTS, lambda p: p.update(stack=[[r, t + 1] for r, t in p["stack"]] or [[0, 0]]), "stack"),
    (SectionKind.SNAPSHOTS, lambda p: p.update(time=p["time"] - 1), "time"),
    (SectionKind.SUMMARY, lambda p: p.update(regions=[[r, c + 1, i, e] for r, c, i, e in p["regions"]]
                                             or [[0, 1, 0, 0]]), "regions"),
    (SectionKind.SUMMARY, lambda p: p.update(open=p["open"] + [[0, p["time"], p["time"]]]), "open"),
], ids=["stack", "time", "regions", "open"])
def test_checkpoint_contents_must_be_those_of_the_rebuilt_events(archive, tmp_path, kind, damage, member):
    """Spec 4.4, 4.5: each checkpoint sound in form, but not what the events give; verify
    names the block and the member, and reading goes through."""
    def change(document):
        damage(document["locations"][0]["checkpoints"][0])
    path = rebuild(archive, tmp_path / "c.ccg", json_payload(kind, change))
    problems = verify(path)
    assert [(p.kind, p.offset) for p in problems] == [(kind, entries_of(path, kind)[0].offset)]
    assert f"'{member}' is" in problems[0].reason and "rebuilt events" in problems[0].reason
