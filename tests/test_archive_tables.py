"""The columnar tables of format 1.3 (spec 4.6-4.8): they give back exactly what the JSON
sections give, cost a few bytes per location, and damage is refused with
CorruptArchiveError and found by `ccg verify` at the table's block."""

from __future__ import annotations

import dataclasses
import struct
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind
from ccgformat.archive.codec import decode_stream, encode_stream
from ccgformat.archive.indexes import ROW_WIDTHS, Checkpoint
from ccgformat.archive.layout import BlockFlags
from ccgformat.archive.checkpoint_columns import CheckpointColumns
from ccgformat.archive.tables import (decode_checkpoint_columns, decode_checkpoint_table, decode_root_table,
                                      encode_checkpoint_columns, encode_checkpoint_table,
                                      encode_root_table, join_definitions, split_definitions)
from ccgformat.archive.verify import verify
from ccgformat.archive import writer as writer_module
from ccgformat.archive.compression import Level
from ccgformat.archive.writer import Writer
from ccgformat.errors import CorruptArchiveError
from ccgformat.graph.graph import LocationRoot
from ccgformat.model import Communicator, Definitions, Location, SystemTreeNode

from .corpus import corpus_path
from .test_verify import entries_of, json_payload, rebuild
from .traces import coded_minor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402
from corpus_root import CORPUS_TRACES  # noqa: E402

I64 = st.integers(-(1 << 63), (1 << 63) - 1)
U63 = st.integers(0, (1 << 63) - 1)


# --------------------------------------------------------------------------- encodings

@st.composite
def roots(draw) -> dict[int, LocationRoot]:
    locations = draw(st.lists(st.integers(0, (1 << 63) - 1), unique=True, max_size=40))
    result = {}
    for location in locations:
        start = draw(st.integers(-(1 << 62), 1 << 62))
        # start + duration stays an i64 (spec 4.3): at most 2**62 + 2**62 - 1
        result[location] = LocationRoot(draw(U63), start, start + draw(st.integers(0, (1 << 62) - 1)), draw(U63))
    return result


@given(roots())
def test_root_table_round_trip(table):
    assert decode_root_table(encode_root_table(table), "x", 0) == table


NAMES = st.one_of(st.text(max_size=12), st.builds(lambda p, n, s: f"{p}{n}{s}", st.sampled_from(["rank ", "node", ""]),
                                                   st.integers(0, 10 ** 20), st.sampled_from(["", ":t", "0", "x7"])),
                  st.sampled_from(["007", "rank 00", "a\u0663", "0", "1e5", "10" * 12]))


@st.composite
def definitions(draw) -> Definitions:
    tree = draw(st.lists(st.builds(SystemTreeNode, NAMES, st.text(max_size=4),
                                   st.one_of(st.none(), st.integers(0, 1 << 40))), max_size=12))
    locations = draw(st.lists(st.builds(Location, NAMES, st.text(max_size=4),
                                        st.one_of(st.none(), st.integers(0, 1 << 40))), max_size=12))
    communicators = draw(st.lists(st.builds(Communicator, st.text(max_size=3),
                                            st.lists(st.integers(0, 1 << 40), max_size=8).map(tuple)), max_size=4))
    return Definitions(system_tree=tree, locations=locations, communicators=communicators,
                       provenance={"p": draw(st.text(max_size=3))})


@given(definitions())
def test_location_table_round_trip(defs):
    document, table = split_definitions(defs)
    assert document["system_tree"] == document["locations"] == []
    assert all(c["members"] == [] for c in document["communicators"])
    assert join_definitions(Definitions.from_dict(document), table, "x", 0) == defs


def rows(width: int, values=I64):
    return st.lists(st.lists(values, min_size=width, max_size=width), max_size=4)


@st.composite
def checkpoints(draw) -> tuple[int, list[tuple[int, list[Checkpoint]]]]:
    locations = sorted(draw(st.lists(st.integers(0, 1 << 62), unique=True, min_size=1, max_size=6)))
    result = []
    for location in locations:
        index, points = 0, []
        for _ in range(draw(st.integers(1, 4))):
            index += draw(st.integers(0, 1 << 20))
            lists = {name: draw(rows(width)) for name, width in ROW_WIDTHS.items()}
            points.append(Checkpoint(index, draw(I64), messages=[draw(I64) for _ in range(4)],
                                     collectives=[draw(I64) for _ in range(3)], **lists))
        result.append((location, points))
    return draw(st.integers(1, 1 << 40)), result


@given(checkpoints())
def test_checkpoint_table_round_trip(table):
    interval, indexes = table
    got_interval, got = decode_checkpoint_table(encode_checkpoint_table(interval, indexes), "x", 0)
    assert got_interval == interval
    assert [location for location, _ in got] == [location for location, _ in indexes]
    for (_, points), (_, decoded) in zip(indexes, got):
        expected = [{**p.snapshot_json(), **p.summary_json()} for p in points]
        assert decoded == expected


@given(checkpoints())
def test_checkpoint_columns_round_trip(table):
    """The columns decoder gives back the columns encoded, whose dictionaries are those of
    `decode_checkpoint_table`, and encodes to the same bytes."""
    interval, indexes = table
    columns = CheckpointColumns.from_checkpoints(indexes)
    raw = encode_checkpoint_columns(interval, columns)
    got_interval, got = decode_checkpoint_columns(raw, "x", 0)
    assert got_interval == interval
    for name in ("locations", "counts", "index", "time"):
        assert np.array_equal(getattr(got, name), getattr(columns, name)), name
    for name in columns.rows:
        assert np.array_equal(got.sizes[name], columns.sizes[name]), name
        assert np.array_equal(got.rows[name].reshape(columns.rows[name].shape), columns.rows[name]), name
    assert encode_checkpoint_columns(interval, got) == raw


# --------------------------------------------------------------------------- archives

def write(path: Path, locations: int, events: int, *, tables: bool, **layout) -> Path:
    definitions_, batches = synth.synthesize(locations, events, jitter=0.3, seed=3, batch_size=256)
    ccg.write_trace(path, definitions_, ((loc, batches(loc)) for loc in range(locations)), tables=tables,
                    level=3, **layout)
    return path


def test_many_locations_read_as_in_the_json_layout(tmp_path, monkeypatch):
    """700 locations with jitter, in several table blocks: definitions, roots,
    checkpoints and queries equal."""
    from ccgformat.archive import writer
    monkeypatch.setattr(writer, "CHECKPOINTS_PER_TABLE_BLOCK", 500)
    old = write(tmp_path / "old.ccg", 700, 100, tables=False, checkpoint_interval=20)
    new = write(tmp_path / "new.ccg", 700, 100, tables=True, checkpoint_interval=20)
    with ccg.open(old) as a, ccg.open(new) as b:
        assert (a.version, b.version) == ((1, 3), (1, coded_minor((e.kind for e in b.sections), 5)))
        assert a.definitions == b.definitions and a.roots == b.roots
        assert sum(e.kind == SectionKind.CHECKPOINT_TABLE for e in b.sections) > 1
        for location in (0, 1, 377, 699):
            summary, snapshots = a.checkpoints(SectionKind.SUMMARY, location), \
                a.checkpoints(SectionKind.SNAPSHOTS, location)
            assert len(summary) > 1
            assert b.checkpoints(SectionKind.SUMMARY, location) == [{**p, **s} for p, s in zip(snapshots, summary)]
        assert b.checkpoints(SectionKind.SUMMARY, 700) == []
        lo, hi = a.time_range
        for window in ((None, None), (lo + (hi - lo) // 3, hi - (hi - lo) // 4)):
            assert a.profile(*window) == b.profile(*window)
        messages = a.messages().columns, b.messages().columns
        assert messages[0].keys() == messages[1].keys()
        assert all(np.array_equal(messages[0][key], messages[1][key]) for key in messages[0])
    assert verify(new) == []


PER_LOCATION = {(False, SectionKind.DEFINITIONS), (False, SectionKind.ROOTS), (False, SectionKind.SNAPSHOTS),
                (False, SectionKind.SUMMARY), (True, SectionKind.DEFINITIONS), (True, SectionKind.LOCATION_TABLE),
                (True, SectionKind.ROOT_TABLE), (True, SectionKind.CHECKPOINT_TABLE)}


@pytest.mark.parametrize("tables, most", [(False, None), (True, 2.0)])
def test_a_location_costs_a_few_bytes(tmp_path, tables, most):
    """Regular locations: the sections that grow with the locations (with their block
    framing and directory entries) take under 2 bytes per location in 1.3, constant or
    falling from 1,000 to 4,000 locations; the JSON layout takes over 20."""
    costs = []
    for count in (1000, 4000):
        definitions_, batches = synth.synthesize(count, 50, jitter=0.0, seed=0, batch_size=256)
        path = tmp_path / f"{count}.ccg"
        ccg.write_trace(path, definitions_, ((loc, batches(loc)) for loc in range(count)), tables=tables,
                        bundle=False)  # each section in a block of its own, to be counted
        with ccg.open(path) as archive:
            costs.append(sum(e.length + 16 + 48 for e in archive.directory
                             if (tables, e.kind) in PER_LOCATION) / count)
    if most is None:
        assert min(costs) > 20, costs
    else:
        assert max(costs) < most and costs[1] <= costs[0] * 1.1, costs


def test_a_location_table_only_where_it_makes_the_file_smaller():
    vectors = ROOT / "spec" / "vectors"
    for name, expected in (("minimal", False), ("every_kind", False), ("many_locations", True),
                           ("many_locations_json", False)):
        with ccg.open(vectors / f"{name}.ccg") as archive:
            assert any(e.kind == SectionKind.LOCATION_TABLE for e in archive.directory) == expected, name


@pytest.mark.parametrize("source", ["ranks", "otf2-pingpong", "paje-java", "epilog-be", "otf-philosophers"])
def test_layouts_far_behind_at_the_choice_level_are_not_tried_and_change_no_byte(tmp_path, monkeypatch, source):
    """LAYOUT_TRIAL_MARGIN: a DEFINITIONS layout more than twice the smallest at
    CHOICE_LEVEL is not compressed at the writer's level, and the file is the one every
    layout compressed gives: 1,000 ranks with a record each in the extensions (their JSON
    is left out), and corpus traces whose definitions win in JSON or in tables."""
    calls: list[int] = []
    compress = Level.compress
    monkeypatch.setattr(Level, "compress", lambda self, raw: calls.append(len(raw)) or compress(self, raw))

    def convert(margin: float) -> tuple[bytes, list[int]]:
        calls.clear()
        monkeypatch.setattr(writer_module, "LAYOUT_TRIAL_MARGIN", margin)
        path = tmp_path / f"{margin}.ccg"
        if source == "ranks":
            definitions_, batches = synth.synthesize(1000, 50, jitter=0.0, seed=0, batch_size=256)
            definitions_ = dataclasses.replace(definitions_, extensions={"test": {"ranks": [
                {"ref": 7 * i + 3, "name": f"rank {i}", "group": i // 8} for i in range(1000)]}})
            ccg.write_trace(path, definitions_, ((loc, batches(loc)) for loc in range(1000)), threads=1)
        else:
            ccg.convert(corpus_path(*CORPUS_TRACES[source]), path)
        return path.read_bytes(), list(calls)

    (pruned, pruned_calls), (tried, tried_calls) = convert(2), convert(float("inf"))
    assert pruned == tried
    if source == "ranks":
        skipped = set(tried_calls) - set(pruned_calls)  # raw bytes of the payloads not compressed
        assert set(pruned_calls) < set(tried_calls) and max(skipped) > 100_000  # the ranks' records in JSON


@pytest.mark.parametrize("tables", [False, True])
def test_a_table_compressing_past_4096_to_1_stays_compressed(tmp_path, tables):
    """8 MiB of a regular table compress ~30,000 to 1; a 1.3 file keeps them compressed
    (the JSON layout, which 1.0-1.2 readers read, cannot: they refuse ratios over 4096)."""
    with Writer(tmp_path / "t.ccg", tables=tables, threads=1) as writer:  # written as it is queued
        writer._block(SectionKind.LOCATION_TABLE, bytes(8 << 20), must_understand=True)
        assert bool(writer._directory[-1].flags & BlockFlags.ZSTD) == tables
        writer.abort()


# --------------------------------------------------------------------------- damage

@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """200 locations: enough for a LOCATION_TABLE (each table in a block of its own, to damage)."""
    path = write(tmp_path_factory.mktemp("tables") / "good.ccg", 200, 60, tables=True, checkpoint_interval=25,
                 bundle=False)
    assert entries_of(path, SectionKind.LOCATION_TABLE)
    return path


def streams(raw: bytes, start: int) -> list[list[int]]:
    values, position = [], start
    while position < len(raw):
        stream, position = decode_stream(raw, position)
        values.append([int(v) for v in stream])
    return values


def restream(head: bytes, values: list[list[int]]) -> bytes:
    return head + b"".join(encode_stream(np.array(v, np.uint64)) for v in values)


def table_start(kind: SectionKind, raw: bytes) -> int:
    if kind == SectionKind.LOCATION_TABLE:
        return 4 + struct.unpack_from("<I", raw)[0]
    return 8 if kind == SectionKind.CHECKPOINT_TABLE else 0


def damage_stream(kind: SectionKind, change: Callable[[list[list[int]]], None]):
    def payload(entry, raw):
        if entry.kind != kind:
            return raw
        start = table_start(kind, raw)
        values = streams(raw, start)
        change(values)
        return restream(raw[:start], values)
    return payload


def read_all(path: Path) -> None:
    with ccg.open(path) as archive:
        archive.definitions, archive.stats
        for location in archive.locations:
            archive.checkpoints(SectionKind.SUMMARY, location)
            for _ in archive.location(location).events():
                pass


DAMAGE = {
    "root-count": (SectionKind.ROOT_TABLE, lambda v: v[3].pop()),
    "root-negative": (SectionKind.ROOT_TABLE, lambda v: v[1].__setitem__(0, 1)),  # zigzag 1 = -1
    "root-end-before-start": (SectionKind.ROOT_TABLE, lambda v: v[3].__setitem__(-1, v[3][-1] + 2 ** 40 + 1)),
    "root-locations-repeat": (SectionKind.ROOT_TABLE, lambda v: v[0].__setitem__(1, 0)),
    "root-extra-stream": (SectionKind.ROOT_TABLE, lambda v: v.append([1])),
    "location-text-id": (SectionKind.LOCATION_TABLE, lambda v: v[6].__setitem__(0, 999)),
    "location-flag": (SectionKind.LOCATION_TABLE, lambda v: v[8].__setitem__(0, 2)),
    "location-parent-negative": (SectionKind.LOCATION_TABLE, lambda v: v[11].__setitem__(0, 3)),
    "location-members": (SectionKind.LOCATION_TABLE, lambda v: v[12].__setitem__(0, v[12][0] + 1)),
    "location-missing-stream": (SectionKind.LOCATION_TABLE, lambda v: v.pop()),
    "checkpoint-count": (SectionKind.CHECKPOINT_TABLE, lambda v: v[1].__setitem__(0, v[1][0] + 1)),
    "checkpoint-rows": (SectionKind.CHECKPOINT_TABLE, lambda v: v[4].__setitem__(0, 1 << 40)),
    "checkpoint-column": (SectionKind.CHECKPOINT_TABLE, lambda v: v[-1].pop()),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_damaged_tables_are_corrupt_and_verify_finds_them(archive, tmp_path, name):
    kind, change = DAMAGE[name]
    path = rebuild(archive, tmp_path / f"{name}.ccg", damage_stream(kind, change))
    with pytest.raises(CorruptArchiveError):
        read_all(path)
    [entry] = entries_of(path, kind)[:1]
    problems = verify(path)
    assert problems and any(p.offset == entry.offset for p in problems), problems


def test_checkpoints_that_disagree_with_the_roots_are_found(archive, tmp_path):
    """A table that decodes but moves a checkpoint's index: verify names the location."""
    path = rebuild(archive, tmp_path / "index.ccg",
                   damage_stream(SectionKind.CHECKPOINT_TABLE, lambda v: v[2].__setitem__(0, v[2][0] + 1)))
    [entry] = entries_of(path, SectionKind.CHECKPOINT_TABLE)[:1]
    problems = verify(path)
    assert [p.offset for p in problems] == [entry.offset] and "location 0" in problems[0].reason


def test_definitions_with_locations_beside_the_table_are_corrupt(archive, tmp_path):
    def add(document):
        document["locations"] = [{"name": "x", "kind": "process", "parent": None}]
    path = rebuild(archive, tmp_path / "both.ccg", json_payload(SectionKind.DEFINITIONS, add))
    with pytest.raises(CorruptArchiveError, match="LOCATION_TABLE"):
        with ccg.open(path) as a:
            a.definitions


@pytest.mark.parametrize("kind", [SectionKind.ROOTS, SectionKind.LOCATION_TABLE])
def test_a_second_roots_or_location_table_is_refused_on_opening(archive, tmp_path, kind):
    path = rebuild(archive, tmp_path / "two.ccg", extra=[(int(kind), int(BlockFlags.MUST_UNDERSTAND), b"")])
    names = "ROOTS or ROOT_TABLE" if kind == SectionKind.ROOTS else kind.name
    with pytest.raises(CorruptArchiveError, match=f"one {names} section"):
        ccg.open(path)
