"""Golden vectors: every archive in spec/vectors reads back as its listing says.

The files are written only by tools/regen_vectors.py; a missing file is a failure here,
never a reason to skip or to regenerate (DESIGN.md, "Principles").
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive.layout import BLOCK_HEADER, TRAILER, SectionKind
from ccgformat.model import KIND_FIELDS, Event, EventKind

from .test_graph_lossy import check_location

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
#: The vectors tools/regen_vectors.py writes; each must exist with its listing.
EXPECTED = tuple(f"{name}{suffix}" for name in ("minimal", "every_kind", "wide_split", "lossy", "empty_location",
                                                          "many_locations")
                 for suffix in ("", "_1_3"))


def vector_names() -> list[str]:
    found = sorted(path.stem for path in VECTORS.glob("*.ccg")) if VECTORS.is_dir() else []
    return sorted(set(found) | set(EXPECTED))


def describe(location: int, event: Event) -> str:
    fields = KIND_FIELDS[EventKind(event.kind)]
    parts = [str(location), str(event.time), EventKind(event.kind).name]
    parts += [f"{name}={getattr(event, name)}" for name in fields.hard + fields.soft]
    return " ".join(parts)


def parse_listing(name: str) -> tuple[list[int], dict[int, list[Event]], list[str]]:
    """Locations, events per location and the event lines of NAME.events.txt."""
    path = VECTORS / f"{name}.events.txt"
    assert path.is_file(), f"{path} is missing: run `python tools/regen_vectors.py`"
    lines = path.read_text().splitlines()
    assert lines and lines[0].startswith("# locations:"), f"{path}: the first line must name the locations"
    locations = [int(word) for word in lines[0].split(":", 1)[1].split()]
    events: dict[int, list[Event]] = {location: [] for location in locations}
    for line in lines[1:]:
        location, time, kind, *fields = line.split()
        columns = {key: int(value) for key, value in (field.split("=") for field in fields)}
        kind_ = EventKind[kind]
        assert set(columns) == set(KIND_FIELDS[kind_].hard + KIND_FIELDS[kind_].soft), line
        events[int(location)].append(Event(int(time), int(kind_), **columns))
    return locations, events, lines[1:]


def read_events(archive: ccg.Archive) -> dict[int, list[Event]]:
    return {location: [e for batch in archive.location(location).events() for e in batch.rows()]
            for location in archive.locations}


def section_kinds(path: Path, archive: ccg.Archive) -> set[int]:
    """The kinds the directory lists, plus the footer's own kind (read from the trailer)."""
    data = path.read_bytes()
    footer_length, _ = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    footer_kind, _, _ = BLOCK_HEADER.unpack_from(data, len(data) - TRAILER.size - footer_length)
    return {entry.kind for entry in archive._directory} | {footer_kind}


def test_the_vector_folder_is_complete():
    assert VECTORS.is_dir(), f"{VECTORS} is missing: run `python tools/regen_vectors.py`"
    for name in vector_names():
        for suffix in (".ccg", ".events.txt"):
            assert (VECTORS / f"{name}{suffix}").is_file(), \
                f"{name}{suffix} is missing from spec/vectors: run `python tools/regen_vectors.py`"
    assert (VECTORS / "README.md").is_file()
    readme = (VECTORS / "README.md").read_text()
    for name in vector_names():
        assert f"`{name}.ccg`" in readme, f"spec/vectors/README.md does not describe {name}.ccg"


@pytest.mark.parametrize("name", vector_names())
def test_vector_reads_back_as_listed(name):
    path = VECTORS / f"{name}.ccg"
    assert path.is_file(), f"{path} is missing: run `python tools/regen_vectors.py`"
    locations, expected, lines = parse_listing(name)
    with ccg.open(path) as archive:
        assert archive.locations == locations
        assert archive.stats.events == len(lines)
        got = read_events(archive)
        if archive.params.lossless:
            assert [describe(loc, e) for loc in locations for e in got[loc]] == lines
        else:
            for location in locations:
                check_location(expected[location], got[location], archive.params)
        for location in locations:
            walker = archive.location(location)
            events = got[location]
            assert len(walker) == len(events) == archive.roots[location].events
            assert [e for b in walker.events(reverse=True, batch_size=7) for e in b.rows()][::-1] == events
            assert [walker.event(i) for i in range(len(events))] == events
            for i, event in enumerate(events):
                first = next(j for j, e in enumerate(events) if e.time == event.time)
                assert walker.find(event.time) == first
            summary = archive.checkpoints(SectionKind.SUMMARY, location)
            snapshots = archive.checkpoints(SectionKind.SNAPSHOTS, location)
            assert summary and [c["index"] for c in summary] == [c["index"] for c in snapshots]
            assert summary[-1]["index"] == len(events)


def test_the_lossy_vector_is_lossy():
    """Otherwise its bounds test would prove nothing."""
    _, expected, _ = parse_listing("lossy")
    with ccg.open(VECTORS / "lossy.ccg") as archive:
        assert not archive.params.lossless
        assert archive.params.abs_dev > 0 and archive.params.rel_dev > 0 and archive.params.rel_size > 0
        assert read_events(archive) != expected
        assert archive.stats.n < archive.stats.N


def test_vectors_cover_every_section_and_event_kind():
    sections: set[int] = set()
    kinds: set[int] = set()
    for name in vector_names():
        path = VECTORS / f"{name}.ccg"
        with ccg.open(path) as archive:
            sections |= section_kinds(path, archive)
        _, events, _ = parse_listing(name)
        kinds |= {event.kind for location in events.values() for event in location}
    assert {SectionKind(kind).name for kind in sections} >= {kind.name for kind in SectionKind}
    assert {EventKind(kind).name for kind in kinds} == {kind.name for kind in EventKind}


def test_every_kind_uses_several_blocks_and_checkpoints():
    with ccg.open(VECTORS / "every_kind.ccg") as archive:
        nodes = [e for e in archive._directory if e.kind == SectionKind.NODES]
        assert len(nodes) > 3
        assert archive.stats.n < archive.stats.N  # sub-trees are shared
        for location in archive.locations:
            assert len(archive.checkpoints(SectionKind.SNAPSHOTS, location)) > 2
        definitions = archive.definitions
        assert definitions.regions and definitions.system_tree and definitions.communicators
        assert definitions.metrics and definitions.strings and definitions.provenance
        assert {m.value_type for m in definitions.metrics} >= {"int64", "double"}


def test_the_header_names_the_lowest_minor_version_the_features_need(tmp_path):
    """Every vector of the 1.2 layout has SUMMARY blocks (1.2); an archive without
    locations needs 1.1 for DEFINITIONS extensions and 1.0 without them; the tables of 1.3
    make every file 1.3."""
    with ccg.open(VECTORS / "empty_location.ccg") as archive:
        assert archive.version == (1, 2)
        assert archive.definitions.extensions == {"otf2": {"location_ids": [7, 1 << 40], "paradigms": {"mpi": 1}}}
    for name in ("minimal", "every_kind", "wide_split", "lossy"):
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 2) and archive.definitions.extensions == {}
        with ccg.open(VECTORS / f"{name}_1_3.ccg") as archive:
            assert archive.version == (1, 3)
    for extensions, minor in (({}, 0), ({"otf2": {"x": 1}}, 1)):
        path = tmp_path / f"{minor}.ccg"
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params(), tables=False)
        with ccg.open(path) as archive:
            assert archive.version == (1, minor)
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params())
        with ccg.open(path) as archive:
            assert archive.version == (1, 3)
