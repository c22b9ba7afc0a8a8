"""Event batches and node keys renumbered into the merged definitions (`definitions.Maps`).

What a column refers to depends on the kind (spec/records.md): ENTER and LEAVE name a
region, point-to-point events a peer location and a communicator, COLL_END a
communicator, METRIC a metric, GENERIC two strings. A COLL_END's operation and root and a
MARKER's type and value are the source format's own numbers, copied as they are.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...errors import CorruptArchiveError
from ...model import KIND_FIELDS, PEER_KINDS, EventBatch, EventKind
from .definitions import Maps

_CALLS = (EventKind.ENTER, EventKind.LEAVE)
_PEERS = tuple(PEER_KINDS)
_COMMUNICATING = _PEERS + (EventKind.COLL_END,)


def _references(maps: Maps) -> list[tuple[tuple[int, ...], str, np.ndarray]]:
    """(kinds, column, map) for every column that refers to a definition."""
    return [(_CALLS, "ref", maps.regions), (_PEERS, "ref", maps.locations),
            (_COMMUNICATING, "comm", maps.communicators), ((EventKind.METRIC,), "ref", maps.metrics),
            ((EventKind.GENERIC,), "ref", maps.strings), ((EventKind.GENERIC,), "value", maps.strings)]


def remap_batch(batch: EventBatch, maps: Maps, path: str) -> EventBatch:
    """``batch`` (of the archive at ``path``) with its references renumbered (the batch
    itself when ``maps`` keep every id)."""
    if maps.identity:
        return batch
    columns = {}
    for kinds, name, ids in _references(maps):
        chosen = np.isin(batch.kind, kinds)
        if chosen.any():
            column = columns.get(name, getattr(batch, name)).copy()
            column[chosen] = _renumbered(ids, column[chosen], name, path)
            columns[name] = column
    return replace(batch, **columns) if columns else batch


def remap_keys(kind: np.ndarray, key_start: np.ndarray, key: np.ndarray, maps: Maps, path: str) -> np.ndarray:
    """The ``key`` column of nodes (each node's hard columns in `KIND_FIELDS` order from
    ``key_start``) renumbered; a CALL node's key is its region."""
    key = key.copy()
    for kinds, name, ids in _references(maps):
        for node_kind in sorted({0 if k in _CALLS else int(k) for k in kinds}):
            hard = ("ref",) if node_kind == 0 else KIND_FIELDS[EventKind(node_kind)].hard
            at = key_start[np.flatnonzero(kind == node_kind)] + hard.index(name)
            key[at] = _renumbered(ids, key[at], name, path)
    return key


def _renumbered(ids: np.ndarray, values: np.ndarray, name: str, path: str) -> np.ndarray:
    """``ids[values]``; a value outside ``ids`` refers to nothing defined."""
    bad = np.flatnonzero((values < 0) | (values >= len(ids)))
    if len(bad):
        raise CorruptArchiveError(f"{name} {int(values[bad[0]])} refers to no definition ({len(ids)} defined)",
                                  path=path)
    return ids[values]
