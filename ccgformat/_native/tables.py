"""Node tables between Python and C: a `ccg_nodes` over numpy arrays, and NodePool-like
column views of a `ccg_nodes` that C owns.

`NodeTable` packs nodes of any NodePool-like object (the Python reference's pool, an
archive pool) into the flat layout of ccg.h, keeping the arrays alive while C reads
them. `TableView` reads a C-owned table with the column interface of
`ccgformat.graph.pool.NodePool` (``view.children[node]`` and so on), so code written
against the reference pool runs unchanged on native results.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..graph.pool import PerChild
from . import load

#: The offset-array columns of ccg_nodes and the value arrays they index.
RUNS = (("child_start", "children"), ("duration_start", "durations"), ("key_start", "key"),
        ("soft_start", "soft"), ("metric_start", "metric_id"), ("metric_start", "metric_sum"))
PER_NODE = ("events", "total")


def _offsets(lengths: list[int]) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(np.asarray(lengths, dtype=np.int64)))).astype(np.int64)


class NodeTable:
    """A `ccg_nodes` (``.struct``) over numpy arrays holding nodes ``first .. first + count - 1``."""

    def __init__(self, arrays: dict[str, np.ndarray], first: int = 0):
        ffi, _ = load()
        self.arrays = {name: np.ascontiguousarray(value, dtype=np.uint8 if name == "kind" else np.int64)
                       for name, value in arrays.items()}
        self.first = first
        self.count = len(self.arrays["kind"])
        self.struct = ffi.new("ccg_nodes *")
        self.struct.first = first
        self.struct.count = self.count
        for name, array in self.arrays.items():
            setattr(self.struct, name, ffi.cast("uint8_t *" if name == "kind" else "int64_t *",
                                                array.ctypes.data))

    @classmethod
    def from_pool(cls, pool: Any, first: int = 0, stop: int | None = None) -> NodeTable:
        """Pack nodes ``first <= id < stop`` of a NodePool-like object."""
        stop = len(pool) if stop is None else stop
        ids = range(first, stop)
        children = [pool.children[i] for i in ids]
        durations = [pool.durations[i] for i in ids]
        key = [pool.key[i] for i in ids]
        soft = [pool.soft[i] for i in ids]
        sums = [pool.metric_sums[i] for i in ids]
        arrays = {
            "kind": np.array([pool.kind[i] for i in ids], dtype=np.uint8),
            "child_start": _offsets([len(c) for c in children]),
            "children": np.array([c for row in children for c in row], dtype=np.int64),
            "duration_start": _offsets([len(d) for d in durations]),
            "durations": np.array([d for row in durations for d in row], dtype=np.int64),
            "key_start": _offsets([len(k) for k in key]),
            "key": np.array([k for row in key for k in row], dtype=np.int64),
            "soft_start": _offsets([len(s) for s in soft]),
            "soft": np.array([s for row in soft for s in row], dtype=np.int64),
            "events": np.array([pool.events[i] for i in ids], dtype=np.int64),
            "total": np.array([pool.total[i] for i in ids], dtype=np.int64),
            "metric_start": _offsets([len(s) for s in sums]),
            "metric_id": np.array([m for row in sums for m, _ in row], dtype=np.int64),
            "metric_sum": np.array([v for row in sums for _, v in row], dtype=np.int64),
        }
        return cls(arrays, first)


def table_arrays(nodes: Any) -> dict[str, np.ndarray]:
    """Numpy views of every column of a C-owned ``ccg_nodes *`` (valid until C moves them)."""
    ffi, _ = load()
    count = int(nodes.count)

    def view(name: str, length: int) -> np.ndarray:
        if length == 0:
            return np.zeros(0, dtype=np.uint8 if name == "kind" else np.int64)
        pointer = getattr(nodes, name)
        if name == "kind":
            return np.frombuffer(ffi.buffer(pointer, length), dtype=np.uint8)
        return np.frombuffer(ffi.buffer(pointer, 8 * length), dtype=np.int64)

    arrays = {"kind": view("kind", count), "events": view("events", count), "total": view("total", count)}
    for start, values in RUNS:
        if start not in arrays:
            arrays[start] = view(start, count + 1)
        arrays[values] = view(values, int(arrays[start][-1]) if count else 0)
    return arrays


class _TableArrays:
    """What the columns of a `TableView` read: views of the table's current arrays,
    refreshed when it moved. It refers to nothing that refers back to it, so a view and
    the builder that owns the table are freed as soon as the last reference goes (a cycle
    would keep a builder's table, hundreds of MB in C, until the garbage collector's next
    full pass)."""

    __slots__ = ("current", "version", "cache")

    def __init__(self, current: Callable[[], Any], version: Callable[[], object] | None):
        self.current = current
        self.version = version
        self.cache: tuple[object, dict[str, np.ndarray], int] | None = None

    def __call__(self) -> tuple[dict[str, np.ndarray], int]:
        cache = self.cache
        if self.version is not None:
            stamp: object = self.version()
            if cache is not None and cache[0] == stamp:
                return cache[1], cache[2]
        nodes = self.current()
        if self.version is None:
            stamp = (nodes.count, nodes.first, nodes.kind, nodes.children)  # cdata pointers compare by address
        if cache is None or cache[0] != stamp:
            cache = self.cache = (stamp, table_arrays(nodes), int(nodes.first))
        return cache[1], cache[2]


class _Column:
    __slots__ = ("_arrays", "_read")

    def __init__(self, arrays: _TableArrays, read: Callable[[dict[str, np.ndarray], int], Any]):
        self._arrays = arrays
        self._read = read

    def __getitem__(self, node: int | slice) -> Any:
        arrays, first = self._arrays()
        if isinstance(node, slice):  # by ids, as a list (NodePool columns are lists)
            ids = range(*node.indices(first + len(arrays["kind"])))
            return [self._read(arrays, i - first) for i in ids if i >= first]
        local = node - first
        if not 0 <= local < len(arrays["kind"]):
            raise IndexError(f"node {node} is not in this table")
        return self._read(arrays, local)


def _run(start: str, values: str) -> Callable[[dict[str, np.ndarray], int], tuple[int, ...]]:
    return lambda a, i: tuple(a[values][a[start][i]:a[start][i + 1]].tolist())


class TableView:
    """NodePool-like columns of a C-owned table; ``current`` returns the table's
    ``ccg_nodes *`` afresh (it moves when the table grows). ``version``, when given,
    returns a value that changes whenever the table may have changed (cheaper than
    comparing the table's pointers on every access). Neither may refer to the view's
    owner: the view would keep it alive in a reference cycle."""

    def __init__(self, current: Callable[[], Any], version: Callable[[], object] | None = None,
                 imports: Callable[[], Any] | None = None):
        self._arrays = arrays = _TableArrays(current, version)
        self._imports = imports
        self.kind = _Column(arrays, lambda a, i: int(a["kind"][i]))
        self.children = _Column(arrays, _run("child_start", "children"))
        self.durations = _Column(arrays, _run("duration_start", "durations"))
        self.key = _Column(arrays, _run("key_start", "key"))
        self.soft = _Column(arrays, _run("soft_start", "soft"))
        self.events = _Column(arrays, lambda a, i: int(a["events"][i]))
        self.total = _Column(arrays, lambda a, i: int(a["total"][i]))
        self.metric_sums = _Column(arrays, lambda a, i: tuple(zip(
            a["metric_id"][a["metric_start"][i]:a["metric_start"][i + 1]].tolist(),
            a["metric_sum"][a["metric_start"][i]:a["metric_start"][i + 1]].tolist())))
        self.child_events = PerChild(self.children, self.events)
        self.child_metric_sums = PerChild(self.children, self.metric_sums)

    def native_nodes(self) -> Any:
        """The table's current ``ccg_nodes *`` for C code (the encoder and the walker
        read it directly; valid until the table changes)."""
        return self._arrays.current()

    def native_imports(self) -> Any:
        """The ``ccg_imports *`` of what the table's next nodes read of the nodes below
        its first (a released builder's pinned summaries), or NULL."""
        return self._imports() if self._imports is not None else load()[0].NULL

    def arrays(self) -> tuple[dict[str, np.ndarray], int]:
        """Views of the current columns and the first id (refreshed when the table moved)."""
        return self._arrays()

    def __len__(self) -> int:
        nodes = self._arrays.current()
        return int(nodes.first) + int(nodes.count)
