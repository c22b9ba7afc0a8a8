"""Queries on MPI ranks (``ccg profile|aggregate|messages|verify --mpi``): each rank
answers for a consecutive share of the locations (about equal in events, `shares`), and
rank 0 reduces the partial answers into the serial one (dissertation 4.7.5: partial
summaries reduced). Every function is called by every rank with the same arguments and
returns the answer on rank 0, None on the others.

- profile: each rank's additive totals (`ProfileParts`), summed; the floating-point
  metrics' changes per location concatenated and summed in location order, as serially.
- aggregate: each rank's rows of the model (location x slice x state), stacked.
- messages: each rank walks its locations' message events (the expensive part: the
  graph expanded where it holds messages); rank 0 merges them into global time order
  (ties by location, then event order, as the serial walk) and matches them, so that
  messages between locations of different ranks match exactly as serially. Rank 0 holds
  every message event (the serial matching holds only the pending ones).
- verify: rank 0 checks the blocks; the checkpoints each rank's locations' rebuilt
  events give (the per-location part) are rebuilt on that rank and compared by rank 0.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Iterator

import numpy as np

from ..aggregate_model import AggregateModel
from ..archive import Archive
from ..archive.verify import Problem, verify as verify_serial
from ..graph.graph import chosen_roots
from ..model import EventBatch
from ..query.aggregate_query import model_locations
from ..query.messages_query import MessageStream, stream_kinds
from ..query.messages_events import WINDOW, message_windows
from ..query.profile_query import ProfileParts, profile_parts
from ..query.profile_result import Profile
from .world import World, split

__all__ = ["aggregate", "messages", "profile", "shares", "verify"]


def shares(world: World, archive: Archive, locations: Iterable[int] | None = None) -> list[list[int]]:
    """The chosen locations (default all), ascending, cut into one consecutive share per
    rank holding about equal numbers of events."""
    chosen = sorted(set(locations)) if locations is not None else list(archive.locations)
    roots = archive.roots
    weights = np.array([roots[location].events if location in roots else 0 for location in chosen], np.float64)
    return [chosen[a:b] for a, b in split(weights, world.size)]


def profile(world: World, archive: Archive, start: int | None = None, stop: int | None = None,
            locations: Iterable[int] | None = None) -> Profile | None:
    """`Archive.profile` of the window over ``locations`` (default all)."""
    mine = shares(world, archive, locations)[world.rank]
    parts = world.gather(world.agree(lambda: profile_parts(archive, start, stop, mine)))
    if parts is None:
        return None
    return ProfileParts.joined(parts).result(archive.definitions, start, stop)


def aggregate(world: World, archive: Archive, slices: int, start: int | None = None, stop: int | None = None,
              states: str = "region", locations: Iterable[int] | None = None) -> AggregateModel | None:
    """`Archive.aggregate` (region or group states) over ``locations`` (default all)."""
    mine = shares(world, archive, locations)[world.rank]
    models = world.gather(world.agree(lambda: archive.aggregate(slices, start, stop, states, mine)))
    if models is None:
        return None
    chosen, hierarchy = model_locations(archive, None if locations is None else sorted(set(locations)))
    first = models[0]
    return AggregateModel(first.bounds, first.states, np.array(chosen, np.int64),
                          np.concatenate([model.values for model in models]), hierarchy, first.resolution)


def messages(world: World, archive: Archive, start: int | None = None, stop: int | None = None,
             locations: Iterable[int] | None = None, window: int = WINDOW) -> MessageStream | None:
    """`Archive.iter_messages` over ``locations`` (default all): on rank 0 a stream whose
    matching runs over every rank's message events."""
    mine = shares(world, archive, locations)[world.rank]
    gathered = world.gather(world.agree(lambda: _message_events(archive, mine, window)))
    if gathered is None:
        return None
    return MessageStream(archive, start, stop, locations, window, False, _in_time_order(gathered, window))


def _message_events(archive: Archive, locations: list[int], window: int) -> tuple[np.ndarray, EventBatch]:
    """The message events of ``locations`` in global order, and their locations."""
    if not locations:
        return np.zeros(0, np.int64), EventBatch.empty()
    parts = list(message_windows(archive, chosen_roots(archive, locations), stream_kinds(archive), window))
    if not parts:
        return np.zeros(0, np.int64), EventBatch.empty()
    return np.concatenate([owner for owner, _ in parts]), EventBatch.concat([batch for _, batch in parts])


def _in_time_order(parts: list[tuple[np.ndarray, EventBatch]], window: int) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """The ranks' events merged into global time order, ties by location and then event
    order (each location's events come from one rank, in order: a stable sort keeps it),
    ``window`` at a time."""
    owner = np.concatenate([owner for owner, _ in parts])
    batch = EventBatch.concat([batch for _, batch in parts])
    order = np.lexsort((owner, batch.time))
    owner = owner[order]
    batch = EventBatch(**{field.name: getattr(batch, field.name)[order] for field in dataclasses.fields(batch)})
    for first in range(0, len(owner), window):
        yield owner[first:first + window], batch[first:first + window]


def verify(world: World, path: str) -> list[Problem] | None:
    """`ccgformat.archive.verify.verify` of the archive at ``path``, on rank 0. Its one walk
    of every location (`query.verify_walk`) makes the checkpoints and the aggregation and
    metric levels together, and the levels need every location's events on one rank, so
    a split of the checkpoints alone saved nothing (docs/parallel.md); the other ranks wait."""
    problems = verify_serial(path) if world.rank == 0 else None
    world.gather(None)
    return problems
