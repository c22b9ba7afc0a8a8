"""The other ranks read, rank 0 builds: the events of a trace of many small locations,
handed to rank 0 (the gathered way of `ccgformat.parallel.convert`).

Each reading rank streams its range's events to rank 0 in location order, many
locations to a message (`PACK_EVENTS`: at 50 events a location, a message per location
cost more than the events), with non-blocking sends of at most `distribute.IN_FLIGHT`
bytes held, then a last message. A message carries the texts its reader interned since
the one before (GENERIC events' strings): rank 0 interns them into its own table, in
the ranks' order, so its strings are the serial conversion's, and renumbers the GENERIC
events' references. Rank 0 hands each message's whole locations to the writer as one
`LocationRun` (its small-location groups take it as it is), holding back only the
message's last location, which the next message may go on with. A reader's failure is
sent to rank 0 instead of the last message; when rank 0 fails, it takes what every rank
still sends, so that none waits for it.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..errors import ParallelError
from ..formats.common import StringTable
from ..model import EventBatch, EventKind, LocationRun
from .distribute import Sender
from .world import World

__all__ = ["PACK_EVENTS", "Gathered", "send_locations"]

#: events a reading rank packs into one message at most (one batch may pass it): 4 MiB
#: of columns
PACK_EVENTS = 1 << 16

_EVENTS, _DONE, _ERROR = "events", "done", "error"
_FIELDS = tuple(field.name for field in dataclasses.fields(EventBatch))


def send_locations(sender: Sender, streams: Iterable[tuple[int, Iterable[EventBatch]]], strings: list[str]) -> None:
    """On a reading rank: every location of ``streams`` to rank 0 through ``sender``, packed
    (``strings``: the list its reader interns GENERIC texts into; the sends may still be
    in flight: `Sender.wait`); on a failure, rank 0 is told and the error raised."""
    pack: list[tuple[int, EventBatch]] = []
    held = sent = 0

    def flush() -> None:
        nonlocal held, sent
        runs = np.array([(location, len(batch)) for location, batch in pack], np.int64).reshape(-1, 2)
        columns = [np.concatenate([getattr(batch, name) for _, batch in pack]) for name in _FIELDS]
        sender.send((_EVENTS, runs, columns, strings[sent:]), sum(column.nbytes for column in columns))
        sent, held = len(strings), 0
        pack.clear()

    try:
        for location, batches in streams:
            for batch in batches:
                pack.append((location, batch))
                held += len(batch)
                if held >= PACK_EVENTS:
                    flush()
        if pack:
            flush()
    except BaseException as error:
        sender.close((_ERROR, str(error) or type(error).__name__))
        raise
    sender.close((_DONE,))


class Gathered:
    """On rank 0: the locations that the reading ``ranks`` send, rank after rank
    (`locations`), their texts interned into ``strings`` (rank 0's definitions' list,
    which its own reader filled before) as they arrive; `drain` takes what they still
    send once rank 0 stops taking them."""

    def __init__(self, world: World, ranks: Sequence[int], strings: list[str]) -> None:
        self.inboxes = [_Inbox(world, rank, strings) for rank in ranks]

    def locations(self) -> Iterator[LocationRun | tuple[int, list[EventBatch]]]:
        """The ranks' locations in order: each message's whole locations as one
        `LocationRun` (the writer's small-location groups take it as it is), a location
        that goes on in the next message as a pair once it ends."""
        for inbox in self.inboxes:
            yield from inbox.items()

    def drain(self) -> None:
        for inbox in self.inboxes:
            inbox.drain()


class _Inbox:
    """The messages of one reading rank, each received (asleep) when the locations of
    the one before are taken."""

    def __init__(self, world: World, rank: int, strings: list[str]) -> None:
        self.world, self.rank, self.strings = world, rank, strings
        self.table: StringTable | None = None  # made at the first message: after the ranks before
        self.ids = np.zeros(0, np.int64)  # the rank's string ids -> rank 0's
        self.finished = False

    def items(self) -> Iterator[LocationRun | tuple[int, list[EventBatch]]]:
        last: int | None = None  # a message's last location, which the next one may go on with
        pieces: list[EventBatch] = []
        while not self.finished:
            message = self._receive()
            if message is None:
                break
            locations, counts, events = message
            if locations[0] == last:
                pieces.append(events[:int(counts[0])])
                locations, counts, events = locations[1:], counts[1:], events[int(counts[0]):]
                if not len(locations):
                    continue
            if last is not None:
                yield last, pieces
            whole = len(events) - int(counts[-1])
            if len(locations) > 1:
                yield LocationRun(locations[:-1], counts[:-1], events[:whole])
            last, pieces = int(locations[-1]), [events[whole:]]
        if last is not None:
            yield last, pieces

    def drain(self) -> None:
        """Receive (and drop) what the rank still sends, up to its last message."""
        while not self.finished:
            try:
                self._receive(keep=False)
            except ParallelError:
                return

    def _receive(self, keep: bool = True) -> tuple[np.ndarray, np.ndarray, EventBatch] | None:
        """The next message's locations, their event counts and their events (a location
        sent in several batches counted once); None after the last message."""
        message = self.world.receive(self.rank)
        if message[0] == _DONE:
            self.finished = True
            return None
        if message[0] == _ERROR:
            self.finished = True
            raise ParallelError(self.rank, message[1])
        if not keep:
            return None
        _, runs, columns, texts = message
        if self.table is None:
            self.table = StringTable(self.strings)
        if texts:
            self.ids = np.concatenate([self.ids, np.array([self.table(text) for text in texts], np.int64)])
        generic = columns[_FIELDS.index("kind")] == EventKind.GENERIC
        if generic.any():
            for name in ("ref", "value"):
                column = columns[_FIELDS.index(name)]
                column[generic] = self.ids[column[generic]]
        firsts = np.flatnonzero(np.diff(runs[:, 0], prepend=-1))
        return runs[firsts, 0], np.add.reduceat(runs[:, 1], firsts), EventBatch(*columns)
