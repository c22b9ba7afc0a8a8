"""The checkpoints of many locations as columns (what a CHECKPOINT_TABLE block stores,
spec 4.8), and the end checkpoints of many small locations computed at once.

A location of at most ``interval`` events has a single checkpoint, at its end
(`indexes.checkpoints`). When its calls are balanced (no call open at the end, as in
every walk of a finished location), that checkpoint is a set of per-location group sums
over its events, which `end_checkpoints` computes with numpy for all such locations of a
batch together: no Python step per location. Calls are matched by call level (an ENTER's
level is the depth before it, a LEAVE's the depth after it; per level and location they
alternate), and a call's parent is the last call one level up that entered before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..model import EventBatch, EventKind
from .indexes import ROW_WIDTHS, Checkpoint

#: the row lists of a checkpoint in table order and their row widths (one row each for
#: messages and collectives)
MEMBER_WIDTHS = {"stack": 2, "metrics": 2, "regions": 4, "messages": 4, "collectives": 3, "peers": 5,
                 "operations": 4, "durations": 3, "open": 3}
SINGLE = frozenset({"messages", "collectives"})
assert all(MEMBER_WIDTHS[name] == width for name, width in ROW_WIDTHS.items())

_SENDS = np.isin(np.arange(256), (EventKind.SEND, EventKind.ISEND))
_RECEIVES = np.isin(np.arange(256), (EventKind.RECV, EventKind.IRECV))


@dataclass
class CheckpointColumns:
    """Per location (increasing) its checkpoint count; per checkpoint its index, time
    and, per row list, its row count (`sizes`) and rows (`rows`, one row per line)."""

    locations: np.ndarray
    counts: np.ndarray
    index: np.ndarray
    time: np.ndarray
    sizes: dict[str, np.ndarray]
    rows: dict[str, np.ndarray]

    @classmethod
    def from_checkpoints(cls, indexes: Iterable[tuple[int, list[Checkpoint]]]) -> CheckpointColumns:
        """The columns of per-location `Checkpoint` lists."""
        indexes = list(indexes)
        points = [point for _, group in indexes for point in group]
        sizes, rows = {}, {}
        for name, width in MEMBER_WIDTHS.items():
            lists = [getattr(p, name) for p in points]
            single = name in SINGLE
            rows[name] = np.array([list(x) for x in lists] if single else [row for x in lists for row in x],
                                  np.int64).reshape(-1, width)
            sizes[name] = np.ones(len(points), np.int64) if single else np.array([len(x) for x in lists], np.int64)
        return cls(np.array([location for location, _ in indexes], np.int64),
                   np.array([len(group) for _, group in indexes], np.int64),
                   np.array([p.index for p in points], np.int64), np.array([p.time for p in points], np.int64),
                   sizes, rows)

    def __len__(self) -> int:
        return len(self.locations)

    def take(self, order: np.ndarray) -> CheckpointColumns:
        """The locations at positions ``order``, in that order (a run of consecutive
        positions sliced: the part of a merge taken from one archive)."""
        if len(order) and np.all(np.diff(order) == 1):
            return self._span(int(order[0]), int(order[-1]) + 1, self._ends())
        point_first = np.cumsum(self.counts) - self.counts
        points = _ranges(point_first[order], self.counts[order])
        sizes, rows = {}, {}
        for name, size in self.sizes.items():
            row_first = np.cumsum(size) - size
            sizes[name] = size[points]
            rows[name] = self.rows[name][_ranges(row_first[points], size[points])]
        return CheckpointColumns(self.locations[order], self.counts[order], self.index[points], self.time[points],
                                 sizes, rows)

    def _ends(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The checkpoints before each location and in all (``len + 1`` values), and per
        row list the rows before each checkpoint and in all."""
        return (np.concatenate(([0], np.cumsum(self.counts))),
                {name: np.concatenate(([0], np.cumsum(size))) for name, size in self.sizes.items()})

    def _span(self, start: int, stop: int, ends: tuple[np.ndarray, dict[str, np.ndarray]]) -> CheckpointColumns:
        """The locations at positions ``start`` to ``stop`` - 1, as slices (``ends``: `_ends`)."""
        done, row_ends = ends
        points = slice(int(done[start]), int(done[stop]))
        return CheckpointColumns(self.locations[start:stop], self.counts[start:stop], self.index[points],
                                 self.time[points], {name: size[points] for name, size in self.sizes.items()},
                                 {name: self.rows[name][row_ends[name][points.start]:row_ends[name][points.stop]]
                                  for name in self.sizes})

    @classmethod
    def concat(cls, parts: list[CheckpointColumns]) -> CheckpointColumns:
        """The locations of every part, sorted by location."""
        joined = cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in ("locations", "counts", "index",
                                                                                       "time")),
                     {name: np.concatenate([p.sizes[name] for p in parts]) for name in MEMBER_WIDTHS},
                     {name: np.concatenate([p.rows[name] for p in parts]) for name in MEMBER_WIDTHS})
        order = np.argsort(joined.locations, kind="stable")
        return joined if np.all(order == np.arange(len(order))) else joined.take(order)

    def blocks(self, checkpoints_per_block: int) -> Iterable[CheckpointColumns]:
        """Consecutive runs of whole locations, each ending at the first location that
        brings it to ``checkpoints_per_block`` checkpoints or more (the last may hold fewer)."""
        ends = self._ends()
        done = ends[0][1:]
        start = 0
        while start < len(self):
            stop = min(int(np.searchsorted(done, int(ends[0][start]) + checkpoints_per_block)) + 1, len(self))
            yield self._span(start, stop, ends)
            start = stop


def _ranges(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(first[i], first[i] + lengths[i])`` over i."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(first - (ends - lengths), lengths)


def _groups(owner: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts rows by (owner, key) and the first sorted position of each
    (owner, key) group."""
    order = np.lexsort((key, owner))
    o, k = owner[order], key[order]
    new = np.ones(len(order), bool)
    new[1:] = (o[1:] != o[:-1]) | (k[1:] != k[:-1])
    return order, np.flatnonzero(new)


def _sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Wrapping int64 sums of ``values`` over the groups beginning at ``starts``."""
    return np.add.reduceat(values, starts) if len(values) else np.zeros(0, np.int64)


def balanced(batch: EventBatch, offsets: np.ndarray) -> np.ndarray:
    """Per location of ``batch`` (rows ``offsets[i]:offsets[i + 1]``): whether its calls
    are balanced - the depth never drops below zero and is zero at the end."""
    step = np.where(batch.kind == EventKind.ENTER, 1, np.where(batch.kind == EventKind.LEAVE, -1, 0))
    depth = np.cumsum(step)
    locations = len(offsets) - 1
    before = np.concatenate(([0], depth))[offsets]  # the running depth where each location starts
    low = np.zeros(locations, np.int64)
    filled = np.flatnonzero(np.diff(offsets) > 0)  # each one's rows end where the next filled one's start
    if len(filled):
        low[filled] = np.minimum(np.minimum.reduceat(depth, offsets[filled]) - before[filled], 0)
    return (low >= 0) & (before[1:] == before[:-1])


def end_checkpoints(locations: np.ndarray, starts: np.ndarray, batch: EventBatch,
                    offsets: np.ndarray) -> CheckpointColumns:
    """The single (end) checkpoint of each of ``locations``: the events of location i are
    rows ``offsets[i]:offsets[i + 1]`` of ``batch`` and its calls are balanced
    (`balanced`); ``starts`` are their first timestamps (an empty location's time)."""
    count = len(locations)
    counts = np.diff(offsets)
    owner = np.repeat(np.arange(count, dtype=np.int64), counts)
    kind, ref, time = batch.kind, batch.ref, batch.time
    last = np.asarray(offsets[1:]) - 1
    end_time = np.where(counts > 0, time[np.maximum(last, 0)] if len(time) else 0, starts)
    sizes: dict[str, np.ndarray] = {}
    rows: dict[str, np.ndarray] = {}

    def grouped(name: str, chosen: np.ndarray, columns: list[np.ndarray]) -> None:
        """Rows [key, sums of columns...] per (location, ref) of the ``chosen`` events."""
        order, starts_ = _groups(owner[chosen], ref[chosen])
        values = [np.asarray(c)[chosen][order] for c in columns]
        keys = ref[chosen][order][starts_]
        rows[name] = np.stack([keys] + [_sums(v, starts_) for v in values], axis=1).reshape(-1, len(columns) + 1)
        sizes[name] = np.bincount(owner[chosen][order][starts_], minlength=count).astype(np.int64)

    with np.errstate(over="ignore"):
        sends, receives = _SENDS[kind], _RECEIVES[kind]
        ones = np.ones(len(kind), np.int64)
        grouped("peers", sends | receives, [sends.astype(np.int64), np.where(sends, batch.size, 0),
                                             receives.astype(np.int64), np.where(receives, batch.size, 0)])
        collective = kind == EventKind.COLL_END
        grouped("operations", collective, [ones, batch.size, batch.recv_size])

        def per_location(mask: np.ndarray, *columns: np.ndarray) -> list[np.ndarray]:
            """Per location, the count of the events of ``mask`` and the wrapping sums of ``columns`` over them."""
            chosen = np.flatnonzero(mask)
            owners = owner[chosen]
            first = np.flatnonzero(np.concatenate(([True], owners[1:] != owners[:-1])))[:len(chosen)]
            out = np.zeros((1 + len(columns), count), np.int64)
            for row, values in enumerate((np.ones(len(chosen), np.int64),) + tuple(c[chosen] for c in columns)):
                if len(chosen):
                    out[row, owners[first]] = np.add.reduceat(np.asarray(values, np.int64), first)
            return list(out)

        (sent, sent_bytes), (received, received_bytes) = (per_location(sends, batch.size),
                                                          per_location(receives, batch.size))
        rows["messages"] = np.stack([sent, sent_bytes, received, received_bytes], axis=1)
        rows["collectives"] = np.stack(per_location(collective, batch.size, batch.recv_size), axis=1)
        sizes["messages"] = sizes["collectives"] = np.ones(count, np.int64)

        metric = np.flatnonzero(kind == EventKind.METRIC)
        order, first = _groups(owner[metric], ref[metric])
        latest = metric[order][np.append(first[1:], len(order)) - 1] if len(order) else metric[:0]
        rows["metrics"] = np.stack([ref[latest], batch.value[latest]], axis=1).reshape(-1, 2)
        sizes["metrics"] = np.bincount(owner[latest], minlength=count).astype(np.int64)

        _calls(owner, count, batch, offsets, rows, sizes)
    for name in ("stack", "open"):
        rows[name] = np.zeros((0, MEMBER_WIDTHS[name]), np.int64)
        sizes[name] = np.zeros(count, np.int64)
    return CheckpointColumns(np.asarray(locations, np.int64), np.ones(count, np.int64), counts.astype(np.int64),
                             end_time.astype(np.int64), sizes, rows)


def _calls(owner: np.ndarray, count: int, batch: EventBatch, offsets: np.ndarray,
           rows: dict[str, np.ndarray], sizes: dict[str, np.ndarray]) -> None:
    """The regions rows (calls, inclusive, exclusive time) and durations rows (shortest,
    longest call) of balanced locations."""
    position = np.flatnonzero(batch.kind <= EventKind.LEAVE)
    enter = batch.kind[position] == EventKind.ENTER
    depth = np.cumsum(np.where(enter, 1, -1))  # zero where each (balanced) location starts
    level = np.where(enter, depth - 1, depth)
    # by level, then position: each call's ENTER then its LEAVE (a radix sort for shallow calls)
    order = np.argsort(level.astype(np.int16) if len(level) and int(level.max()) < 1 << 15 else level, kind="stable")
    pairs = order.reshape(-1, 2)
    enters, leaves = position[pairs[:, 0]], position[pairs[:, 1]]
    call_level = level[pairs[:, 0]]
    region = batch.ref[enters]
    with np.errstate(over="ignore"):
        inclusive = batch.time[leaves] - batch.time[enters]
        # calls are sorted by (level, enter position): a call's parent is the last call
        # of the level above that entered before it (in the same location)
        span = len(batch) + 1
        key = call_level * span + enters
        nested = np.flatnonzero(call_level > 0)
        parent = np.searchsorted(key, (call_level[nested] - 1) * span + enters[nested]) - 1  # nondecreasing
        children = np.zeros(len(key), np.int64)
        if len(parent):
            first = np.flatnonzero(np.concatenate(([True], parent[1:] != parent[:-1])))
            children[parent[first]] = np.add.reduceat(inclusive[nested], first)
        exclusive = inclusive - children
    call_owner = owner[enters]
    order, first = _groups(call_owner, region)
    keys = region[order][first]
    calls = np.diff(np.append(first, len(order)))
    rows["regions"] = np.stack([keys, calls, _sums(inclusive[order], first), _sums(exclusive[order], first)],
                               axis=1).reshape(-1, 4)
    shortest = np.minimum.reduceat(inclusive[order], first) if len(order) else keys
    longest = np.maximum.reduceat(inclusive[order], first) if len(order) else keys
    rows["durations"] = np.stack([keys, shortest, longest], axis=1).reshape(-1, 3)
    sizes["regions"] = sizes["durations"] = np.bincount(call_owner[order][first], minlength=count).astype(np.int64)
