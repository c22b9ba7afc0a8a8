"""A built cCCG: the shared node pool, one root per location, and the build metrics."""

from __future__ import annotations

import itertools
import operator
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
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


class RootTable(Mapping[int, LocationRoot]):
    """The roots of an archive's locations held as five int64 columns, locations
    increasing (its ROOT_TABLE, spec 4.6): a million locations cost five arrays, and a
    `LocationRoot` is made only for a location asked for. Queries take the columns
    (`source_root_columns`, `chosen_roots`); the mapping is for a few locations at a time."""

    __slots__ = ("columns", "_dense")

    def __init__(self, locations: np.ndarray, root: np.ndarray, start: np.ndarray, end: np.ndarray,
                 events: np.ndarray):
        self.columns = tuple(np.asarray(column, np.int64) for column in (locations, root, start, end, events))
        for column in self.columns:
            column.flags.writeable = False  # shared by every caller
        #: whether the locations are 0 .. len - 1, so that a location is its own row
        self._dense = not len(locations) or (int(locations[0]) == 0 and int(locations[-1]) == len(locations) - 1)

    def row(self, location: Any) -> int:
        """The row of ``location`` in the columns, or -1 when it has no root."""
        try:
            location = operator.index(location)
        except TypeError:
            return -1
        if self._dense:
            return location if 0 <= location < len(self) else -1
        if not -(1 << 63) <= location < 1 << 63:
            return -1
        row = int(np.searchsorted(self.columns[0], location))
        return row if row < len(self) and int(self.columns[0][row]) == location else -1

    def __getitem__(self, location: int) -> LocationRoot:
        row = self.row(location)
        if row < 0:
            raise KeyError(location)
        return LocationRoot(*(int(column[row]) for column in self.columns[1:]))

    def __contains__(self, location: object) -> bool:
        return self.row(location) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self.columns[0].tolist())

    def __len__(self) -> int:
        return len(self.columns[0])

    def values(self) -> ValuesView[LocationRoot]:
        return _RootValues(self)

    def items(self) -> ItemsView[int, LocationRoot]:
        return _RootItems(self)

    def _rows(self) -> Iterator[LocationRoot]:
        return map(LocationRoot._make, zip(*(column.tolist() for column in self.columns[1:])))


class _RootValues(ValuesView[LocationRoot]):
    """The values of a `RootTable`, made column-wise rather than one lookup each."""

    _mapping: RootTable

    def __iter__(self) -> Iterator[LocationRoot]:
        return self._mapping._rows()


class _RootItems(ItemsView[int, LocationRoot]):
    """The items of a `RootTable`, made column-wise rather than one lookup each."""

    _mapping: RootTable

    def __iter__(self) -> Iterator[tuple[int, LocationRoot]]:
        return zip(self._mapping, self._mapping._rows())


def root_columns(roots: Mapping[int, LocationRoot]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Locations, root nodes, first and last timestamps and event counts of ``roots`` (in
    its order), as contiguous int64 arrays: one pass over the roots (none for a `RootTable`)."""
    if isinstance(roots, RootTable):
        return roots.columns  # type: ignore[return-value]
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


def _not_int64(location: Any) -> bool:
    try:
        return not -(1 << 63) <= operator.index(location) < 1 << 63
    except TypeError:
        return True


class ChosenRoots(NamedTuple):
    """The locations a query covers, in its order, and their roots' columns."""

    locations: list[int]
    root: np.ndarray
    start: np.ndarray
    end: np.ndarray
    events: np.ndarray


def chosen_roots(source: Any, locations: Iterable[int] | None = None) -> ChosenRoots:
    """Every location of a `Graph` or an archive in increasing order, or ``locations`` in
    their order without repeats, with their roots as columns (`roots_at`). A location
    without a root raises KeyError."""
    if locations is None:
        known, *columns = source_root_columns(source)
        if np.all(known[1:] > known[:-1]):
            return ChosenRoots(known.tolist(), *columns)
        order = np.argsort(known, kind="stable")
        return ChosenRoots(known[order].tolist(), *(column[order] for column in columns))
    chosen = list(dict.fromkeys(locations))
    return ChosenRoots(chosen, *roots_at(source, chosen))


def root_rows(known: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ``wanted`` location, its row in ``known`` (the locations column of
    `root_columns`, in any order; increasing needs no sort) and whether it is there:
    vectorised, one `searchsorted` for all of them."""
    order = None if np.all(known[1:] > known[:-1]) else np.argsort(known, kind="stable")
    increasing = known if order is None else known[order]
    if not len(increasing):
        return np.zeros(len(wanted), np.int64), np.zeros(len(wanted), bool)
    at = np.minimum(np.searchsorted(increasing, wanted), len(increasing) - 1)
    return (at if order is None else order[at]), increasing[at] == wanted


def roots_at(source: Any, locations: Sequence[int] | np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The root nodes, first and last timestamps and event counts of ``locations`` (a
    location may repeat; a list, or an int64 array taken as it is) of a `Graph` or an
    archive, vectorised over the locations (a million take a few hundredths of a second,
    not a lookup each). A location without a root raises KeyError."""
    known, *columns = source_root_columns(source)
    if isinstance(locations, np.ndarray) and locations.dtype == np.int64:
        wanted = locations
    else:
        try:
            wanted = np.fromiter(map(operator.index, locations), np.int64, len(locations))
        except (TypeError, OverflowError):
            raise KeyError(f"no location {next(filter(_not_int64, locations))!r}") from None
    rows, found = root_rows(known, wanted)
    if not found.all():
        raise KeyError(f"no location {locations[int(np.argmin(found))]}")
    root, start, end, events = (column[rows] for column in columns)
    return root, start, end, events


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
    #: how many times the replacement index started empty (``Params.epoch_nodes``)
    epochs: int = 0

    def location(self, location: int) -> LocationWalker:
        """Random access, iteration and time search over one location's events."""
        root = self.roots[location]
        return LocationWalker(self.pool, root.root, root.start, location)

    @property
    def event_count(self) -> int:
        """The events of every location, column-wise (a `RootTable` made 20,000 roots one at a
        time for it: 0.014 s of a merge)."""
        return int(source_root_columns(self)[4].sum())
