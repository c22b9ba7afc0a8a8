"""What `ccg logical` writes, from either answer - the columns of `Logical` or the spool
of the streamed one (`logical_spool`) - read a location at a time: the JSON
(docs/logical.md), and each phase's members ordered by cluster, which the JSON lists
and the picture's rows spread (`logical_picture`).

An answer gives ``scheme``, ``timer_resolution``, ``names``, ``phases`` (their number),
``location_columns()`` (per location with events its `LOCATION_COLUMNS`, trace order),
``columns_of(location)`` (one location's, None without events) and ``phase_chunks()``
(the phases in order, a chunk at a time: per phase its first step, last step and events,
and its `Members`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator, Protocol, TextIO

import numpy as np

from .. import backends

__all__ = ["LOCATION_COLUMNS", "Answer", "Members", "PhaseChunk", "members_of", "numbers_text",
           "numbers_text_reference", "phases_text", "write_json"]

#: the columns of a location's events an answer gives: event index, step, lateness,
#: phase, cluster, aggregate lateness, its place among its phase's locations ordered by
#: (cluster, location) (``rank``), and the event index of its call's LEAVE (-1: none)
LOCATION_COLUMNS = ("event", "step", "lateness", "phase", "cluster", "aggregate_lateness", "rank", "leave")
_JSON_KEYS = (("events", "event"), ("steps", "step"), ("lateness", "lateness"), ("phases", "phase"),
              ("clusters", "cluster"), ("aggregate_lateness", "aggregate_lateness"))
#: list items written at once
_ITEMS = 1 << 16
#: a location of at most this many events is written in one piece (as Python lists: 36
#: bytes a number), a longer one a list and a part of it at a time
_AT_ONCE = 1 << 12
#: a phase's record up to its first cluster's first location
_PHASE_HEAD = '{"phase": %d, "first_step": %d, "last_step": %d, "events": %d, "clusters": [['
#: before a location of a phase's clusters: in its cluster, first in its cluster
_SEPARATORS = np.array([", ", "], ["], object)


@dataclass
class Members:
    """The (phase, location) pairs of events ordered by (phase, cluster, location):
    ``phase``, ``cluster``, ``location`` per pair; ``count`` per phase; ``rank`` per
    event its pair's place in its phase."""

    phase: np.ndarray
    cluster: np.ndarray
    location: np.ndarray
    count: np.ndarray
    rank: np.ndarray


#: the phases ``p, p + 1, ...`` of an answer: per phase its first and last step and its
#: events, and its `Members` (at least one location each)
PhaseChunk = tuple[np.ndarray, np.ndarray, np.ndarray, Members]


class Answer(Protocol):
    scheme: str
    timer_resolution: int
    names: list[str]

    @property
    def phases(self) -> int: ...

    def location_columns(self) -> Iterator[tuple[int, dict[str, np.ndarray]]]: ...

    def columns_of(self, location: int) -> dict[str, np.ndarray] | None: ...

    def phase_chunks(self) -> Iterator[PhaseChunk]: ...


def members_of(phase: np.ndarray, location: np.ndarray, cluster: np.ndarray, phases: int) -> Members:
    """The `Members` of events with these columns, ``phases`` phases."""
    order = np.lexsort((location, cluster, phase))
    p, c, l = phase[order], cluster[order], location[order]
    distinct = np.r_[True, (p[1:] != p[:-1]) | (c[1:] != c[:-1]) | (l[1:] != l[:-1])][:len(p)]
    member = np.cumsum(distinct) - 1
    count = np.bincount(p[distinct], minlength=phases)
    first = np.r_[0, np.cumsum(count)][p[distinct]]
    rank = np.empty(len(order), np.int64)
    rank[order] = (np.arange(len(first), dtype=np.int64) - first)[member]
    return Members(p[distinct], c[distinct], l[distinct], count, rank)


def phases_text(start: int, chunk: PhaseChunk) -> str:
    """The records of phases ``start, start + 1, ...`` as `json.dumps` writes them, ", "
    between them: ``{"phase", "first_step", "last_step", "events", "clusters":
    [[location, ...], ...]}``, the clusters' locations from the members in (cluster,
    location) order."""
    first, last, events, members = chunk
    if not len(first):
        return ""
    heads = [_PHASE_HEAD % row for row in zip(range(start, start + len(first)), first.tolist(), last.tolist(),
                                              events.tolist())]
    heads[1:] = ["]]}, " + head for head in heads[1:]]
    cluster = members.cluster
    pieces = np.empty(2 * len(cluster) + 1, object)
    new_cluster = np.r_[True, cluster[1:] != cluster[:-1]]
    before = _SEPARATORS[new_cluster.view(np.uint8)]  # what comes before each location
    before[np.r_[0, np.cumsum(members.count)[:-1]]] = heads
    pieces[0:-1:2] = before
    pieces[1:-1:2] = numbers_text(members.location).split(", ")
    pieces[-1] = "]]}"
    return "".join(pieces.tolist())


def write_json(answer: Answer, out: TextIO) -> None:
    """``{"scheme", "timer_resolution", "locations": [...], "phases": [...]}`` (as
    `json.dumps` writes it), a location and a phase at a time."""
    out.write(f'{{"scheme": {json.dumps(answer.scheme)}, "timer_resolution": {answer.timer_resolution}, '
              '"locations": [')
    keys = _JSON_KEYS if answer.scheme == "ravel" else _JSON_KEYS[:-1]
    columns = answer.location_columns()
    upcoming = next(columns, None)
    for location, name in enumerate(answer.names):
        mine = upcoming[1] if upcoming is not None and upcoming[0] == location else None
        out.write(", " if location else "")
        if mine is None or len(mine["event"]) <= _AT_ONCE:
            lists = {key: mine[column].tolist() if mine is not None else [] for key, column in keys}
            out.write(json.dumps({"location": location, "name": name} | lists))
        else:
            out.write(f'{{"location": {location}, "name": {json.dumps(name)}')
            for key, column in keys:
                out.write(f', "{key}": [')
                for first in range(0, len(mine[column]), _ITEMS):
                    out.write((", " if first else "") + numbers_text(mine[column][first:first + _ITEMS]))
                out.write("]")
            out.write("}")
        if mine is not None:
            upcoming = next(columns, None)
    out.write('], "phases": [')
    start = 0
    for chunk in answer.phase_chunks():
        out.write((", " if start and len(chunk[0]) else "") + phases_text(start, chunk))
        start += len(chunk[0])
    out.write("]}\n")


def numbers_text(values: np.ndarray) -> str:
    """The items of a list of integers as `json.dumps` writes them, ", " between them,
    with the active backend (the native core's `messages.format_rows`)."""
    if backends.native():
        from .._native.messages import format_rows
        return format_rows([values], [""], "", ", ")
    return numbers_text_reference(values)


def numbers_text_reference(values: np.ndarray) -> str:
    """`numbers_text` by `json.dumps`."""
    return json.dumps(values.tolist())[1:-1]
