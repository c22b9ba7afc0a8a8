"""Flow ids of messages, in memory set by the number of channels, not of messages.

The n-th send from A to B on (comm, tag) matches the n-th receive on B from A on (comm,
tag). Pairs are numbered 1, 2, ... channel after channel, in the order in which the
channels' first sends come (locations in order, events in order), each channel's pairs in
order. So the first reading counts sends and receives per channel (`FlowCounts`), and
the second numbers each message from its channel's first id and its rank in the
channel (`FlowIds`). Both take single messages (the reference) or a batch's columns.
"""

from __future__ import annotations

import numpy as np

from ...model import EventBatch, EventKind
from ..channels import Channel, channel_ranks, message_sides

__all__ = ["FlowCounts", "FlowIds"]


def _channel(location: int, kind: int, peer: int, comm: int, tag: int) -> tuple[bool, Channel]:
    sending = kind in (EventKind.SEND, EventKind.ISEND)
    return sending, ((location, peer, comm, tag) if sending else (peer, location, comm, tag))


class FlowCounts:
    """Sends and receives per channel; ``sends`` in the order of each channel's first send."""

    def __init__(self) -> None:
        self.sends: dict[Channel, int] = {}
        self.receives: dict[Channel, int] = {}

    def add(self, location: int, message: tuple[int, int, int, int]) -> None:
        """One message ``(kind, peer, comm, tag)`` of ``location``."""
        sending, channel = _channel(location, *message)
        counts = self.sends if sending else self.receives
        counts[channel] = counts.get(channel, 0) + 1

    def add_batch(self, location: int, batch: EventBatch) -> None:
        """Every message of a batch of ``location`` (all its messages are plain ones)."""
        for sending, _, columns in message_sides(batch, np.full(len(batch), location, np.int64)):
            channels, channel, _ = channel_ranks(columns)
            counts = self.sends if sending else self.receives
            for key, total in zip(channels, np.bincount(channel, minlength=len(channels)).tolist()):
                counts[key] = counts.get(key, 0) + total

    def ids(self) -> FlowIds:
        """The numbering of the pairs these counts give."""
        first: dict[Channel, tuple[int, int]] = {}
        taken = 0
        for channel, sends in self.sends.items():
            pairs = min(sends, self.receives.get(channel, 0))
            if pairs:
                first[channel] = (taken + 1, pairs)
                taken += pairs
        return FlowIds(first)


class FlowIds:
    """Numbers the messages of a second reading, location after location."""

    def __init__(self, first: dict[Channel, tuple[int, int]]):
        self.first = first      #: per channel with pairs: its first id and its number of pairs
        self.seen: dict[tuple[bool, Channel], int] = {}

    def next(self, location: int, message: tuple[int, int, int, int]) -> int | None:
        """The flow id of the next message ``(kind, peer, comm, tag)`` of ``location``;
        None when it has no partner."""
        sending, channel = _channel(location, *message)
        rank = self.seen.get((sending, channel), 0)
        self.seen[(sending, channel)] = rank + 1
        first, pairs = self.first.get(channel, (0, 0))
        return first + rank if rank < pairs else None

    def batch(self, location: int, batch: EventBatch) -> np.ndarray:
        """The flow id of each event of a batch of ``location``: 0 for events that are no
        message or have no partner (all its messages are plain ones)."""
        ids = np.zeros(len(batch), np.int64)
        for sending, where, columns in message_sides(batch, np.full(len(batch), location, np.int64)):
            channels, channel, rank = channel_ranks(columns)
            base = np.array([self.seen.get((sending, c), 0) for c in channels], np.int64)
            limits = np.array([self.first.get(c, (0, 0)) for c in channels], np.int64).reshape(-1, 2)
            for key, seen in zip(channels, (base + np.bincount(channel, minlength=len(channels))).tolist()):
                self.seen[(sending, key)] = seen
            rank = rank + base[channel]
            paired = rank < limits[channel, 1]
            ids[where[paired]] = limits[channel, 0][paired] + rank[paired]
        return ids
