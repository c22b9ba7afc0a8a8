"""Lamport's clock over the point-to-point events (paper 003 section 3.1, after Lamport
1978): an event's step is one more than the greater of its location's previous event's
step and, for a receive, its send's step; the first step is 0. That is the longest chain
of happened-before edges ending at the event (`logical_graph.longest_paths`)."""

from __future__ import annotations

import numpy as np

from ..model import EventKind
from .logical_graph import longest_paths, require_acyclic
from .logical_walk import CommunicationEvents

__all__ = ["lamport_steps", "location_chain"]

_RECEIVES = (int(EventKind.RECV), int(EventKind.IRECV))


def location_chain(location: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges from each event to the next one of its location (events in location order)."""
    earlier = np.flatnonzero(location[1:] == location[:-1])
    return earlier, earlier + 1


def lamport_steps(events: CommunicationEvents, partner: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """The Lamport step of every event; ``partner`` is the other end of its message (-1
    none). ``start`` (streamed, `logical_stream`): per location the least step of its
    first event here."""
    earlier, later = location_chain(events.location)
    received = np.flatnonzero(np.isin(events.kind, _RECEIVES) & (partner >= 0))
    src = np.concatenate([earlier, partner[received]])
    dst = np.concatenate([later, received])
    base = np.zeros(len(events), np.int64)
    if start is not None and len(events):
        first = np.flatnonzero(np.r_[True, events.location[1:] != events.location[:-1]])
        base[first] = start[events.location[first]]
    steps = longest_paths(len(events), src, dst, np.ones(len(src), np.int64), base)
    require_acyclic(steps, events.location, events.index, events.time)
    return steps
