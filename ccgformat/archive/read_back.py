"""The graph of an archive being written, read back from its node blocks.

A conversion in bounded memory lets the builder's pool drop the records of the nodes it
has written (`Params.epoch_nodes`, docs/scale.md). What still walks the whole graph after
that - the checkpoints of a location built over several epochs without its input events,
the aggregation and metric tables of `Writer.finish` - reads the nodes back from the
blocks already in the file, through the reader's pool and its bounded block cache.
"""

from __future__ import annotations

import mmap
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..graph.graph import Graph
from .layout import NODE_KINDS
from .native import walker
from .reader import ArchivePool, _Storage
from .sections import DirectoryEntry

#: blocks decoded ahead of a walk of the graph read back (about 1.5 MB each, decoded)
AHEAD_BLOCKS = 4


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
    pool = ArchivePool(storage, [entry for entry in directory if entry.kind in NODE_KINDS])
    # the walks of the end of a conversion read the blocks nearly in id order, as they were built
    pool.decode_ahead(0, AHEAD_BLOCKS, AHEAD_BLOCKS)
    if len(pool) != len(graph.pool):
        pool.release()
        storage.close()
        raise ValueError(f"the file holds {len(pool)} nodes of the graph's {len(graph.pool)}")
    written = WrittenGraph(**{field.name: getattr(graph, field.name) for field in fields(graph)})
    written.pool = pool  # type: ignore[assignment]
    written.path = str(path)
    return written, storage
