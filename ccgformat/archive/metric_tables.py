"""The metric tables of format 1.4 (spec 4.11): METRIC_LEVEL blocks, one per level k of a
temporal pyramid, each holding for every location and every one of the 2^k slices of the
whole trace the integral of every metric (float64), sparse (non-zero cells only).

Only the byte layout and the checks a reader can make without the graph live here; the
values come from `ccgformat.query.metric_integrals`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptArchiveError
from .aggregation import MAX_LEVEL, Pyramid, levels_in_order
from .codec import encode_stream
from .tables import _Reader

__all__ = ["MetricLevel", "MetricTables", "METRIC_HEADER", "decode_metric_level", "encode_metric_level",
           "join_metric_levels"]

#: start i64, stop i64, level u32, finest u32, metrics u32, locations u32
METRIC_HEADER = struct.Struct("<qqIIII")


@dataclass(frozen=True)
class MetricLevel:
    """One level: entry ``e`` says that the integral of metric ``metric[e]`` on location
    ``cell[e] // 2**level`` within slice ``cell[e] % 2**level`` is ``value[e]``."""

    level: int
    finest: int
    start: int
    stop: int
    metrics: int
    locations: int
    cell: np.ndarray
    metric: np.ndarray
    value: np.ndarray

    @property
    def slices(self) -> int:
        return 1 << self.level

    def dense(self, locations: list[int] | None = None, metrics: list[int] | None = None) -> np.ndarray:
        """``[len(locations), slices, len(metrics)]`` float64 (default: all of them)."""
        rows = np.arange(self.locations) if locations is None else np.asarray(locations, np.int64)
        columns = np.arange(self.metrics) if metrics is None else np.asarray(metrics, np.int64)
        out = np.zeros((self.locations, self.slices, self.metrics))
        out[self.cell >> self.level, self.cell & (self.slices - 1), self.metric] = self.value
        padded = np.zeros((max(int(rows.max(initial=-1)) + 1, self.locations), self.slices, self.metrics))
        padded[:self.locations] = out
        return padded[rows][:, :, columns]


def encode_metric_level(level: MetricLevel) -> bytes:
    """The raw payload of a level (its entries ordered by cell then metric, none ±0.0)."""
    counts = np.bincount(level.cell, minlength=level.locations << level.level)
    previous = np.full(len(level.metric), -1, np.int64)
    same = np.zeros(len(level.metric), bool)
    same[1:] = level.cell[1:] == level.cell[:-1]
    previous[same] = level.metric[:-1][same[1:]]
    return (METRIC_HEADER.pack(level.start, level.stop, level.level, level.finest, level.metrics, level.locations)
            + encode_stream(counts.astype(np.uint64)) + encode_stream((level.metric - previous - 1).astype(np.uint64))
            + encode_stream(np.ascontiguousarray(level.value, np.float64).view(np.uint64)))


def decode_metric_level(raw: bytes, path: str, offset: int) -> MetricLevel:
    """One METRIC_LEVEL payload, checked against itself (spec 4.11)."""
    what = "metric level"
    if len(raw) < METRIC_HEADER.size:
        raise CorruptArchiveError(f"{what}: {len(raw)} bytes are shorter than its header", path=path, offset=offset)
    start, stop, level, finest, metrics, locations = METRIC_HEADER.unpack_from(raw)
    if not level <= finest <= MAX_LEVEL or stop <= start or locations < 1 or metrics < 1:
        raise CorruptArchiveError(f"{what}: level {level} of {finest}, window {start}..{stop}, {metrics} metrics "
                                  f"or {locations} locations out of range", path=path, offset=offset)
    streams = _Reader(raw, METRIC_HEADER.size, what, path, offset)
    cells = locations << level
    if cells > len(raw):  # a count stream holds at least one byte per cell
        raise streams.fail(f"{cells} cells claimed in {len(raw)} bytes")
    counts = streams.unsigned(cells, "count")
    total = int(counts.sum())
    steps = streams.unsigned(total, "metric")
    bits = streams.bits(total, "value")
    streams.finish()
    if total and (int(steps.max()) >= metrics or not (bits << np.uint64(1)).all()):
        raise streams.fail(f"a stored value is zero or a metric step reaches the {metrics} metrics")
    increments = steps + 1
    running = np.cumsum(increments)
    before = np.zeros(total, np.int64)
    firsts = (np.cumsum(counts) - counts)[counts > 0]
    before[firsts] = running[firsts] - increments[firsts]
    metric = running - np.maximum.accumulate(before) - 1
    if total and int(metric.max()) >= metrics:
        raise streams.fail(f"a metric reaches the {metrics} metrics")
    cell = np.repeat(np.arange(cells, dtype=np.int64), counts)
    return MetricLevel(level, finest, start, stop, metrics, locations, cell, metric, bits.view(np.float64))


@dataclass(frozen=True)
class MetricTables(Pyramid):
    """The metric pyramid (METRIC_LEVEL blocks)."""


def join_metric_levels(levels: list[MetricLevel], path: str, offset: int) -> MetricTables:
    """The levels as a pyramid: levels 0..K once each, K at most their finest level, one
    window, finest level, metric and location count; every level's cells the sums of the
    next level's pairs of slices, bit for bit."""
    def fail(reason: str) -> CorruptArchiveError:
        return CorruptArchiveError(f"metric tables: {reason}", path=path, offset=offset)

    levels = levels_in_order(levels, fail)
    if len({(level.start, level.stop, level.finest, level.metrics, level.locations) for level in levels}) != 1:
        raise fail("levels differ in window, finest level, metrics or locations")
    finer = None
    for level in reversed(levels):
        dense = level.dense()
        if finer is not None and not np.array_equal(finer[:, 0::2] + finer[:, 1::2], dense, equal_nan=True):
            raise fail(f"level {level.level}: the integrals are not the sums of level {level.level + 1}'s")
        finer = dense
    return MetricTables(tuple(levels))
