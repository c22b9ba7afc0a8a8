"""The walk behind `ccgformat.query.timeline_query` (dissertation 3.4.4, 4.5.3, 4.5.4): the
exclusive time of each colour class per row and pixel column, formula 4.28.

One pass serves all columns: nodes spanning several columns are descended with their
start times, splitting their own gaps (a call's exclusive pieces) across the columns;
a node inside one column needs no times any more, so such nodes are gathered per
(node, column, enclosing group, level) with multiplicities and their own gaps added that
many times - the reuse of shared sub-trees of 4.5.3, per column. By location, a node with
many children (more than the column bounds it crosses) is not even expanded: running sums
over its children (`ChildRuns`) give each of its column pieces the memoized times of the
children wholly inside it, and only the children crossing a column bound descend. With
the native backend, rows by location are painted in C (`native_walk`), each location
depth first with the same memoized times and running sums; `_walk` is the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import backends
from ..graph.pool import NodeKind
from .tables import NodeTables


def exclusive_times(t: NodeTables, group_of: np.ndarray, boundaries: np.ndarray, groups: int, roots: np.ndarray,
                    begins: np.ndarray, by_depth: bool, row: np.ndarray | None = None) -> np.ndarray:
    """(rows, columns, groups) ticks: by location, root i in row ``row[i]`` (default i;
    roots sharing a row add up), or, ``by_depth``, per call level summed over the roots;
    in C by location with the native backend. ``boundaries`` are any increasing column
    bounds (fastest when they are `column_bounds`)."""
    if row is None:
        row = np.arange(len(roots), dtype=np.int64)
    rows = int(row.max(initial=-1)) + 1
    if not by_depth and backends.native():
        return native_walk(t, group_of, boundaries, groups, roots, begins, row, rows)
    canvas = _Canvas(boundaries, groups)
    deepest = _walk(t, canvas, group_of, roots, begins, row, by_depth)
    return canvas.image(max(deepest, 1) if by_depth else rows)


def _cell_sums(cells: np.ndarray, ticks: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` sums of ``ticks`` per cell, exactly."""
    largest = max(int(ticks.max(initial=0)), -int(ticks.min(initial=0)))  # |INT64_MIN| does not fit an int64
    if len(ticks) * largest < 1 << 53:  # every partial sum is exact in a double
        return np.rint(np.bincount(cells, weights=ticks, minlength=size)).astype(np.int64)
    out = np.zeros(size, np.int64)
    np.add.at(out, cells, ticks)
    return out


class _Canvas:
    """Collects (row, column, group) ticks; intervals are split across columns."""

    def __init__(self, boundaries: np.ndarray, groups: int):
        self.b = boundaries
        self.width = len(boundaries) - 1
        start, span = int(boundaries[0]), int(boundaries[-1]) - int(boundaries[0])
        #: whether the bounds are ``start + i*span//width`` and the column formula cannot overflow
        self.uniform = span * (self.width + 1) < 1 << 62 and bool(np.array_equal(
            boundaries, start + np.arange(self.width + 1, dtype=np.int64) * span // self.width))
        self.groups = groups
        self.cells: list[np.ndarray] = []   #: flat (row, column, group) indices
        self.ticks: list[np.ndarray] = []
        self.span_starts: list[np.ndarray] = []  #: flat cells where a run of whole columns starts
        self.span_stops: list[np.ndarray] = []   #: ... and the cells just after it, same row

    def column(self, time: np.ndarray) -> np.ndarray:
        """The column holding each time: the largest i with ``b[i] <= time``, which for
        ``b[i] = start + i*span//width`` is ``((time - start + 1)*width - 1) // span``;
        other increasing bounds are searched."""
        start, span = int(self.b[0]), int(self.b[-1]) - int(self.b[0])
        if self.uniform:
            clipped = np.clip(time, start, start + span - 1)
            return ((clipped - start + 1) * self.width - 1) // span
        return np.clip(np.searchsorted(self.b, time, side="right") - 1, 0, self.width - 1)

    def cell(self, row: np.ndarray, column: np.ndarray) -> np.ndarray:
        """The flat index of group 0 of each (row, column); add a group to address it."""
        return (row * self.width + column) * self.groups

    def add(self, row: np.ndarray, column: np.ndarray, group: np.ndarray, ticks: np.ndarray) -> None:
        if len(ticks):
            self.add_cells(self.cell(row, column) + group, ticks)

    def add_cells(self, cells: np.ndarray, ticks: np.ndarray) -> None:
        if len(ticks):
            self.cells.append(cells)
            self.ticks.append(ticks)

    def intervals(self, lane: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Add ``[a, b)`` clipped to the columns; ``lane`` is the cell of its row and group
        in column 0."""
        a = np.maximum(a, self.b[0])
        b = np.minimum(b, self.b[-1])
        keep = b > a
        lane, a, b = lane.compress(keep), a.compress(keep), b.compress(keep)
        c0, c1 = self.column(a), self.column(b - 1)
        same = c0 == c1
        self.add_cells(lane.compress(same) + c0.compress(same) * self.groups, (b - a).compress(same))
        many = ~same
        if many.any():
            lane, a, b, c0, c1 = (x.compress(many) for x in (lane, a, b, c0, c1))
            self.add_cells(lane + c0 * self.groups, self.b[c0 + 1] - a)
            self.add_cells(lane + c1 * self.groups, b - self.b[c1])
            middle = c1 > c0 + 1
            self.span_starts.append(lane[middle] + (c0[middle] + 1) * self.groups)
            self.span_stops.append(lane[middle] + c1[middle] * self.groups)

    def image(self, rows: int) -> np.ndarray:
        out = np.zeros((rows, self.width, self.groups), dtype=np.int64)
        if self.cells:
            flat, ticks = np.concatenate(self.cells), np.concatenate(self.ticks)
            out += _cell_sums(flat, ticks, out.size).reshape(out.shape)
        if self.span_starts:  # +1 where a run of whole columns starts, -1 after it, summed along the row
            diff = (np.bincount(np.concatenate(self.span_starts), minlength=out.size)
                    - np.bincount(np.concatenate(self.span_stops), minlength=out.size)).reshape(out.shape)
            out += np.cumsum(diff, axis=1) * np.diff(self.b)[None, :, None]
        return out


_CALL = int(NodeKind.CALL)

#: Nodes with at least this many children get prefix sums over their children (`child_runs`);
#: smaller ones are expanded child by child, which costs less than their searches.
INDEXED_CHILDREN = 8


def _walk(t: NodeTables, canvas: _Canvas, group_of: np.ndarray, roots: np.ndarray, begins: np.ndarray,
          row: np.ndarray, by_depth: bool) -> int:
    """Paint every location at once (root i into row ``row[i]``, unless ``by_depth``);
    returns the number of call levels reached."""
    kind, painted = t.kind, t.painted
    runs = None if by_depth else child_runs(t, group_of, INDEXED_CHILDREN)
    start, stop = int(canvas.b[0]), int(canvas.b[-1])
    nodes, times = roots.astype(np.int64), begins.astype(np.int64)
    row = np.asarray(row, np.int64)
    enc = np.full(len(roots), -1, np.int64)
    level = np.zeros(len(roots), np.int64)
    gathered: list[tuple[np.ndarray, ...]] = []
    deepest = 0
    while len(nodes):
        total = painted[nodes]
        end = times + total
        c0, c1 = canvas.column(np.maximum(times, start)), canvas.column(np.minimum(end, stop) - 1)
        shown = (total > 0) & (end > start) & (times < stop)
        inside = shown & (c0 == c1) & (times >= start) & (end <= stop)
        if not shown.any():
            break
        deepest = max(deepest, int(level.max(where=shown, initial=0)) + 1)
        whole = np.flatnonzero(inside)
        if len(whole):
            if by_depth:
                gathered.append(tuple(x.take(whole) for x in (nodes, c0, enc, level)))
            else:
                _whole(t, canvas, group_of, *(x.take(whole) for x in (nodes, c0, enc, row)))
        cut = np.flatnonzero(shown ^ inside)
        nodes, times, enc, level, row, spans = (x.take(cut) for x in (nodes, times, enc, level, row, c1 - c0))
        if not len(nodes):
            break
        call = kind[nodes] == _CALL
        group = np.where(call, group_of[np.where(call, t.key0[nodes], 0)], enc)  # of the node's own time
        rows = np.where(call, level, level - 1) if by_depth else row
        slot = runs.worth(nodes, spans) if runs is not None else np.full(len(nodes), -1)
        indexed = np.flatnonzero(slot >= 0)
        expanded = np.flatnonzero(slot < 0)
        kids, kid_times, parent = (np.concatenate(parts) for parts in zip(
            _expand_cut(t, canvas, *(x.take(expanded) for x in (nodes, times, rows, group)), expanded),
            _cut_by_runs(runs, canvas, *(x.take(indexed) for x in (times, slot, rows, group)), indexed)))
        nodes, times = kids, kid_times
        enc, level, row = group[parent], (level + call)[parent], row[parent]
    if gathered:
        deepest = max(deepest, _gathered(t, canvas, group_of, gathered))
    return deepest


def _expand_cut(t: NodeTables, canvas: _Canvas, nodes: np.ndarray, times: np.ndarray, rows: np.ndarray,
                group: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """Nodes spanning several columns, child by child: paint their own gaps (a call's
    exclusive pieces) in ``group`` (where >= 0) on their row of ``rows``, and return their
    children with start times and the ``ids`` of their parents."""
    if not len(nodes):
        return nodes, times, ids
    # the gaps of a node with n children are its durations 0, 2, ..., 2n (Lemma 1)
    gaps = t.child_count[nodes] + 1
    owner = np.repeat(np.arange(len(nodes)), gaps)
    index = 2 * np.arange(len(owner)) + np.repeat(t.duration_start[nodes] - 2 * (np.cumsum(gaps) - gaps), gaps)
    length = t.durations[index]
    paint = np.flatnonzero((length > 0) & (group[owner] >= 0))
    owner, index = owner[paint], index[paint]
    begin = (times - t.duration_prefix[t.duration_start[nodes]])[owner] + t.duration_prefix[index]
    canvas.intervals((canvas.cell(rows, 0) + group)[owner], begin, begin + length[paint])
    kids, parent, offset = t.child_offsets(nodes)
    return kids, times[parent] + offset, ids[parent]


def group_exclusive(t: NodeTables, group_of: np.ndarray) -> np.ndarray:
    """Per node, the exclusive time of its sub-tree's calls per group, then its uncovered
    time (memoized per grouping): the cached partial results of 4.5.4 for rows by location."""
    memo = t.__dict__.setdefault("_group_exclusive", {})
    key = tuple(group_of.tolist())
    found = memo.get(key)
    if found is None:
        groups = int(group_of.max()) + 1 if len(group_of) else 1
        if backends.native():  # in C: no array of the calls' own times
            from .._native.timeline import group_exclusive as sums
            found = sums(t, group_of, groups)
        else:
            own = np.zeros((len(t), groups + 1), dtype=np.int64)  # the last column sums nothing
            calls = np.flatnonzero(t.kind == NodeKind.CALL)
            own[calls, group_of[t.key0[calls]]] = t.total[calls] - t.inner[calls]
            found = t.bottom_up(own)
        found[:, groups] = t.total - t.calltime
        memo[key] = found
    return found


@dataclass
class ChildRuns:
    """Running sums over the children of the nodes with many children, the parents (in
    ascending order, numbered by ``slot``; a few of their columns are copied here, where
    they are close together). Parent ``i`` has the children ``base[i]`` to
    ``base[i + 1] - 1`` in a common numbering; per child: its node (``kids``), its
    ``starts`` and ``ends`` on the scale of `NodeTables.duration_prefix` (so they ascend),
    and ``gaps``, its parent's gaps before its end. Row ``c`` of ``prefix`` sums over the
    children before ``c`` their memoized exclusive time per group and their uncovered
    time (`group_exclusive`): a run of children is the difference of two rows."""

    slot: np.ndarray  #: per node, its number among the parents, or -1
    base: np.ndarray
    total: np.ndarray  #: per parent, `NodeTables.total`
    gap: np.ndarray  #: per parent, `NodeTables.gap`
    origin: np.ndarray  #: per parent, its start on the scale of the starts
    kids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    gaps: np.ndarray
    prefix: np.ndarray

    def worth(self, nodes: np.ndarray, spans: np.ndarray) -> np.ndarray:
        """Per node, its number among the parents if it crosses fewer column bounds
        (``spans``) than it has children, so that cutting it costs less than expanding
        it; else -1."""
        slot = self.slot.take(nodes)
        children = self.base.take(slot + 1, mode="clip") - self.base.take(slot, mode="clip")
        return np.where((slot >= 0) & (spans < children), slot, -1)


def child_runs(t: NodeTables, group_of: np.ndarray, least: int) -> ChildRuns:
    """The `ChildRuns` of the painted nodes with at least ``least`` children (memoized per
    grouping). They need Lemma 1 as written: durations that are never negative, and a
    child's duration equal to its total; without it no node gets runs."""
    memo = t.__dict__.setdefault("_child_runs", {})
    key = (least, tuple(group_of.tolist()))
    found = memo.get(key)
    if found is None:
        parents = np.flatnonzero((t.child_count >= max(least, 1)) & (t.painted > 0))
        kids, owner = t.expand(parents)
        counts = t.child_count[parents]
        base = np.cumsum(counts) - counts
        positions = t.duration_start[parents][owner] + 2 * (np.arange(len(kids)) - base[owner]) + 1
        if (t.durations < 0).any() or not np.array_equal(t.durations[positions], t.total[kids]):
            parents, kids, owner, counts, base, positions = (np.zeros(0, np.int64),) * 6
        prefix = t.duration_prefix
        origin, ends = prefix[t.duration_start[parents]], prefix[positions + 1]
        # the gaps before a child's end: its end minus the parent's start, less its own and
        # its elder siblings' durations
        covered = np.cumsum(t.total[kids])
        covered -= np.repeat(covered[base] - t.total[kids[base]], counts)
        gaps = ends - origin[owner] - covered
        # one running sum over all parents: a run's difference is exact even if it wraps
        sums = np.cumsum(np.take(group_exclusive(t, group_of), kids, axis=0), axis=0)
        slot = np.full(len(t), -1, np.int32)
        slot[parents] = np.arange(len(parents))
        total = t.total[parents]
        found = memo[key] = ChildRuns(slot, np.append(base, len(kids)), total, total - covered[base + counts - 1],
                                      origin, kids, prefix[positions], ends, gaps,
                                      np.concatenate((np.zeros((1, sums.shape[1]), np.int64), sums)))
    return found


def _cut_by_runs(runs: ChildRuns | None, canvas: _Canvas, times: np.ndarray, slot: np.ndarray, rows: np.ndarray,
                 group: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """Nodes spanning several columns, by their `ChildRuns` (4.5.4 with the shared partial
    results of 4.5.3): the column bounds (and window ends) inside a node cut it into
    pieces; a piece gets the memoized times of the children wholly inside it and its own
    gaps from two rows of running sums each, whatever the number of children. Only the
    children crossing a cut are returned (with start times and the ``ids`` of their
    parents) to descend. The nodes start at ``times`` and are the parents ``slot`` of
    ``runs``; their gaps and their children's uncovered time go to ``group`` (where >= 0)
    on their rows of ``rows``."""
    if not len(slot):
        return slot, times, ids
    order = np.argsort(slot, kind="stable")  # the searches below then run forward through the runs
    times, slot, rows, group, ids = (x.take(order) for x in (times, slot, rows, group, ids))
    start, stop = canvas.b[0], canvas.b[-1]
    end = times + runs.total[slot]
    lo, hi = np.maximum(times, start), np.minimum(end, stop)
    c0 = canvas.column(lo)
    cuts = canvas.column(hi - 1) - c0 + 2  # lo, the column bounds between, hi
    owner = np.repeat(np.arange(len(slot)), cuts)
    first_cut = np.cumsum(cuts) - cuts
    last_cut = first_cut + cuts - 1
    column = c0[owner] + np.arange(len(owner)) - first_cut[owner]  # of the piece a cut starts
    point = canvas.b[column]
    point[first_cut], point[last_cut] = lo, hi
    # per cut, the children starting before it (Lemma 1), numbers base to before - 1, whether
    # the last of them ends after the cut, and the node's gaps before the cut: none at the
    # node's start; all at its end; searched in between
    base = runs.base[slot]
    after_start = point > times[owner]
    before = np.where(after_start, runs.base[slot + 1][owner], base[owner])
    gaps_before = np.where(after_start, runs.gap[slot][owner], 0)
    crossed = np.zeros(len(owner), bool)
    inner = np.flatnonzero(after_start & (point < end[owner]))
    at, node = point[inner], owner[inner]
    shift = runs.origin[slot] - times  # time to the scale of the starts
    found = np.maximum(np.searchsorted(runs.starts, at + shift[node]), base[node])
    some = found > base[node]
    last_end = np.where(some, runs.ends.take(found - 1, mode="clip") - shift[node], at)
    before[inner] = found
    crossed[inner] = last_end > at
    gaps_before[inner] = np.where(some, runs.gaps.take(found - 1, mode="clip") + np.maximum(at - last_end, 0),
                                  at - times[node])
    # piece i runs from cut i to cut i + 1 of the same node; its own children are the rows
    # from the first starting at or after cut i to the last ending at or before cut i + 1
    piece = np.flatnonzero(np.arange(len(owner)) != last_cut[owner])
    node = owner[piece]
    first_row = before[piece]
    after_row = np.maximum(before[piece + 1] - crossed[piece + 1], first_row)
    sums = runs.prefix.take(after_row, axis=0) - runs.prefix.take(first_row, axis=0)
    cells = canvas.cell(rows[node], column[piece])
    exclusive = sums[:, :-1]
    canvas.add_cells((cells[:, None] + np.arange(exclusive.shape[1])).ravel(), exclusive.ravel())
    own = group[node]
    mine = np.flatnonzero(own >= 0)
    canvas.add_cells(cells[mine] + own[mine], (gaps_before[piece + 1] - gaps_before[piece] + sums[:, -1])[mine])
    # a child crossing several cuts descends once (the same child is last before them)
    again = np.zeros(len(owner), bool)
    again[1:] = (before[1:] == before[:-1]) & (owner[1:] == owner[:-1])
    descend = np.flatnonzero(crossed & ~again)
    parent, last = owner[descend], before[descend] - 1
    return runs.kids[last], runs.starts[last] - shift[parent], ids[parent]


def _whole(t: NodeTables, canvas: _Canvas, group_of: np.ndarray, nodes: np.ndarray, column: np.ndarray,
           enc: np.ndarray, row: np.ndarray) -> None:
    """Sub-trees inside one column, by location: their memoized group times, plus the
    gaps of an artificial node, which belong to the enclosing call."""
    times = np.take(group_exclusive(t, group_of), nodes, axis=0)  # faster than [nodes] for rows
    exclusive, uncovered = times[:, :-1], times[:, -1]
    cells = canvas.cell(row, column)
    size = int(cells.max()) + 1 if len(cells) else 0
    for group in range(exclusive.shape[1]):  # summed per cell first: few cells, many sub-trees
        sums = _cell_sums(cells, exclusive[:, group], size)
        hit = np.flatnonzero(sums)
        canvas.add_cells(hit + group, sums[hit])
    valid = (enc >= 0) & (uncovered > 0)
    canvas.add_cells(cells.compress(valid) + enc.compress(valid), uncovered.compress(valid))


def unique_rows(columns: list[np.ndarray], radices: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of ``columns`` (``0 <= columns[j] < radices[j]``), as columns in
    ascending order, and per row its distinct one: through one int64 key when the radices
    allow it, else row-wise."""
    if math.prod(radices) < 1 << 63:
        key = np.zeros(len(columns[0]), np.int64)
        for column, radix in zip(columns, radices):
            key = key * radix + column
        unique, inverse = np.unique(key, return_inverse=True)
        out = []
        for radix in reversed(radices):
            out.append(unique % radix)
            unique = unique // radix
        return out[::-1], inverse.ravel()
    unique, inverse = np.unique(np.column_stack(columns), axis=0, return_inverse=True)
    return list(unique.T), inverse.ravel()


def _gathered(t: NodeTables, canvas: _Canvas, group_of: np.ndarray, gathered: list[tuple[np.ndarray, ...]]) -> int:
    """Rows by depth: nodes inside single columns, gathered per (node, column, enclosing
    group, level) with multiplicities, adding their own gaps level by level."""
    nodes, column, enc, level = (np.concatenate(parts) for parts in zip(*gathered))
    weight = np.ones(len(nodes), np.int64)
    deepest = 0
    while len(nodes):
        (nodes, column, enc, level), inverse = unique_rows(
            [nodes, column, enc + 1, level], [len(t), canvas.width, canvas.groups + 1, int(level.max()) + 1])
        enc = enc - 1
        summed = np.zeros(len(nodes), np.int64)
        np.add.at(summed, inverse, weight)
        weight = summed
        deepest = max(deepest, int(level.max()) + 1)
        call = t.kind[nodes] == NodeKind.CALL
        group = np.where(call, group_of[np.where(call, t.key0[nodes], 0)], enc)
        rows = np.where(call, level, level - 1)
        ticks = t.gap[nodes] * weight
        valid = (group >= 0) & (ticks != 0)
        canvas.add(rows[valid], column[valid], group[valid], ticks[valid])
        kids, parent = t.expand(nodes)
        keep = t.painted[kids] > 0
        kids, parent = kids[keep], parent[keep]
        child_enc = np.where(call, group, enc)
        nodes, column, enc = kids, column[parent], child_enc[parent]
        level, weight = (level + call)[parent], weight[parent]
    return deepest


def native_walk(t: NodeTables, group_of: np.ndarray, boundaries: np.ndarray, groups: int, roots: np.ndarray,
                begins: np.ndarray, row: np.ndarray, rows: int) -> np.ndarray:
    """`_walk` by location in C (ccgformat/_native/timeline.c), returning the image: each
    location depth first, with the same memoized group times and running sums over
    children, so the same (wrapping) sums."""
    from .._native.timeline import paint
    return paint(t, group_of, group_exclusive(t, group_of), child_runs(t, group_of, INDEXED_CHILDREN), boundaries,
                 groups, roots, begins, row, rows)
