"""The message part of a profile window on the graph: per (sender, receiver) location
pair, the messages sent and received inside the window.

Every message event inside a window lies in one of the window's seeds, the sub-trees
taken whole (`descend`), so the window's pairs are the seeds' message sums by peer,
attributed to the seed's location. Those sums are memoized sparsely per sub-tree (the
partial caching of 5.4.1 for this part of the profile): a sub-tree keeps only the peers
its events name, so memory follows the messages and pairs of the answer - never a row per
pair of locations - and a successive window costs a lookup per seed."""

from __future__ import annotations

import numpy as np

from ..model import EventKind
from .select import select_many
from .tables import NodeTables
from ..ordering import sorted_distinct

_SENDS = (int(EventKind.SEND), int(EventKind.ISEND))
_KINDS = _SENDS + (int(EventKind.RECV), int(EventKind.IRECV))
_EMPTY = (np.zeros(0, np.int64), np.zeros((0, 4), np.int64))


class PairMemo:
    """Per sub-tree holding message events: its peers (-1 for a negative one) and the sums
    (sent, sent bytes, received, received bytes) of its events with each."""

    def __init__(self, t: NodeTables):
        self.tables = t
        self.holds = t.containing(_KINDS)
        self._memo: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def window(self, locations: np.ndarray, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct (location, peer) of a window's ``seeds`` (rows of node and tag; the
        tag indexes ``locations``) with their sums: location, peer, sums."""
        seeds = seeds[self.holds[seeds[:, 0]]] if len(seeds) else seeds
        if not len(seeds):
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 4), np.int64)
        self._fill(sorted_distinct(seeds[:, 0]))
        parts = [self._memo[node] for node in seeds[:, 0].tolist()]
        counts = np.array([len(peers) for peers, _ in parts], np.int64)
        location = np.repeat(locations[seeds[:, 1]], counts)
        peer = np.concatenate([peers for peers, _ in parts])
        sums = np.concatenate([rows for _, rows in parts])
        return _by_pair(location, peer, sums)

    def _fill(self, nodes: np.ndarray) -> None:
        """Memoize the sub-trees ``nodes`` not memoized yet, in one pass over their events."""
        missing = np.array([node for node in nodes.tolist() if node not in self._memo], np.int64)
        if not len(missing):
            return
        t = self.tables
        tag, _, _, found = select_many(t, missing, np.zeros(len(missing), np.int64), _KINDS)
        tags, peer, sums = _by_pair(tag, np.maximum(t.key0[found], -1), _event_sums(t, found))
        cuts = np.searchsorted(tags, np.arange(len(missing) + 1))
        for i, node in enumerate(missing.tolist()):
            a, b = cuts[i], cuts[i + 1]
            self._memo[node] = (peer[a:b], sums[a:b]) if b > a else _EMPTY


def _event_sums(t: NodeTables, nodes: np.ndarray) -> np.ndarray:
    """Per message event node, its (sent, sent bytes, received, received bytes)."""
    sent = np.isin(t.kind[nodes], _SENDS)
    size = t.soft0[nodes]
    out = np.zeros((len(nodes), 4), np.int64)
    out[:, 0], out[:, 1] = sent, np.where(sent, size, 0)
    out[:, 2], out[:, 3] = ~sent, np.where(sent, 0, size)
    return out


def _by_pair(key: np.ndarray, peer: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``sums`` added per distinct (key, peer), sorted by key then peer (sums
    wrap to 64 bits like every sum of the format)."""
    if not len(key):
        return key.astype(np.int64), peer.astype(np.int64), sums.reshape(0, 4)
    pairs, inverse = np.unique(np.stack((key, peer)), axis=1, return_inverse=True)
    out = np.zeros((pairs.shape[1], 4), np.int64)
    with np.errstate(over="ignore"):
        np.add.at(out, inverse.ravel(), sums)
    return pairs[0], pairs[1], out
