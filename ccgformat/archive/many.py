"""Many locations at once: the roots as columns, and the events of the small locations
of an archive read in one walk (`native.walk_locations`) instead of a walker each - what
`Archive.events` (``ccg cat``) does for the many small locations of a large trace."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.graph import LocationRoot, root_columns, root_rows
from ..graph.pool import NodeKind
from ..model import COLUMNS, EventBatch
from .native import walk_locations

#: events walked at once (bounds the walk's own buffer; the merge keeps what it returns)
EVENTS_PER_WALK = 1 << 20


def check_roots(pool: Any, locations: np.ndarray, roots: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                counts: np.ndarray, path: str | None) -> None:
    """What `Archive.location` checks of each location's root node (a call or artificial
    node with the root's event count and duration), once per distinct node."""
    nodes, inverse = np.unique(roots, return_inverse=True)
    facts = np.array([(pool.kind[n], pool.events[n], pool.total[n]) for n in nodes.tolist()], np.int64).reshape(-1, 3)
    with np.errstate(over="ignore"):
        wrong = np.flatnonzero((facts[inverse, 0] > NodeKind.ARTIFICIAL) | (facts[inverse, 1] != counts)
                               | (facts[inverse, 2] != ends - starts))
    if len(wrong):
        i = int(wrong[0])
        raise CorruptArchiveError(f"location {int(locations[i])}: root node {int(roots[i])} does not match the "
                                  f"roots section", path=path)


def small_events(pool: Any, roots: Mapping[int, LocationRoot], chosen: list[int], start: int | None, stop: int | None,
                 limit: int, path: str | None) -> tuple[list[int], list[tuple[np.ndarray, EventBatch]]]:
    """The ``chosen`` locations of more than ``limit`` events (or not in ``roots``), left
    to a walker each; and the events of the others in ``[start, stop)`` with each one's
    location, in parts of consecutive locations, each location's in event order."""
    locations, nodes, starts, ends, counts = root_columns(roots)
    wanted = np.asarray(chosen, np.int64)
    at, known = root_rows(locations, wanted)
    small = known & (counts[at] <= limit)
    left = wanted[~small].tolist()
    at = at[small]
    if not len(at):
        return left, []
    check_roots(pool, locations[at], nodes[at], starts[at], ends[at], counts[at], path)
    parts = []
    done = np.cumsum(counts[at])
    first = 0
    while first < len(at):
        before = int(done[first - 1]) if first else 0
        last = max(int(np.searchsorted(done, before + EVENTS_PER_WALK, side="right")), first + 1)
        run = at[first:last]
        offsets = np.concatenate(([0], np.cumsum(counts[run])))
        batch = walk_locations(pool, locations[run], nodes[run], starts[run], offsets, path)
        owner = np.repeat(locations[run], counts[run])
        keep = np.ones(len(batch), bool)
        if start is not None:
            keep &= batch.time >= start
        if stop is not None:
            keep &= batch.time < stop
        if not keep.all():
            owner = owner[keep]
            batch = EventBatch(**{name: getattr(batch, name)[keep] for name in ("time", "kind") + COLUMNS})
        parts.append((owner, batch))
        first = last
    return left, parts
