"""Which implementation runs: the C one (`ccgformat._native`) when the native core is in
use (`ccgformat.backends`), else the Python reference - for the builder, the node block
codec and walking."""

from __future__ import annotations

from typing import Any

from ..backends import native
from ..graph.builder import Builder
from ..model import Definitions
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


def decode_block(raw: bytes, path: str | None, offset: int | None) -> Any:
    """`decode_nodes`, or its C twin `decode_native` (same checks, same values), whose
    `NativeNodeBlock` reads like a `NodeBlock`."""
    if native():
        from .._native.codec import decode_native
        return decode_native(raw, path, offset)
    return decode_nodes(raw, path, offset)


__all__ = ["NodeBlock", "builder", "decode_block", "node_encoder"]
