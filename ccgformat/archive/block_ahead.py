"""Node blocks decoded ahead of a walk, in a thread of their own.

A walk of a location reads its node blocks nearly in id order: ascending, with a block and
the one before it often swapped and, now and then, a jump to a block of the upper levels
of the tree and back. While the walk works on one block (and the C decoder lets go of
the GIL), `BlockAhead` decodes the blocks near it on the second core: the conversion's
walks of the graph read back from its file (`read_back`) and `verify`'s walk of every
location.
"""

from __future__ import annotations

from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Container

from .codec import NodeBlock

__all__ = ["BlockAhead"]


class BlockAhead:
    """Decodes (``decode(index)``) the blocks from ``before`` before to ``after`` after each
    one asked for, of the ``count`` blocks, that are not ``held`` (in a cache) nor decoded
    ahead already, nor (unless ``again``) asked for before; keeps at most ``keep`` blocks
    decoded ahead and not yet asked for (the oldest is let go)."""

    def __init__(self, decode: Callable[[int], NodeBlock], count: int, before: int, after: int, keep: int,
                 again: bool = True):
        self._decode = decode
        self._count = count
        self._asked: set[int] | None = None if again else set()
        self._window = range(-before, after + 1)
        self._keep = keep
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ccg-block-ahead")
        self._ahead: OrderedDict[int, Future[NodeBlock]] = OrderedDict()

    def block(self, index: int, held: Container[int]) -> NodeBlock:
        """Block ``index``, decoded ahead or now; the blocks near it start decoding. What
        decoding raises is raised here."""
        future = self._ahead.pop(index, None)
        asked = self._asked if self._asked is not None else ()
        if self._asked is not None:
            self._asked.add(index)
        for near in self._window:
            k = index + near
            if near and 0 <= k < self._count and k not in self._ahead and k not in held and k not in asked:
                self._ahead[k] = self._thread.submit(self._decode, k)
        while len(self._ahead) > self._keep:
            self._ahead.popitem(last=False)[1].cancel()
        return future.result() if future is not None else self._decode(index)

    def close(self) -> None:
        """Stop decoding ahead (the blocks decoded so far are let go)."""
        for future in self._ahead.values():
            future.cancel()
        self._ahead.clear()
        self._thread.shutdown(wait=True)
