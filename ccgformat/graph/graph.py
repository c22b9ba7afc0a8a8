"""A built cCCG: the shared node pool, one root per location, and the build metrics."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..model import Definitions, Repair
from ..params import Params
from .pool import NodePool
from .walk import LocationWalker


class LocationRoot(NamedTuple):
    """Where a location's events live: its root node, first and last timestamp, count
    (a named tuple: a million are made in a second)."""

    root: int
    start: int
    end: int
    events: int


def root_columns(roots: dict[int, LocationRoot]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Locations, root nodes, first and last timestamps and event counts of ``roots`` (in
    its order), as contiguous int64 arrays: one pass over the roots."""
    rows = np.fromiter(itertools.chain.from_iterable(roots.values()), np.int64, 4 * len(roots)).reshape(-1, 4)
    return (np.fromiter(roots.keys(), np.int64, len(roots)), *np.ascontiguousarray(rows.T))


#: the attribute of a source that keeps its `source_root_columns`
_KEPT = "_kept_root_columns"


def source_root_columns(source: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`root_columns` of the ``roots`` of a `Graph` or an archive, made once while the
    source lives and its ``roots`` is the same dict of the same size (the writer's tables
    read them several times; a million roots take a tenth of a second each time)."""
    roots = source.roots
    kept = getattr(source, _KEPT, None)
    if kept is not None and kept[0] is roots and kept[1] == len(roots):
        return kept[2]  # type: ignore[no-any-return]
    columns = root_columns(roots)
    for column in columns:
        column.flags.writeable = False  # shared by every caller
    try:
        setattr(source, _KEPT, (roots, len(roots), columns))
    except AttributeError:  # a source without room for it computes them each time
        pass
    return columns


@dataclass(frozen=True)
class BuildMetrics:
    """Compression metrics counted while building (dissertation 4.2.5).

    ``N``/``M``: nodes and bytes of the uncompressed graph (every finalized node);
    ``n``/``m``: nodes and bytes kept. Bytes follow `pool.node_bytes`.
    """

    N: int
    n: int
    M: int
    m: int

    @property
    def r_nodes(self) -> float:
        return self.N / self.n if self.n else 1.0

    @property
    def r_memory(self) -> float:
        return self.M / self.m if self.m else 1.0


@dataclass
class Graph:
    """The result of `Builder.finish`: everything needed to walk every location."""

    pool: NodePool
    roots: dict[int, LocationRoot]
    params: Params
    definitions: Definitions
    metrics: BuildMetrics
    repairs: tuple[Repair, ...] = ()  #: what repair mode changed in the input

    def location(self, location: int) -> LocationWalker:
        """Random access, iteration and time search over one location's events."""
        root = self.roots[location]
        return LocationWalker(self.pool, root.root, root.start, location)

    @property
    def event_count(self) -> int:
        return sum(root.events for root in self.roots.values())
