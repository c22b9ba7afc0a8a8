"""The native fast path of the OTF2 export (ccgformat/_native/export_otf2.c): under the
native backend, a location's batch goes to the OTF2 event writer from C - calls,
messages, requests, collectives and samples of one-member metrics - after its OTF2
references (regions, ranks, communicators, metrics) are looked up here for the whole
batch. A row with anything out of range (where the reference would fail or take a
detour), a MARKER or GENERIC event, and every row while an attribute list or a Metric
record is pending, is written by the reference (`export._LocationWriter`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import backends
from ...model import EventBatch, EventKind
from .binding import Binding
from .common import P2P_RECORDS, UNDEFINED_UINT32
from .native import PROTOTYPES
from .plan import Plan
from ...ordering import sorted_distinct

__all__ = ["FastPath", "RECORD_OF_KIND"]

#: The OTF2 record each kind C writes becomes.
RECORD_OF_KIND = {EventKind.ENTER: "Enter", EventKind.LEAVE: "Leave", **P2P_RECORDS,
                  EventKind.IRECV_REQUEST: "MpiIrecvRequest", EventKind.REQUEST_COMPLETE: "MpiIsendComplete",
                  EventKind.COLL_BEGIN: "MpiCollectiveBegin", EventKind.COLL_END: "MpiCollectiveEnd",
                  EventKind.METRIC: "Metric"}
_UINT32_END = 1 << 32
#: by kind: a message, a record of its time and request alone
_MESSAGES = np.zeros(256, bool)
_MESSAGES[[EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV]] = True
_TIME_ONLY = np.zeros(256, bool)
_TIME_ONLY[[EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE, EventKind.COLL_BEGIN]] = True


def _within(values: np.ndarray, end: int) -> np.ndarray:
    return (values >= 0) & (values < end)


class FastPath:
    """The OTF2 references of one plan as arrays, and the C writer."""

    def __init__(self, binding: Binding, plan: Plan):
        from ..._native.export_otf2 import RECORDS, Otf2Records

        self.records = Otf2Records({record: int(binding.ffi.cast("uintptr_t", binding.writers[record]))
                                    for record, _ in RECORDS.values()})
        self.plan = plan
        self.regions = np.array(plan.regions, np.int64)
        members: list[tuple[np.ndarray, np.ndarray]] = []
        for ranks in plan.ranks:
            peers = np.array(sorted(ranks), np.int64)
            members.append((peers, np.array([ranks[p] for p in peers.tolist()], np.int64)))
        self.members = members
        single = [len(plan.metric_types[metric]) == 1 and position == 0 for metric, position in plan.metrics]
        self.metric = np.array([metric if one else -1 for (metric, _), one in zip(plan.metrics, single)], np.int64)
        self.metric_type = np.array([plan.metric_types[metric][0] if one else 0
                                     for (metric, _), one in zip(plan.metrics, single)], np.int64)

    @classmethod
    def create(cls, binding: Binding, plan: Plan) -> FastPath | None:
        """The fast path, or None under the Python backend or when the library's event
        writers take other C types than export_otf2.c passes."""
        if not backends.native():
            return None
        if any(name not in binding.records or binding.records[name].c_types != types
               for name, types in PROTOTYPES.items()):
            return None
        return cls(binding, plan)

    def write(self, writer: int, prepared: Any, index: int) -> tuple[int, int]:
        """Write rows of a prepared batch from ``index`` on through the event writer at
        address ``writer``: the first row not written and the library's error code there."""
        return self.records.write(writer, prepared, index)

    def prepare(self, batch: EventBatch) -> Any:
        """The batch with, per row, whether C writes it and its OTF2 references."""
        from ..._native.export_otf2 import Otf2Batch

        n = len(batch)
        kind, ref, comm, tag = batch.kind, batch.ref, batch.comm, batch.tag
        ok = np.zeros(n, bool)
        target, otf2_comm = np.zeros(n, np.int64), np.zeros(n, np.int64)
        metric_type = np.zeros(n, np.int64)

        rows = np.flatnonzero(kind <= EventKind.LEAVE)
        known = _within(ref[rows], len(self.regions))
        target[rows[known]] = self.regions[ref[rows[known]]]
        ok[rows] = known & _within(target[rows], _UINT32_END)

        rows = np.flatnonzero(_MESSAGES[kind])
        found, otf2_comm[rows], target[rows] = self._ranks(comm[rows], ref[rows], np.ones(len(rows), bool))
        ok[rows] = found & _within(tag[rows], _UINT32_END) & (batch.size[rows] >= 0)

        ok[_TIME_ONLY[kind]] = True

        rows = np.flatnonzero(kind == EventKind.COLL_END)
        found, otf2_comm[rows], target[rows] = self._ranks(comm[rows], tag[rows], tag[rows] >= 0)
        ok[rows] = found & _within(ref[rows], 256) & (batch.size[rows] >= 0) & (batch.recv_size[rows] >= 0)

        rows = np.flatnonzero(kind == EventKind.METRIC)
        known = _within(ref[rows], len(self.metric))
        target[rows[known]] = self.metric[ref[rows[known]]]
        metric_type[rows[known]] = self.metric_type[ref[rows[known]]]
        ok[rows] = known & (target[rows] >= 0) & (target[rows] < _UINT32_END)

        ok &= (batch.time >= 0) & _within(otf2_comm, _UINT32_END) & _within(target, _UINT32_END)
        return Otf2Batch(batch, ok, target, otf2_comm, metric_type)

    def _ranks(self, comm: np.ndarray, peer: np.ndarray,
               has_peer: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`export._LocationWriter._rank` for many rows: whether it finds the peer (or the
        row has none), the OTF2 communicator, and the peer's rank (undefined for none)."""
        plan = self.plan
        found = np.zeros(len(comm), bool)
        otf2_comm = np.zeros(len(comm), np.int64)
        rank = np.full(len(comm), UNDEFINED_UINT32, np.int64)
        for value in sorted_distinct(comm).tolist():
            rows = np.flatnonzero(comm == value)
            mine = ~found[rows]
            for index in ([value] if 0 <= value < len(plan.ranks) else []) + (
                    [plan.world] if plan.world is not None else []):
                member, peer_rank = self._member(index, peer[rows])
                hit = mine & (member | ~has_peer[rows])
                chosen = rows[hit]
                found[chosen] = True
                otf2_comm[chosen] = plan.comms[index]
                rank[chosen] = np.where(has_peer[chosen], peer_rank[hit], UNDEFINED_UINT32)
                mine &= ~hit
        return found, otf2_comm, rank

    def _member(self, index: int, peers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each peer is in communicator ``index``, and its rank there."""
        keys, ranks = self.members[index]
        at = np.minimum(np.searchsorted(keys, peers), max(len(keys) - 1, 0))
        member = (keys[at] == peers) if len(keys) else np.zeros(len(peers), bool)
        return member, ranks[at] if len(keys) else np.zeros(len(peers), np.int64)
