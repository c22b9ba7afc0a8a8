"""The edges of a topology graph (paper 001, section 3.1.1: "the traces can be used if we
need to connect processes according to the messages exchanged among them"): the messages
`Archive.messages` matches - MPI point-to-point traffic, or the Paje links (SimGrid writes
its platform's connections as links at time 0) - between the containers that hold their
ends. Every pair that ever exchanged a message is an edge, so that the graph keeps its
shape from one window to the next; an edge counts the messages, and their bytes, with a
send or a receive in the window (`Archive.messages`' own rule). A cut merges the edges of
the leaves it joins and drops those inside one node. Edges are undirected: both
directions add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Edges", "merged_edges"]


@dataclass(frozen=True, eq=False)
class Edges:
    """Edge ``e`` joins nodes ``first[e] < second[e]`` (indexes into the cut's nodes);
    ``messages[e]`` and ``bytes[e]``: the traffic of the window between them (int64)."""

    first: np.ndarray
    second: np.ndarray
    messages: np.ndarray
    bytes: np.ndarray


def merged_edges(archive: Any, node_of_location: np.ndarray, start: int, stop: int) -> Edges:
    """The edges between the nodes ``node_of_location`` gives each location index (-1:
    none) for the window ``[start, stop)``."""
    matched = archive.messages()
    sender, receiver, size = matched.sender, matched.receiver, matched.size
    in_window = (((matched.send_time >= start) & (matched.send_time < stop))
                 | ((matched.recv_time >= start) & (matched.recv_time < stop)))
    lookup = np.full(max(len(node_of_location), int(max(sender.max(initial=-1), receiver.max(initial=-1))) + 1),
                     -1, np.int64)
    lookup[:len(node_of_location)] = node_of_location
    u, v = lookup[sender], lookup[receiver]
    keep = (u >= 0) & (v >= 0) & (u != v)
    first, second = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    pairs, which = np.unique(np.stack((first, second)), axis=1, return_inverse=True)
    which = which.ravel()
    messages = np.zeros(pairs.shape[1], np.int64)
    volume = np.zeros(pairs.shape[1], np.int64)
    counted = in_window[keep]
    np.add.at(messages, which[counted], 1)
    np.add.at(volume, which[counted], size[keep][counted])
    return Edges(pairs[0].astype(np.int64), pairs[1].astype(np.int64), messages, volume)
