"""Logical time (paper 003, Isaacs et al., "Combing the Communication Hairball"): a
trace's communication events ordered by logical steps derived from happened-before,
with their lateness and per-phase clusters of locations (`Archive.logical`).

Two schemes: ``lamport`` (`logical_lamport`, point-to-point events) and ``ravel``
(`logical_ravel`: phases, sends aligned, aggregate non-messaging events, collectives).
The events come from one walk of every location (`logical_walk`), their partners from
message matching run over them (`logical_matching`). Rules: docs/logical.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError
from .logical_clusters import CLUSTERS, cluster_locations
from .logical_lamport import lamport_steps
from .logical_lateness import lateness
from .logical_matching import partners
from .logical_ravel import ravel_steps
from .logical_result import Logical
from .logical_schemes import SCHEMES
from .logical_walk import COLLECTIVE_KINDS, POINT_TO_POINT_KINDS, communication_events
from .messages_query import stream_kinds
from .timeline_query import location_labels

__all__ = ["checked_options", "logical", "title_of"]


def logical(source: Any, scheme: str = "ravel", clusters: int | None = None) -> Logical:
    """The logical steps of a `Graph`'s or `Archive`'s communication events by ``scheme``
    (``"ravel"`` or ``"lamport"``), their phases, lateness, and at most ``clusters``
    clusters of locations per phase (default `CLUSTERS`)."""
    scheme, clusters = checked_options(scheme, clusters)
    kinds = POINT_TO_POINT_KINDS + (COLLECTIVE_KINDS if scheme == "ravel" else ())
    found = partners(source, communication_events(source, stream_kinds(source)), kinds)
    events = found.events
    if scheme == "lamport":
        step = lamport_steps(events, found.message)
        phase = np.zeros(len(events), np.int64)
        first = np.zeros(1 if len(events) else 0, np.int64)
        last = step.max(initial=0) + first
        aggregate = np.zeros(len(events), np.int64)
    else:
        placed = ravel_steps(events, found.message, found.collective)
        step, phase, first, last = placed.step, placed.phase, placed.first_step, placed.last_step
        aggregate = lateness(phase, step, events.enter)
    late = lateness(phase, step, events.exit)
    definitions = source.definitions
    everyone = list(range(len(definitions.locations)))
    return Logical(scheme, events.location, events.index, events.kind, step, phase, late, aggregate,
                   cluster_locations(phase, events.location, step, late, clusters), found.message, events.leave,
                   first, last, [location.name for location in definitions.locations],
                   location_labels(source, everyone), int(definitions.timer_resolution or 1), title_of(source, scheme))


def checked_options(scheme: str, clusters: int | None) -> tuple[str, int]:
    """``scheme`` and ``clusters`` (default `CLUSTERS`), checked."""
    if scheme not in SCHEMES:
        raise ParameterError(f"the logical scheme is one of {', '.join(SCHEMES)}, not {scheme!r}")
    clusters = CLUSTERS if clusters is None else clusters
    if clusters < 1:
        raise ParameterError(f"a phase has at least 1 cluster, not {clusters}")
    return scheme, clusters


def title_of(source: Any, scheme: str) -> str:
    """The picture's title."""
    path = getattr(source, "path", None)
    return f"logical timeline ({scheme})" + (f" of {Path(path).name}" if path else "")
