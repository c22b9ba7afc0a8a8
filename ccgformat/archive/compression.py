"""Block payloads compressed on worker threads, handed back in the order they came.

Every block is one zstd frame compressed on its own with the same parameters, so the
stored bytes do not depend on the thread that made them nor on how many threads there
are: the archive is byte-identical for any ``threads``. python-zstandard releases the
GIL while compressing, so the workers run beside the builder.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, Iterator, TypeVar

from .blocks import compress

Tag = TypeVar("Tag")

#: a payload that the shortened search (`Level.search`) shrinks more than this many times
#: is compressed with the level's own parameters too: so regular a payload costs little
#: even at the strongest settings, which still find more in it (the regular ring trace:
#: 1.5% smaller at plain 19 than with the default's search)
STRONG_RATIO = 16


@dataclass(frozen=True)
class Level:
    """How a block is compressed: at zstd ``level``; with ``search`` (search_log,
    target_length) in place of the level's own when given, and then, for a payload that
    shrinks more than STRONG_RATIO times, also with the level's own, keeping the smaller."""

    level: int
    search: tuple[int, int] | None = None

    def compress(self, raw: bytes) -> bytes:
        stored = compress(raw, self.level, self.search)
        if self.search is not None and len(stored) * STRONG_RATIO < len(raw):
            again = compress(raw, self.level)
            if len(again) < len(stored):
                return again
        return stored


#: a payload compressed again after a few of its bytes changed (`Recompressed`) is first
#: compressed at this level, and kept when that is at most NEAR_SLACK larger than before
NEAR_LEVEL = 9
NEAR_SLACK = 0.01


@dataclass(frozen=True)
class Recompressed:
    """How a payload that was stored before in ``before`` bytes, and has since changed in a
    few bytes only, is compressed again (a merge's moved node blocks, `merge.moved`): at
    NEAR_LEVEL when that keeps it within NEAR_SLACK of ``before``, else as ``level`` does.
    So every such block costs at most 1% over its earlier frame, or what ``level`` gives;
    and a merge does not spend ``level``'s strongest search again on bytes whose frame it
    knows (2 M jittered events: 0.12 s for the moved blocks at 19, 0.03 s this way for
    0.24% more of their bytes; the 20,000-location ring, whose blocks need 19's long
    matches, falls back on every block)."""

    level: Level
    before: int

    def compress(self, raw: bytes) -> bytes:
        quick = compress(raw, NEAR_LEVEL)
        return quick if len(quick) <= self.before * (1 + NEAR_SLACK) else self.level.compress(raw)


def default_threads() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every platform
        return max(1, os.cpu_count() or 1)


class CompressionQueue(Generic[Tag]):
    """Compresses payloads with ``threads`` workers (inline when 1); `ready` returns them
    in submission order. At most ``2 * threads`` payloads wait, which bounds memory."""

    def __init__(self, threads: int):
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="ccg-zstd") if threads > 1 else None
        self._limit = 2 * threads
        self._pending: deque[tuple[Tag, bytes, Future[bytes] | bytes]] = deque()

    def put(self, tag: Tag, raw: bytes, level: Level | Recompressed, stored: bytes | None = None) -> None:
        """Queue ``raw`` for compression at ``level`` (or with its ``stored`` bytes given)."""
        if stored is None:
            stored = level.compress(raw) if self._pool is None else self._pool.submit(level.compress, raw)
        self._pending.append((tag, raw, stored))

    def ready(self, *, wait: bool = False) -> Iterator[tuple[Tag, bytes, bytes]]:
        """(tag, raw, compressed) of the queued payloads that are done, in order, up to the
        first one that is not; with ``wait`` (or while too many wait) it waits for them."""
        while self._pending:
            tag, raw, stored = self._pending[0]
            if isinstance(stored, Future):
                if not (wait or len(self._pending) > self._limit or stored.done()):
                    return
                stored = stored.result()
            self._pending.popleft()
            yield tag, raw, stored

    def close(self) -> None:
        """Stop the workers, dropping what is still queued."""
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
