"""Many locations at once: the roots as columns, the runs of locations a pass walks
together (`event_passes`, also for the checkpoints and the metric samples), and the
events of the small locations of an archive read in one walk (`native.walk_locations`)
instead of a walker each - what `Archive.events` (``ccg cat``) does for the many small
locations of a large trace."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.graph import LocationRoot, root_columns, root_rows
from ..graph.pool import NodeKind
from ..model import COLUMNS, EventBatch
from .native import walk_locations

#: events walked at once, in a pass over many locations: bounds the walk's buffer and the
#: pass's temporaries, which stay small enough for the allocator to reuse (the end
#: checkpoints of 10^7 events from the input: 1.5 s in passes of 2^22, 0.8 s in passes of 2^20)
EVENTS_PER_PASS = 1 << 20


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


def event_passes(counts: np.ndarray) -> Iterator[slice]:
    """Runs of consecutive locations (of ``counts`` events each) holding about
    EVENTS_PER_PASS events, at least one location each."""
    done = np.cumsum(counts)
    start = 0
    while start < len(counts):
        before = int(done[start - 1]) if start else 0
        stop = max(int(np.searchsorted(done, before + EVENTS_PER_PASS, side="right")), start + 1)
        yield slice(start, stop)
        start = stop


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
    for run in event_passes(counts[at]):
        run = at[run]
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
    return left, parts
