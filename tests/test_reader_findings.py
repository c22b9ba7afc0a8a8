"""Damaged archives that fuzz/fuzz_reader.py found to raise something other than a
CcgError: each must now be refused with CorruptArchiveError."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive.layout import ROOT_ENTRY, SectionKind
from ccgformat.errors import CorruptArchiveError

from .test_vectors import VECTORS, describe, parse_listing
from .test_verify import rebuild

#: a vector with a ROOTS section (the 1.3 vectors hold a ROOT_TABLE instead)
EVERY_KIND = "1.2/every_kind"


def with_roots(tmp_path: Path, change) -> Path:
    def payload(entry, raw):
        if entry.kind != SectionKind.ROOTS:
            return raw
        rows = [list(row) for row in ROOT_ENTRY.iter_unpack(raw)]
        change(rows)
        return b"".join(ROOT_ENTRY.pack(*row) for row in rows)
    path = rebuild(VECTORS / f"{EVERY_KIND}.ccg", tmp_path / "roots.ccg", payload)
    with ccg.open(path) as archive:
        assert any(entry.kind == SectionKind.ROOTS for entry in archive.directory)
    return path


def read_events(path: Path) -> list[str]:
    """The archive's events in global time order, as listing lines."""
    with ccg.open(path) as archive:
        return [describe(int(location), event) for locations, batch in archive.events()
                for location, event in zip(locations, batch.rows())]


def test_the_vector_with_its_roots_rewritten_unchanged_reads_as_listed(tmp_path):
    """The rewritten vector gives the events of its listing (written by
    tools/regen_vectors.py), merged in time order with ties by location."""
    locations, events, _ = parse_listing(EVERY_KIND)
    merged = sorted(((e.time, location, i, e) for location in locations for i, e in enumerate(events[location])),
                    key=lambda row: row[:3])
    assert read_events(with_roots(tmp_path, lambda rows: None)) == [describe(loc, e) for _, loc, _, e in merged]


@pytest.mark.parametrize("change", [
    # fuzz finding (crash-a4aa0267, crash-96a7e479): a location id past 2**63 made the merge of
    # all locations' events fail with OverflowError
    lambda rows: rows[-1].__setitem__(0, 2**64 - 1),
    lambda rows: rows[-1].__setitem__(0, 2**63),
    # locations out of order (spec 4.3 lists them in increasing order)
    lambda rows: rows.reverse(),
], ids=["location-2**64-1", "location-2**63", "decreasing"])
def test_roots_with_impossible_locations_are_corrupt(tmp_path, change):
    path = with_roots(tmp_path, change)
    with pytest.raises(CorruptArchiveError, match="roots section"):
        read_events(path)
