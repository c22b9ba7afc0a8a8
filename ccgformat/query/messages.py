"""Send/receive matching (dissertation 3.4.5, 3.4.6, 4.5.5).

Point-to-point: the k-th send from S to R on communicator C with tag T matches the k-th
receive at R from S on C with tag T (MPI's non-overtaking rule; wildcards are resolved in
the trace) - the FIFO per (sender, receiver, comm, tag) of 4.33. Keeping those FIFOs while
traversing the locations gives exactly the pairs that ranking every send and every
receive within its key gives, so the pairs are computed that way, for all keys at once
with numpy; the traversal itself - the locations interleaved, ``batch_size`` events of
each in turn (4.5.5) - defines ``peak_pending``, the most events waiting for their peer
at any time (Figure 5.34), which follows from where each pair's first and second end come
in that order. Non-blocking operations are followed through their requests: an ISEND's
REQUEST_COMPLETE on the sender gives the send's completion time, an IRECV_REQUEST posted
on the receiver gives the receive's post time (the IRECV itself is its completion); per
location and request id they pair first in, first out (the k-th ISEND with the k-th
REQUEST_COMPLETE, the k-th IRECV_REQUEST with the k-th IRECV), also when a rank reuses
the id before an earlier use has completed.
Collectives: the k-th COLL_END on communicator C of every location is one operation
(3.4.6); its begin is the location's COLL_BEGIN since its previous COLL_END. What does
not match is reported, never dropped. Paje links (SEND/RECV with comm = link type) pair
by their value and key, which the importer keeps in the GENERIC ``paje:fields`` event
right before each end.

Only the events of these kinds are expanded from the graph, of all locations at once
(`select_many`); a large graph (`streaming.streams`) walks its locations' events in
batches instead and keeps those of these kinds, so that the memory follows the messages,
not the nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TextIO

import numpy as np

from ..archive.queries import run_query
from ..errors import CorruptArchiveError
from ..graph.graph import ChosenRoots, chosen_roots
from ..model import EventKind
from .select import select_many
from .streaming import kept_events, streams
from .tables import NodeTables, tables_for

if TYPE_CHECKING:
    import pandas as pd


_WANTED = tuple(int(k) for k in (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV,
                                  EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE, EventKind.COLL_BEGIN,
                                  EventKind.COLL_END))
_SENDS = (EventKind.SEND, EventKind.ISEND)
_RECEIVES = (EventKind.RECV, EventKind.IRECV)
PAJE_HINT = "paje:fields"
_FIELDS = ("time", "kind", "ref", "comm", "tag", "request", "size", "recv_size", "value")
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

    def to_pandas(self, table: str = "messages") -> pd.DataFrame:
        """One table as a pandas DataFrame: ``messages`` (the columns), ``unmatched`` or
        ``collectives`` (a row per participant) (`ccgformat.interop.results`; extra
        ``pandas``)."""
        return run_query("messages_to_pandas", self, table)

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    def rows(self) -> Iterator[dict[str, int]]:
        lists = [self.columns[name].tolist() for name in MESSAGE_COLUMNS]
        return (dict(zip(MESSAGE_COLUMNS, row)) for row in zip(*lists))

    def to_json(self) -> dict[str, Any]:
        return {"messages": list(self.rows()), **self._rest()}

    def _rest(self) -> dict[str, Any]:
        """`to_json` but the messages."""
        return {"unmatched": [u.__dict__ for u in self.unmatched],
                "collectives": [{"comm": c.comm, "index": c.index, "operation": c.operation,
                                 "participants": [list(p) for p in c.participants], "complete": c.complete}
                                for c in self.collectives],
                "peak_pending": self.peak_pending}

    def write_json(self, out: TextIO, rows_per_write: int = 65536) -> None:
        """Write ``json.dumps(self.to_json())`` to ``out``, the messages a slice of rows at
        a time, so that their text is never held whole."""
        out.write('{"messages": [')
        for first in range(0, len(self), rows_per_write):
            part = {name: self.columns[name][first:first + rows_per_write].tolist() for name in MESSAGE_COLUMNS}
            rows = [dict(zip(MESSAGE_COLUMNS, row)) for row in zip(*(part[name] for name in MESSAGE_COLUMNS))]
            out.write((", " if first else "") + json.dumps(rows)[1:-1])
        out.write("], " + json.dumps(self._rest())[1:] + "\n")


def _group_ids(*columns: np.ndarray) -> np.ndarray:
    """A small integer per distinct row of the given columns."""
    group = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        _, inverse = np.unique(column, return_inverse=True)
        _, group = np.unique(group * (int(inverse.max(initial=0)) + 1) + inverse.ravel(), return_inverse=True)
    return group.ravel()


def _pair(keys_a: list[np.ndarray], order_a: np.ndarray, keys_b: list[np.ndarray],
          order_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the pairs (k-th a, k-th b) of every key, each side ranked by its order:
    the FIFO rule, for all keys at once."""
    na = len(order_a)
    if not na or not len(order_b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    side = np.concatenate([np.zeros(na, np.int64), np.ones(len(order_b), np.int64)])
    group = _group_ids(*(np.concatenate([a, b]) for a, b in zip(keys_a, keys_b)))
    order = np.concatenate([order_a, order_b])
    sort = np.lexsort((order, side, group))
    run = group[sort] * 2 + side[sort]
    starts = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
    rank = np.empty(len(sort), np.int64)
    rank[sort] = np.arange(len(sort)) - np.repeat(starts, np.diff(np.append(starts, len(sort))))
    key = group * (len(sort) + 1) + rank
    _, ia, ib = np.intersect1d(key[:na], key[na:], assume_unique=True, return_indices=True)
    return ia, ib


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


def _selected(source: Any, chosen: ChosenRoots, kinds: tuple[int, ...], batch_size: int) -> dict[str, np.ndarray]:
    """The chosen kinds' events of the ``chosen`` locations as columns, with ``location``, ``position``
    (within the location's selection) and ``seq``, the place in the interleaved traversal
    of 4.5.5: ``batch_size`` events of each location in turn."""
    locations = chosen.locations
    if streams(source):
        tag, fields = _walked(source, chosen, kinds)
    else:
        t = tables_for(source.pool)
        tag, _, times, nodes = select_many(t, chosen.root, chosen.start, kinds)
        fields = _columns(t, times, nodes)
    first = np.searchsorted(tag, tag)  # the tag's first event: tags come sorted
    position = np.arange(len(tag), dtype=np.int64) - first
    seq = (position // batch_size * len(locations) + tag) * batch_size + position % batch_size
    names = ("location", "position", "seq") + _FIELDS
    columns = [np.asarray(locations, np.int64)[tag] if len(tag) else tag, position, seq, *fields]
    return dict(zip(names, columns))


def _walked(source: Any, chosen: ChosenRoots, kinds: tuple[int, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """`select_many`'s tags and `_columns` of the events of ``kinds``, from every chosen
    location's events walked in batches (`streaming.kept_events`)."""
    tags: list[np.ndarray] = []
    parts: list[list[np.ndarray]] = [[] for _ in _FIELDS]  # per column, its pieces
    for tag, (location, events) in enumerate(zip(chosen.locations, chosen.events.tolist())):
        if not events:
            continue
        for batch, keep in kept_events(source, location, kinds):
            tags.append(np.full(len(keep), tag, np.int64))
            for pieces, name in zip(parts, _FIELDS):
                pieces.append(np.asarray(getattr(batch, name))[keep].astype(np.int64))
    columns = []
    for pieces in parts:  # a column's pieces let go as soon as it is joined
        columns.append(np.concatenate(pieces) if pieces else np.zeros(0, np.int64))
        pieces.clear()
    return (np.concatenate(tags) if tags else np.zeros(0, np.int64)), columns


def _link_ids(e: dict[str, np.ndarray], strings: list[str], path: str | None) -> np.ndarray:
    """Per event, the id of the Paje link (value, key) named by a GENERIC ``paje:fields``
    event right before it on its location, else -1. A hint that is not a JSON object with
    an object ``f``, or a link end's hint without ``Key``, raises `CorruptArchiveError`:
    its links would otherwise pair by order instead of by key."""
    link = np.full(len(e["kind"]), -1, np.int64)
    if PAJE_HINT not in strings:
        return link
    hint = strings.index(PAJE_HINT)
    interned: dict[tuple[str, str], int] = {}
    for i in np.flatnonzero((e["kind"] == EventKind.GENERIC) & (e["ref"] == hint)).tolist():
        if i + 1 >= len(link) or e["location"][i + 1] != e["location"][i]:
            continue  # the hint of an event that is not a message
        fields = _hint_fields(strings, int(e["value"][i]))
        link_end = e["kind"][i + 1] in (EventKind.SEND, EventKind.RECV)
        if fields is None or (link_end and "Key" not in fields):
            what = "is not a JSON object with an object 'f'" if fields is None else "has no 'Key'"
            raise CorruptArchiveError(
                f"location {int(e['location'][i])}, time {int(e['time'][i])}: the {PAJE_HINT!r} hint "
                f"(string {int(e['value'][i])}) {what}{' before a link end' if link_end else ''}", path=path)
        if "Key" in fields:
            link[i + 1] = interned.setdefault((str(fields.get("Value")), str(fields["Key"])), len(interned))
    return link


def _hint_fields(strings: list[str], index: int) -> dict[str, Any] | None:
    """The ``f`` object of the hint text ``strings[index]`` ({} when it has none), or None
    when the text is not a hint."""
    if not 0 <= index < len(strings):
        return None
    try:
        document = json.loads(strings[index])
    except ValueError:
        return None
    fields = document.get("f", {}) if isinstance(document, dict) else None
    return fields if isinstance(fields, dict) else None


def messages(source: Any, start: int | None = None, stop: int | None = None,
             locations: Iterable[int] | None = None, batch_size: int = 4096) -> Messages:
    """Match the messages of a `Graph` or `Archive`. Matching always runs from the
    beginning (a message's peer may lie anywhere); the result keeps the messages with a
    send or receive in ``[start, stop)`` and the unmatched events and collectives in it.
    With ``locations``, events whose peer is not among them stay unmatched."""
    chosen = chosen_roots(source, locations)
    strings = source.definitions.strings
    kinds = _WANTED + ((int(EventKind.GENERIC),) if PAJE_HINT in strings else ())
    e = _selected(source, chosen, kinds, batch_size)
    link = _link_ids(e, strings, getattr(source, "path", None))
    kind, loc, ref, time_ = e["kind"], e["location"], e["ref"], e["time"]
    lo = -(1 << 63) if start is None else start
    hi = (1 << 63) - 1 if stop is None else stop

    # point-to-point: the k-th send and the k-th receive of every (sender, receiver, comm, tag[, link])
    sends = np.flatnonzero(np.isin(kind, _SENDS))
    receives = np.flatnonzero(np.isin(kind, _RECEIVES))
    ia, ib = _pair([loc[sends], ref[sends], e["comm"][sends], e["tag"][sends], link[sends]], e["position"][sends],
                   [ref[receives], loc[receives], e["comm"][receives], e["tag"][receives], link[receives]],
                   e["position"][receives])
    send, receive = sends[ia], receives[ib]
    extra = np.full(len(kind), -1, np.int64)  # a send's completion, a receive's post time
    for first_kind, second_kind, target in ((EventKind.ISEND, EventKind.REQUEST_COMPLETE, 0),
                                            (EventKind.IRECV_REQUEST, EventKind.IRECV, 1)):
        a, b = np.flatnonzero(kind == first_kind), np.flatnonzero(kind == second_kind)
        pa, pb = _pair([loc[a], e["request"][a]], e["position"][a], [loc[b], e["request"][b]], e["position"][b])
        if target == 0:
            extra[a[pa]] = time_[b[pb]]
        else:
            extra[b[pb]] = time_[a[pa]]

    # pending events of the interleaved traversal: +1 when the first end is met, -1 at the second
    delta = np.zeros(len(kind), np.int64)
    delta[np.concatenate([sends, receives])] = 1
    later = np.where(e["seq"][send] > e["seq"][receive], send, receive)
    delta[later] = -1
    peak = int(np.cumsum(delta[np.argsort(e["seq"], kind="stable")]).max(initial=0))

    keep = ((time_[send] >= lo) & (time_[send] < hi)) | ((time_[receive] >= lo) & (time_[receive] < hi))
    send, receive = send[keep], receive[keep]
    order = np.lexsort((loc[send], time_[send]))
    send, receive = send[order], receive[order]
    columns = {"sender": loc[send], "send_time": time_[send], "receiver": loc[receive],
               "recv_time": time_[receive], "comm": e["comm"][send], "tag": e["tag"][send],
               "size": e["size"][send], "recv_size": e["size"][receive],
               "send_done": np.where(kind[send] == EventKind.ISEND, extra[send], -1), "recv_posted": extra[receive]}
    matched = np.zeros(len(kind), bool)
    matched[sends[ia]] = matched[receives[ib]] = True
    lonely = np.concatenate([sends, receives])
    lonely = np.sort(lonely[~matched[lonely] & (time_[lonely] >= lo) & (time_[lonely] < hi)])
    unmatched = [Unmatched(*row[:2], EventKind(row[2]).name, *row[3:])
                 for row in zip(*(x[lonely].tolist() for x in (loc, time_, kind, ref, e["comm"], e["tag"], e["size"])))]
    collectives = _collectives(source, e, lo, hi)
    count = int(np.isin(kind, _WANTED).sum())
    return Messages(columns, unmatched, collectives, peak, len(source.definitions.locations), count)


def _collectives(source: Any, e: dict[str, np.ndarray], lo: int, hi: int) -> list[Collective]:
    """The k-th COLL_END on communicator C of every location is one operation; its begin
    is the location's COLL_BEGIN after its previous COLL_END, if any."""
    kind, loc, position = e["kind"], e["location"], e["position"]
    ends = np.flatnonzero(kind == EventKind.COLL_END)
    if not len(ends):
        return []
    begins = np.flatnonzero(kind == EventKind.COLL_BEGIN)
    # the rank of each end among the ends of its (location, comm), by position
    group = _group_ids(loc[ends], e["comm"][ends])
    sort = np.lexsort((position[ends], group))
    starts = np.flatnonzero(np.concatenate(([True], group[sort][1:] != group[sort][:-1])))
    rank = np.empty(len(ends), np.int64)
    rank[sort] = np.arange(len(sort)) - np.repeat(starts, np.diff(np.append(starts, len(sort))))
    # the begin: the location's last COLL_BEGIN before the end and after its previous end
    span = int(position.max(initial=0)) + 1
    end_key = loc[ends] * span + position[ends]  # ends are in (location, position) order
    floor = loc[ends] * span - 1
    floor[1:] = np.where(loc[ends][1:] == loc[ends][:-1], end_key[:-1], floor[1:])
    begin = e["time"][ends].copy()
    if len(begins):
        begin_key = loc[begins] * span + position[begins]
        candidate = np.searchsorted(begin_key, end_key) - 1
        found = (candidate >= 0) & (begin_key[np.maximum(candidate, 0)] > floor)
        begin[found] = e["time"][begins[candidate[found]]]
    communicators = source.definitions.communicators
    instances: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    rows = zip(e["comm"][ends].tolist(), rank.tolist(), loc[ends].tolist(), begin.tolist(), e["time"][ends].tolist(),
               e["ref"][ends].tolist(), e["tag"][ends].tolist(), e["size"][ends].tolist(), e["recv_size"][ends].tolist())
    for comm, k, location, first, last, operation, root, size, recv_size in rows:
        instances.setdefault((comm, k), []).append((location, first, last, operation, root, size, recv_size))
    out = []
    for (comm, k), parts in sorted(instances.items(), key=lambda item: min(p[2] for p in item[1])):
        if not any(lo <= p[1] < hi or lo <= p[2] < hi for p in parts):
            continue
        members = set(communicators[comm].members) if 0 <= comm < len(communicators) else set()
        present = {p[0] for p in parts}
        complete = (len({(p[3], p[4]) for p in parts}) == 1 and len(present) == len(parts)
                    and (not members or present == members))
        out.append(Collective(comm, k, parts[0][3], [(p[0], p[1], p[2], p[5], p[6]) for p in parts], complete))
    return out
