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
- verify: the walk of every location's events (the checkpoints rebuilt, the finest
  aggregation cells and the metric samples the levels are made of) is split into
  shares, one per rank, and each rank checks the node blocks its walk decodes on their
  own (`verify_blocks.block_check`); rank 0 checks the sections, the blocks' claims on
  each other from the others' checks (`verify_nodes`), the blocks no walk decoded, the
  checkpoints the others rebuilt, and joins their parts of the levels.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Callable, Iterable, Iterator

import numpy as np

from ..aggregate_model import AggregateModel
from ..archive import Archive, open_archive
from ..archive.indexes import Checkpoint
from ..archive.codec import NodeBlock
from ..archive.sections import DirectoryEntry
from ..archive.verify import Problem, verify as verify_serial
from ..archive.verify_blocks import BlockCheck, Defined, block_check
from ..errors import CcgError, ParallelError
from ..graph.graph import chosen_roots
from ..model import EventBatch
from ..query.aggregate_query import model_locations
from ..query.messages_query import MessageStream, stream_kinds
from ..query.messages_events import WINDOW, message_windows
from ..query.profile_query import ProfileParts, profile_parts
from ..query.profile_result import Profile
from ..query.verify_walk import WalkPart, WalkedLevels, joined_levels, walk_part
from .world import World, split

__all__ = ["VERIFY_CHECKS_BYTES", "VERIFY_RANK0_SHARE", "aggregate", "messages", "profile", "shares", "verify"]

#: rank 0's share of the verifier's walk, against 1 for each other rank: it also checks
#: the sections, the claims of every node block on the others and the blocks no walk
#: decoded, and joins the levels (16 M events on 2 ranks: 0.8 took 2.38 s, 1.0 2.42 s and
#: 0.6 2.85 s; docs/parallel.md, "Stop 54")
VERIFY_RANK0_SHARE = 0.8

#: the bytes of block columns (`verify_nodes.BlockSummary`) a rank's checks of the node
#: blocks its walk decodes hold at most (16 bytes a node, 16 M jittered events: 6.9 M
#: nodes): the blocks after are left to rank 0, which takes one rank's checks at a time,
#: so that neither holds more than this of them
VERIFY_CHECKS_BYTES = 96 << 20


def shares(world: World, archive: Archive, locations: Iterable[int] | None = None, first: float = 1.0
           ) -> list[list[int]]:
    """The chosen locations (default all), ascending, cut into one consecutive share per
    rank holding about equal numbers of events (rank 0's ``first`` times the others')."""
    chosen = sorted(set(locations)) if locations is not None else list(archive.locations)
    roots = archive.roots
    weights = np.array([roots[location].events if location in roots else 0 for location in chosen], np.float64)
    return [chosen[a:b] for a, b in split(weights, world.size, first)]


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
    """`ccgformat.archive.verify.verify` of the archive at ``path``: its one walk of every
    location (`query.verify_walk`: the checkpoints, the aggregation and metric levels) is
    split into consecutive shares of about equal events (`shares`), one per rank
    (`_SplitWalk`), each rank checking the node blocks its walk decodes; rank 0 checks the
    rest. The other ranks wait for their share."""
    if world.rank == 0:
        walk = _SplitWalk(world)
        return world.agree(lambda: walk.verify(path))
    return world.agree(lambda: _walk_share(world, path))


class _SplitWalk:
    """Rank 0's walk for the verifier: each other rank is sent its share (the locations
    ``[first, end)`` and their checkpoint intervals) and walks it (`_walk_share`) while
    rank 0 walks the first; then (`finish`) the checks of the node blocks the others'
    walks decoded are handed to the verifier, their rebuilt checkpoints handed on in
    location order and their levels' parts joined (`joined_levels`), so the verifier sees
    the serial walk and checks the blocks no walk decoded. A rank
    whose walk raised is raised as the walk's error: a `CcgError` or KeyError there as
    `ParallelError` (the verifier reports the damage it finds), anything else as
    RuntimeError."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.asked = False

    def verify(self, path: str) -> list[Problem]:
        """The serial verifier with this walk; the other ranks are told there is none
        when it never walks (a file that does not open, or a failure before)."""
        try:
            return verify_serial(path, walk=self)
        finally:
            if not self.asked:
                for rank in range(1, self.world.size):
                    self.world.send(None, rank)

    def __call__(self, archive: Archive, intervals: dict[int, set[int]], rebuilt: Callable[..., None],
                 *levels: int | None) -> Callable[[Callable[[BlockCheck], None]], WalkedLevels]:
        firsts = [share[0] if share else None for share in shares(self.world, archive, first=VERIFY_RANK0_SHARE)]
        bounds = [-np.inf] + [next((f for f in firsts[k:] if f is not None), np.inf) for k in range(1, len(firsts))]
        bounds.append(np.inf)
        for rank in range(1, self.world.size):
            first, end = bounds[rank], bounds[rank + 1]
            self.world.send(((first, end), {location: chosen for location, chosen in intervals.items()
                                            if first <= location < end}, levels), rank)
        self.asked = True
        try:
            mine: WalkPart | Exception = walk_part(archive, intervals, rebuilt, *levels, between=(bounds[0], bounds[1]))
        except Exception as error:  # the others' are taken whatever happens: none waits for this rank
            mine = error
        return partial(self.finish, archive, mine, rebuilt, levels)

    def finish(self, archive: Archive, mine: WalkPart | Exception, rebuilt: Callable[..., None],
               levels: tuple[int | None, ...], checked: Callable[[BlockCheck], None]) -> WalkedLevels:
        """The levels of every rank's part (``mine``: rank 0's, or how its walk failed);
        the others' block checks handed to ``checked`` whatever their walks found."""
        parts, failure = ([], mine) if isinstance(mine, Exception) else ([mine], None)
        for rank in range(1, self.world.size):
            part, checkpoints, error, checks = self.world.receive(rank)
            for check in checks:
                checked(check)
            del checks  # one rank's at a time
            if failure is None:  # as the serial walk: the checkpoints up to where it failed
                for location, interval, points in checkpoints:
                    rebuilt(location, interval, points)
                parts.append(part)
                if error is not None:
                    damage, reason = error
                    failure = ParallelError(rank, reason) if damage else RuntimeError(f"MPI rank {rank} failed: {reason}")
        if failure is not None:
            raise failure
        return joined_levels(archive, parts, *levels)


def _walk_share(world: World, path: str) -> None:
    """A rank's share of the verifier's walk (`_SplitWalk`), when rank 0 sends one: its
    part of the levels, its locations' rebuilt checkpoints and the checks of the node
    blocks it decoded (`verify_blocks.block_check`, up to `VERIFY_CHECKS_BYTES` of block
    columns: rank 0 checks the others itself) sent back - or the checkpoints up to
    where it failed and why (damage: a `CcgError` or KeyError, which the verifier reports
    as problems; anything else is raised here too), and the checks so far."""
    request = world.receive(0)
    if request is None:
        return
    between, intervals, levels = request
    checkpoints: list[tuple[int, int, list[Checkpoint]]] = []
    checks: dict[int, BlockCheck] = {}
    kept = [0]  # the bytes of the checks' block columns
    try:
        with open_archive(path) as archive:
            defined = _defined(archive)

            def check(entry: DirectoryEntry, block: NodeBlock) -> None:
                if entry.offset not in checks and kept[0] < VERIFY_CHECKS_BYTES:
                    checks[entry.offset] = made = block_check(entry, block, defined)
                    kept[0] += made.summary.nbytes if made.summary is not None else 0
            archive.pool.on_decode = check
            part = walk_part(archive, intervals, lambda *rebuilt: checkpoints.append(rebuilt), *levels, between=between)
    except Exception as error:
        damage = isinstance(error, (CcgError, KeyError))
        world.send((None, checkpoints, (damage, str(error) or type(error).__name__), list(checks.values())), 0)
        if not damage:
            raise
        return
    world.send((part, checkpoints, None, list(checks.values())), 0)


def _defined(archive: Archive) -> Defined | None:
    """What the archive's node keys are checked against (None: its definitions do not read)."""
    try:
        return Defined.of(archive.definitions)
    except CcgError:
        return None
