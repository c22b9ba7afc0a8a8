"""The node block codec in C (codec.c), with the interface of the Python reference
(ccgformat/archive/codec.py): `NativeNodeEncoder` gives the same payload bytes as
`NodeEncoder`, `decode_native` accepts the same payloads as `decode_nodes` and returns a
`NativeNodeBlock`, which reads like a `NodeBlock` through numpy views of the C-owned
`ccg_block` (freed when the Python object dies).
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from . import CCG_ERR_MEMORY, CCG_OK, load
from .tables import NodeTable

ffi, lib = load()

MESSAGE_SIZE = 512


class _Memory:
    """An array interface over C memory that keeps the memory's owner alive."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: Any, address: int, length: int, typestr: str):
        self.owner = owner
        self.__array_interface__ = {"shape": (length,), "typestr": typestr, "data": (address, True), "version": 3}


def _view(owner: Any, pointer: Any, length: int, typestr: str = "<i8") -> np.ndarray:
    """A read-only numpy array over ``length`` values at ``pointer``, owning ``owner``."""
    if length == 0:
        return np.zeros(0, dtype=np.dtype(typestr))
    return np.asarray(_Memory(owner, int(ffi.cast("uintptr_t", pointer)), length, typestr))


class NativeNodeEncoder:
    """`NodeEncoder` in C: encodes consecutive node ranges, carrying the pending stack."""

    def __init__(self) -> None:
        self._encoder = ffi.gc(lib.ccg_encoder_new(), lib.ccg_encoder_free)
        if self._encoder == ffi.NULL:
            raise MemoryError("cannot allocate the node encoder")

    def encode(self, nodes_or_pool: Any, first: int, stop: int) -> bytes:
        """The raw payload of a NODES block holding ids ``first <= id < stop``."""
        return self._encode(nodes_or_pool, first, stop, 1)[0]

    def encode_both(self, nodes_or_pool: Any, first: int, stop: int) -> tuple[bytes, bytes]:
        """The raw payloads of the node range as a NODES and as a PREDICTED_NODES block."""
        ids, predicted = self._encode(nodes_or_pool, first, stop, 2)
        return ids, predicted

    def encode_all(self, nodes_or_pool: Any, first: int, stop: int) -> tuple[bytes, bytes, bytes, bytes | None]:
        """`encode_both`, and the payload as a CODED_NODES block (spec 5.8) and as a
        CODED_SOFT_NODES block (5.9; None when its soft values cannot be coded)."""
        ids, predicted, coded, coded_soft = self._encode(nodes_or_pool, first, stop, 4)
        return ids, predicted, coded, coded_soft

    def _encode(self, nodes_or_pool: Any, first: int, stop: int, payloads: int) -> list[Any]:
        """The first ``payloads`` of the NODES, PREDICTED_NODES, CODED_NODES and
        CODED_SOFT_NODES payloads (the last None when there is none).

        ``nodes_or_pool`` is a `NodeTable`, a ``ccg_nodes *`` or an object whose
        ``native_nodes()`` returns one, holding those ids and the earlier children they
        reference; or else any NodePool-like object (packed here)."""
        keep: list[Any] = []
        earlier = ffi.NULL
        if isinstance(nodes_or_pool, NodeTable):
            nodes = nodes_or_pool.struct
        elif callable(getattr(nodes_or_pool, "native_nodes", None)):  # a pool kept in C
            nodes = nodes_or_pool.native_nodes()
            if callable(getattr(nodes_or_pool, "native_imports", None)):  # a released builder's pinned nodes
                earlier = nodes_or_pool.native_imports()
        elif isinstance(nodes_or_pool, ffi.CData):
            nodes = nodes_or_pool
        else:
            table = NodeTable.from_pool(nodes_or_pool, first, stop)
            earlier, arrays = _earlier(nodes_or_pool, first, stop)
            nodes = table.struct
            keep += [table, arrays]
        outs = [(ffi.new("uint8_t **"), ffi.new("size_t *")) if k < payloads else (ffi.NULL, ffi.NULL)
                for k in range(4)]
        message = ffi.new("char[]", MESSAGE_SIZE)
        status = lib.ccg_encode_nodes(self._encoder, nodes, earlier, first, stop, *(x for out in outs for x in out),
                                      message, MESSAGE_SIZE)
        if status != CCG_OK:
            text = ffi.string(message).decode("utf-8", "replace")
            raise MemoryError(text) if status == CCG_ERR_MEMORY else ValueError(text)
        try:
            return [bytes(ffi.buffer(out[0], length[0])) if out[0] != ffi.NULL else None
                    for out, length in outs[:payloads]]
        finally:
            for out, _ in outs[:payloads]:
                lib.ccg_bytes_free(out[0])


def _earlier(pool: Any, first: int, stop: int) -> tuple[Any, list[np.ndarray]]:
    """A ``ccg_imports *`` of the children below ``first`` that nodes ``first..stop-1`` of a
    NodePool-like object reference (with the arrays it points into)."""
    ids = sorted({child for node in range(first, stop) if pool.kind[node] <= 1
                  for child in pool.children[node] if child < first})
    sums = [pool.metric_sums[i] for i in ids]
    arrays = [np.array(ids, dtype=np.int64), np.array([pool.events[i] for i in ids], dtype=np.int64),
              np.array([pool.total[i] for i in ids], dtype=np.int64),
              np.concatenate(([0], np.cumsum([len(s) for s in sums], dtype=np.int64))).astype(np.int64),
              np.array([m for row in sums for m, _ in row], dtype=np.int64),
              np.array([v for row in sums for _, v in row], dtype=np.int64)]
    imports = ffi.new("ccg_imports *")
    imports.count = len(ids)
    for name, array in zip(("id", "events", "total", "metric_start", "metric_id", "metric_sum"), arrays):
        setattr(imports, name, ffi.cast("int64_t *", array.ctypes.data))
    return imports, arrays


def decode_native(raw: bytes, path: str | None, offset: int | None, *, predicted: bool = False,
                  coded: bool = False, coded_soft: bool = False) -> NativeNodeBlock:
    """`decode_nodes` in C: decode and check a node block payload (``predicted``: of a
    PREDICTED_NODES block; ``coded``: of a CODED_NODES block; ``coded_soft``: of a
    CODED_SOFT_NODES block)."""
    out = ffi.new("ccg_block **")
    message = ffi.new("char[]", MESSAGE_SIZE)
    kind = 3 if coded_soft else 2 if coded else int(predicted)
    status = lib.ccg_decode_nodes(ffi.from_buffer(raw), len(raw), kind, out, message, MESSAGE_SIZE)
    if status != CCG_OK:
        text = ffi.string(message).decode("utf-8", "replace")
        if status == CCG_ERR_MEMORY:
            raise MemoryError(text)
        raise CorruptArchiveError(f"node block: {text}", path=path, offset=offset)
    return NativeNodeBlock(ffi.gc(out[0], lib.ccg_block_free))


#: NodeBlock columns over the ccg_nodes arrays: (field, length source)
_NODE_COLUMNS = {"kind": ("kind", "count"), "child_start": ("child_start", "count+1"),
                 "children": ("children", "child_start"), "duration_start": ("duration_start", "count+1"),
                 "durations": ("durations", "duration_start"), "key_start": ("key_start", "count+1"),
                 "key": ("key", "key_start"), "soft_start": ("soft_start", "count+1"),
                 "soft": ("soft", "soft_start"), "events": ("events", "count"), "total": ("total", "count"),
                 "metric_start": ("metric_start", "count+1"), "metric_id": ("metric_id", "metric_start"),
                 "metric_sum": ("metric_sum", "metric_start")}


class NativeNodeBlock:
    """A decoded node block in C memory, read like `NodeBlock`: numpy columns (read-only
    views that keep the block alive), `metric_sums`, `child_metric_sums` and `imports`.
    ``struct`` is the ``ccg_block *`` for native code."""

    def __init__(self, struct: Any):
        self.struct = struct
        self.first = int(struct.nodes.first)
        self._count = int(struct.nodes.count)
        self.memo: dict[str, dict[int, Any]] = {}
        self.imports = NativeImports(struct)

    def __getattr__(self, name: str) -> Any:
        if name not in _NODE_COLUMNS:
            raise AttributeError(name)
        field, size = _NODE_COLUMNS[name]
        if size == "count":
            length = self._count
        elif size == "count+1":
            length = self._count + 1
        else:
            length = int(getattr(self, size)[-1])
        array = _view(self.struct, getattr(self.struct.nodes, field), length, "|u1" if field == "kind" else "<i8")
        setattr(self, name, array)
        return array

    def __len__(self) -> int:
        return self._count

    @property
    def child_events(self) -> _ChildEvents:
        """Per child reference: events in the child's sub-tree (``child_events[a:b]``
        computes only the references asked for)."""
        return _ChildEvents(self)

    def metric_sums(self, i: int) -> tuple[tuple[int, int], ...]:
        """(metric, sum) pairs of node ``first + i``, sorted by metric."""
        a, b = int(self.metric_start[i]), int(self.metric_start[i + 1])
        return tuple(zip(self.metric_id[a:b].tolist(), self.metric_sum[a:b].tolist()))

    def sampled(self) -> np.ndarray:
        """Indexes in the block of the nodes whose metric sums are not empty."""
        return np.flatnonzero(np.diff(self.metric_start) > 0)

    def child_metric_sums(self, i: int) -> tuple[tuple[tuple[int, int], ...], ...]:
        """The metric sums of each child of node ``first + i``."""
        children = self.children[self.child_start[i]:self.child_start[i + 1]].tolist()
        return tuple(self.metric_sums(c - self.first) if c >= self.first else self.imports.sums(c)
                     for c in children)


class _ChildEvents:
    """The ``child_events`` column of a `NativeNodeBlock`, computed slice by slice."""

    __slots__ = ("_block",)

    def __init__(self, block: NativeNodeBlock):
        self._block = block

    def __len__(self) -> int:
        return len(self._block.children)

    def __getitem__(self, index: slice) -> list[int]:
        block = self._block
        events, first, imports = block.events, block.first, block.imports
        return [int(events[c - first]) if c >= first else imports.events_of(c) for c in block.children[index].tolist()]


class NativeImports:
    """The import table of a `NativeNodeBlock`, read like `ImportTable`."""

    def __init__(self, struct: Any):
        imports = struct.imports
        count = int(imports.count)
        self.ids = _view(struct, imports.id, count)
        self.events = _view(struct, imports.events, count)
        self.total = _view(struct, imports.total, count)
        self.pair_start = _view(struct, imports.metric_start, count + 1)
        pairs = int(self.pair_start[-1])
        self.metric_ids = _view(struct, imports.metric_id, pairs)
        self.metric_sum = _view(struct, imports.metric_sum, pairs)

    @cached_property
    def _lists(self) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
        return (self.ids.tolist(), self.events.tolist(), self.pair_start.tolist(), self.metric_ids.tolist(),
                self.metric_sum.tolist())

    def row(self, node: int) -> int:
        """The row of an imported node."""
        return bisect_left(self._lists[0], node)

    def events_of(self, node: int) -> int:
        """The event count of an imported node."""
        return self._lists[1][self.row(node)]

    def sums(self, node: int) -> tuple[tuple[int, int], ...]:
        """The (metric, sum) pairs of an imported node."""
        _, _, start, metric_ids, metric_sum = self._lists
        row = self.row(node)
        a, b = start[row], start[row + 1]
        return tuple(zip(metric_ids[a:b], metric_sum[a:b]))


def code_gaps_native(values: np.ndarray, row_lengths: np.ndarray) -> bytes:
    """`archive.gapcoder.code_gaps` in C (the same bytes)."""
    v = np.ascontiguousarray(values, dtype=np.uint64)
    rows = np.ascontiguousarray(row_lengths, dtype=np.int64)
    out, length = ffi.new("uint8_t **"), ffi.new("size_t *")
    if lib.ccg_code_gaps(ffi.from_buffer("uint64_t[]", v), len(v), ffi.from_buffer("int64_t[]", rows), len(rows),
                         out, length) != CCG_OK:
        raise MemoryError("coding the gaps")
    try:
        return bytes(ffi.buffer(out[0], length[0]))
    finally:
        lib.ccg_bytes_free(out[0])


def decode_gaps_native(coded: bytes, row_lengths: np.ndarray, count: int) -> np.ndarray | None:
    """`archive.gapcoder.decode_gaps` in C: the ``count`` values, or None where the
    reference raises (the bytes do not decode to exactly that many values)."""
    rows = np.ascontiguousarray(row_lengths, dtype=np.int64)
    values = np.zeros(count, np.uint64)
    if lib.ccg_decode_gaps(ffi.from_buffer(coded), len(coded), ffi.from_buffer("int64_t[]", rows), len(rows),
                           ffi.from_buffer("uint64_t[]", values), count) != CCG_OK:
        return None
    return values
