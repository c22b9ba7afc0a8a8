"""Logical time streamed (`ccg logical`): the communication events in stream order
(`logical_merge`), matched as they pass (`messages.MessageStream`), and the phases closed
a batch at a time, each batch's steps, lateness and clusters computed when it closes -
memory holds the phases still open, not the trace (docs/logical.md, "Streamed").

**When a phase closes.** A message is *open* while one of its ends is still to come, and
so is a collective operation while some member of its communicator has not ended it.
Along a location the stream only adds events after those it has given, so a group to
come can follow the events held but never precede them; what it can join into one
phase with them (the strongly connected components of `logical_phases`) is what an open
group precedes. A held phase closes when no open group precedes it in the phase graph
of the held events (and at the stream's end, every phase). The closed phases of each
location are a prefix of its held events, and every phase before a closed phase is
closed: its steps are final, placed after the phases closed before it
(`logical_ravel.ravel_steps` with each location's start). A message that is never
received keeps what it precedes open until the end.

Under Lamport's scheme the same rule closes batches of events (the phases serve only to
close them); their steps continue each location's (`logical_lamport.lamport_steps`),
and the lateness of the one phase and its clusters are left to the end (`logical_spool`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..model import EventBatch, EventKind
from .logical_clusters import cluster_locations
from .logical_graph import longest_paths
from .logical_lamport import lamport_steps
from .logical_lateness import lateness
from .logical_merge import merged_events
from .logical_phases import Phases, phases
from .logical_ravel import ravel_steps
from .logical_walk import COLLECTIVE_KINDS, EVENT_COLUMNS, MATCHING_COLUMNS, POINT_TO_POINT_KINDS, CommunicationEvents
from .messages_query import WINDOW, MessageStream, stream_kinds
from .messages_collectives import numbered

__all__ = ["CLOSE_EVENTS", "STREAM_WINDOW", "Closed", "closed_batches"]

#: the held events are closed once this many (or twice as many as were left open) are held
CLOSE_EVENTS = 1 << 18
#: the stream's events handed to message matching at a time
STREAM_WINDOW = WINDOW
_P2P = np.zeros(256, bool)
_P2P[list(POINT_TO_POINT_KINDS)] = True


@dataclass
class Closed:
    """A batch of closed phases: its events in (location, index) order with their
    ``partner`` (row in the batch, -1: none), ``step``, ``phase`` (numbered in closing
    order over the whole stream), ``lateness``, ``aggregate`` and ``cluster`` (Lamport:
    left to the end, 0); per phase of the batch its first and last step and the
    location and index of its first event."""

    events: CommunicationEvents
    partner: np.ndarray
    step: np.ndarray
    phase: np.ndarray
    lateness: np.ndarray
    aggregate: np.ndarray
    cluster: np.ndarray
    first_step: np.ndarray
    last_step: np.ndarray
    first_location: np.ndarray
    first_index: np.ndarray


def closed_batches(source: Any, scheme: str, clusters: int) -> Iterator[Closed]:
    """The batches of closed phases of ``source`` under ``scheme``, in closing order."""
    kinds = POINT_TO_POINT_KINDS + (COLLECTIVE_KINDS if scheme == "ravel" else ())
    held = _Held(source, np.array(kinds, np.int64), scheme, clusters)

    def windows() -> Iterator[tuple[np.ndarray, EventBatch]]:
        for window in merged_events(source, stream_kinds(source), STREAM_WINDOW):
            held.add(window)
            yield window["location"], EventBatch(
                time=window["time"], kind=window["kind"].astype(np.uint8), ref=window["peer"],
                comm=window["comm"], tag=window["tag"], **{name: window[name] for name in MATCHING_COLUMNS})

    for chunk in MessageStream(source, None, None, None, STREAM_WINDOW, False, windows(), places=True):
        held.pair(chunk.columns["send_seq"], chunk.columns["recv_seq"])
        if held.full():
            batch = held.close(last=False)
            if batch is not None:
                yield batch
    batch = held.close(last=True)
    if batch is not None:
        yield batch


class _Held:
    """The events of the phases not closed yet, in stream order, with their place in the
    stream (``seq``), their partner's (-1: none yet) and their collective operation."""

    def __init__(self, source: Any, kinds: np.ndarray, scheme: str, clusters: int):
        self.kinds = kinds
        self.scheme = scheme
        self.clusters = clusters
        self.parts: list[dict[str, np.ndarray]] = []
        self.pairs: list[tuple[np.ndarray, np.ndarray]] = []
        self.seen = 0          #: events of the stream so far
        self.count = 0         #: events held
        self.threshold = CLOSE_EVENTS
        self.ends: dict[tuple[int, int], int] = {}  #: COLL_ENDs met per (location, communicator)
        members = [len(c.members) for c in source.definitions.communicators]
        self.members = np.array([m if m else 1 << 62 for m in members] + [1 << 62], np.int64)
        locations = len(source.definitions.locations)
        self.start = np.zeros(max(locations, 1), np.int64)  #: per location where its next step may begin
        self.phases = 0        #: phases closed

    def add(self, window: dict[str, np.ndarray]) -> None:
        """Take in a window of the stream (every event matching reads)."""
        n = len(window["time"])
        keep = np.flatnonzero(np.isin(window["kind"], self.kinds))
        part = {name: window[name][keep] for name in EVENT_COLUMNS}
        part["seq"] = self.seen + keep
        part["partner"] = np.full(len(keep), -1, np.int64)
        collective = np.full(len(keep), -1, np.int64)
        ends = np.flatnonzero(part["kind"] == EventKind.COLL_END)
        if len(ends):
            comm = part["comm"][ends]
            collective[ends] = (comm << 32) + numbered(part["location"][ends], comm, self.ends)
        part["collective"] = collective
        self.parts.append(part)
        self.seen += n
        self.count += len(keep)

    def pair(self, send: np.ndarray, receive: np.ndarray) -> None:
        """Take in matched messages: their ends' places in the stream."""
        if len(send):
            self.pairs.append((send, receive))

    def full(self) -> bool:
        return self.count >= self.threshold

    def close(self, last: bool) -> Closed | None:
        """The phases that closed (all of them when ``last``), removed from the held ones."""
        held = {name: np.concatenate([part[name] for part in self.parts]) for name in self.parts[0]} if self.parts \
            else None
        self.parts = [held] if held is not None else []
        if held is None or not len(held["seq"]):
            return None
        if self.pairs:
            send, receive = (np.concatenate(ends) for ends in zip(*self.pairs))
            ends, other = np.r_[send, receive], np.r_[receive, send]
            at = _places(held["seq"], ends)
            mine = held["seq"][at] == ends
            held["partner"][at[mine]] = other[mine]
        self.pairs = []
        order = np.lexsort((held["index"], held["location"]))  # (location, index) order
        events = CommunicationEvents(*(held[name][order] for name in EVENT_COLUMNS))
        row = np.empty(len(order), np.int64)
        row[order] = np.arange(len(order), dtype=np.int64)
        partner_seq = held["partner"][order]
        at = _places(held["seq"], partner_seq)
        message = np.where(partner_seq >= 0, row[at], -1)
        collective = held["collective"][order]
        placed: Phases | None = None  # the closed phases (Lamport's steps need none)
        if last and self.scheme == "lamport":
            closed = np.ones(len(order), bool)
        else:
            found = phases(events, message, collective)
            closed_phase = np.ones(found.count, bool) if last else self._closed(events, message, collective, found)
            closed = closed_phase[found.of_event]
            placed = found.kept(closed_phase, closed)
        if not closed.any():
            self.threshold = 2 * self.count
            return None
        kept = np.ones(len(order), bool)
        kept[order[closed]] = False
        self.parts = [{name: column[kept] for name, column in held.items()}]
        self.count = int(kept.sum())
        self.threshold = max(CLOSE_EVENTS, 2 * self.count)
        new_row = np.cumsum(closed) - 1
        message = message[closed]
        message = np.where(message >= 0, new_row[np.maximum(message, 0)], -1)
        return self._steps(events.take(closed), message, collective[closed], placed)

    def _closed(self, events: CommunicationEvents, message: np.ndarray, collective: np.ndarray,
                found: Phases) -> np.ndarray:
        """Per phase of the held events whether it is closed: no open group precedes it."""
        is_open = _P2P[events.kind] & (message < 0)
        ends = np.flatnonzero(collective >= 0)
        if len(ends):
            keys, first, size = np.unique(collective[ends], return_index=True, return_counts=True)
            comm = np.clip(events.comm[ends[first]], -1, len(self.members) - 1)
            short = np.isin(collective[ends], keys[size < self.members[comm]])
            is_open[ends[short]] = True
        base = np.full(found.count, -1, np.int64)
        base[found.of_event[is_open]] = 0
        reached = longest_paths(found.count, found.src, found.dst, np.zeros(len(found.src), np.int64), base)
        return reached < 0

    def _steps(self, events: CommunicationEvents, message: np.ndarray, collective: np.ndarray,
               found: Phases | None) -> Closed:
        """A closed batch's steps, lateness and clusters; the locations' starts carried on."""
        count = len(events)
        last = np.flatnonzero(np.r_[events.location[1:] != events.location[:-1], True])
        zero = np.zeros(count, np.int64)
        if self.scheme == "lamport":
            step = lamport_steps(events, message, self.start)
            self.start[events.location[last]] = step[last] + 1
            return Closed(events, message, step, zero, zero, zero, zero, np.zeros(0, np.int64),
                          np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        placed = ravel_steps(events, message, collective, self.start, found)
        step, phase = placed.step, placed.phase
        self.start[events.location[last]] = (placed.last_step[phase[last]] - 1) // 2 + 1
        late = lateness(phase, step, events.exit)
        first = np.full(len(placed.first_step), count, np.int64)
        np.minimum.at(first, phase, np.arange(count, dtype=np.int64))
        closed = Closed(events, message, step, phase + self.phases, late, lateness(phase, step, events.enter),
                        cluster_locations(phase, events.location, step, late, self.clusters), placed.first_step,
                        placed.last_step, events.location[first], events.index[first])
        self.phases += len(placed.first_step)
        return closed


def _places(seq: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per key the place of the first of the sorted ``seq`` not below it (the last at
    most), searched in the keys' order: ten times faster than in a random order."""
    order = np.argsort(keys)
    at = np.empty(len(keys), np.int64)
    at[order] = np.searchsorted(seq, keys[order])
    return np.minimum(at, len(seq) - 1)
