"""The message part of a profile window on the graph: per (sender, receiver) location
pair, the messages sent and received inside the window, summed from the message events
themselves (`select_many`) - memory linear in the message events of the window and the
pairs of the answer, never a row per pair of locations."""

from __future__ import annotations

import numpy as np

from ..model import EventKind
from .select import select_many
from .tables import NodeTables

_SENDS = (int(EventKind.SEND), int(EventKind.ISEND))
_KINDS = _SENDS + (int(EventKind.RECV), int(EventKind.IRECV))


def window_pairs(t: NodeTables, locations: np.ndarray, roots: np.ndarray, begins: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct (location, peer) of the message events of the pieces ``[lo[i],
    hi[i])`` of ``locations[i]`` (root ``roots[i]``, beginning at ``begins[i]``): the
    location, the peer (-1 for a negative one) and the sums (sent, sent bytes, received,
    received bytes) of the location's events with that peer."""
    tag, _, _, nodes = select_many(t, roots, begins, _KINDS, lo, hi)
    location = locations[tag]
    peer = np.maximum(t.key0[nodes], -1)
    sent = np.isin(t.kind[nodes], _SENDS)
    pairs, inverse = np.unique(np.stack((location, peer)), axis=1, return_inverse=True)
    inverse = inverse.ravel()
    sums = np.zeros((pairs.shape[1], 4), np.int64)
    size = t.soft0[nodes]
    with np.errstate(over="ignore"):
        for column, chosen, values in ((0, sent, 1), (1, sent, size), (2, ~sent, 1), (3, ~sent, size)):
            np.add.at(sums[:, column], inverse[chosen], np.broadcast_to(values, chosen.shape)[chosen])
    return pairs[0], pairs[1], sums
