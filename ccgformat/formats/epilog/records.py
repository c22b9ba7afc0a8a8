"""Event and attribute records decoded column-wise, grouped by type and body length."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .definitions import DefinitionRecords
from .layouts import ATTRIBUTES, EVENTS, NO_ID, Layout
from .source import Source
from ...ordering import sorted_distinct

_GATHER = 65536          # records gathered per numpy fancy-index step


@dataclass
class Group:
    """Event records of one type and body length, decoded column-wise."""

    kind: int
    layout: Layout | None        #: None for an event type this reader does not know
    index: np.ndarray            #: positions in the event record list
    data: np.ndarray             #: structured array, one row per record


@dataclass
class Records:
    """All event and attribute records in file order."""

    starts: np.ndarray
    kinds: np.ndarray
    lids: np.ndarray             #: location id, NO_ID when the record has none
    times: np.ndarray            #: seconds, as in the file
    owner: np.ndarray            #: the event record each record belongs to (itself, or the next for attributes)
    metric_count: int
    groups: list[Group]


def _metric_count(source: Source, defs: DefinitionRecords, starts: np.ndarray, kinds: np.ndarray) -> int:
    """METRIC definitions, else inferred from the first event record with metric values."""
    if defs.table("METRIC"):
        return len(defs.table("METRIC"))
    bearing = np.flatnonzero(np.isin(kinds, [k for k, layout in EVENTS.items() if layout.metrics]))
    if not len(bearing):
        return 0
    first = int(bearing[0])
    fixed = np.dtype([(n, code) for n, code in EVENTS[int(kinds[first])].fields]).itemsize
    return max(0, (int(source.data[starts[first]]) - 8 - fixed) // 8)


def _record_dtype(source: Source, kind: int, layout: Layout | None, length: int, metrics: int,
                  offset: int) -> np.dtype:
    """The structured dtype of a record body, choosing by its length whether it has a location id."""
    o = source.order
    if layout is None:
        if length < 12:
            raise source.error(f"truncated event record of unknown type {kind}: a {length}-byte body cannot hold "
                               f"a location id and a time", offset)
        return np.dtype([("lid", o + "u4"), ("time", o + "f8"), ("data", "u1", (length - 12,))])
    core = [(name, o + code) for name, code in layout.before]
    if layout.metrics and metrics:
        core.append(("metv", o + "u8", (metrics,)))
    core += [(name, o + code) for name, code in layout.after]
    size = np.dtype(core).itemsize
    if layout.role == "attribute":
        if length != size:
            raise source.error(f"{layout.name} record has a {length}-byte body; expected {size}", offset)
        return np.dtype(core)
    if length == size + 12:
        return np.dtype([("lid", o + "u4"), ("time", o + "f8")] + core)
    if length == size + 8:
        return np.dtype([("time", o + "f8")] + core)
    raise source.error(f"{'truncated ' if length < size + 8 else ''}{layout.name} record: a {length}-byte body; "
                       f"expected {size + 8} bytes (without location id) or {size + 12} (with one)"
                       f"{f' for {metrics} metric(s)' if layout.metrics else ''}", offset)


def _gather(raw: np.ndarray, bodies: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Copy equally long record bodies into a structured array, a slab at a time."""
    out = np.empty(len(bodies), dtype)
    flat = out.view(np.uint8).reshape(len(bodies), dtype.itemsize)
    columns = np.arange(dtype.itemsize)
    for first in range(0, len(bodies), _GATHER):
        chunk = bodies[first:first + _GATHER]
        flat[first:first + len(chunk)] = raw[chunk[:, None] + columns]
    return out


def decode(source: Source, defs: DefinitionRecords, starts: np.ndarray) -> Records:
    """Decode the event and attribute records at ``starts``."""
    raw = np.frombuffer(source.data, np.uint8)
    kinds = raw[starts + 1]
    lengths = raw[starts]
    metrics = _metric_count(source, defs, starts, kinds)
    lids = np.full(len(starts), NO_ID, np.int64)
    times = np.zeros(len(starts))
    groups = []
    for kind in sorted_distinct(kinds).tolist():
        of_kind = np.flatnonzero(kinds == kind)
        layout = ATTRIBUTES.get(kind) or EVENTS.get(kind)
        for length in sorted_distinct(lengths[of_kind]).tolist():
            index = of_kind[lengths[of_kind] == length]
            dtype = _record_dtype(source, kind, layout, length, metrics, int(starts[index[0]]))
            data = _gather(raw, starts[index] + 2, dtype)
            if "lid" in dtype.names:
                lids[index] = data["lid"]
            if "time" in dtype.names:
                times[index] = data["time"]
            groups.append(Group(kind, layout, index, data))
    attribute = np.isin(kinds, list(ATTRIBUTES))
    following = np.where(attribute, len(starts), np.arange(len(starts)))
    owner = np.minimum.accumulate(following[::-1])[::-1] if len(starts) else following
    if len(owner) and owner[-1] == len(starts):
        orphan = int(np.flatnonzero(owner == len(starts))[0])
        raise source.error("attribute record not followed by an event record", int(starts[orphan]))
    return Records(starts, kinds, lids, times[owner], owner, metrics, groups)
