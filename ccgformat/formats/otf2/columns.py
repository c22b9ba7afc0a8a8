"""One location's event lists (from `EventReader`) as model columns.

OTF2 references become model indexes: regions, communicators, peer ranks (-> peer
location) and collective roots (-> root location, -1 for none). An event the model
cannot hold exactly (a rank outside its communicator, a size beyond int64, an ENTER or
LEAVE that breaks the nesting) becomes its OTF2 record as a GENERIC event.
"""

from __future__ import annotations

import numpy as np

from ...errors import FormatError
from ...model import EventKind
from ..common import StringTable
from .callbacks import EventReader
from .common import P2P_RECORDS, UNDEFINED_UINT32
from .definitions import Tables

__all__ = ["to_columns"]

_INT64_LIMIT = 1 << 63


def to_columns(events: EventReader, path: str) -> dict[str, np.ndarray]:
    """The columns of the events ``events`` has read from the event file ``path``."""
    tables, intern = events.tables, events.intern
    n = len(events.time)
    time = np.array(events.time, dtype=np.uint64)
    if n and int(time.max()) >= _INT64_LIMIT:
        i = int(np.argmax(time >= _INT64_LIMIT))
        raise FormatError(f"event {i}: timestamp {int(time[i])} is beyond the int64 range", path=path)
    kind = np.array(events.kind, dtype=np.uint8)
    raw_ref = np.array(events.ref, dtype=np.uint64)
    cols = {name: np.zeros(n, np.uint64) for name in ("comm", "tag", "request", "size", "recv_size", "value")}
    if events.extra:
        extra = np.array(events.extra, dtype=np.uint64).reshape(-1, 7)
        at = extra[:, 0].astype(np.intp)
        for j, name in enumerate(cols, start=1):
            cols[name][at] = extra[:, j]
    ref = raw_ref.astype(np.int64)
    _map_regions(tables, kind, raw_ref, ref, path)
    fallback = _map_communication(tables, kind, raw_ref, ref, cols, path)
    result = {"time": time.view(np.int64), "kind": kind, "ref": ref}
    result.update({name: values.view(np.int64) for name, values in cols.items()})
    for i in fallback:
        _to_generic(result, tables, intern, raw_ref, i)
    for i in _unmatched_calls(kind, ref):
        name = "otf2:Enter" if kind[i] == EventKind.ENTER else "otf2:Leave"
        _set_generic(result, intern, i, name, {"region": int(raw_ref[i])})
    return result


def _lookup(refs: np.ndarray, index: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model indexes of OTF2 references, and a mask of those not defined."""
    if len(refs) == 0:
        return np.zeros(len(values), np.int64), np.ones(len(values), bool)
    pos = np.minimum(np.searchsorted(refs, values), len(refs) - 1)
    return index[pos], refs[pos] != values


def _map_regions(tables: Tables, kind: np.ndarray, raw: np.ndarray, ref: np.ndarray, path: str) -> None:
    """Region references of ENTER and LEAVE -> model regions (undefined: `FormatError`)."""
    calls = np.flatnonzero(kind <= EventKind.LEAVE)
    mapped, bad = _lookup(tables.region_refs, tables.region_index, raw[calls])
    if bad.any():
        i = int(calls[np.argmax(bad)])
        raise FormatError(f"event {i}: region {int(raw[i])} is not defined", path=path)
    ref[calls] = mapped


def _map_communication(t: Tables, kind: np.ndarray, raw: np.ndarray, ref: np.ndarray,
                       cols: dict[str, np.ndarray], path: str) -> list[int]:
    """Map communicators, peers and roots; returns the events that must become GENERIC."""
    selected = np.flatnonzero(np.isin(kind, [*P2P_RECORDS, EventKind.COLL_END]))
    if not len(selected):
        return []
    comm, bad = _lookup(t.comm_refs, t.comm_index, cols["comm"][selected])
    if bad.any():
        i = int(selected[np.argmax(bad)])
        raise FormatError(f"event {i}: communicator {int(cols['comm'][i])} is not defined", path=path)
    collective = kind[selected] == EventKind.COLL_END
    rank = np.where(collective, cols["tag"][selected], raw[selected])
    no_root = collective & (rank == UNDEFINED_UINT32)
    ok = no_root | (rank < t.comm_size[comm].astype(np.uint64))
    ok &= (cols["size"][selected] < _INT64_LIMIT) & (cols["recv_size"][selected] < _INT64_LIMIT)
    members = t.comm_members if len(t.comm_members) else np.zeros(1, np.int64)
    position = np.where(ok & ~no_root, t.comm_offset[comm] + rank.astype(np.int64), 0)
    location = np.where(no_root, -1, members[position])
    cols["comm"][selected] = comm.astype(np.uint64)
    p2p = ~collective & ok
    ref[selected[p2p]] = location[p2p]
    roots = collective & ok
    cols["tag"][selected[roots]] = location[roots].astype(np.int64).view(np.uint64)
    return selected[~ok].tolist()


def _to_generic(columns: dict[str, np.ndarray], tables: Tables, intern: StringTable, raw_ref: np.ndarray, i: int) -> None:
    """An event the model cannot hold exactly becomes its OTF2 record as GENERIC."""
    kind = EventKind(int(columns["kind"][i]))
    comm = tables.comms[int(columns["comm"][i])]
    size = int(columns["size"][i].view(np.uint64))
    if kind == EventKind.COLL_END:
        fields = {"collectiveOp": int(raw_ref[i]), "communicator": comm,
                  "root": int(columns["tag"][i].view(np.uint64)), "sizeSent": size,
                  "sizeReceived": int(columns["recv_size"][i].view(np.uint64))}
        _set_generic(columns, intern, i, "otf2:MpiCollectiveEnd", fields)
        return
    name = P2P_RECORDS[kind]
    peer = "receiver" if kind in (EventKind.SEND, EventKind.ISEND) else "sender"
    fields = {peer: int(raw_ref[i]), "communicator": comm, "msgTag": int(columns["tag"][i]), "msgLength": size}
    if kind in (EventKind.ISEND, EventKind.IRECV):
        fields["requestID"] = int(columns["request"][i].view(np.uint64))
    _set_generic(columns, intern, i, f"otf2:{name}", fields)


def _set_generic(columns: dict[str, np.ndarray], intern: StringTable, i: int, kind: str, fields: dict[str, int]) -> None:
    """Event ``i`` becomes a GENERIC event of ``kind`` with ``fields`` as compact JSON."""
    for name in ("comm", "tag", "request", "size", "recv_size"):
        columns[name][i] = 0
    columns["kind"][i] = EventKind.GENERIC
    columns["ref"][i] = intern(kind)
    columns["value"][i] = intern.json(fields, ensure_ascii=True)


def _unmatched_calls(kind: np.ndarray, ref: np.ndarray) -> list[int]:
    """ENTER and LEAVE events that break the nesting: a LEAVE of a region that is not
    open, the ENTERs still open inside a LEAVE of a region further out, and the ENTERs
    open at the end. The rest nests properly."""
    calls = np.flatnonzero(kind <= EventKind.LEAVE)
    if not len(calls):
        return []
    enter = kind[calls] == EventKind.ENTER
    depth = np.cumsum(np.where(enter, 1, -1))
    if depth.min() >= 0 and depth[-1] == 0:
        # nested iff, per depth level in time order, ENTER and LEAVE of one region alternate
        level = np.where(enter, depth, depth + 1)
        order = np.argsort(level, kind="stable")
        regions = ref[calls][order]
        if enter[order][0::2].all() and not enter[order][1::2].any() and np.array_equal(regions[0::2], regions[1::2]):
            return []
    unmatched: list[int] = []
    stack: list[tuple[int, int]] = []
    for i, is_enter, region in zip(calls.tolist(), enter.tolist(), ref[calls].tolist()):
        if is_enter:
            stack.append((region, i))
            continue
        depth_of = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][0] == region), None)
        if depth_of is None:
            unmatched.append(i)
        else:
            unmatched.extend(j for _, j in stack[depth_of + 1:])
            del stack[depth_of:]
    unmatched.extend(j for _, j in stack)
    return sorted(unmatched)

