"""Messages grouped by channel (sender, receiver, communicator, tag) in a batch, for the
exporters that pair the n-th send of a channel with its n-th receive (Chrome flows, Paje
links) a batch at a time instead of a message at a time."""

from __future__ import annotations

import numpy as np

from .. import backends
from ..model import EventBatch, EventKind

__all__ = ["Channel", "channel_ranks", "message_sides"]

Channel = tuple[int, int, int, int]   # sender, receiver, comm, tag
#: by kind: whether it is a message, and whether it sends
_MESSAGES = np.zeros(256, bool)
_MESSAGES[[EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV]] = True
_SENDS = np.zeros(256, bool)
_SENDS[[EventKind.SEND, EventKind.ISEND]] = True


def message_sides(batch: EventBatch, locations: np.ndarray) -> list[tuple[bool, np.ndarray, list[np.ndarray]]]:
    """The sends and the receives of a batch whose events are at ``locations`` (one per
    event): whether they send, where they are, and their channels' columns."""
    messages = _MESSAGES[batch.kind]
    sending = _SENDS[batch.kind]
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
    among the rows of its channel (in C under the native backend)."""
    if backends.native():
        from .._native.export_channels import channel_ranks as ranks_in_c
        channel, rank, firsts = ranks_in_c(columns)
    else:
        channel, rank, firsts = _sorted_ranks(columns)
    channels = [tuple(row) for row in zip(*(column[firsts].tolist() for column in columns))]
    return channels, channel, rank


def _sorted_ranks(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`channel_ranks` by sorting (the reference): each row's channel and rank, and the
    first row of every channel."""
    _, first, inverse = np.unique(_dense_code(columns), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    channel = renumber[inverse.reshape(-1)]
    grouped = np.argsort(channel, kind="stable")
    starts = np.searchsorted(channel[grouped], np.arange(len(order)))
    rank = np.empty(len(channel), np.int64)
    rank[grouped] = np.arange(len(channel)) - starts[channel[grouped]]
    return channel, rank, first[order]


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
