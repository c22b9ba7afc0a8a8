"""Point-to-point matching over the merged message stream, a window at a time, in memory
set by the messages in flight (dissertation 4.5.5, the FIFOs of 4.33).

The k-th send from S to R on communicator C with tag T matches the k-th receive at R from
S on C with tag T (MPI's non-overtaking rule, 3.4.5): one FIFO per channel (sender,
receiver, comm, tag; Paje links add their link id). A window's ends are queued behind the
ends still waiting from earlier windows, and every channel's queues are paired at once
(`pair_fifo`: in C a hash table of channels with a queue each, in the reference each side
ranked within its channel with numpy): the k-th of each side pair, the rest wait for the
next window. An end whose peer is not among the chosen locations can never pair and is
set aside as unmatched at once.

Non-blocking operations are followed through their requests, per location and request id
first in, first out: an ISEND's REQUEST_COMPLETE on the sender gives the message's
``send_done``, an IRECV_REQUEST on the receiver its ``recv_posted`` (the IRECV itself is the
completion, OTF2's MpiIrecv; its IRECV_REQUEST, OTF2's MpiIrecvRequest, holds only the
request id). Receives take their place in a channel's FIFO in the order they were posted,
as MPI matches them: a blocking RECV where it is, an IRECV where its IRECV_REQUEST is (where
it is itself when it has none). As the channel of a posted receive is known only at its
completion, a receive waits until every IRECV_REQUEST posted before it on its location has
completed (`_Posts`); a request that never completes holds them to the end of the stream.
A matched message is given out once it is paired and the times it needs are known, in the
order of the stream's event that completed it (the later end, a request giving a time, or
the completion that let its receive take its place); a time whose request never comes is
-1 at the end.

``peak_pending``: the most send and receive events that waited for their peer at any point
of the stream (Figure 5.34), an event counting from where it is met until it is paired (an
unmatched one to the end, a pair let go at the end of the stream too).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import backends
from ..model import EventKind

__all__ = ["MESSAGE_COLUMNS", "PointToPoint", "pair_fifo", "runs", "take"]

MESSAGE_COLUMNS = ("sender", "send_time", "receiver", "recv_time", "comm", "tag", "size", "recv_size",
                   "send_done", "recv_posted")
SENDS = (int(EventKind.SEND), int(EventKind.ISEND))
RECEIVES = (int(EventKind.RECV), int(EventKind.IRECV))
#: the columns of a send or receive in the stream
_EVENT = ("location", "row", "seq", "time", "kind", "ref", "comm", "tag", "size", "link")
#: the columns of a waiting send or receive: ``post``, its place in its channel's order
_END = _EVENT + ("post",)
#: the columns of a waiting request event
_REQUEST = ("location", "row", "request", "seq", "time")
#: the columns of a matched message waiting for its times: the message, its ends, and the
#: event that paired it (``formed``: its later end, or the completion that let its receive in)
_PAIR = MESSAGE_COLUMNS[:8] + ("send_seq", "recv_seq", "send_kind", "recv_kind", "formed")
#: the columns of a known request time: for which event, the time, the event that gave it
_TIME = ("target", "time", "at")
#: (first, second, the side whose event is given the other's time) of the two request pairings
_REQUESTS = ((int(EventKind.ISEND), int(EventKind.REQUEST_COMPLETE), 0),
             (int(EventKind.IRECV_REQUEST), int(EventKind.IRECV), 1))
_SEND_REQUESTS, _RECEIVE_REQUESTS = 0, 1
#: a location row above this many bits of a stream position (`_Posts`)
_SEQ_BITS = 40
_NOT_POSTED = np.int64((1 << 63) - 1)

Table = dict[str, np.ndarray]


def kind_mask(kinds: tuple[int, ...]) -> np.ndarray:
    """A table that, indexed by an array of event kinds, says which are of ``kinds``."""
    mask = np.zeros(256, bool)
    mask[list(kinds)] = True
    return mask


IS_SEND, IS_RECEIVE, IS_END = kind_mask(SENDS), kind_mask(RECEIVES), kind_mask(SENDS + RECEIVES)


def take(table: Table, index: np.ndarray) -> Table:
    """The rows ``index`` (positions or a mask) of every column (the columns themselves
    when a mask keeps every row)."""
    if index.dtype == bool and index.all():
        return dict(table)
    return {name: column[index] for name, column in table.items()}


def _empty(names: tuple[str, ...]) -> Table:
    return {name: np.zeros(0, np.int64) for name in names}


def _joined(first: Table, second: Table) -> Table:
    """The rows of ``first``, then those of ``second`` (which has at least its columns)."""
    if not len(next(iter(first.values()))):
        return {name: second[name] for name in first}
    return {name: np.concatenate([first[name], second[name]]) for name in first}


def runs(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """An order of the rows that puts equal rows (by their values in ``columns``) next to
    each other, each run of them in the rows' order, and the positions where each run
    starts. One stable sort by a 64-bit hash of the row; rows of equal hash are checked
    equal, and after a collision the rows are sorted by the columns themselves."""
    n = len(columns[0])
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    hashed = row_hash(columns)
    sort = np.argsort(hashed, kind="stable")
    hashed = hashed[sort]
    ordered = [column[sort] for column in columns]
    change = np.zeros(n, bool)
    change[0] = True
    change[1:] = hashed[1:] != hashed[:-1]
    if any(np.any((column[1:] != column[:-1]) & ~change[1:]) for column in ordered):  # a collision
        sort = np.lexsort(columns[::-1])
        ordered = [column[sort] for column in columns]
        change[1:] = np.logical_or.reduce([column[1:] != column[:-1] for column in ordered])
    return sort, np.flatnonzero(change)


def row_hash(columns: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash per row of int64 columns (multiply-xorshift)."""
    h = np.full(len(columns[0]), 0x243F6A8885A308D3, np.uint64)
    for column in columns:
        h ^= column.astype(np.uint64, copy=False)
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    return h


def pair_fifo(keys_a: list[np.ndarray], keys_b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the pairs (k-th a, k-th b) of every key, each side given in its order,
    a increasing: the FIFO rule, with the active backend."""
    if backends.native():
        from .._native import messages as native
        return native.pair_fifo(keys_a, keys_b)
    return pair_fifo_reference(keys_a, keys_b)


def pair_fifo_reference(keys_a: list[np.ndarray], keys_b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """`pair_fifo` for all keys at once with numpy: each side ranked within its key (a
    stable sort by key), the k-th of each paired."""
    na, nb = len(keys_a[0]), len(keys_b[0])
    if not na or not nb:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    sort, starts = runs([np.concatenate([a, b]) for a, b in zip(keys_a, keys_b)])
    # a run holds its key's a rows, then its b rows (a stable sort of a then b), each in order
    first_side = sort < na
    counts = np.diff(np.append(starts, na + nb))
    count_a = np.add.reduceat(first_side.astype(np.int64), starts)
    at = np.flatnonzero(first_side)
    run = np.searchsorted(starts, at, side="right") - 1
    rank = at - starts[run]
    paired = rank < counts[run] - count_a[run]
    partner = starts[run[paired]] + count_a[run[paired]] + rank[paired]
    ia, ib = sort[at[paired]], sort[partner] - na
    order = np.argsort(ia)
    return ia[order], ib[order]


class PointToPoint:
    """The matching's state between windows: the ends and request events waiting for their
    peer, the matched messages waiting for their times, the times known for events not
    given out yet, and the unmatched ends set aside."""

    def __init__(self, known: Callable[[np.ndarray], np.ndarray], inside: Callable[[np.ndarray], np.ndarray]):
        self.known = known    #: per location id, whether it is among the chosen ones
        self.inside = inside  #: per time, whether it is in the window asked for
        self.ends = _empty(_END)
        self.requests = [(_empty(_REQUEST), _empty(_REQUEST)) for _ in _REQUESTS]
        self.pairs = _empty(_PAIR)
        self.times = _empty(_TIME)
        self.lost: list[Table] = []  # ends whose peer is not chosen
        self.pending = 0
        self.peak = 0

    def window(self, events: Table) -> Table:
        """Match one window's events (columns as in `_EVENT` plus ``request``, in stream
        order); returns the messages it completes (`_PAIR` columns plus ``send_done``,
        ``recv_posted`` and ``at``, the completing event), in the order of ``at``."""
        posts = _Posts(self._pair_requests(_RECEIVE_REQUESTS, events))
        self._pair_ends(take({name: events[name] for name in _EVENT}, IS_END[events["kind"]]), posts)
        self._keep_times(posts.found)
        self._keep_times(self._pair_requests(_SEND_REQUESTS, events))
        return self._complete(final=False)

    def finish(self) -> tuple[Table, Table]:
        """The messages still waiting (for a time, given -1, or for a receive posted before
        theirs that never completed), and the unmatched ends (of those whose peer is not
        chosen, the ones in the window asked for)."""
        self._pair_ends(_empty(_EVENT), None)
        done = self._complete(final=True)
        parts = [self.ends, *self.lost]
        return done, {name: np.concatenate([part[name] for part in parts]) for name in _END}

    def _pair_ends(self, ends: Table, posts: _Posts | None) -> None:
        """Queue a window's ends (``posts``: its receive posts; None at the end of the
        stream, when every waiting receive takes its place) and pair every channel's."""
        ends["post"] = ends["seq"] if posts is None else posts.place(ends)
        lost = ~self.known(ends["ref"])
        if lost.any():
            self.lost.append(take(ends, lost & self.inside(ends["time"])))
        q = _joined(self.ends, take(ends, ~lost) if lost.any() else ends)
        sends = np.flatnonzero(IS_SEND[q["kind"]])
        receives = np.flatnonzero(IS_RECEIVE[q["kind"]])
        if posts is not None:  # a receive waits for the requests posted before it on its location
            receives = receives[q["post"][receives] < _first_open(self.requests[_RECEIVE_REQUESTS][0],
                                                                  q["row"][receives])]
        receives = receives[np.argsort(q["post"][receives], kind="stable")]
        ia, ib = pair_fifo([q[name][sends] for name in ("location", "ref", "comm", "tag", "link")],
                           [q[name][receives] for name in ("ref", "location", "comm", "tag", "link")])
        send, receive = sends[ia], receives[ib]
        paired = np.zeros(len(q["seq"]), bool)
        paired[send] = paired[receive] = True
        self.ends = take(q, ~paired)
        formed = np.maximum(q["seq"][send], q["seq"][receive])
        if posts is not None:
            formed = np.maximum(formed, posts.completed_before(q["row"][receive], q["post"][receive]))
            # waiting events: +1 where an end is met, -2 where a pair forms (both wait no more)
            delta = np.ones(len(ends["seq"]), np.int64)
            np.add.at(delta, np.searchsorted(ends["seq"], formed), -2)
            running = self.pending + np.cumsum(delta)
            if len(running):
                self.peak = max(self.peak, int(running.max()))
                self.pending = int(running[-1])
        self.pairs = _joined(self.pairs, {
            "sender": q["location"][send], "send_time": q["time"][send], "receiver": q["location"][receive],
            "recv_time": q["time"][receive], "comm": q["comm"][send], "tag": q["tag"][send], "size": q["size"][send],
            "recv_size": q["size"][receive], "send_seq": q["seq"][send], "recv_seq": q["seq"][receive],
            "send_kind": q["kind"][send], "recv_kind": q["kind"][receive], "formed": formed})

    def _pair_requests(self, family: int, events: Table) -> Table:
        """Pair the k-th ``first`` with the k-th ``second`` of every (location, request id)
        of a family of `_REQUESTS`: per pair, the ``target`` side's event, the other's time,
        the later of the two (``at``), and the first's location row and place (``post``)."""
        first, second, target = _REQUESTS[family]
        kind = events["kind"]
        waiting = self.requests[family]
        a, b = (_joined(held, take({name: events[name] for name in _REQUEST}, kind == k))
                for held, k in zip(waiting, (first, second)))
        if not len(a["seq"]) or not len(b["seq"]):
            self.requests[family] = (a, b)
            return _empty(_TIME + ("row", "post"))
        ia, ib = pair_fifo([a["location"], a["request"]], [b["location"], b["request"]])
        left_a, left_b = np.ones(len(a["seq"]), bool), np.ones(len(b["seq"]), bool)
        left_a[ia] = left_b[ib] = False
        self.requests[family] = (take(a, left_a), take(b, left_b))
        given, giver = (a, b) if target == 0 else (b, a)
        given_at, giver_at = (ia, ib) if target == 0 else (ib, ia)
        return {"target": given["seq"][given_at], "time": giver["time"][giver_at],
                "at": np.maximum(a["seq"][ia], b["seq"][ib]), "row": a["row"][ia], "post": a["seq"][ia]}

    def _keep_times(self, found: Table) -> None:
        """Keep the request times ``found`` for the events still to be given out: not for
        an unmatched end set aside."""
        alive = np.isin(found["target"], np.concatenate([self.ends["seq"], self.pairs["send_seq"],
                                                          self.pairs["recv_seq"]]))
        self.times = _joined(self.times, take({name: found[name] for name in _TIME}, alive))

    def _complete(self, final: bool) -> Table:
        """Give out the matched messages whose times are known (with ``final``, all of them,
        an unknown time -1), in the order of the event that completed each."""
        pairs = self.pairs
        send_found, send_done, send_at = self._known(pairs["send_seq"], pairs["send_kind"] == EventKind.ISEND)
        recv_found, recv_posted, recv_at = self._known(pairs["recv_seq"], pairs["recv_kind"] == EventKind.IRECV)
        ready = np.ones(len(send_found), bool) if final else (
            ((pairs["send_kind"] != EventKind.ISEND) | send_found) & ((pairs["recv_kind"] != EventKind.IRECV) | recv_found))
        every = bool(ready.all())
        out = dict(pairs) if every else take(pairs, ready)
        self.pairs = _empty(_PAIR) if every else take(pairs, ~ready)
        out["send_done"], out["recv_posted"] = send_done[ready], recv_posted[ready]
        out["at"] = np.maximum.reduce([out["formed"], send_at[ready], recv_at[ready]])
        used = np.concatenate([out["send_seq"][send_found[ready]], out["recv_seq"][recv_found[ready]]])
        if len(used):
            self.times = take(self.times, ~np.isin(self.times["target"], used))
        at = out["at"]
        return out if np.all(at[1:] > at[:-1]) else take(out, np.argsort(at, kind="stable"))

    def _known(self, seqs: np.ndarray, needs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the events ``seqs`` that ``needs`` a request time: whether it is known, the
        time and the event that gave it (-1 where not known)."""
        times = self.times
        if not len(times["target"]):
            unknown = np.full(len(seqs), -1, np.int64)
            return np.zeros(len(seqs), bool), unknown, unknown
        order = np.argsort(times["target"])
        row = order[np.minimum(np.searchsorted(times["target"], seqs, sorter=order), len(order) - 1)]
        found = needs & (times["target"][row] == seqs)
        return found, np.where(found, times["time"][row], -1), np.where(found, times["at"][row], -1)


class _Posts:
    """A window's IRECV_REQUEST - IRECV pairs (``found``, `PointToPoint._pair_requests`):
    where its IRECVs were posted, and which completions let waiting receives in."""

    def __init__(self, found: Table):
        self.found = found
        row, post, at = found["row"], found["post"], found["at"]
        order = np.lexsort((post, row))
        self.keys = (row[order] << _SEQ_BITS) | post[order]
        # per (row, post), the latest completion of the requests of that row posted up to it
        self.latest = np.maximum.accumulate((row[order] << _SEQ_BITS) | at[order]) if len(order) else at

    def place(self, ends: Table) -> np.ndarray:
        """Each end's place in its channel's order: an IRECV's IRECV_REQUEST (one before
        it: an IRECV met before its request is placed where it is), else itself."""
        seq = ends["seq"]
        post = seq.copy()
        target, posted = self.found["target"], self.found["post"]
        if len(target) and len(seq):
            at = np.searchsorted(seq, target)
            mine = (posted < target) & (seq[np.minimum(at, len(seq) - 1)] == target)
            post[at[mine]] = posted[mine]
        return post

    def completed_before(self, rows: np.ndarray, posts: np.ndarray) -> np.ndarray:
        """For receives (location row, place): the last completion in this window of a
        request posted before them on their location, else -1."""
        if not len(self.keys):
            return np.full(len(rows), -1, np.int64)
        j = np.searchsorted(self.keys, (rows << _SEQ_BITS) | posts) - 1
        k = np.maximum(j, 0)
        mine = (j >= 0) & ((self.keys[k] >> _SEQ_BITS) == rows)
        return np.where(mine, self.latest[k] & ((1 << _SEQ_BITS) - 1), -1)


def _first_open(requests: Table, rows: np.ndarray) -> np.ndarray:
    """Per location row of ``rows``, the place of its first IRECV_REQUEST among the waiting
    ``requests`` (`_NOT_POSTED` when none waits)."""
    if not len(requests["seq"]) or not len(rows):
        return np.full(len(rows), _NOT_POSTED)
    first = np.full(int(max(rows.max(), requests["row"].max())) + 1, _NOT_POSTED)
    np.minimum.at(first, requests["row"], requests["seq"])
    return first[rows]
