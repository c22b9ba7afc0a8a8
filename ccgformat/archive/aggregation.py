"""The aggregation tables of format 1.4 (spec 4.10): AGGREGATE_LEVEL blocks, one per level
k of a temporal pyramid, each holding for every node of the resource hierarchy and every
one of the 2^k slices of the whole trace the exclusive time of every region, sparse
(non-zero cells only) and columnar; and since 1.8 one AGGREGATE_SLICES block, a level of
any slice count S beside the pyramid (3,000 from this writer: 30, 100 and 1,000 slices
share its bounds, spec 4.10.3), in the same layout.

Only the byte layout and the checks a reader can make without the graph live here; the
values come from the timeline walk (`ccgformat.query.aggregate_tables`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..aggregate_model import Hierarchy
from ..errors import CorruptArchiveError
from .codec import encode_stream
from .tables import _Reader

__all__ = ["AggregationLevel", "AggregationTables", "LEVEL_HEADER", "MAX_LEVEL", "SLICES", "decode_level",
           "decode_slices", "encode_level", "join_levels"]

#: start i64, stop i64, level u32, states u32, nodes u32, reserved u32
LEVEL_HEADER = struct.Struct("<qqIIII")
#: The finest level a reader accepts (2^20 slices); this writer stops at `ccgformat.query.aggregate_tables.LEVELS`.
MAX_LEVEL = 20
#: The slice count of this writer's AGGREGATE_SLICES level (spec 4.10.3): 3,000 = 2^3 x 3 x
#: 5^3, so that 30, 100 and 1,000 slices (and every other divisor) share its bounds.
SLICES = 3000


@dataclass(frozen=True)
class AggregationLevel:
    """One level: the whole trace ``[start, stop)`` in ``slices`` slices (``2**level`` in
    the pyramid; a level of AGGREGATE_SLICES has ``level`` -1); entry ``e`` says that node
    ``cell[e] // slices`` spent ``value[e]`` ticks in region ``state[e]`` within slice
    ``cell[e] % slices`` (cells in increasing order, regions increasing within a cell)."""

    level: int
    slices: int
    start: int
    stop: int
    states: int
    nodes: int
    cell: np.ndarray
    state: np.ndarray
    value: np.ndarray

    def dense(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """``[len(nodes), slices, states]`` int64 (default: every node)."""
        rows = np.arange(self.nodes) if nodes is None else np.asarray(nodes, np.int64)
        row_of = np.full(self.nodes, -1, np.int64)
        row_of[rows] = np.arange(len(rows))
        out = np.zeros((len(rows), self.slices, self.states), np.int64)
        row = row_of[self.cell // self.slices]
        keep = row >= 0
        out[row[keep], (self.cell % self.slices)[keep], self.state[keep]] = self.value[keep]
        return out

    def totals(self) -> np.ndarray:
        """``[nodes, slices]``: the ticks of all regions per cell (below 2^62, `decode_level`)."""
        out = np.zeros(self.nodes * self.slices, np.int64)
        np.add.at(out, self.cell, self.value)
        return out.reshape(self.nodes, self.slices)


def encode_level(level: int, start: int, stop: int, values: np.ndarray) -> bytes:
    """The raw payload of a level from its dense ``[nodes, slices, states]`` values:
    ``level`` is k of the pyramid (AGGREGATE_LEVEL, ``2**k`` slices) or the slice count S
    (AGGREGATE_SLICES, spec 4.10.3), the header field that both kinds hold at offset 16."""
    nodes, slices, states = values.shape
    flat = values.reshape(nodes * slices, states)
    cells, regions = np.nonzero(flat)
    counts = np.bincount(cells, minlength=nodes * slices)
    previous = np.full(len(regions), -1, np.int64)
    same = np.zeros(len(regions), bool)
    same[1:] = cells[1:] == cells[:-1]
    previous[same] = regions[:-1][same[1:]]
    return (LEVEL_HEADER.pack(start, stop, level, states, nodes, 0) + encode_stream(counts.astype(np.uint64))
            + encode_stream((regions - previous - 1).astype(np.uint64))
            + encode_stream(flat[cells, regions].astype(np.uint64)))


def decode_level(raw: bytes, path: str, offset: int) -> AggregationLevel:
    """One AGGREGATE_LEVEL payload, checked against itself (spec 4.10)."""
    return _decode(raw, path, offset, "aggregate level", sliced=False)


def decode_slices(raw: bytes, path: str, offset: int) -> AggregationLevel:
    """One AGGREGATE_SLICES payload, checked against itself (spec 4.10.3)."""
    return _decode(raw, path, offset, "aggregate slices", sliced=True)


def _decode(raw: bytes, path: str, offset: int, what: str, sliced: bool) -> AggregationLevel:
    """A level of either kind: its header field at offset 16 is the slice count S
    (``sliced``) or the pyramid level k of ``2**k`` slices."""
    if len(raw) < LEVEL_HEADER.size:
        raise CorruptArchiveError(f"{what}: {len(raw)} bytes are shorter than its header", path=path, offset=offset)
    start, stop, field, states, nodes, reserved = LEVEL_HEADER.unpack_from(raw)
    if reserved:
        raise CorruptArchiveError(f"{what}: reserved field is not zero", path=path, offset=offset)
    level, slices = (-1, field) if sliced else (field, 1 << min(field, MAX_LEVEL))
    if not 1 <= slices <= 1 << MAX_LEVEL or level > MAX_LEVEL or stop <= start or nodes < 1:
        raise CorruptArchiveError(f"{what}: {'slices' if sliced else 'level'} {field}, window {start}..{stop} or "
                                  f"{nodes} nodes out of range", path=path, offset=offset)
    streams = _Reader(raw, LEVEL_HEADER.size, what, path, offset)
    cells = nodes * slices
    if cells > len(raw):  # a count stream holds at least one byte per cell
        raise streams.fail(f"{cells} cells claimed in {len(raw)} bytes")
    counts = streams.unsigned(cells, "count")
    total = int(counts.sum())
    steps = streams.unsigned(total, "state")
    value = streams.unsigned(total, "value")
    streams.finish()
    if total and (int(value.min()) < 1 or int(steps.max()) >= states):
        raise streams.fail(f"a stored value is zero or a region step reaches the {states} states")
    cell = np.repeat(np.arange(cells, dtype=np.int64), counts)
    if total and np.bincount(cell, weights=value.astype(np.float64)).max() >= 2.0 ** 62:
        raise streams.fail("a cell's times add up to 2**62 or more")
    # region = previous region of the cell + 1 + step, from -1 at each cell's first entry
    increments = steps + 1
    running = np.cumsum(increments)
    before = np.zeros(total, np.int64)
    firsts = (np.cumsum(counts) - counts)[counts > 0]
    before[firsts] = running[firsts] - increments[firsts]
    state = running - np.maximum.accumulate(before) - 1
    if total and int(state.max()) >= states:
        raise streams.fail(f"a region reaches the {states} states")
    return AggregationLevel(level, slices, start, stop, states, nodes, cell, state, value.astype(np.int64))


@dataclass(frozen=True)
class Pyramid:
    """Levels of a table over the whole trace: ``levels[k]`` holds ``2**k`` slices, k = 0..K."""

    levels: tuple[Any, ...]

    @property
    def start(self) -> int:
        return self.levels[0].start

    @property
    def stop(self) -> int:
        return self.levels[0].stop


def levels_in_order(levels: list[Any], fail: Callable[[str], CorruptArchiveError]) -> list[Any]:
    """``levels`` sorted by level, which must be 0..K once each."""
    levels = sorted(levels, key=lambda level: level.level)
    if [level.level for level in levels] != list(range(len(levels))):
        raise fail(f"levels {[level.level for level in levels]} are not 0..K once each")
    return levels


@dataclass(frozen=True)
class AggregationTables(Pyramid):
    """The region pyramid (AGGREGATE_LEVEL blocks) and the level of any slice count
    (AGGREGATE_SLICES, spec 4.10.3) when the file holds one."""

    sliced: AggregationLevel | None = None

    @property
    def states(self) -> int:
        return self.levels[0].states

    @property
    def every_level(self) -> tuple[AggregationLevel, ...]:
        """The pyramid's levels and the sliced one, by slice count (the coarsest first)."""
        return tuple(sorted(self.levels + ((self.sliced,) if self.sliced is not None else ()),
                            key=lambda level: level.slices))


def _children_sum(level: AggregationLevel, hierarchy: Hierarchy, fail: Callable[[str], CorruptArchiveError],
                  name: str) -> np.ndarray:
    """``level``'s totals, after checking that every inner node's are its children's sums."""
    parents = np.asarray(hierarchy.parents, np.int64)
    below = np.flatnonzero(parents >= 0)
    inner = np.zeros(len(hierarchy), bool)
    inner[parents[below]] = True
    totals = level.totals()
    summed = np.zeros_like(totals)
    np.add.at(summed, parents[below], totals[below])
    if not np.array_equal(summed[inner], totals[inner]):
        raise fail(f"{name}: a node's times are not the sums of its children's")
    return totals


def join_levels(levels: list[AggregationLevel], hierarchy: Hierarchy, path: str, offset: int,
                sliced: list[AggregationLevel] = ()) -> AggregationTables:
    """The levels as a pyramid, checked against each other and the hierarchy: levels 0..K
    once each over one window, states and node count; every node's totals the sum of its
    children's, every level's totals the sums of the next level's pairs of slices. The
    ``sliced`` level (AGGREGATE_SLICES; at most one, only beside a pyramid) has the
    pyramid's window, states and nodes, and each node's totals over its slices are its
    level 0 totals."""
    def fail(reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"aggregation tables: {reason}", path=path, offset=offset)

    if sliced and not levels:
        raise fail("an AGGREGATE_SLICES block without the pyramid's levels")
    if len(sliced) > 1:
        raise fail(f"{len(sliced)} AGGREGATE_SLICES blocks, not one")
    levels = levels_in_order(levels, fail)
    shape = {(level.start, level.stop, level.states, level.nodes) for level in levels + list(sliced)}
    if len(shape) != 1:
        raise fail("levels differ in window, states or nodes")
    if levels[0].nodes != len(hierarchy):
        raise fail(f"{levels[0].nodes} nodes, but the hierarchy has {len(hierarchy)}")
    coarser = None
    for level in reversed(levels):
        totals = _children_sum(level, hierarchy, fail, f"level {level.level}")
        if coarser is not None and not np.array_equal(coarser[:, 0::2] + coarser[:, 1::2], totals):
            raise fail(f"level {level.level}: the times are not the sums of level {level.level + 1}'s")
        coarser = totals
    for level in sliced:
        totals = _children_sum(level, hierarchy, fail, f"the level of {level.slices} slices")
        if not np.array_equal(totals.sum(axis=1), coarser[:, 0]):
            raise fail(f"the level of {level.slices} slices: a node's times do not add up to its level 0 times")
    return AggregationTables(tuple(levels), sliced[0] if sliced else None)
