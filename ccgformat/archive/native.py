"""Which implementation runs: the C one (`ccgformat._native`) when the native core is in
use (`ccgformat.backends`), else the Python reference - for the builder, the node block
codec and walking."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import native
from ..graph.builder import Builder
from ..graph.walk import LocationWalker
from ..errors import CorruptArchiveError
from ..model import Definitions, EventBatch
from ..params import Params
from .codec import NodeBlock, NodeEncoder, decode_nodes


def builder(params: Params = Params(), definitions: Definitions | None = None, *, repair: bool = False) -> Any:
    """A `graph.Builder`, or its C twin `NativeBuilder` (the same graph)."""
    if native():
        from .._native.builder import NativeBuilder
        return NativeBuilder(params, definitions, repair=repair)
    return Builder(params, definitions, repair=repair)


def node_encoder() -> Any:
    """A fresh `NodeEncoder`, or its C twin `NativeNodeEncoder` (same bytes)."""
    if native():
        from .._native.codec import NativeNodeEncoder
        return NativeNodeEncoder()
    return NodeEncoder()


def decode_block(raw: bytes, path: str | None, offset: int | None, *, predicted: bool = False,
                 coded: bool = False, coded_soft: bool = False) -> Any:
    """`decode_nodes`, or its C twin `decode_native` (same checks, same values), whose
    `NativeNodeBlock` reads like a `NodeBlock`; the flags as `layout.block_coding` gives
    them."""
    if native():
        from .._native.codec import decode_native
        return decode_native(raw, path, offset, predicted=predicted, coded=coded, coded_soft=coded_soft)
    return decode_nodes(raw, path, offset, predicted=predicted, coded=coded, coded_soft=coded_soft)


def walker(pool: Any, root: int, start: int, location: int, *, path: str | None = None) -> Any:
    """A `LocationWalker` over ``pool``, or its C twin `NativeWalker` (the same events)
    over an archive pool's blocks or a native builder's table."""
    if native():
        from .._native.tables import TableView
        from .._native.walk import NativeWalker
        if hasattr(pool, "native_block"):
            return NativeWalker.from_blocks(pool, root, start, location, path)
        if isinstance(pool, TableView):
            return NativeWalker.from_table(pool.native_nodes, pool, root, start, location)
    return LocationWalker(pool, root, start, location)


def walk_locations(pool: Any, locations: np.ndarray, roots: np.ndarray, starts: np.ndarray, offsets: np.ndarray,
                   path: str | None = None) -> EventBatch:
    """Every event of many locations as one batch: ``locations[i]`` (root node
    ``roots[i]``, first event at ``starts[i]``) as rows ``offsets[i]:offsets[i + 1]``;
    one C call under the native core, a `LocationWalker` per location else."""
    if native() and (hasattr(pool, "native_block") or hasattr(pool, "native_nodes")):
        from .._native.walk import walk_locations as walk_natively
        return walk_natively(pool, locations, roots, starts, offsets, path)
    batches = []
    for location, root, start, count in zip(locations.tolist(), roots.tolist(), starts.tolist(),
                                            np.diff(offsets).tolist()):
        batches.append(EventBatch.concat(list(LocationWalker(pool, root, start, location).events())))
        if len(batches[-1]) != count:
            raise CorruptArchiveError(f"location {location}: the graph holds {len(batches[-1])} events, "
                                      f"the root says {count}", path=path)
    batch = EventBatch.concat(batches)
    return batch


__all__ = ["NodeBlock", "builder", "decode_block", "node_encoder", "walk_locations", "walker"]
