"""Which node block codec runs: the C one (`ccgformat._native.codec`) when the native
core is in use (`ccgformat.backends`), else the Python reference of `codec`."""

from __future__ import annotations

from typing import Any

from ..backends import native
from .codec import NodeBlock, NodeEncoder, decode_nodes


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


__all__ = ["NodeBlock", "decode_block", "node_encoder"]
