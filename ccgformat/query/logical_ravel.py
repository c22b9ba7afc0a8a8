"""Ravel's logical steps (paper 003 section 3.1, the scheme of its reference [20] as the
Ravel tool documents it: "advanced stepping within a partition: align sends based on
happened-before structure rather than as early as possible").

Within a phase (`logical_phases`):

- *Strides* order the sends and collectives ("stride events"; a collective operation's
  members are one): a stride event follows the next stride event of its location and,
  for a send, the next stride event after its receive on the receiver's location; its
  stride is the longest chain of such edges before it (0 without any).
- Steps are handed out stride by stride. Before the stride-k events, each location's
  receives that wait in front of a stride-k event take one step more than the greater
  of their location's previous event and the later (by stride) of their send and
  their location's previous stride event; then every stride-k event of the phase takes
  one step more than any step given in the phase so far - the sends of one exchange
  share a step. Receives after a location's last stride event follow, by the same rule.
  All of it is one longest-path problem over the events and a *hub* per (phase, stride)
  standing for "the steps given so far" (`_local_steps`), a batch of phases at a time.

Phases are then placed after one another: a phase starts one step after the last step
of every phase before it in the phase graph (concurrent phases may share steps).
Between two communication events of a location lies its non-messaging time, one
aggregate event (section 3.1): every communication event takes an odd step and the
aggregate before it the even step below, so a local step s of a phase placed at offset
o is the step ``2 (o + s) + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import EventKind
from .logical_graph import longest_paths, require_acyclic
from .logical_phases import Phases, phases
from .logical_walk import CommunicationEvents
from ..ordering import sorted_distinct

__all__ = ["RavelSteps", "ravel_steps"]

#: the steps of about this many events (whole phases) are computed at once
STEP_EVENTS = 1 << 21
_SENDS = (int(EventKind.SEND), int(EventKind.ISEND))
_RECEIVES = (int(EventKind.RECV), int(EventKind.IRECV))


@dataclass
class RavelSteps:
    """Per event its step and phase; per phase its first and last step. Phases are
    numbered in the order of their first steps (ties: by their first event)."""

    step: np.ndarray
    phase: np.ndarray
    first_step: np.ndarray
    last_step: np.ndarray


def ravel_steps(events: CommunicationEvents, message: np.ndarray, collective: np.ndarray,
                start: np.ndarray | None = None, found: Phases | None = None) -> RavelSteps:
    """The Ravel steps of ``events`` with their message partners and collective numbers.
    Streamed (`logical_stream`): ``start``, per location the least offset of the phase of
    its first event here, the phases before it placed already; ``found``, the phases of
    the events, known already."""
    found = phases(events, message, collective) if found is None else found
    local = _batched_local_steps(events, message, collective, found.of_event)
    span = np.zeros(found.count, np.int64)
    np.maximum.at(span, found.of_event, local)
    base = np.zeros(found.count, np.int64)
    if start is not None and len(events):
        first = np.flatnonzero(np.r_[True, events.location[1:] != events.location[:-1]])
        np.maximum.at(base, found.of_event[first], start[events.location[first]])
    offset = longest_paths(found.count, found.src, found.dst, span[found.src] + 1, base)
    order = _phase_order(found, offset)
    number = np.empty(found.count, np.int64)
    number[order] = np.arange(found.count, dtype=np.int64)
    step = 2 * (offset[found.of_event] + local) + 1
    first = 2 * offset[order] + 1
    return RavelSteps(step, number[found.of_event], first, first + 2 * span[order])


def _phase_order(found: Phases, offset: np.ndarray) -> np.ndarray:
    """The phases by first step, then by their first event."""
    first_event = np.full(found.count, len(found.of_event), np.int64)
    np.minimum.at(first_event, found.of_event, np.arange(len(found.of_event), dtype=np.int64))
    return np.lexsort((first_event, offset))


def _batched_local_steps(events: CommunicationEvents, message: np.ndarray, collective: np.ndarray,
                         phase: np.ndarray) -> np.ndarray:
    """`_local_steps`, a batch of whole phases of about `STEP_EVENTS` events at a time
    (a phase's steps depend on its own events alone): the graphs of one batch in memory."""
    count = len(events)
    if count <= STEP_EVENTS:
        return _local_steps(events, message, collective, phase)
    by_phase = np.argsort(phase, kind="stable")  # each phase's events together, in (location, index) order
    place = np.empty(count, np.int64)
    place[by_phase] = np.arange(count, dtype=np.int64)
    through = np.cumsum(np.bincount(phase))  # events up to the end of each phase
    cuts = sorted_distinct(through[np.searchsorted(through, np.arange(STEP_EVENTS, count, STEP_EVENTS))])
    local = np.empty(count, np.int64)
    for first, last in zip(np.r_[0, cuts[cuts < count]].tolist(), np.r_[cuts[cuts < count], count].tolist()):
        rows = by_phase[first:last]
        partner = message[rows]  # in the same phase, so in the same batch
        partner = np.where(partner >= 0, place[np.maximum(partner, 0)] - first, -1)
        local[rows] = _local_steps(events.take(rows), partner, collective[rows], phase[rows])
    return local


def _local_steps(events: CommunicationEvents, message: np.ndarray, collective: np.ndarray,
                 phase: np.ndarray) -> np.ndarray:
    """Every event's step within its phase (from 0), by strides (module docstring)."""
    count = len(events)
    rows = np.arange(count, dtype=np.int64)
    receive = np.isin(events.kind, _RECEIVES)
    block = np.cumsum(np.r_[True, (events.location[1:] != events.location[:-1]) | (phase[1:] != phase[:-1])]) - 1
    after = _next_stride(block, ~receive)
    before = _previous_stride(block, ~receive)
    previous = np.where(np.r_[False, block[1:] == block[:-1]], rows - 1, -1)

    # strides: a node per send (and other non-receive) and per collective operation
    node_key = np.where(collective >= 0, count + collective, rows)
    strides_of = np.flatnonzero(~receive)
    _, node = np.unique(node_key[strides_of], return_inverse=True)
    node_of = np.full(count, -1, np.int64)
    node_of[strides_of] = node.ravel()
    nodes = int(node.max()) + 1 if len(node) else 0
    sender = strides_of[np.isin(events.kind[strides_of], _SENDS) & (message[strides_of] >= 0)]
    tails = np.concatenate([strides_of, sender])
    heads = np.concatenate([after[strides_of], after[message[sender]]])
    kept = heads >= 0
    stride_of_node = longest_paths(nodes, node_of[tails[kept]], node_of[heads[kept]], np.ones(int(kept.sum()), np.int64),
                                   np.zeros(nodes, np.int64))
    require_acyclic(stride_of_node[node_of[strides_of]], events.location[strides_of], events.index[strides_of],
                    events.time[strides_of])
    stride = np.full(count, -1, np.int64)
    stride[strides_of] = stride_of_node[node_of[strides_of]]

    # hubs: one per (phase, stride) of the stride events, chained in stride order
    width = int(stride.max(initial=0)) + 1
    hub_key = sorted_distinct(phase[strides_of] * width + stride[strides_of])
    hubs = len(hub_key)
    hub_of = count + np.searchsorted(hub_key, phase * width + np.maximum(stride, 0))
    chained = np.flatnonzero(hub_key[1:] // width == hub_key[:-1] // width)
    received = np.flatnonzero(receive)
    # a receive's "last stride": the later by stride of its send and its location's previous stride event
    send, own = message[received], before[received]
    last = np.where((send >= 0) & ((own < 0) | (stride[np.maximum(send, 0)] > stride[np.maximum(own, 0)])), send, own)
    waiting = received[after[received] >= 0]  # receives in front of a stride event: they feed its hub
    src = [count + chained, hub_of[strides_of], previous[received], last, waiting]
    dst = [count + chained + 1, strides_of, received, received, hub_of[after[waiting]]]
    weight = [np.ones(len(chained), np.int64), np.zeros(len(strides_of), np.int64)]
    src_all, dst_all = np.concatenate(src), np.concatenate(dst)
    weights = np.concatenate(weight + [np.ones(len(src_all) - len(strides_of) - len(chained), np.int64)])
    real = src_all >= 0
    value = longest_paths(count + hubs, src_all[real], dst_all[real], weights[real], np.zeros(count + hubs, np.int64))
    require_acyclic(value[:count], events.location, events.index, events.time)
    return value[:count]


def _next_stride(block: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Per event, the next stride event after it in its block (-1: none)."""
    count = len(block)
    key = block * (count + 1) + np.where(stride, np.arange(count), count)
    following = np.minimum.accumulate(key[::-1])[::-1]
    following = np.r_[following[1:], np.iinfo(np.int64).max]
    position = following - block * (count + 1)
    return np.where(position < count, position, -1)


def _previous_stride(block: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Per event, the previous stride event before it in its block (-1: none)."""
    count = len(block)
    key = block * (count + 1) + np.where(stride, np.arange(count), -1) + 1
    preceding = np.r_[-1, np.maximum.accumulate(key)[:-1]]
    position = preceding - block * (count + 1) - 1
    return np.where(position >= 0, position, -1)
