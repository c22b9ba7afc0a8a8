"""Records to model events: expanded in file order, ordered by location, LEAVEs matched to ENTERs."""

from __future__ import annotations

import json
from typing import Any, Iterator

import numpy as np

from ...model import EventBatch, EventKind
from ..common import StringTable, batches
from .layouts import ATTR_REQUEST, CONSUMED, MAIN_EVENTS
from .model import Model, lookup
from .records import Group

LocationStreams = Iterator[tuple[int, Iterator[EventBatch]]]


def _json_rows(data: np.ndarray, names: list[str]) -> list[str]:
    """Each row's ``names`` fields as compact JSON."""
    columns = [data[name].tolist() for name in names]
    if not columns:
        return ["{}"] * len(data)
    return [json.dumps(dict(zip(names, row)), separators=(",", ":")) for row in zip(*columns)]


class Events:
    """Expands records into model events (file order), then orders them by location."""

    def __init__(self, model: Model, regions: dict[int, int], strings: StringTable, ticks: np.ndarray) -> None:
        self.model, self.records, self.regions, self.strings = model, model.records, regions, strings
        records = self.records
        self.requests = np.zeros(len(records.starts), np.int64)
        self.has_request = np.zeros(len(records.starts), bool)
        self.counts = counts = np.zeros(len(records.starts), np.int64)
        for group in records.groups:
            counts[group.index] = self._count(group)
            if group.kind == 61:
                counts[group.index[self._folded_requests(group)]] = 0
        self.start = np.cumsum(counts) - counts
        self.record = np.repeat(np.arange(len(counts)), counts)
        self.kind = np.zeros(len(self.record), np.uint8)
        self.columns = {name: np.zeros(len(self.record), np.int64)
                        for name in ("ref", "comm", "tag", "request", "size", "recv_size", "value")}
        for group in records.groups:
            self._fill(group)
        self.location = model.located[self.record]
        self.time = ticks[self.record]
        self._by_location()
        self._match_regions()

    def _count(self, group: Group) -> int:
        """How many model events each record of ``group`` becomes."""
        layout = group.layout
        if layout is None or layout.role == "attribute":
            return 1
        return layout.tagged + (self.records.metric_count if layout.metrics else 0) + MAIN_EVENTS[layout.role]

    def _folded_requests(self, group: Group) -> np.ndarray:
        """REQUEST attributes right before an MPI_SEND or MPI_RECV become its request column."""
        records = self.records
        following = np.minimum(group.index + 1, len(records.kinds) - 1)
        folded = (group.data["type"] == ATTR_REQUEST) & (records.owner[group.index] == group.index + 1) & \
            np.isin(records.kinds[following], (103, 104))
        self.requests[following[folded]] = group.data["value"][folded]
        self.has_request[following[folded]] = True
        return folded

    def put(self, index: np.ndarray, slot: int, kind: EventKind | np.ndarray, **values: Any) -> None:
        """Set the event ``slot`` of each record in ``index``."""
        at = self.start[index] + slot
        self.kind[at] = kind
        for name, value in values.items():
            self.columns[name][at] = value

    def generic(self, index: np.ndarray, slot: int, name: str, texts: list[str]) -> None:
        """A GENERIC ``epilog:<name>`` event per record, valued by its text."""
        self.put(index, slot, EventKind.GENERIC, ref=self.strings(f"epilog:{name}"),
                 value=np.array([self.strings(text) for text in texts], dtype=np.int64))

    def _fill(self, group: Group) -> None:
        """The model events of one record group."""
        layout, data, index, model = group.layout, group.data, group.index, self.model
        offsets = self.records.starts[index]
        if layout is None:
            texts = [json.dumps({"type": group.kind, "data": bytes(row).hex()}, separators=(",", ":"))
                     for row in data["data"]]
            self.generic(index, 0, "UNKNOWN", texts)
            return
        if layout.role == "attribute":
            keep = self.counts[index] > 0
            self.generic(index[keep], 0, layout.name, _json_rows(data[keep], ["type", "value"]))
            return
        consumed = CONSUMED.get(layout.role, set())
        rest = [name for name, _ in layout.fields if name not in consumed]
        slot = 0
        if layout.tagged:
            self.generic(index, 0, layout.name, _json_rows(data, rest))
            slot = 1
        if layout.metrics:
            for m in range(self.records.metric_count):
                self.put(index, slot + m, EventKind.METRIC, ref=m,
                         value=data["metv"][:, m].astype(np.uint64).view(np.int64))
            slot += self.records.metric_count
        role = layout.role
        if role == "enter":
            self.put(index, slot, EventKind.ENTER, ref=lookup(model.source, data["rid"].astype(np.int64),
                                                              self.regions, "region", offsets))
        elif role == "enter_cs":
            sites = {csid: record["erid"] for csid, (_, record) in model.defs.table("CALL_SITE").items()}
            erid = lookup(model.source, data["csid"].astype(np.int64), sites, "call site", offsets)
            self.put(index, slot, EventKind.ENTER, ref=lookup(model.source, erid, self.regions, "region", offsets))
        elif role == "exit":
            self.put(index, slot, EventKind.LEAVE)
        elif role in ("send", "recv"):
            sending = role == "send"
            request = self.has_request[index]
            kinds = np.where(request, EventKind.ISEND if sending else EventKind.IRECV,
                             EventKind.SEND if sending else EventKind.RECV)
            self.put(index, slot, kinds, ref=model.peers(data["dlid" if sending else "slid"].astype(np.int64),
                                                         offsets),
                     comm=model.comms(data["cid"].astype(np.int64), offsets), tag=data["tag"],
                     size=data["sent"] if sending else 0, request=self.requests[index])
        elif role == "collexit":
            self.put(index, slot, EventKind.COLL_END, comm=model.comms(data["cid"].astype(np.int64), offsets),
                     tag=model.peers(data["rlid"].astype(np.int64), offsets, roots=True),
                     size=data["sent"], recv_size=data["recvd"])
            self.put(index, slot + 1, EventKind.LEAVE)
        elif role == "send_complete":
            self.put(index, slot, EventKind.REQUEST_COMPLETE, request=data["reqid"])
        elif role == "recv_request":
            self.put(index, slot, EventKind.IRECV_REQUEST, request=data["reqid"])
        else:
            self.generic(index, slot, layout.name, _json_rows(data, rest))

    def _by_location(self) -> None:
        """Order the events by location, file order within one."""
        order = np.argsort(self.location, kind="stable")
        self.location, self.time, self.kind, self.record = (
            self.location[order], self.time[order], self.kind[order], self.record[order])
        self.columns = {name: values[order] for name, values in self.columns.items()}

    def _match_regions(self) -> None:
        """Give every LEAVE the region of its ENTER, and every COLL_END the region it ends.

        Per location, an ENTER at depth d and the next LEAVE from depth d pair up; sorting
        by (location, depth, position) puts each LEAVE right after its ENTER.
        """
        marks = np.flatnonzero((self.kind == EventKind.ENTER) | (self.kind == EventKind.LEAVE))
        if not len(marks):
            return
        step = np.where(self.kind[marks] == EventKind.ENTER, 1, -1)
        where = self.location[marks]
        first = np.r_[True, where[1:] != where[:-1]]
        depth = np.cumsum(step)
        depth -= (depth - step)[first][np.cumsum(first) - 1]
        level = np.where(step == 1, depth, depth + 1)
        unmatched = np.flatnonzero(level <= 0)
        if len(unmatched):
            record = int(self.record[marks[unmatched[0]]])
            raise self.model.source.error("exit record with no region open on its location",
                                          int(self.records.starts[record]))
        order = np.lexsort((np.arange(len(marks)), level, where))
        leaves = np.flatnonzero(step[order] == -1)
        ref = self.columns["ref"]
        ref[marks[order[leaves]]] = ref[marks[order[leaves - 1]]]
        ends = np.flatnonzero(self.kind == EventKind.COLL_END)
        ref[ends] = ref[ends + 1]

    def streams(self) -> LocationStreams:
        """Per location, its events in batches."""
        locations, firsts = np.unique(self.location, return_index=True)
        bounds = np.r_[firsts, len(self.location)]
        columns = {"time": self.time, "kind": self.kind, **self.columns}
        for i, location in enumerate(locations.tolist()):
            part = slice(int(bounds[i]), int(bounds[i + 1]))
            yield location, batches({name: values[part] for name, values in columns.items()})
