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

from ..query.messages_match import pair_fifo
from .topology_walk import LinkEnds

__all__ = ["Edges", "merged_edges", "paired_edges"]


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


def _with_pairs(edges: tuple[np.ndarray, np.ndarray, np.ndarray], node_of_location: np.ndarray, nodes: int,
                sender: np.ndarray, receiver: np.ndarray, send_time: np.ndarray, recv_time: np.ndarray,
                size: np.ndarray, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``edges`` with the messages (``sender``, ``receiver``, ...) added between the nodes
    of their ends (`merged_edges`)."""
    lookup = np.full(max(len(node_of_location), int(max(sender.max(initial=-1), receiver.max(initial=-1))) + 1),
                     -1, np.int64)
    lookup[:len(node_of_location)] = node_of_location
    u, v = lookup[sender], lookup[receiver]
    keep = (u >= 0) & (v >= 0) & (u != v)
    inside = (((send_time >= start) & (send_time < stop)) | ((recv_time >= start) & (recv_time < stop)))[keep]
    key = np.minimum(u[keep], v[keep]) * nodes + np.maximum(u[keep], v[keep])
    return _added(edges, key, inside, size[keep])


def _edges(edges: tuple[np.ndarray, np.ndarray, np.ndarray], nodes: int) -> Edges:
    keys, messages, volume = edges
    return Edges(keys // nodes, keys % nodes, messages, volume)


_NONE = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))


def merged_edges(archive: Any, node_of_location: np.ndarray, start: int, stop: int) -> Edges:
    """The edges between the nodes ``node_of_location`` gives each location index (-1:
    none) for the window ``[start, stop)``, from the matched messages as they complete
    (`Archive.iter_messages`): memory set by the pairs, not by the messages."""
    nodes = max(int(node_of_location.max(initial=-1)) + 1, 1)
    edges = _NONE
    for chunk in archive.iter_messages():
        edges = _with_pairs(edges, node_of_location, nodes, chunk.sender, chunk.receiver, chunk.send_time,
                            chunk.recv_time, chunk.size, start, stop)
    return _edges(edges, nodes)


def paired_edges(ends: LinkEnds, node_of_location: np.ndarray, start: int, stop: int) -> Edges:
    """`merged_edges` from the blocking message ends of a walk (`topology_walk`), paired
    as the matching pairs them: the k-th send with the k-th receive of one (sender,
    receiver, communicator, tag, link) (`messages_match.pair_fifo`)."""
    nodes = max(int(node_of_location.max(initial=-1)) + 1, 1)
    sends, receives = np.flatnonzero(ends.sending == 1), np.flatnonzero(ends.sending == 0)
    a, b = pair_fifo([column[sends] for column in (ends.location, ends.peer, ends.comm, ends.tag, ends.link)],
                     [column[receives] for column in (ends.peer, ends.location, ends.comm, ends.tag, ends.link)])
    send, receive = sends[a], receives[b]
    return _edges(_with_pairs(_NONE, node_of_location, nodes, ends.location[send], ends.location[receive],
                              ends.time[send], ends.time[receive], ends.size[send], start, stop), nodes)
