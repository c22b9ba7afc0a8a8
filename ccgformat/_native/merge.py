"""Hash consing of a node table in C (merge.c), the twin of
`ccgformat.archive.merge.nodes.canonical_ids`."""

from __future__ import annotations

import numpy as np

from . import CCG_ERR_MEMORY, CCG_OK, load
from .tables import NodeTable


def canonical_ids(columns: dict[str, np.ndarray], shared: np.ndarray) -> np.ndarray:
    """Per node of the table (ids from 0), the first node equal to it among those
    ``shared`` marks (a node it does not mark is its own)."""
    ffi, lib = load()
    nodes = NodeTable(columns)
    canon = np.empty(nodes.count, np.int64)
    shared = np.ascontiguousarray(shared, np.uint8)
    status = lib.ccg_merge_canonical(nodes.struct, ffi.cast("uint8_t *", shared.ctypes.data),
                                     ffi.cast("int64_t *", canon.ctypes.data))
    if status == CCG_ERR_MEMORY:
        raise MemoryError("cannot allocate the node table's hash table")
    if status != CCG_OK:
        raise ValueError("a node refers to a child that is not below it")
    return canon
