"""`NativeBuilder`: the streaming cCCG builder in C (builder.c) behind the interface of
`ccgformat.graph.Builder`.

It builds the same graph as the Python reference - the same node ids, node contents,
roots, metrics N/n/M/m and repairs, and the same `TraceError` for an invalid trace -
validating every batch in C as `model.LocationValidator` does (dissertation 4.1-4.2 for
the construction and the replacement search). The node pool stays in C: ``pool`` is a
`TableView` over it with the columns of a `NodePool`, so the Python walker and writer
read it unchanged, and ``nodes()`` hands the current ``ccg_nodes *`` to other C code.

Limits beyond the reference: every location's timestamps may span at most 2**61 ticks
(TraceError otherwise) and ``abs_dev`` may be at most 2**60 (ParameterError), which keep
the C arithmetic in 64 bits.
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any

import numpy as np

from ..errors import ParameterError, TraceError
from ..graph.builder import whole_locations
from ..graph.graph import BuildMetrics, Graph, LocationRoot
from ..model import COLUMNS, Definitions, EventBatch, EventKind, Repair
from ..params import Params, rel_numerator
from . import load
from .tables import TableView
from .walk import NativeWalker

#: The largest abs_dev the native builder accepts.
ABS_LIMIT = 1 << 60
_SEARCH_LIMIT = 1 << 62  # a search length beyond any pool: the same as unbounded
_MEMORY_ERROR = 1
_ACTIONS = ("closed", "dropped")
_KIND_COUNT = len(EventKind)


class NativeGraph(Graph):
    """A `Graph` whose pool is a native builder's: its locations are walked in C."""

    def location(self, location: int) -> Any:
        """Random access, iteration and time search over one location's events (`NativeWalker`)."""
        root = self.roots[location]
        pool = self.pool
        return NativeWalker.from_table(pool.native_nodes, pool, root.root, root.start, location)  # type: ignore[attr-defined]


class NativeBuilder:
    """Builds one cCCG for all locations of a trace, like `ccgformat.graph.Builder`.

    Feed each location's events in time order with `add`, finish locations with
    `end_location` (or all at once with `finish`). With ``repair``, regions still open at
    the end of a location are closed at its last timestamp and unmatched LEAVEs are
    dropped; both are listed in `repairs`.
    """

    def __init__(self, params: Params = Params(), definitions: Definitions | None = None, *,
                 repair: bool = False):
        ffi, lib = load()
        if params.abs_dev > ABS_LIMIT:
            raise ParameterError(f"abs_dev must be at most 2**60 for the native builder, got {params.abs_dev}")
        self.params = params
        self.definitions = definitions if definitions is not None else Definitions()
        self.repair = repair
        self.repairs: list[Repair] = []
        self._ffi, self._lib = ffi, lib
        doubles = np.array([m.value_type == "double" for m in self.definitions.metrics], dtype=np.uint8)
        handle = lib.ccg_builder_new(
            params.abs_dev, rel_numerator(params.rel_dev), rel_numerator(params.rel_size),
            rel_numerator(params.rel_metric), int(params.exact_time), params.branching,
            min(params.search_length, _SEARCH_LIMIT), params.leaf_window, params.representatives,
            params.epoch_nodes, int(repair),
            int(definitions is not None),
            len(self.definitions.regions), len(self.definitions.locations),
            ffi.from_buffer("uint8_t[]", doubles), len(doubles))
        if handle == ffi.NULL:
            raise MemoryError("cannot allocate the native builder")
        self._handle = ffi.gc(handle, lib.ccg_builder_free)
        self._open: set[int] = set()  # locations with a state in C (the reference's _locations)
        self._roots: dict[int, LocationRoot] = {}
        self._counts: dict[int, int] = {}  # events checked per open location
        self._out = ffi.new("int64_t[4]")
        #: counts the calls that may change the pool (for the TableView); the view reads it
        #: and the table through objects of their own, not through this builder, so that a
        #: builder nobody holds frees its table at once (a cycle would wait for the collector)
        self._version = [0]
        self.pool = TableView(functools.partial(lib.ccg_builder_nodes, self._handle),
                              functools.partial(operator.getitem, self._version, 0),
                              functools.partial(lib.ccg_builder_pinned, self._handle))

    # ------------------------------------------------------------------ public API

    def add(self, location: int, batch: EventBatch) -> None:
        """Append the next events of ``location``; raises `TraceError` on invalid input."""
        if location in self._roots:
            raise ValueError(f"location {location} has already been finished")
        self._open.add(location)
        buffer = self._ffi.from_buffer
        columns = [buffer("int64_t[]", np.ascontiguousarray(getattr(batch, name), dtype=np.int64))
                   for name in ("time",) + COLUMNS]
        kind = batch.kind if batch.kind.dtype == np.uint8 else self._kinds(location, batch)
        self._version[0] += 1
        rc = self._lib.ccg_builder_add(self._handle, location, len(batch), columns[0],
                                       buffer("uint8_t[]", np.ascontiguousarray(kind)), *columns[1:])
        if rc:
            raise self._error(rc)
        self._counts[location] = self._counts.get(location, 0) + len(batch)

    def add_locations(self, locations: np.ndarray, batch: EventBatch, offsets: np.ndarray) -> np.ndarray:
        """`add` and `end_location` for whole locations in one C call: ``locations[i]``
        holds the events ``offsets[i]:offsets[i + 1]`` of ``batch``. Returns their roots
        as rows (root, start, end, events)."""
        locations, offsets = whole_locations(locations, offsets, len(batch), self._roots)
        if batch.kind.dtype != np.uint8:  # checked and converted per location, as `add` does
            roots = []
            for location, first, stop in zip(locations.tolist(), offsets[:-1].tolist(), offsets[1:].tolist()):
                self.add(location, batch[first:stop])
                roots.append(self.end_location(location))
            return np.array(roots, np.int64).reshape(-1, 4)
        buffer = self._ffi.from_buffer
        arrays = [np.ascontiguousarray(getattr(batch, name), dtype=np.int64) for name in ("time",) + COLUMNS]
        columns = [buffer("int64_t[]", array) for array in arrays]
        out = np.zeros((len(locations), 4), np.int64)
        failed = self._ffi.new("int64_t *")
        self._version[0] += 1
        rc = self._lib.ccg_builder_add_locations(
            self._handle, len(locations), buffer("int64_t[]", locations), buffer("int64_t[]", offsets), columns[0],
            buffer("uint8_t[]", np.ascontiguousarray(batch.kind)), *columns[1:], buffer("int64_t[]", out), failed)
        done = int(failed[0]) if rc else len(locations)
        if self._open:  # locations fed before with `add` are finished now
            for location in locations[:done].tolist():
                self._open.discard(location)
                self._counts.pop(location, None)
        self._roots.update(zip(locations[:done].tolist(), itertools.starmap(LocationRoot, out[:done].tolist())))
        self._collect_repairs()
        if rc:
            raise self._error(rc)
        return out

    def end_location(self, location: int) -> LocationRoot:
        """Finish one location: close (or, repairing, report) open regions, finalize its root."""
        self._open.discard(location)
        self._counts.pop(location, None)
        out = self._out
        self._version[0] += 1
        rc = self._lib.ccg_builder_end_location(self._handle, location, out)
        self._collect_repairs()
        if rc:
            raise self._error(rc)
        root = LocationRoot(out[0], out[1], out[2], out[3])
        self._roots[location] = root
        return root

    def finish(self) -> Graph:
        """Finish every location still open, give every defined location never fed an
        empty root (spec 4.3: the roots list every defined location) and return the graph."""
        for location in sorted(self._open):
            self.end_location(location)
        finished = np.fromiter(self._roots, np.int64, len(self._roots))
        missing = np.ones(len(self.definitions.locations), bool)
        missing[finished[(finished >= 0) & (finished < len(missing))]] = False
        for location in np.flatnonzero(missing).tolist():
            self.end_location(location)
        ascending = len(finished) == len(self._roots) and bool((finished[1:] > finished[:-1]).all())
        roots = dict(self._roots) if ascending else dict(sorted(self._roots.items()))
        return NativeGraph(self.pool, roots, self.params,  # type: ignore[arg-type]
                           self.definitions, self.metrics, tuple(self.repairs), self.epochs)

    def nodes(self) -> Any:
        """The pool's current ``ccg_nodes *`` (valid until the next call of this builder)."""
        return self._lib.ccg_builder_nodes(self._handle)

    @property
    def metrics(self) -> BuildMetrics:
        out = self._out
        self._lib.ccg_builder_metrics(self._handle, out)
        return BuildMetrics(out[0], out[1], out[2], out[3])

    def release(self, below: int) -> None:
        """Let the pool drop the records of nodes below ``below`` (written: the caller has
        encoded them) that the replacement index no longer holds; it keeps the event
        count, total and metric sums of those still referenced (``pool.native_imports``).
        Walks of a location must then read its nodes from the written blocks."""
        self._version[0] += 1
        if self._lib.ccg_builder_release(self._handle, below):
            raise self._error(_MEMORY_ERROR)

    def memory(self) -> tuple[int, int]:
        """The bytes held in C by the pool's columns and by the replacement index (the
        capacity of their arrays): the index is bounded by ``Params.epoch_nodes``."""
        out = self._ffi.new("int64_t[3]")
        self._lib.ccg_builder_memory(self._handle, out)
        return int(out[0]), int(out[1])

    @property
    def epochs(self) -> int:
        """How many times the replacement index started empty (`Builder._next_epoch`)."""
        out = self._ffi.new("int64_t[3]")
        self._lib.ccg_builder_memory(self._handle, out)
        return int(out[2])

    @property
    def N(self) -> int:
        return self.metrics.N

    @property
    def n(self) -> int:
        return self.metrics.n

    @property
    def M(self) -> int:
        return self.metrics.M

    @property
    def m(self) -> int:
        return self.metrics.m

    # ------------------------------------------------------------------ helpers

    def _collect_repairs(self) -> None:
        count = self._lib.ccg_builder_repair_count(self._handle)
        new = count - len(self.repairs)
        if new > 0:
            out = np.zeros(4 * new, dtype=np.int64)
            self._lib.ccg_builder_repairs(self._handle, len(self.repairs), new,
                                          self._ffi.from_buffer("int64_t[]", out))
            for location, region, time, action in out.reshape(new, 4).tolist():
                self.repairs.append(Repair(location, region, time, _ACTIONS[action]))

    def _kinds(self, location: int, batch: EventBatch) -> np.ndarray:
        """A kind column of another integer type as uint8, failing on values no kind
        has as the reference does (its first check compares with the kind count)."""
        kind = np.asarray(batch.kind)
        bad = np.flatnonzero(kind >= _KIND_COUNT)
        if len(bad):
            i = int(bad[0])
            raise TraceError(f"unknown event kind {int(kind[i])}", location=location,
                             index=self._counts.get(location, 0) + i, time=int(batch.time[i]))
        if len(kind) and kind.min() < 0:
            EventKind(int(kind.min()))  # raises the reference's ValueError
        return kind.astype(np.uint8)

    def _error(self, rc: int) -> Exception:
        message = self._ffi.string(self._lib.ccg_builder_error(self._handle)).decode()
        if rc == _MEMORY_ERROR:
            return MemoryError(message)
        out = self._ffi.new("int64_t[4]")
        self._lib.ccg_builder_error_position(self._handle, out)
        if out[3] & 2:
            return TraceError(message, location=out[0], index=out[1], time=out[2] if out[3] & 1 else None)
        return ValueError(message)

