"""A producer run ahead of its consumer in a thread of its own.

The C core lets go of the GIL while it decodes a node block or walks events (cffi calls),
so a walk or a scan of the blocks made in a second thread runs on the second core while
the consumer works on the first: `ccg verify`'s walks (`query.verify_walk`), verify's
check of the node blocks, and message matching's walks of every location
(`read_ahead_each`: the walks in the second thread, their merge by time in the first).
The native OTF2 reader and the native builder let go of it too: a conversion of large
locations reads the input ahead of the builder (`locations_ahead`).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from queue import Empty, Full, Queue
from typing import Any, Callable, Generator, Iterable, Iterator, Sequence, Sized, TypeVar

__all__ = ["close_items", "locations_ahead", "read_ahead", "read_ahead_each"]

T = TypeVar("T")


def close_items(items: Iterable[Any]) -> None:
    """Close ``items`` when it can be closed (a generator: the readers it holds let go)."""
    close = getattr(items, "close", None)
    if close is not None:
        close()


def read_ahead(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``items``, made in a thread of their own up to ``depth`` ahead of their consumer: a
    walk's C code (block decoding, which lets go of the GIL) runs on one core while the
    consumer works on the other. What the producer raises is raised here; closing this
    iterator stops the producer after the item it is making."""
    queue: Queue[tuple[bool, Any]] = Queue(depth)
    stop = threading.Event()

    def put(entry: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                queue.put(entry, timeout=0.05)
                return True
            except Full:
                pass
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    break
            else:
                put((False, None))
        except BaseException as error:  # handed to the consumer, who raises it
            put((False, error))
        finally:
            close_items(items)

    thread = threading.Thread(target=produce, name="ccg-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            try:
                more, item = queue.get(timeout=0.05)
            except Empty:
                if not thread.is_alive() and queue.empty():
                    raise RuntimeError("the read-ahead thread ended without a word") from None
                continue
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        thread.join()


def read_ahead_each(sources: Sequence[Iterator[T]], order: Callable[[T], int], depth: int = 2
                    ) -> tuple[list[Iterator[T]], Callable[[], None]]:
    """Each of ``sources``, made in one thread of their own up to ``depth`` items ahead of
    its consumer, and the function that stops that thread (call it when done; exhausting
    every source stops it too). The thread advances the source, among those not ``depth``
    ahead, whose last item has the smallest ``order`` (the first ones at first): the one
    a merge by that order asks for next. What a source raises is raised to the consumer of
    any of them."""
    ahead = _AheadEach(sources, order, depth)
    thread = threading.Thread(target=ahead.produce, name="ccg-read-ahead", daemon=True)
    thread.start()

    def stop() -> None:
        with ahead.turn:
            ahead.stopped = True
            ahead.turn.notify_all()
        thread.join()

    return [ahead.consume(index) for index in range(len(sources))], stop


class _AheadEach:
    """The shared state of `read_ahead_each`: per source its made items and whether it
    is exhausted, and a heap of the sources the thread may advance, by (order of their
    last item, index)."""

    def __init__(self, sources: Sequence[Iterator[T]], order: Callable[[T], int], depth: int):
        self.sources, self.order, self.depth = sources, order, depth
        self.made: list[deque[Any]] = [deque() for _ in sources]
        self.last = [-(1 << 63)] * len(sources)
        self.exhausted = [False] * len(sources)
        self.left = len(sources)  #: the sources not exhausted
        self.ready = [(self.last[index], index) for index in range(len(sources))]
        self.error: BaseException | None = None
        self.stopped = False
        self.turn = threading.Condition()

    def produce(self) -> None:
        while True:
            with self.turn:
                while not self.ready and not self.stopped and self.left:
                    self.turn.wait()
                if self.stopped or not self.left:
                    return
                _, index = heapq.heappop(self.ready)
            try:
                item = next(self.sources[index])  # outside the lock: the C walk lets go of the GIL
                last = self.order(item)
            except StopIteration:
                item, last = _END, 0
            except BaseException as error:  # handed to the consumers, who raise it
                with self.turn:
                    self.error = error
                    self.turn.notify_all()
                return
            with self.turn:
                self.made[index].append(item)
                if item is _END:
                    self.exhausted[index] = True
                    self.left -= 1
                else:
                    self.last[index] = last
                    if len(self.made[index]) < self.depth:
                        heapq.heappush(self.ready, (self.last[index], index))
                self.turn.notify_all()

    def consume(self, index: int) -> Iterator[Any]:
        made = self.made[index]
        while True:
            with self.turn:
                while not made and self.error is None and not self.stopped:
                    self.turn.wait()
                if self.error is not None:
                    raise self.error
                if not made:  # stopped
                    return
                item = made.popleft()
                if item is _END:
                    return
                if len(made) == self.depth - 1 and not self.exhausted[index]:  # it may be advanced again
                    heapq.heappush(self.ready, (self.last[index], index))
                    self.turn.notify_all()
            yield item


#: what `_AheadEach` puts after a source's last item
_END = object()


#: `locations_ahead` hands over runs of at least this many events (an importer's batch) ...
EVENTS_PER_RUN = 1 << 16
#: ... or of this many entries (batches and location ends)
ENTRIES_PER_RUN = 4096


def locations_ahead(streams: Iterator[tuple[int, Iterable[Sized]]], depth: int = 2
                    ) -> Generator[tuple[int, Iterator[Sized]], None, None]:
    """An importer's ``(location, batches)`` pairs, read in a thread (`read_ahead`) up to
    ``depth`` runs of batches ahead: the next location's first pass (the native OTF2
    reader checks a location before it hands on its batches) runs while the last one is
    built. The same batches come out in the same order; the consumer may move on to the
    next location before it took every batch of one (the rest are skipped). Closing the
    result stops the thread, which closes ``streams``."""
    runs = read_ahead(_runs(streams), depth)
    entries = itertools.chain.from_iterable(runs)
    try:
        for location, batch in entries:
            batches = _Batches(entries, batch)
            yield location, batches
            for _ in batches:  # what the consumer left of this location
                pass
    finally:
        runs.close()


def _runs(streams: Iterator[tuple[int, Iterable[Sized]]]) -> Iterator[list[tuple[int, Sized | None]]]:
    """The entries of ``streams`` in runs: (location, batch) and (location, None) at a
    location's end (made in the reader thread)."""
    try:
        run: list[tuple[int, Sized | None]] = []
        events = 0
        for location, batches in streams:
            for batch in batches:
                run.append((location, batch))
                events += len(batch)
                if events >= EVENTS_PER_RUN or len(run) >= ENTRIES_PER_RUN:
                    yield run
                    run, events = [], 0
            run.append((location, None))
            if len(run) >= ENTRIES_PER_RUN:
                yield run
                run, events = [], 0
        if run:
            yield run
    finally:
        close_items(streams)


class _Batches:
    """One location's batches, taken from the shared entries as they are asked for."""

    def __init__(self, entries: Iterator[tuple[int, Sized | None]], first: Sized | None) -> None:
        self._entries = entries
        self._first = first
        self._ended = first is None

    def __iter__(self) -> _Batches:
        return self

    def __next__(self) -> Sized:
        if self._first is not None:
            batch, self._first = self._first, None
            return batch
        if self._ended:
            raise StopIteration
        batch = next(self._entries)[1]
        if batch is None:
            self._ended = True
            raise StopIteration
        return batch
