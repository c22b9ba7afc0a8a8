"""A producer run ahead of its consumer in a thread of its own.

The C core lets go of the GIL while it decodes a node block or walks events (cffi calls),
so a walk or a scan of the blocks made in a second thread runs on the second core while
the consumer works on the first: message matching's and `ccg verify`'s walks
(`query.streaming`, `query.verify_walk`) and verify's check of the node blocks. The
native OTF2 reader and the native builder let go of it too: a conversion of large
locations reads the input ahead of the builder (`locations_ahead`).
"""

from __future__ import annotations

import itertools
import threading
from queue import Empty, Full, Queue
from typing import Any, Generator, Iterable, Iterator, Sized, TypeVar

__all__ = ["locations_ahead", "read_ahead"]

T = TypeVar("T")


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
            close = getattr(items, "close", None)
            if close is not None:
                close()

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
        close = getattr(streams, "close", None)
        if close is not None:
            close()


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
