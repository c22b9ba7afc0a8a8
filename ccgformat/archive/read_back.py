"""The graph of an archive being written, read back from its node blocks.

A conversion in bounded memory lets the builder's pool drop the records of the nodes it
has written (`Params.epoch_nodes`, docs/scale.md). What still walks the whole graph after
that - the checkpoints of a location built over several epochs without its input events,
the aggregation and metric tables of `Writer.finish` - reads the nodes back from the
blocks already in the file, through the reader's pool and its bounded block cache.
"""

from __future__ import annotations

import mmap
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..graph.graph import Graph
from .layout import NODE_KINDS
from .native import walker
from .reader import ArchivePool, _Storage
from .codec import NodeBlock
from .sections import DirectoryEntry

#: blocks decoded ahead of a walk of the graph read back (about 1.5 MB each, decoded)
AHEAD_BLOCKS = 4


class _AheadPool(ArchivePool):
    """An `ArchivePool` that decodes the next `AHEAD_BLOCKS` blocks in a thread of its own
    while a walk reads the current one (decoding lets go of the GIL): the walks of the end
    of a conversion read the blocks nearly in id order, as they were built."""

    def __init__(self, storage: _Storage, entries: list[DirectoryEntry]):
        super().__init__(storage, entries)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ccg-read-back")
        self._ahead: dict[int, Future[NodeBlock]] = {}

    def _decoded(self, index: int) -> NodeBlock:
        future = self._ahead.pop(index, None)
        block = future.result() if future is not None else super()._decoded(index)
        wanted = range(index + 1, min(index + 1 + AHEAD_BLOCKS, len(self._entries)))
        for stale in [k for k in self._ahead if k not in wanted]:  # the walk went elsewhere
            self._ahead.pop(stale).cancel()
        for k in wanted:
            if k not in self._ahead and k not in self._cache:
                self._ahead[k] = self._thread.submit(super()._decoded, k)
        return block

    def release(self) -> None:
        for future in self._ahead.values():
            future.cancel()
        self._ahead.clear()
        self._thread.shutdown(wait=True)
        super().release()


class WrittenGraph(Graph):
    """A `Graph` whose pool is the node blocks of a file being written."""

    path: str = ""

    def location(self, location: int) -> Any:
        """Random access, iteration and time search over one location's events, its
        nodes read from the written blocks."""
        root = self.roots[location]
        return walker(self.pool, root.root, root.start, location, path=self.path)


def read_back(path: Path, directory: list[DirectoryEntry], graph: Graph) -> tuple[WrittenGraph, _Storage]:
    """``graph`` over the node blocks of ``directory`` in the file ``path`` (flushed: every
    node of the graph is in them), and the storage to close once it is no longer read."""
    with open(path, "rb") as file:
        data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    storage = _Storage(str(path), data)
    pool = _AheadPool(storage, [entry for entry in directory if entry.kind in NODE_KINDS])
    if len(pool) != len(graph.pool):
        pool.release()
        storage.close()
        raise ValueError(f"the file holds {len(pool)} nodes of the graph's {len(graph.pool)}")
    written = WrittenGraph(**{field.name: getattr(graph, field.name) for field in fields(graph)})
    written.pool = pool  # type: ignore[assignment]
    written.path = str(path)
    return written, storage
