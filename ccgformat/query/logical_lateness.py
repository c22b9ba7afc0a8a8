"""Lateness (paper 003 section 3.2): how much later an event exits than the earliest event
of its phase at the same step - exit time minus the least exit time at that (phase,
step). The aggregate event before a communication event (its location's non-messaging
time since the previous one, section 3.1) ends where the communication event's call
begins; its lateness compares those times the same way, as Ravel's ``_agg`` metrics do."""

from __future__ import annotations

import numpy as np

__all__ = ["lateness"]


def lateness(phase: np.ndarray, step: np.ndarray, time: np.ndarray) -> np.ndarray:
    """``time`` minus the least ``time`` of the events with the same phase and step."""
    if not len(time):
        return np.zeros(0, np.int64)
    order = np.lexsort((step, phase))
    new = np.r_[True, (phase[order][1:] != phase[order][:-1]) | (step[order][1:] != step[order][:-1])]
    starts = np.flatnonzero(new)
    earliest = np.minimum.reduceat(time[order], starts)
    out = np.empty(len(time), np.int64)
    out[order] = time[order] - np.repeat(earliest, np.diff(np.r_[starts, len(time)]))
    return out
