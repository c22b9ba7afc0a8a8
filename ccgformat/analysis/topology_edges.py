"""The edges of a topology graph (paper 001, section 3.1.1: "the traces can be used if we
need to connect processes according to the messages exchanged among them"): the messages
`Archive.iter_messages` matches - MPI point-to-point traffic, or the Paje links (SimGrid
writes its platform's connections as links at time 0) - between the containers that hold
their ends, summed chunk by chunk as the matching streams them. Every pair that ever
exchanged a message is an edge, so that the graph keeps its shape from one window to the
next; an edge counts the messages, and their bytes, with a send or a receive in the
window (the rule of `Archive.messages`). A cut merges the edges of the leaves it joins
and drops those inside one node. Edges are undirected: both directions add up.
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


def _added(edges: tuple[np.ndarray, np.ndarray, np.ndarray], key: np.ndarray, inside: np.ndarray,
           size: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``edges`` (pair keys, increasing; messages; bytes) with the messages of pair keys
    ``key`` added, those ``inside`` the window counted with their ``size``."""
    keys, which = np.unique(np.concatenate([edges[0], key]), return_inverse=True)
    which = which.ravel()
    messages, volume = np.zeros(len(keys), np.int64), np.zeros(len(keys), np.int64)
    np.add.at(messages, which[:len(edges[0])], edges[1])
    np.add.at(volume, which[:len(edges[0])], edges[2])
    counted = len(edges[0]) + np.flatnonzero(inside)
    np.add.at(messages, which[counted], 1)
    np.add.at(volume, which[counted], size[inside])
    return keys, messages, volume


def merged_edges(archive: Any, node_of_location: np.ndarray, start: int, stop: int) -> Edges:
    """The edges between the nodes ``node_of_location`` gives each location index (-1:
    none) for the window ``[start, stop)``, from the matched messages as they complete
    (`Archive.iter_messages`): memory set by the pairs, not by the messages."""
    nodes = max(int(node_of_location.max(initial=-1)) + 1, 1)
    edges = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    for chunk in archive.iter_messages():
        sender, receiver = chunk.sender, chunk.receiver
        lookup = np.full(max(len(node_of_location), int(max(sender.max(initial=-1), receiver.max(initial=-1))) + 1),
                         -1, np.int64)
        lookup[:len(node_of_location)] = node_of_location
        u, v = lookup[sender], lookup[receiver]
        keep = (u >= 0) & (v >= 0) & (u != v)
        inside = (((chunk.send_time >= start) & (chunk.send_time < stop))
                  | ((chunk.recv_time >= start) & (chunk.recv_time < stop)))[keep]
        key = np.minimum(u[keep], v[keep]) * nodes + np.maximum(u[keep], v[keep])
        edges = _added(edges, key, inside, chunk.size[keep])
    keys, messages, volume = edges
    return Edges(keys // nodes, keys % nodes, messages, volume)
