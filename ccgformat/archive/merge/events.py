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


def _references(maps: Maps) -> list[tuple[tuple[int, ...], str, np.ndarray, bool]]:
    """(kinds, column, map, checked) for every column that refers to a definition;
    ``checked``: the builder refuses a reference to nothing (regions, peers, metrics), so
    an archive holds none; a communicator or string that is not defined is the source's
    own number, kept as it is."""
    return [(_CALLS, "ref", maps.regions, True), (_PEERS, "ref", maps.locations, True),
            (_COMMUNICATING, "comm", maps.communicators, False), ((EventKind.METRIC,), "ref", maps.metrics, True),
            ((EventKind.GENERIC,), "ref", maps.strings, False), ((EventKind.GENERIC,), "value", maps.strings, False)]


def remap_batch(batch: EventBatch, maps: Maps, path: str) -> EventBatch:
    """``batch`` (of the archive at ``path``) with its references renumbered (the batch
    itself when ``maps`` keep every id)."""
    if maps.identity:
        return batch
    columns = {}
    for kinds, name, ids, checked in _references(maps):
        chosen = np.isin(batch.kind, kinds)
        if chosen.any():
            column = columns.get(name, getattr(batch, name)).copy()
            column[chosen] = _renumbered(ids, column[chosen], name, path, checked)
            columns[name] = column
    return replace(batch, **columns) if columns else batch


def remap_keys(kind: np.ndarray, key_start: np.ndarray, key: np.ndarray, maps: Maps, path: str) -> np.ndarray:
    """The ``key`` column of nodes (each node's hard columns in `KIND_FIELDS` order from
    ``key_start``) renumbered; a CALL node's key is its region."""
    key = key.copy()
    for kinds, name, ids, checked in _references(maps):
        for node_kind in sorted({0 if k in _CALLS else int(k) for k in kinds}):
            hard = ("ref",) if node_kind == 0 else KIND_FIELDS[EventKind(node_kind)].hard
            at = key_start[np.flatnonzero(kind == node_kind)] + hard.index(name)
            key[at] = _renumbered(ids, key[at], name, path, checked)
    return key


def _renumbered(ids: np.ndarray, values: np.ndarray, name: str, path: str, checked: bool) -> np.ndarray:
    """``ids[values]``; a value outside ``ids`` refers to nothing defined: corruption when
    ``checked``, else kept."""
    outside = (values < 0) | (values >= len(ids))
    if not checked:
        return np.where(outside, values, ids[np.where(outside, 0, values)]) if len(ids) else values
    bad = np.flatnonzero(outside)
    if len(bad):
        raise CorruptArchiveError(f"{name} {int(values[bad[0]])} refers to no definition ({len(ids)} defined)",
                                  path=path)
    return ids[values]
