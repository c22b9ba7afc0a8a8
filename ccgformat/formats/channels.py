"""Messages grouped by channel (sender, receiver, communicator, tag) in a batch, for the
exporters that pair the n-th send of a channel with its n-th receive (Chrome flows, Paje
links) a batch at a time instead of a message at a time."""

from __future__ import annotations

import numpy as np

from ..model import EventBatch, EventKind

__all__ = ["Channel", "channel_ranks", "message_sides"]

Channel = tuple[int, int, int, int]   # sender, receiver, comm, tag
_MESSAGES = np.array([EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV], np.uint8)
_SENDS = np.array([EventKind.SEND, EventKind.ISEND], np.uint8)


def message_sides(batch: EventBatch, locations: np.ndarray) -> list[tuple[bool, np.ndarray, list[np.ndarray]]]:
    """The sends and the receives of a batch whose events are at ``locations`` (one per
    event): whether they send, where they are, and their channels' columns."""
    messages = np.isin(batch.kind, _MESSAGES)
    sending = np.isin(batch.kind, _SENDS)
    sides = []
    for side in (True, False):
        where = np.flatnonzero(messages & (sending if side else ~sending))
        if len(where):
            here, peer = locations[where], batch.ref[where]
            ends = [here, peer] if side else [peer, here]
            sides.append((side, where, [*ends, batch.comm[where], batch.tag[where]]))
    return sides


def channel_ranks(columns: list[np.ndarray]) -> tuple[list[Channel], np.ndarray, np.ndarray]:
    """The distinct channels of rows (the columns sender, receiver, comm, tag) in order of
    their first row, and for each row its channel's number in that list and its rank
    among the rows of its channel."""
    _, first, inverse = np.unique(_dense_code(columns), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    channel = renumber[inverse.reshape(-1)]
    grouped = np.argsort(channel, kind="stable")
    starts = np.searchsorted(channel[grouped], np.arange(len(order)))
    rank = np.empty(len(channel), np.int64)
    rank[grouped] = np.arange(len(channel)) - starts[channel[grouped]]
    firsts = first[order]
    channels = [tuple(row) for row in zip(*(column[firsts].tolist() for column in columns))]
    return channels, channel, rank


def _dense_code(columns: list[np.ndarray]) -> np.ndarray:
    """One integer per row of the columns, equal exactly where the rows are equal (cheaper
    to sort than the rows)."""
    code = np.zeros(len(columns[0]), np.int64)
    span = 1
    for column in columns:
        values, inverse = np.unique(column, return_inverse=True)
        if span * len(values) >= 1 << 62:     # renumber the codes so far densely first
            codes, code = np.unique(code, return_inverse=True)
            code, span = code.reshape(-1), len(codes)
        code = code * len(values) + inverse.reshape(-1)
        span *= len(values)
    return code
