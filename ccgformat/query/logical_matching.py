"""Which communication events belong together, as message matching says
(`ccgformat.query.messages_query`): the two ends of each matched message and the members of
each collective operation. The matching runs over the events logical time walked
(`logical_walk`, every kind the matching reads), put in the matching's stream order, and
gives each end's place in that stream: whatever rule `messages` follows (FIFO per
channel, receives in the order they were posted, Paje link keys, collectives counted per
communicator), logical time follows it too, and the events are walked once.

A collective's members are joined with the COLL_END events by location, communicator and
time: several events of one location can share a time; the k-th of a key on one side is
then the k-th on the other, both in the order their location met them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import EventKind
from .logical_walk import CommunicationEvents
from .messages_query import WINDOW, MessageStream

__all__ = ["Partners", "partners"]


class Partners:
    """The events logical time orders and, per event, ``message`` - the other end of its
    message (-1: none) - and ``collective`` - the number of its collective operation
    (-1: none)."""

    def __init__(self, events: CommunicationEvents, message: np.ndarray, collective: np.ndarray):
        self.events = events
        self.message = message
        self.collective = collective


def partners(source: Any, walked: CommunicationEvents, kinds: tuple[int, ...], window: int = WINDOW) -> Partners:
    """Match the messages of ``walked`` (every event of ``source`` that message matching
    reads, `messages.stream_kinds`) and keep its events of ``kinds`` with their partners.
    ``walked`` gives up its matching columns."""
    order = np.lexsort((walked.index, walked.location, walked.time))  # by time, location, position
    windows = ((walked.location[at], walked.batch(at)) for at in np.array_split(order, range(window, len(order), window)))
    stream = MessageStream(source, None, None, None, window, False, windows, places=True)
    chunks = list(stream)
    ends = [np.concatenate([chunk.columns[name] for chunk in chunks]) if chunks else np.zeros(0, np.int64)
            for name in ("send_seq", "recv_seq")]
    walked.matching = {}  # read: its memory goes
    keep = np.isin(walked.kind, kinds)
    events = walked if keep.all() else walked.take(keep)
    row = np.cumsum(keep) - 1  # each walked event's row among those kept
    send, receive = (row[order[seq]] for seq in ends)
    message = np.full(len(events), -1, np.int64)
    message[send] = receive
    message[receive] = send
    return Partners(events, message, _collectives(events, stream.collectives))


def _collectives(events: CommunicationEvents, collectives: list[Any]) -> np.ndarray:
    """The operation number of each COLL_END event: its participant row (location, end
    time, communicator) in `Messages.collectives`."""
    number = np.full(len(events), -1, np.int64)
    ends = np.flatnonzero(events.kind == EventKind.COLL_END)
    if not len(ends) or not collectives:
        return number
    sizes = [len(c.participants) for c in collectives]
    members = np.array([p[:3] for c in collectives for p in c.participants], np.int64).reshape(-1, 3)
    comm = np.repeat(np.array([c.comm for c in collectives], np.int64), sizes)
    which = np.repeat(np.arange(len(collectives), dtype=np.int64), sizes)
    at, of = _paired([events.location[ends], events.comm[ends], events.time[ends]], events.index[ends],
                     [members[:, 0], comm, members[:, 2]], which)
    number[ends[at]] = which[of]
    return number


def _paired(left: list[np.ndarray], left_order: np.ndarray, right: list[np.ndarray],
            right_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in ``left``, in ``right``) of the rows that pair: the k-th left row of a
    key with the k-th right row of the same key, each side ranked by its order. The keys'
    first column is a location and the last a time, and ``left`` comes in (location,
    time) order: a key whose (location, time) holds one row on each side pairs at once
    (`_anchor`), the others are ranked (`_ranked`)."""
    anchor = _anchor(left[0], left[-1], right[0], right[-1])
    if anchor is None:
        return _ranked(left, left_order, right, right_order)
    left_key, right_key = anchor
    by_key = np.lexsort((right_order, right_key))
    key = right_key[by_key]
    lo, hi = np.searchsorted(left_key, key), np.searchsorted(left_key, key, side="right")
    alone = np.r_[True, key[1:] != key[:-1]] & np.r_[key[1:] != key[:-1], True] & (hi - lo == 1)
    for column_left, column_right in zip(left[1:-1], right[1:-1]):
        alone &= column_left[np.minimum(lo, len(left_key) - 1)] == column_right[by_key]
    left_at, right_at = lo[alone], by_key[alone]
    rest_left = np.ones(len(left_key), bool)
    rest_left[left_at] = False
    rest_right = by_key[~alone]
    rest_left = np.flatnonzero(rest_left)
    more_left, more_right = _ranked([c[rest_left] for c in left], left_order[rest_left],
                                    [c[rest_right] for c in right], right_order[rest_right])
    return np.r_[left_at, rest_left[more_left]], np.r_[right_at, rest_right[more_right]]


def _anchor(left_location: np.ndarray, left_time: np.ndarray, right_location: np.ndarray,
            right_time: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(location, time) as one int64 per row of each side, in the same order as the
    pairs; None when that would overflow."""
    if not len(left_time) or not len(right_time):
        return None
    low = min(int(left_time.min()), int(right_time.min()))
    span = max(int(left_time.max()), int(right_time.max())) - low + 1
    places = max(int(left_location.max()), int(right_location.max())) + 1
    if min(int(left_location.min()), int(right_location.min())) < 0 or places * span >= 1 << 62:
        return None
    return left_location * span + (left_time - low), right_location * span + (right_time - low)


def _ranked(left: list[np.ndarray], left_order: np.ndarray, right: list[np.ndarray],
            right_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_paired` by sorting both sides by all key columns."""
    count = len(left_order)
    keys = [np.concatenate([a, b]).astype(np.int64) for a, b in zip(left, right)]
    side = np.r_[np.zeros(count, np.int64), np.ones(len(right_order), np.int64)]
    order = np.concatenate([left_order, right_order]).astype(np.int64)
    sort = np.lexsort((order, side, *keys[::-1]))  # by key, then the left side first, then in order
    same = np.ones(len(sort), bool)
    for key in keys:
        ranked = key[sort]
        same[1:] &= ranked[1:] == ranked[:-1]
    same[:1] = False
    group_first = np.maximum.accumulate(np.where(same, 0, np.arange(len(sort))))
    lefts = np.cumsum(side[sort] == 0)  # left rows up to here
    in_group = lefts - np.where(group_first > 0, lefts[group_first - 1], 0)  # left rows of the group so far
    rank = np.arange(len(sort)) - group_first - in_group  # a right row's rank among the group's right rows
    right_rows = np.flatnonzero((side[sort] == 1) & (rank < in_group))
    partner = group_first[right_rows] + rank[right_rows]
    return sort[partner], sort[right_rows] - count
