"""Send/receive matching (dissertation 3.4.5, 3.4.6, 4.5.5).

Point-to-point: the k-th send from S to R on communicator C with tag T matches the k-th
receive at R from S on C with tag T (MPI's non-overtaking rule; wildcards are resolved in
the trace). The locations are traversed interleaved, a batch of each in turn, keeping
one FIFO of pending sends and one of pending receives per (sender, receiver, comm, tag)
(4.33): an event either finds its peer at the head of the other FIFO or waits in its own.
Non-blocking operations are followed through their requests: an ISEND's REQUEST_COMPLETE
on the sender gives the send's completion time, an IRECV_REQUEST posted on the receiver
gives the receive's post time (the IRECV itself is its completion). Collectives: the
k-th COLL_END on communicator C of every location is one operation (4.3.6); its begin is
the location's preceding COLL_BEGIN. What does not match is reported, never dropped.
Paje links (SEND/RECV with comm = link type) pair by their value and key, which the
importer keeps in the GENERIC ``paje:fields`` event right before each end.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from ..model import EventKind
from .select import select_events
from .tables import NodeTables, tables_for

_WANTED = tuple(int(k) for k in (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV,
                                  EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE, EventKind.COLL_BEGIN,
                                  EventKind.COLL_END))
_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)
PAJE_HINT = "paje:fields"
MESSAGE_COLUMNS = ("sender", "send_time", "receiver", "recv_time", "comm", "tag", "size", "recv_size",
                   "send_done", "recv_posted")


@dataclass(frozen=True)
class Unmatched:
    """A send or receive without a peer: where, when, and its matching properties."""

    location: int
    time: int
    kind: str
    peer: int
    comm: int
    tag: int
    size: int


@dataclass
class Collective:
    """One collective operation: the k-th on its communicator at every participant."""

    comm: int
    index: int
    operation: int
    participants: list[tuple[int, int, int, int, int]]  #: (location, begin, end, bytes sent, bytes received)
    complete: bool  #: every communicator member took part, all with the same operation and root


@dataclass
class Messages:
    """Matched messages as columns (``-1`` where a time does not apply: ``send_done`` of a
    blocking send, ``recv_posted`` of a blocking receive), the unmatched events, the
    collectives, and the most events that waited for a peer at any time."""

    columns: dict[str, np.ndarray]
    unmatched: list[Unmatched]
    collectives: list[Collective]
    peak_pending: int = 0
    locations: int = 0
    events: int = field(default=0)  #: message events traversed

    def __len__(self) -> int:
        return len(self.columns["sender"])

    def __getattr__(self, name: str) -> np.ndarray:
        columns = self.__dict__.get("columns", {})
        if name in columns:
            return columns[name]
        raise AttributeError(name)

    def matrix(self, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The communication matrix: message counts and bytes, [sender, receiver]."""
        sender, receiver = self.columns["sender"], self.columns["receiver"]
        n = size if size is not None else max(self.locations, int(max(sender.max(initial=-1),
                                                                        receiver.max(initial=-1))) + 1)
        counts = np.zeros((n, n), np.int64)
        volume = np.zeros((n, n), np.int64)
        np.add.at(counts, (sender, receiver), 1)
        np.add.at(volume, (sender, receiver), self.columns["size"])
        return counts, volume

    def rows(self) -> Iterator[dict[str, int]]:
        lists = [self.columns[name].tolist() for name in MESSAGE_COLUMNS]
        return (dict(zip(MESSAGE_COLUMNS, row)) for row in zip(*lists))

    def to_json(self) -> dict[str, Any]:
        return {"messages": list(self.rows()), "unmatched": [u.__dict__ for u in self.unmatched],
                "collectives": [{"comm": c.comm, "index": c.index, "operation": c.operation,
                                 "participants": [list(p) for p in c.participants], "complete": c.complete}
                                for c in self.collectives],
                "peak_pending": self.peak_pending}


class _Matcher:
    def __init__(self, strings: list[str]) -> None:
        #: Paje link hints: GENERIC "paje:fields" events right before a SEND or RECV name
        #: the link's value and key, which pair the two ends (and not their order)
        self.strings = strings
        self.hint = strings.index(PAJE_HINT) if PAJE_HINT in strings else -1
        self.links: dict[int, tuple[Any, ...]] = {}
        self.sends: dict[tuple[Any, ...], deque[int]] = {}
        self.receives: dict[tuple[Any, ...], deque[int]] = {}
        self.records: list[list[int]] = []  # [location, time, kind, peer, comm, tag, size, extra time]
        self.pairs: list[tuple[int, int]] = []
        self.requests: dict[tuple[int, int], int] = {}  # open ISEND requests -> record
        self.posted: dict[tuple[int, int], int] = {}    # IRECV_REQUEST post time
        self.pending = 0
        self.peak = 0
        self.coll_count: dict[tuple[int, int], int] = {}
        self.coll_begin: dict[int, int] = {}
        self.collectives: dict[tuple[int, int], list[tuple[int, ...]]] = {}
        self.events = 0

    def batch(self, location: int, columns: list[list[int]]) -> None:
        """Events of one location in order: time, kind, ref, comm, tag, request, size,
        recv_size, value."""
        self.events += len(columns[0])
        for time, kind, ref, comm, tag, request, size, recv_size, value in zip(*columns):
            if kind == EventKind.GENERIC:
                if ref == self.hint:
                    self.link_hint(location, value)
                continue
            link = self.links.pop(location, None)
            if kind in _SENDS or kind in _RECEIVES:
                self.p2p(location, time, kind, ref, comm, tag, request, size, link)
            elif kind == EventKind.REQUEST_COMPLETE:
                record = self.requests.pop((location, request), None)
                if record is not None:
                    self.records[record][7] = time
            elif kind == EventKind.IRECV_REQUEST:
                self.posted[(location, request)] = time
            elif kind == EventKind.COLL_BEGIN:
                self.coll_begin[location] = time
            else:
                index = self.coll_count.get((location, comm), 0)
                self.coll_count[(location, comm)] = index + 1
                begin = self.coll_begin.pop(location, time)
                self.collectives.setdefault((comm, index), []).append(
                    (location, begin, time, ref, tag, size, recv_size))

    def link_hint(self, location: int, value: int) -> None:
        try:
            fields = json.loads(self.strings[value]).get("f", {})
        except (ValueError, IndexError, AttributeError):
            return
        if isinstance(fields, dict) and "Key" in fields:
            self.links[location] = ("link", str(fields.get("Value")), str(fields["Key"]))

    def p2p(self, location: int, time: int, kind: int, ref: int, comm: int, tag: int, request: int,
            size: int, link: tuple[Any, ...] | None = None) -> None:
        sending = kind in _SENDS
        extra = -1
        if kind == EventKind.IRECV:
            extra = self.posted.pop((location, request), -1)
        record = len(self.records)
        self.records.append([location, time, kind, ref, comm, tag, size, extra])
        if kind == EventKind.ISEND:
            self.requests[(location, request)] = record
        key: tuple[Any, ...] = (location, ref, comm, tag) if sending else (ref, location, comm, tag)
        if link is not None:
            key = (*key[:3], *link)
        waiting = (self.receives if sending else self.sends).get(key)
        if waiting:
            peer = waiting.popleft()
            self.pending -= 1
            self.pairs.append((record, peer) if sending else (peer, record))
            return
        (self.sends if sending else self.receives).setdefault(key, deque()).append(record)
        self.pending += 1
        self.peak = max(self.peak, self.pending)


def _columns(t: NodeTables, times: np.ndarray, nodes: np.ndarray) -> list[np.ndarray]:
    """Event columns (time, kind, ref, comm, tag, request, size, recv_size, value) of the
    selected atomic nodes, from their stored properties (spec/records.md key order)."""
    kind = t.kind[nodes]
    generic = kind == EventKind.GENERIC
    request_only = np.isin(kind, (EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE))
    zero = np.zeros(len(nodes), np.int64)
    ref = np.where(request_only, 0, t.key0[nodes])
    request = np.where(request_only, t.key0[nodes],
                       np.where(np.isin(kind, (EventKind.ISEND, EventKind.IRECV)), t.key3[nodes], zero))
    recv_size = np.where(kind == EventKind.COLL_END, t.soft1[nodes], zero)
    comm = np.where(generic, 0, t.key1[nodes])
    return [times, kind, ref, comm, t.key2[nodes], request, t.soft0[nodes], recv_size,
            np.where(generic, t.key1[nodes], zero)]


def _interleaved(source: Any, locations: list[int], batch_size: int,
                 kinds: tuple[int, ...]) -> Iterator[tuple[int, list[list[int]]]]:
    """``batch_size`` message events of each location in turn (the alternating traversal
    of 4.5.5), selected from the graph without expanding anything else."""
    t = tables_for(source.pool)
    streams = []
    for location in locations:
        root = source.roots[location]
        times, nodes = select_events(t, root.root, root.start, kinds)
        streams.append((location, _columns(t, times, nodes), len(nodes)))
    position = 0
    while streams:
        streams = [s for s in streams if s[2] > position]
        for location, columns, _ in streams:
            yield location, [c[position:position + batch_size].tolist() for c in columns]
        position += batch_size


def messages(source: Any, start: int | None = None, stop: int | None = None,
             locations: Iterable[int] | None = None, batch_size: int = 4096) -> Messages:
    """Match the messages of a `Graph` or `Archive`. Matching always runs from the
    beginning (a message's peer may lie anywhere); the result keeps the messages with a
    send or receive in ``[start, stop)`` and the unmatched events and collectives in it.
    With ``locations``, events whose peer is not among them stay unmatched."""
    chosen = sorted(source.roots) if locations is None else list(dict.fromkeys(locations))
    matcher = _Matcher(source.definitions.strings)
    kinds = _WANTED + ((int(EventKind.GENERIC),) if matcher.hint >= 0 else ())
    for location, batch in _interleaved(source, chosen, batch_size, kinds):
        matcher.batch(location, batch)
    lo = -(1 << 63) if start is None else start
    hi = (1 << 63) - 1 if stop is None else stop
    inside = lambda time: lo <= time < hi  # noqa: E731
    records = matcher.records
    rows = []
    matched = set()
    for send, receive in matcher.pairs:
        s, r = records[send], records[receive]
        matched.update((send, receive))
        if inside(s[1]) or inside(r[1]):
            rows.append((s[0], s[1], r[0], r[1], s[4], s[5], s[6], r[6],
                         s[7] if s[2] == EventKind.ISEND else -1, r[7]))
    rows.sort(key=lambda row: (row[1], row[0]))
    table = np.array(rows, dtype=np.int64).reshape(len(rows), len(MESSAGE_COLUMNS))
    columns = {name: table[:, i].copy() for i, name in enumerate(MESSAGE_COLUMNS)}
    unmatched = [Unmatched(r[0], r[1], EventKind(r[2]).name, r[3], r[4], r[5], r[6])
                 for i, r in enumerate(records) if i not in matched and inside(r[1])]
    communicators = source.definitions.communicators
    collectives = []
    for (comm, index), parts in sorted(matcher.collectives.items(), key=lambda item: min(p[2] for p in item[1])):
        if not any(inside(p[1]) or inside(p[2]) for p in parts):
            continue
        members = set(communicators[comm].members) if 0 <= comm < len(communicators) else set()
        present = {p[0] for p in parts}
        complete = (len({(p[3], p[4]) for p in parts}) == 1 and len(present) == len(parts)
                    and (not members or present == members))
        collectives.append(Collective(comm, index, parts[0][3], [(p[0], p[1], p[2], p[5], p[6]) for p in parts],
                                      complete))
    return Messages(columns, unmatched, collectives, matcher.peak, len(source.definitions.locations),
                    matcher.events)
