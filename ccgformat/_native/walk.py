"""Walking a location's graph in C (walk.c): `NativeWalker`, the native twin of
`ccgformat.graph.walk.LocationWalker` (dissertation 4.5.1 random access, 4.5.2 time
search, and the bulk reading of graph/spans.py), and `Checkpointer`, the C accumulator
of the snapshot and summary indexes (walk_checkpoints.c).

A walker reads a `ccg_source` (ccg.h): either one node table (a builder's pool, a
`NodeTable`) or the node blocks of an archive, which a *provider* decodes on demand. A
provider has ``block_first`` (int64, blocks + 1 entries: block k holds ids
``block_first[k] .. block_first[k+1] - 1``) and ``native_block(k)``, which returns a
``ccg_block *`` that stays valid while the walker holds the returned object. Blocks are
asked for during a native call through the ``ccg_python_load`` callback and let go when
the call returns, so the provider is free to evict them between calls; an exception the
provider raises comes out of the walker's method unchanged.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Iterator

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.walk import Cursor, LocationWalker
from ..model import COLUMNS, Event, EventBatch
from . import CCG_ERR_CALLBACK, CCG_ERR_MEMORY, CCG_OK, failure, load

ffi, lib = load()

# result codes of ccg.h
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_FIELDS = ("time", "kind") + COLUMNS
_INT64_FIELDS = ("time",) + COLUMNS


class _Source:
    """A `ccg_source` (``struct``) and the memory behind it. `begin` runs before and
    `end` after every native call; ``error`` holds what a load callback raised."""

    struct: Any
    owner: Any  #: the object whose memory the source reads (kept alive with it)
    error: BaseException | None = None

    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass


class _TableSource(_Source):
    """One node table, read afresh before every call (a builder's table moves as it grows)."""

    def __init__(self, nodes: Any, keepalive: Any):
        self._nodes = nodes
        self.owner = keepalive
        self._block = ffi.new("ccg_block *")
        self._blocks = ffi.new("ccg_block *[1]", [self._block])
        self._first = ffi.new("int64_t[2]")
        self.struct = ffi.new("ccg_source *", {"block_count": 1, "block_first": self._first, "blocks": self._blocks})

    def begin(self) -> None:
        nodes = self._nodes if isinstance(self._nodes, ffi.CData) else self._nodes()
        self._block.nodes = nodes[0]
        self._first[0] = nodes.first
        self._first[1] = nodes.first + nodes.count


class _BlockSource(_Source):
    """The node blocks of a provider, loaded through the ``ccg_python_load`` callback."""

    def __init__(self, provider: Any):
        self._provider = self.owner = provider
        self._first = np.ascontiguousarray(provider.block_first, dtype=np.int64)
        count = len(self._first) - 1
        if count < 0 or (count and np.any(self._first[1:] < self._first[:-1])):
            raise CorruptArchiveError("node block boundaries are not in order")
        self._blocks = ffi.new("ccg_block *[]", max(count, 1))
        self._loaded: list[tuple[int, Any]] = []
        # the callback's handle refers to this source weakly: a strong one would make a
        # cycle that keeps the provider (an archive's decoded blocks) until the collector's
        # next full pass; during a native call the walker holds the source
        self._handle = ffi.new_handle(weakref.ref(self))
        self.struct = ffi.new("ccg_source *", {
            "block_count": count, "block_first": ffi.from_buffer("int64_t[]", self._first),
            "blocks": self._blocks, "load": lib.ccg_python_load, "context": self._handle})

    def load(self, index: int) -> None:
        block = self._provider.native_block(index)
        self._loaded.append((index, block))
        self._blocks[index] = block

    def end(self) -> None:
        for index, _ in self._loaded:
            self._blocks[index] = ffi.NULL
        self._loaded.clear()


@ffi.def_extern(error=CCG_ERR_CALLBACK)
def ccg_python_load(context: Any, block: int) -> int:
    source = ffi.from_handle(context)()
    try:
        source.load(block)
    except BaseException as error:  # noqa: BLE001 - handed back to the caller of the native function
        source.error = error
        return CCG_ERR_CALLBACK
    return CCG_OK


def _clamp(time: int) -> int:
    return min(max(time, _INT64_MIN), _INT64_MAX)


def _columns(batch: EventBatch) -> tuple[Any, list[np.ndarray]]:
    """A `ccg_columns *` over a batch's arrays and the arrays it points into (copies where
    a column is not a contiguous array of the right type), which must outlive its use."""
    arrays = [np.ascontiguousarray(getattr(batch, name), dtype=np.uint8 if name == "kind" else np.int64)
              for name in _FIELDS]
    pointers = {name: ffi.from_buffer("uint8_t[]" if name == "kind" else "int64_t[]", array)
                for name, array in zip(_FIELDS, arrays)}
    return ffi.new("ccg_columns *", pointers), arrays


#: Batch memory kept for reuse per `BatchPool` (the batch a caller holds and the next).
_POOLED = 2


class _Owner:
    """The memory of one batch; goes back to its pool when no array over it is left."""

    def __init__(self, storage: np.ndarray, pool: list[np.ndarray]):
        self.storage = storage
        self.pool = pool

    def __del__(self) -> None:
        if len(self.pool) < _POOLED:
            self.pool.append(self.storage)


class _Column:
    """An array interface over part of an `_Owner`'s memory: every array made from it,
    and every slice of those, keeps the owner alive."""

    def __init__(self, owner: _Owner, address: int, length: int, typestr: str):
        self.owner = owner
        self.__array_interface__ = {"version": 3, "shape": (length,), "typestr": typestr,
                                    "data": (address, False)}


class BatchPool:
    """Fresh-looking batches of up to ``capacity`` events over reused memory.

    Fresh memory costs a page fault per 4 KiB, more than the walk itself when sub-trees
    are copied whole; a batch's memory is reused once the caller has let go of every
    array (and slice) of it, and never before."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._free: list[np.ndarray] = []

    def batch(self, size: int) -> EventBatch:
        storage = self._free.pop() if self._free else np.empty(self.capacity * (8 * len(_INT64_FIELDS) + 1), np.uint8)
        owner = _Owner(storage, self._free)
        base = storage.__array_interface__["data"][0]  # once: ``storage.ctypes`` costs more than a walk
        columns = {name: np.asarray(_Column(owner, base + 8 * position * self.capacity, size, "<i8"))
                   for position, name in enumerate(_INT64_FIELDS)}
        columns["kind"] = np.asarray(_Column(owner, base + 8 * len(_INT64_FIELDS) * self.capacity, size, "|u1"))
        return EventBatch(**columns)


class NativeWalker:
    """Read access to one location's events in C, with the interface of `LocationWalker`."""

    def __init__(self, source: _Source, root: int, start: int, location: int, path: str | None = None):
        self._source = source
        self.root = root
        self.start = start
        self.location = location
        self._path = path
        self._walk = self._new_walk()
        out = ffi.new("int64_t *")
        self._call(self._walk, lib.ccg_walk_count, out)
        self._count = int(out[0])
        # one event's columns for event(): time and the int64 columns, and the kind
        self._row = ffi.new("int64_t[]", len(_INT64_FIELDS))
        self._row_kind = ffi.new("uint8_t[1]")
        self._row_columns = ffi.new("ccg_columns *", {name: self._row + i for i, name in enumerate(_INT64_FIELDS)})
        self._row_columns.kind = self._row_kind
        self._out = ffi.new("int64_t *")

    @property
    def pool(self) -> Any:
        """What the walk reads: the block provider, or the table's keep-alive object
        (an archive pool or a native builder's `TableView`, with NodePool's columns)."""
        return self._source.owner

    def cursor(self, index: int = 0) -> Cursor:
        """A `Cursor` on event ``index``: the reference's random-access iterator (4.5.1),
        which steps event by event in Python over the same pool."""
        return LocationWalker(self.pool, self.root, self.start, self.location).cursor(index)

    @classmethod
    def from_table(cls, nodes: Any | Callable[[], Any], keepalive: Any, root: int, start: int,
                   location: int) -> NativeWalker:
        """A walker over one node table: a ``ccg_nodes *`` (or a function returning the
        current one), read afresh at every call; ``keepalive`` owns its memory."""
        return cls(_TableSource(nodes, keepalive), root, start, location)

    @classmethod
    def from_blocks(cls, provider: Any, root: int, start: int, location: int,
                    path: str | None = None) -> NativeWalker:
        """A walker over the node blocks of ``provider`` (see the module docstring);
        ``path`` names the archive in errors about damaged nodes."""
        return cls(_BlockSource(provider), root, start, location, path)

    def _new_walk(self) -> Any:
        walk = lib.ccg_walk_new(self._source.struct, self.root, self.start)
        if walk == ffi.NULL:
            raise MemoryError("out of memory for a graph walk")
        return ffi.gc(walk, lib.ccg_walk_free)

    def _call(self, walk: Any, function: Any, *args: Any) -> None:
        source = self._source
        source.begin()
        try:
            code = function(walk, *args)
        finally:
            source.end()
        if code == CCG_OK:
            return
        error, source.error = source.error, None
        if code == CCG_ERR_CALLBACK and error is not None:
            raise error
        message = ffi.string(lib.ccg_walk_error(walk)).decode("utf-8", "replace")
        if code == CCG_ERR_MEMORY:
            raise MemoryError(message)
        raise CorruptArchiveError(f"location {self.location}: {message}", path=self._path)

    def __len__(self) -> int:
        return self._count

    def event(self, index: int) -> Event:
        """The event at ``index`` (negative counts from the end)."""
        count = self._count
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError(f"event index {index} outside 0..{count - 1} of location {self.location}")
        self._call(self._walk, lib.ccg_walk_event, index, self._row_columns)
        time, *columns = ffi.unpack(self._row, len(_INT64_FIELDS))
        return Event(time, self._row_kind[0], *columns)

    def find(self, time: int) -> int:
        """Index of the first event at or after ``time`` (``len(self)`` if none)."""
        self._call(self._walk, lib.ccg_walk_find, _clamp(time), self._out)
        return int(self._out[0])

    def call_stack(self, time: int) -> list[int]:
        """Regions open at ``time``, outermost first."""
        self._call(self._walk, lib.ccg_walk_call_stack, _clamp(time), self._out)
        depth = int(self._out[0])
        return ffi.unpack(lib.ccg_walk_stack(self._walk), depth) if depth else []

    def events(self, start: int = 0, stop: int | None = None, *, reverse: bool = False,
               batch_size: int = 65536) -> Iterator[EventBatch]:
        """Events ``start <= i < stop`` as columnar batches, in time order or, with
        ``reverse``, from ``stop - 1`` down to ``start``."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        count = self._count
        stop = count if stop is None else min(stop, count)
        start = max(start, 0)
        if start >= stop:
            return
        walk = self._new_walk()
        self._call(walk, lib.ccg_walk_seek, stop - 1 if reverse else start)
        move = lib.ccg_walk_backward if reverse else lib.ccg_walk_forward
        written = ffi.new("int64_t *")
        remaining = stop - start
        pool = BatchPool(min(batch_size, remaining))
        while remaining:
            size = min(batch_size, remaining)
            batch = pool.batch(size)
            self._call(walk, move, _columns(batch)[0], size, written)
            if written[0] != size:
                raise CorruptArchiveError(f"location {self.location}: the walk stopped after {written[0]} "
                                          f"of {size} events", path=self._path)
            remaining -= size
            yield batch


class Checkpointer:
    """The running state of `ccgformat.archive.indexes` in C: call stack, per-region
    calls and inclusive/exclusive time, metric values, message and collective totals."""

    def __init__(self) -> None:
        acc = lib.ccg_checkpointer_new()
        if acc == ffi.NULL:
            raise MemoryError("out of memory for a checkpoint accumulator")
        self._acc = ffi.gc(acc, lib.ccg_checkpointer_free)
        self._out = ffi.new("ccg_checkpoint *")

    def _check(self, code: int) -> None:
        if code == CCG_OK:
            return
        raise failure(code, ffi.string(lib.ccg_checkpointer_error(self._acc)).decode("utf-8", "replace"))

    def add(self, batch: EventBatch) -> None:
        """Account for every event of ``batch``."""
        columns, _arrays = _columns(batch)
        self._check(lib.ccg_checkpointer_add(self._acc, columns, len(batch)))

    def snapshot(self, time: int) -> tuple[list[list[int]], list[list[int]], list[list[int]], list[int], list[int]]:
        """Stack, metrics, regions, messages and collectives so far, as `Checkpoint` has
        them, with open calls counted up to ``time``."""
        self._check(lib.ccg_checkpointer_snapshot(self._acc, time, self._out))
        out = self._out

        def rows(pointer: Any, count: int, width: int) -> list[list[int]]:
            if not count:
                return []
            flat = np.frombuffer(ffi.buffer(pointer, 8 * width * count), dtype=np.int64)
            return flat.reshape(count, width).tolist()

        return (rows(out.stack, out.stack_count, 2), rows(out.metrics, out.metric_count, 2),
                rows(out.regions, out.region_count, 4), list(out.messages), list(out.collectives))


def walk_locations(pool: Any, locations: np.ndarray, roots: np.ndarray, starts: np.ndarray, offsets: np.ndarray,
                   path: str | None = None) -> EventBatch:
    """Every event of many locations in one C call: location ``locations[i]`` (root node
    ``roots[i]``, first event at ``starts[i]``) as rows ``offsets[i]:offsets[i + 1]``.
    ``pool`` is a block provider (``native_block``) or a native builder's `TableView`."""
    source = _BlockSource(pool) if hasattr(pool, "native_block") else _TableSource(pool.native_nodes, pool)
    batch = BatchPool(int(offsets[-1])).batch(int(offsets[-1]))
    columns, _arrays = _columns(batch)
    arrays = [np.ascontiguousarray(a, dtype=np.int64) for a in (roots, starts, offsets)]
    failed, error = ffi.new("int64_t *"), ffi.new("char[256]")
    source.begin()
    try:
        code = lib.ccg_walk_many(source.struct, len(locations), *(ffi.from_buffer("int64_t[]", a) for a in arrays),
                                 columns, failed, error)
    finally:
        source.end()
    if code == CCG_OK:
        return batch
    raised, source.error = source.error, None
    if code == CCG_ERR_CALLBACK and raised is not None:
        raise raised
    message = ffi.string(error).decode("utf-8", "replace")
    if code == CCG_ERR_MEMORY:
        raise MemoryError(message)
    raise CorruptArchiveError(f"location {int(locations[failed[0]])}: {message}", path=path)


def native_walker(walker: Any) -> Any:
    """``walker`` itself when it is a `NativeWalker`; a `NativeWalker` over the same
    location when its pool is a block provider (``native_block``, ``block_first``);
    else ``walker`` unchanged."""
    if isinstance(walker, NativeWalker):
        return walker
    pool = getattr(walker, "pool", None)
    if hasattr(pool, "native_block") and hasattr(pool, "block_first"):
        return NativeWalker.from_blocks(pool, walker.root, walker.start, walker.location)
    return walker
