"""What the tests of ``--mpi`` share: an archive's events compared with another's, the
texts GENERIC events intern compared instead of their string indexes (each part of a
parallel conversion interns the texts its own events use, and the merge unifies them)."""

from __future__ import annotations

import numpy as np

import ccgformat as ccg
from ccgformat.model import COLUMNS, EventKind


def location_rows(archive: ccg.Archive, location: int) -> dict[str, list]:
    """The location's events as columns; GENERIC events' ``ref`` and ``value`` as their texts."""
    parts = [batch for _, stream in archive.location_events([location]) for batch in stream]
    batch = ccg.EventBatch.concat(parts) if parts else ccg.EventBatch.empty()
    strings = np.array(archive.definitions.strings + [""], object)
    generic = batch.kind == EventKind.GENERIC
    rows: dict[str, list] = {"time": batch.time.tolist(), "kind": batch.kind.tolist()}
    for name in COLUMNS:
        column = getattr(batch, name).astype(object)
        if name in ("ref", "value"):
            column[generic] = strings[np.clip(getattr(batch, name)[generic], -1, len(strings) - 1)]
        rows[name] = column.tolist()
    return rows


def assert_same_events(expected: ccg.Archive, actual: ccg.Archive) -> None:
    """Every location's events equal (GENERIC texts compared as texts)."""
    assert actual.locations == expected.locations
    for location in expected.locations:
        assert location_rows(actual, location) == location_rows(expected, location), f"location {location}"
