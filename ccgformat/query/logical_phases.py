"""Communication phases (paper 003 section 3.1): the two ends of a message belong to one
phase and so do the members of a collective operation - the connected components of
the happened-before graph's message edges - and groups that follow each other both ways
along the locations (a group before another on one location, after it on another) are
merged, because phases must be ordered: if P happened before Q, every step of P is
below every step of Q. What remains are the strongly connected components of the graph
of groups with an edge from each group to the next one along every location; their
edges between each other form the phase graph, which is acyclic.

A location's events of one phase are consecutive: an event of another phase between two
of them would put that phase before and after the first, on one cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .logical_graph import components
from .logical_lamport import location_chain
from .logical_walk import CommunicationEvents
from ..ordering import sorted_distinct

__all__ = ["Phases", "phases"]


@dataclass
class Phases:
    """``of_event``: the phase of every event (``0 .. count - 1``); ``src -> dst``: the
    edges of the phase graph, each once, from a phase to the next one along some location."""

    of_event: np.ndarray
    count: int
    src: np.ndarray
    dst: np.ndarray

    def kept(self, phase: np.ndarray, event: np.ndarray) -> Phases:
        """The phases where ``phase`` is true (every phase before one of them among them),
        numbered on in order, of the events where ``event`` is true."""
        number = np.cumsum(phase) - 1
        inside = phase[self.src] & phase[self.dst]
        return Phases(number[self.of_event[event]], int(phase.sum()), number[self.src[inside]],
                      number[self.dst[inside]])


def phases(events: CommunicationEvents, message: np.ndarray, collective: np.ndarray) -> Phases:
    """The phases of ``events`` whose message partners and collective operation numbers
    are ``message`` and ``collective`` (-1: none)."""
    count = len(events)
    rows = np.arange(count, dtype=np.int64)
    group = np.where(message >= 0, np.minimum(rows, message), rows)
    group = np.where(collective >= 0, count + collective, group)  # past every row number
    _, group = np.unique(group, return_inverse=True)
    group = group.ravel()
    earlier, later = location_chain(events.location)
    crossing = group[earlier] != group[later]
    src, dst = group[earlier[crossing]], group[later[crossing]]
    groups = int(group.max()) + 1 if count else 0
    of_group = components(groups, src, dst)
    of_event = of_group[group]
    count = int(of_group.max()) + 1 if groups else 0
    between = of_group[src] != of_group[dst]
    edges = sorted_distinct(of_group[src[between]] * count + of_group[dst[between]])
    return Phases(of_event, count, edges // max(count, 1), edges % max(count, 1))
