"""The merged locations' checkpoints taken from the archives that hold them (docs/merge.md):
a merge of archives that define the same stores each location's checkpoints as its
archive stores them (spec 4.8: they hold regions, metrics and peers by their ids, which
such a merge keeps) instead of walking the merged events again."""

from __future__ import annotations

import numpy as np

from ...graph.graph import root_rows
from ..checkpoint_columns import CheckpointColumns
from ..indexes import checkpoints
from ..layout import SectionKind
from ..reader import Archive
from ..tables import decode_checkpoint_columns


def held_checkpoints(archives: list[Archive], locations: np.ndarray, owners: np.ndarray,
                     interval: int) -> CheckpointColumns:
    """The checkpoints at ``interval`` of ``locations``, each those of archive
    ``owners[i]`` (archives that define the same: the merged ids are theirs)."""
    columns = []
    for source, archive in enumerate(archives):
        wanted = locations[owners == source]
        if len(wanted):
            columns.append(_checkpoints(archive, wanted, interval))
    return CheckpointColumns.concat(columns) if columns else CheckpointColumns.from_checkpoints([])


def _checkpoints(archive: Archive, wanted: np.ndarray, interval: int) -> CheckpointColumns:
    """The checkpoints at ``interval`` of the locations ``wanted`` (increasing): the
    archive's CHECKPOINT_TABLE blocks' columns, taken whole (20,000 locations: decoding
    them to dictionaries and encoding them again took 0.2 s of CPU), and the locations
    they lack (another interval, a file without the index) walked there."""
    tables = [decode_checkpoint_columns(archive.payload(entry), archive.path, entry.offset)
              for entry in archive.sections if entry.kind == SectionKind.CHECKPOINT_TABLE]
    stored = CheckpointColumns.concat([table for kept, table in tables if kept == interval]) \
        if any(kept == interval for kept, _ in tables) else None
    found = np.zeros(len(wanted), bool)
    parts = []
    if stored is not None and len(stored):
        at, found = root_rows(stored.locations, wanted)
        found &= stored.counts[at] > 0
        parts.append(stored.take(at[found]))
    walked = wanted[~found].tolist()
    if walked:
        parts.append(CheckpointColumns.from_checkpoints(
            (location, checkpoints(archive.location(location), interval)) for location in walked))
    return CheckpointColumns.concat(parts)
