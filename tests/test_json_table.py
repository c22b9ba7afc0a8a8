"""EXTENSION_TABLE (spec 4.9): any JSON value round-trips through its columns, damage
raises CorruptArchiveError, and per-location records cost steps, not text (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import ccgformat
from ccgformat.archive.blocks import compress
from ccgformat.archive.jsontable import decode_json_members, decode_json_table, encode_json_table
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.verify import verify
from ccgformat.archive.writer import write_trace
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Definitions, EventBatch, EventKind as K, Location, Region

from .test_verify import json_payload, rebuild

_digits = st.text(alphabet="ab 0123456789", max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats(allow_nan=False)
    | _digits | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=60)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_every_json_value_round_trips(document):
    back = decode_json_table(encode_json_table(document), "t.ccg", 0)
    assert json.dumps(back, sort_keys=True) == json.dumps(document, sort_keys=True)
    assert type(back) is type(document)


@settings(max_examples=200, deadline=None)
@given(_json, st.data())
def test_damage_raises_corrupt_archive_error_or_reads(document, data):
    raw = bytearray(encode_json_table(document))
    position = data.draw(st.integers(0, len(raw) - 1))
    if data.draw(st.booleans()):
        raw[position] ^= data.draw(st.integers(1, 255))
    else:
        del raw[position:]
    try:
        decode_json_table(bytes(raw), "t.ccg", 7)
    except CorruptArchiveError as error:
        assert error.offset == 7
        assert "extension table" in str(error)


_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
#: members as the Paje layout holds them: tables of integer records, integer lists, others
_member = _json | st.integers(1, 4).flatmap(
    lambda n: st.lists(st.lists(_int64 | st.integers(-3, 3), min_size=n, max_size=n), max_size=40)) \
    | st.lists(_int64, max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_json, members=st.dictionaries(st.sampled_from("abcdef"), _member, max_size=5),
       after=_json, wanted=st.sets(st.sampled_from("abcdefg")), data=st.data())
def test_members_decode_as_the_whole_table(before, members, after, wanted, data):
    """The members of an object decoded alone are those of the whole decode (integer
    tables as arrays), wherever the object sits."""
    nested = data.draw(st.booleans())
    document = {"x": before, "layout": {"inner": members, "y": after}} if nested else {"x": before, "inner": members}
    keys = ("layout", "inner") if nested else ("inner",)
    raw = encode_json_table(document)
    found = decode_json_members(raw, "t.ccg", 0, keys, tuple(sorted(wanted)))
    assert {name: value.tolist() if hasattr(value, "tolist") else value for name, value in found.items()} \
        == {name: value for name, value in members.items() if name in wanted}
    assert decode_json_members(raw, "t.ccg", 0, ("absent",), ("a",)) is None
    assert decode_json_members(encode_json_table([members]), "t.ccg", 0, (), ("a",)) is None


def test_integer_tables_come_as_arrays():
    rows = [[i, i % 2, 3 * i - 40] for i in range(100)]
    found = decode_json_members(encode_json_table({"p": {"rows": rows, "flat": list(range(50, 0, -1)),
                                                         "mixed": [[1, 2], [3]]}}), "t.ccg", 0, ("p",),
                                ("rows", "flat", "mixed"))
    assert found["rows"].shape == (100, 3) and found["rows"].tolist() == rows
    assert found["flat"].tolist() == list(range(50, 0, -1))
    assert found["mixed"] == [[1, 2], [3]]  # rows of different lengths: values as the whole decode gives them


def _records(locations: int) -> list:
    """Definition records as the OTF2 importer keeps them, per location."""
    return ([["String", [i, f"rank {i}"]] for i in range(locations)]
            + [["LocationGroup", [i, i, 1, 0, 4294967295]] for i in range(locations)]
            + [["Location", [i, i, 1, 4, i]] for i in range(locations)])


def test_records_per_location_cost_under_a_byte():
    document = {"extensions": {"otf2": {"definitions": _records(20_000), "locations": list(range(20_000))}}}
    table = compress(encode_json_table(document), 19)
    as_json = compress(json.dumps(document, separators=(",", ":")).encode(), 19)
    assert len(table) < 20_000 * 0.1 < len(as_json) / 10, (len(table), len(as_json))


def test_the_writer_stores_per_location_records_as_a_table(tmp_path):
    count = 2_000
    definitions = Definitions(regions=[Region("main")],
                              locations=[Location(f"rank {i}", "process") for i in range(count)],
                              extensions={"otf2": {"definitions": _records(count)}})
    events = EventBatch.from_events([(10, K.ENTER, 0), (20, K.LEAVE, 0)])
    path = tmp_path / "records.ccg"
    write_trace(path, definitions, ((i, [events]) for i in range(count)))
    with ccgformat.open(path) as archive:
        assert archive.version == (1, 4)
        assert isinstance(archive.definitions.extensions, dict)
        kinds = {entry.kind: entry for entry in archive.directory}
        assert "extensions" not in json.loads(archive.payload(kinds[SectionKind.DEFINITIONS]))
        assert kinds[SectionKind.EXTENSION_TABLE].length < count * 0.5
        assert archive.definitions.to_dict() == definitions.to_dict()
    assert verify(path) == []


@pytest.mark.parametrize("count", [1, 3])
def test_small_definitions_stay_json(tmp_path, count):
    """A few locations are smaller in JSON than in a LOCATION_TABLE: without aggregation
    tables and bundles the file stays readable by 1.3 readers."""
    definitions = Definitions(regions=[Region("main")],
                              locations=[Location(f"rank {i}", "process") for i in range(count)])
    events = EventBatch.from_events([(10, K.ENTER, 0), (20, K.LEAVE, 0)])
    path = tmp_path / "small.ccg"
    write_trace(path, definitions, ((i, [events]) for i in range(count)), aggregation=None, bundle=False)
    with ccgformat.open(path) as archive:
        assert archive.version == (1, 3)
        kinds = {entry.kind for entry in archive.directory}
        assert SectionKind.DEFINITIONS in kinds and SectionKind.LOCATION_TABLE not in kinds


def test_extensions_are_decoded_when_first_used():
    """Queries read the definitions without the extension records; only their use decodes them."""
    damaged = Path(__file__).parent / "data" / "bad" / "extension_table_bad_kind.ccg"
    with ccgformat.open(damaged) as archive:
        definitions = archive.definitions
        assert len(definitions.locations) == 300 and definitions.regions[0].name == "main"
        with pytest.raises(CorruptArchiveError, match="extension table: value kind 9"):
            definitions.extensions


def test_extensions_beside_an_extension_table_are_corrupt(tmp_path):
    source = Path(__file__).parent.parent / "spec" / "vectors" / "extension_records.ccg"
    path = rebuild(source, tmp_path / "both.ccg",
                   json_payload(SectionKind.DEFINITIONS, lambda d: d.update(extensions={})))
    with ccgformat.open(path) as archive, pytest.raises(CorruptArchiveError, match="beside an EXTENSION_TABLE"):
        archive.definitions


def test_extensions_decode_after_the_archive_is_closed():
    source = Path(__file__).parent.parent / "spec" / "vectors" / "extension_records.ccg"
    with ccgformat.open(source) as archive:
        definitions = archive.definitions
    assert definitions.extensions["demo"]["ids"] == [-1, (1 << 64) - 1]
    assert definitions.extensions["demo"]["records"][299] == ["String", [299, "rank 299"]]


# the fast path (`jsonflat`: runs of records encoded from their columns) against the reference walk
_scalar = (st.integers(-(1 << 64), 1 << 64) | st.integers(-3, 3) | _digits | st.sampled_from(["rank 7", "a\x00", ""])
           | st.none() | st.booleans() | st.floats(allow_nan=False, width=16))
_member = _scalar | st.lists(_scalar, max_size=18) | st.tuples(st.integers(0, 9), _digits)
_record = st.one_of(
    st.tuples(st.sampled_from(["String", "Location", "Group"]),
              st.lists(st.integers(0, 1 << 40) | _digits | st.lists(st.integers(0, 3), max_size=3), min_size=0,
                       max_size=6)).map(list),
    st.lists(_member, max_size=5), _scalar, st.dictionaries(st.sampled_from("ab"), _scalar, max_size=2))


def _run(kind: str, count: int, first: int) -> list:
    """Regular records, as an importer writes one per location."""
    if kind == "String":
        return [["String", [first + i, f"node {first + i}"]] for i in range(count)]
    if kind == "Location":
        return [["Location", [first + i, 2 * (first + i), 1, 48, first + i]] for i in range(count)]
    if kind == "ids":  # some beyond int64: those records go the reference walk
        return [["Id", [first + i, (1 << 63) - 2 + i % 4]] for i in range(count)]
    return list(range(first, first + count))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["String", "Location", "ids", "ints"]), st.integers(0, 200), st.integers(0, 1 << 62))
                | st.lists(_record, max_size=40), max_size=6),
       st.lists(_json, max_size=3))
def test_runs_of_records_encode_as_the_reference_walk_does(parts, before):
    records = []
    for part in parts:
        records += _run(*part) if isinstance(part, tuple) else part
    document = {"before": before, "records": records, "again": records[::3], "nested": [records[:40], records]}
    assert encode_json_table(document) == encode_json_table(document, flat=False)


def test_the_fast_path_takes_the_per_location_records(monkeypatch):
    """The runs of regular records go the fast path (the reference's result, see above)."""
    import ccgformat.archive.jsontable as jsontable
    document = {"definitions": _records(3000) + [["Group", [0, 1, list(range(3000))]], ["x", None]] + _records(50)}
    runs: list[int] = []
    original = jsontable._Encoder.columns_of
    monkeypatch.setattr(jsontable._Encoder, "columns_of", lambda self, flat: (runs.append(len(flat.kind)),
                                                                                original(self, flat))[1])
    assert encode_json_table(document) == encode_json_table(document, flat=False)
    # values of the records after the first 16 (a String record holds 5, the others 8), the
    # group's members after its first 16, the last 150 records
    assert runs == [(3000 - 16) * 5 + 6000 * 8, 3000 - 16, 50 * (5 + 8 + 8)]
