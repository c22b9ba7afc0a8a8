"""Rank 0 reads, the others receive: the events of a format that cannot read a subset of
its locations, handed to the ranks that convert them (`ccgformat.parallel.convert`).

Rank 0 broadcasts the definitions, then streams the input in location order: the
batches of another rank's range go to that rank (non-blocking sends, at most
`IN_FLIGHT` bytes of them held per rank; rank 0 waits for the oldest beyond that), its
own range's batches to its own builder. When a range is read, its rank gets the strings
interned so far (GENERIC and MARKER texts), which complete its definitions. A failure
while reading is sent to every rank still waiting; a rank that fails while building
drains what is still sent to it, so that rank 0 never waits for it.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, Iterable, Iterator

from ..errors import ParallelError
from ..model import Definitions, EventBatch
from .world import World

__all__ = ["IN_FLIGHT", "Sender", "receive_trace", "send_trace"]

#: bytes of events sent to one rank and not yet received that rank 0 holds at most
IN_FLIGHT = 64 << 20

_EVENTS, _DONE, _ERROR = "events", "done", "error"


def _nbytes(batch: EventBatch) -> int:
    return sum(getattr(batch, field.name).nbytes for field in dataclasses.fields(batch))


class Sender:
    """Non-blocking sends to one rank, at most `IN_FLIGHT` bytes pending, waited for asleep."""

    def __init__(self, world: World, rank: int):
        self.world, self.rank = world, rank
        self.pending: deque[tuple[Any, int]] = deque()
        self.held = 0
        self.closed = False

    def send(self, message: tuple[Any, ...], nbytes: int = 0) -> None:
        self.pending.append((self.world.comm.isend(message, dest=self.rank), nbytes))
        self.held += nbytes
        while self.held > IN_FLIGHT and len(self.pending) > 1:
            request, size = self.pending.popleft()
            self.world.wait(request)
            self.held -= size

    def close(self, message: tuple[Any, ...]) -> None:
        if not self.closed:
            self.closed = True
            self.send(message)

    def wait(self) -> None:
        while self.pending:
            self.world.wait(self.pending.popleft()[0])


def send_trace(world: World, streams: Iterable[tuple[int, Iterable[EventBatch]]], definitions: Definitions,
               ranges: list[tuple[int, int]], owners: list[int]) -> Iterator[tuple[int, Iterable[EventBatch]]]:
    """On rank 0: send the other ranks' locations of ``streams`` to them (range k to rank
    ``owners[k]``) and yield rank 0's own."""
    senders = {owner: Sender(world, owner) for owner in owners if owner != world.rank}
    owner_of = {location: owners[k] for k, (a, b) in enumerate(ranges) for location in range(a, b)}

    def finish_before(location: int) -> None:
        """Send the strings to every rank whose range ends before ``location``."""
        for k, (a, b) in enumerate(ranges):
            if b <= location and owners[k] in senders:
                senders[owners[k]].close((_DONE, list(definitions.strings)))

    try:
        for location, batches in streams:
            finish_before(location)
            owner = owner_of.get(location, world.rank)
            if owner == world.rank:
                yield location, batches
                continue
            for batch in batches:
                senders[owner].send((_EVENTS, location, batch), _nbytes(batch))
        finish_before(len(owner_of) + 1)
    except BaseException as error:
        for sender in senders.values():
            sender.close((_ERROR, str(error) or type(error).__name__))
        raise
    finally:
        for sender in senders.values():
            sender.wait()


def receive_trace(world: World, definitions: Definitions) -> Iterator[tuple[int, Iterator[EventBatch]]]:
    """On another rank: the locations rank 0 sends, each with its batches; at the end
    ``definitions.strings`` is completed with the strings rank 0 sent."""
    inbox = _Inbox(world)
    try:
        while inbox.head is not None:
            location = inbox.head[1]
            yield location, inbox.batches(location)
            inbox.skip(location)  # what the builder left of it
        definitions.strings.extend(inbox.strings[len(definitions.strings):])
    finally:
        inbox.drain()


class _Inbox:
    """Messages from rank 0, one looked ahead: ``head`` is the next events message, None
    once the strings arrived."""

    def __init__(self, world: World):
        self.world = world
        self.strings: list[str] = []
        self.finished = False
        self.head: tuple[Any, ...] | None = None
        self._next()

    def _next(self) -> None:
        message = self.world.comm.recv(source=0)
        if message[0] == _EVENTS:
            self.head = message
            return
        self.head, self.finished = None, True
        if message[0] == _ERROR:
            raise ParallelError(0, message[1])
        self.strings = message[1]

    def batches(self, location: int) -> Iterator[EventBatch]:
        while self.head is not None and self.head[1] == location:
            batch = self.head[2]
            self._next()
            yield batch

    def skip(self, location: int) -> None:
        for _ in self.batches(location):
            pass

    def drain(self) -> None:
        """Receive (and drop) what rank 0 still sends, up to its last message."""
        while not self.finished:
            try:
                self._next()
            except ParallelError:
                return
