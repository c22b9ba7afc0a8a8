"""Runs of records as columns in pre-order, without a Python step per value: the records
that repeat per location (``["Location", [7, 40003, 1, 48, 7]]``) for the
EXTENSION_TABLE encoder's fast path (`jsontable`).

`flatten` splits the values by type and array length and takes each group of arrays of
one length apart column by column (``map(itemgetter(i), ...)``), so that the work per
value is done by ``map`` and numpy; the work per group is Python, which pays when groups
are large. A value holding anything but integers (``int``, within int64), strings
(``str``) and arrays (``list`` or ``tuple`` of at most ``limit`` members) is left to the
reference walk, and so is a run that splits into too many groups."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable

import numpy as np

from ..ordering import sorted_distinct

__all__ = ["INT", "STR", "ARRAY", "Columns", "Flat", "flatten"]

#: value kinds of `Flat.kind`
INT, STR, ARRAY, _OTHER = range(4)
_KINDS = {int: INT, str: STR, list: ARRAY, tuple: ARRAY}
#: groups of values (a Python step each) at most per value of the run, and at least (the
#: records of one kind give a few dozen): more varied values are faster one by one
_GROUPS_PER_VALUE = 1 / 8
_GROUPS = 32


@dataclass(frozen=True)
class Flat:
    """Values in pre-order (the order the reference walk visits them)."""

    kind: np.ndarray       #: INT, STR or ARRAY per value
    path: np.ndarray       #: the path id of each value
    length: np.ndarray     #: the members of each ARRAY value
    integers: np.ndarray   #: each INT value (int64)
    strings: list[str]     #: each STR value


@dataclass(frozen=True)
class Columns:
    """The flattened values of a run: `ok` says which can be (the others, with everything
    they hold, are missing from `flat`), `rows` gives those of a range of them."""

    ok: np.ndarray         #: per value given
    flat: Flat             #: the values that can be flattened, in pre-order
    row: np.ndarray        #: per value of `flat`: the value given it is (or is inside)

    def rows(self, start: int, stop: int) -> Flat:
        """The values given from ``start`` to ``stop`` (all of them `ok`)."""
        f, lo, hi = self.flat, *np.searchsorted(self.row, [start, stop]).tolist()
        if (lo, hi) == (0, len(f.kind)):
            return f
        before = [int(np.count_nonzero(f.kind[:lo] == k)) for k in (ARRAY, INT, STR)]
        inside = [int(np.count_nonzero(f.kind[lo:hi] == k)) for k in (ARRAY, INT, STR)]
        (a, i, s), (na, ni, ns) = before, inside
        return Flat(f.kind[lo:hi], f.path[lo:hi], f.length[a:a + na], f.integers[i:i + ni], f.strings[s:s + ns])


@dataclass
class _Leaves:
    """What the walk found: per group of values of one kind at one path, the values' rows
    (the values given they are in), their offsets in their row's pre-order, and their data."""

    child: Callable[[int, int], int]
    limit: int
    budget: float
    groups: list[tuple[np.ndarray, np.ndarray, int, int, Any]] = field(default_factory=list)
    bad: list[np.ndarray] = field(default_factory=list)


class _TooVaried(Exception):
    pass


def flatten(values: list, limit: int, child: Callable[[int, int], int], path: int) -> Columns | None:
    """The columns of ``values`` (all at path ``path``; ``child(path, position)`` gives the
    path ids below); None when they split into too many groups."""
    leaves = _Leaves(child, limit, max(_GROUPS, len(values) * _GROUPS_PER_VALUE))
    try:
        sizes = _walk(values, np.arange(len(values)), np.zeros(len(values), np.int64), path, leaves)
    except _TooVaried:
        return None
    ok = np.ones(len(values), bool)
    if leaves.bad:
        ok[np.concatenate(leaves.bad)] = False
        sizes[~ok] = 0
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    total = int(sizes.sum())
    kind = np.empty(total, np.int8)
    paths = np.empty(total, np.int64)
    row = np.empty(total, np.int64)
    length = np.zeros(total, np.int64)
    integers = np.zeros(total, np.int64)
    strings = np.empty(total, dtype=object)
    for group_rows, offsets, group_kind, group_path, data in leaves.groups:
        good = ok[group_rows]
        everything = good.all()
        if not everything:
            group_rows, offsets = group_rows[good], offsets[good]
            data = [data[i] for i in np.flatnonzero(good).tolist()] if group_kind == STR else data[good]
        at = starts[group_rows] + offsets
        kind[at] = group_kind
        paths[at] = group_path
        row[at] = group_rows
        if group_kind == INT:
            integers[at] = data
        elif group_kind == STR:
            strings[at] = np.fromiter(data, dtype=object, count=len(data))  # not via numpy strings: NULs
        else:
            length[at] = data
    flat = Flat(kind, paths, length[kind == ARRAY], integers[kind == INT], strings[kind == STR].tolist())
    return Columns(ok, flat, row)


def _walk(values: list, rows: np.ndarray, offsets: np.ndarray, path: int, leaves: _Leaves) -> np.ndarray:
    """Record the values (of rows ``rows``, at ``offsets`` in them, all at ``path``) and
    their members; the pre-order size of each value."""
    sizes = np.ones(len(values), np.int64)
    types = set(map(type, values))
    if len(types) == 1:
        groups = [(_KINDS.get(types.pop(), _OTHER), None)]
    else:
        kinds = np.fromiter(map(_KINDS.get, map(type, values), repeat(_OTHER)), np.int8, len(values))
        groups = [(int(k), np.flatnonzero(kinds == k)) for k in sorted_distinct(kinds)]
    for kind, chosen in groups:
        leaves.budget -= 1
        if leaves.budget < 0:
            raise _TooVaried
        group = values if chosen is None else [values[i] for i in chosen.tolist()]
        group_rows = rows if chosen is None else rows[chosen]
        group_offsets = offsets if chosen is None else offsets[chosen]
        if kind == INT:
            try:
                data = np.array(group, np.int64)
            except OverflowError:
                column = np.array(group, dtype=object)
                wide = (column < -(1 << 63)) | (column >= 1 << 63)
                leaves.bad.append(group_rows[wide])
                data = np.where(wide, 0, column).astype(np.int64)
            leaves.groups.append((group_rows, group_offsets, INT, path, data))
        elif kind == STR:
            leaves.groups.append((group_rows, group_offsets, STR, path, group))
        elif kind == ARRAY:
            lengths = np.fromiter(map(len, group), np.int64, len(group))
            leaves.groups.append((group_rows, group_offsets, ARRAY, path, lengths))
            members = _arrays(group, lengths, group_rows, group_offsets, path, leaves)
            if chosen is None:
                sizes += members
            else:
                sizes[chosen] += members
        else:
            leaves.bad.append(group_rows)
    return sizes


def _arrays(arrays: list, lengths: np.ndarray, rows: np.ndarray, offsets: np.ndarray, path: int,
            leaves: _Leaves) -> np.ndarray:
    """Walk the members of arrays, column by column per length; their sizes per array."""
    members = np.zeros(len(arrays), np.int64)
    distinct = sorted_distinct(lengths)
    for length in distinct.tolist():
        chosen = None if len(distinct) == 1 else np.flatnonzero(lengths == length)
        chosen_rows = rows if chosen is None else rows[chosen]
        if length > leaves.limit:
            leaves.bad.append(chosen_rows)
            continue
        if not length:
            continue
        group = arrays if chosen is None else [arrays[i] for i in chosen.tolist()]
        at = (offsets if chosen is None else offsets[chosen]) + 1
        start = at
        for position in range(length):  # map(itemgetter): zip(*group) costs ten times as much
            leaves.budget -= 1
            column = list(map(itemgetter(position), group))
            at = at + _walk(column, chosen_rows, at, leaves.child(path, position), leaves)
        if chosen is None:
            members += at - start
        else:
            members[chosen] += at - start
    return members
