"""The aggregation tables of format 1.4 (spec 4.10): AGGREGATE_LEVEL blocks, one per level
k of a temporal pyramid, each holding for every node of the resource hierarchy and every
one of the 2^k slices of the whole trace the exclusive time of every region, sparse
(non-zero cells only) and columnar.

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

__all__ = ["AggregationLevel", "AggregationTables", "LEVEL_HEADER", "MAX_LEVEL", "decode_level", "encode_level",
           "join_levels"]

#: start i64, stop i64, level u32, states u32, nodes u32, reserved u32
LEVEL_HEADER = struct.Struct("<qqIIII")
#: The finest level a reader accepts (2^20 slices); this writer stops at `ccgformat.query.aggregate_tables.LEVELS`.
MAX_LEVEL = 20


@dataclass(frozen=True)
class AggregationLevel:
    """One level: the whole trace ``[start, stop)`` in ``2**level`` slices; entry ``e``
    says that node ``cell[e] // 2**level`` spent ``value[e]`` ticks in region ``state[e]``
    within slice ``cell[e] % 2**level`` (cells in increasing order, regions increasing
    within a cell)."""

    level: int
    start: int
    stop: int
    states: int
    nodes: int
    cell: np.ndarray
    state: np.ndarray
    value: np.ndarray

    @property
    def slices(self) -> int:
        return 1 << self.level

    def dense(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """``[len(nodes), slices, states]`` int64 (default: every node)."""
        rows = np.arange(self.nodes) if nodes is None else np.asarray(nodes, np.int64)
        row_of = np.full(self.nodes, -1, np.int64)
        row_of[rows] = np.arange(len(rows))
        out = np.zeros((len(rows), self.slices, self.states), np.int64)
        row = row_of[self.cell >> self.level]
        keep = row >= 0
        out[row[keep], (self.cell & (self.slices - 1))[keep], self.state[keep]] = self.value[keep]
        return out

    def totals(self) -> np.ndarray:
        """``[nodes, slices]``: the ticks of all regions per cell (below 2^62, `decode_level`)."""
        out = np.zeros(self.nodes << self.level, np.int64)
        np.add.at(out, self.cell, self.value)
        return out.reshape(self.nodes, self.slices)


def encode_level(level: int, start: int, stop: int, values: np.ndarray) -> bytes:
    """The raw payload of level ``level`` from its dense ``[nodes, 2**level, states]`` values."""
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
    what = "aggregate level"
    if len(raw) < LEVEL_HEADER.size:
        raise CorruptArchiveError(f"{what}: {len(raw)} bytes are shorter than its header", path=path, offset=offset)
    start, stop, level, states, nodes, reserved = LEVEL_HEADER.unpack_from(raw)
    if reserved:
        raise CorruptArchiveError(f"{what}: reserved field is not zero", path=path, offset=offset)
    if level > MAX_LEVEL or stop <= start or nodes < 1:
        raise CorruptArchiveError(f"{what}: level {level}, window {start}..{stop} or {nodes} nodes out of range",
                                  path=path, offset=offset)
    streams = _Reader(raw, LEVEL_HEADER.size, what, path, offset)
    cells = nodes << level
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
    return AggregationLevel(level, start, stop, states, nodes, cell, state, value.astype(np.int64))


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
    """The region pyramid (AGGREGATE_LEVEL blocks)."""

    @property
    def states(self) -> int:
        return self.levels[0].states


def join_levels(levels: list[AggregationLevel], hierarchy: Hierarchy, path: str, offset: int) -> AggregationTables:
    """The levels as a pyramid, checked against each other and the hierarchy: levels 0..K
    once each over one window, states and node count; every node's totals the sum of its
    children's, every level's totals the sums of the next level's pairs of slices."""
    def fail(reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"aggregation tables: {reason}", path=path, offset=offset)

    levels = levels_in_order(levels, fail)
    shape = {(level.start, level.stop, level.states, level.nodes) for level in levels}
    if len(shape) != 1:
        raise fail("levels differ in window, states or nodes")
    if levels[0].nodes != len(hierarchy):
        raise fail(f"{levels[0].nodes} nodes, but the hierarchy has {len(hierarchy)}")
    parents = np.asarray(hierarchy.parents, np.int64)
    below = np.flatnonzero(parents >= 0)
    inner = np.zeros(len(hierarchy), bool)
    inner[parents[below]] = True
    coarser = None
    for level in reversed(levels):
        totals = level.totals()
        summed = np.zeros_like(totals)
        np.add.at(summed, parents[below], totals[below])
        if not np.array_equal(summed[inner], totals[inner]):
            raise fail(f"level {level.level}: a node's times are not the sums of its children's")
        if coarser is not None and not np.array_equal(coarser[:, 0::2] + coarser[:, 1::2], totals):
            raise fail(f"level {level.level}: the times are not the sums of level {level.level + 1}'s")
        coarser = totals
    return AggregationTables(tuple(levels))
