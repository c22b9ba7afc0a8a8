"""Which implementation runs: the C one (`ccgformat._native`) when the native core is in
use (`ccgformat.backends`), else the Python reference - for the builder, the node block
codec and walking."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..backends import native
from ..graph.builder import Builder
from ..graph.walk import LocationWalker
from ..model import Definitions
from ..params import Params
from .codec import NodeBlock, NodeEncoder, decode_nodes
from .gapcoder import code_gaps


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


def gap_coder() -> Callable[[np.ndarray, np.ndarray], bytes]:
    """`gapcoder.code_gaps`, or its C twin `code_gaps_native` (same bytes)."""
    if native():
        from .._native.codec import code_gaps_native
        return code_gaps_native
    return lambda values, rows: code_gaps(values, rows.tolist())


def decode_block(raw: bytes, path: str | None, offset: int | None, *, predicted: bool = False) -> Any:
    """`decode_nodes`, or its C twin `decode_native` (same checks, same values), whose
    `NativeNodeBlock` reads like a `NodeBlock`; ``predicted`` for PREDICTED_NODES."""
    if native():
        from .._native.codec import decode_native
        return decode_native(raw, path, offset, predicted=predicted)
    return decode_nodes(raw, path, offset, predicted=predicted)


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


__all__ = ["NodeBlock", "builder", "decode_block", "gap_coder", "node_encoder", "walker"]
