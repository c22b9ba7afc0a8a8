"""A producer run ahead of its consumer in a thread of its own.

The C core lets go of the GIL while it decodes a node block or walks events (cffi calls),
so a walk or a scan of the blocks made in a second thread runs on the second core while
the consumer works on the first: message matching's and `ccg verify`'s walks
(`query.streaming`, `query.verify_walk`) and verify's check of the node blocks.
"""

from __future__ import annotations

import threading
from queue import Empty, Full, Queue
from typing import Any, Iterator, TypeVar

__all__ = ["read_ahead"]

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
