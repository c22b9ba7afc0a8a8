"""The node pool: permanent cCCG nodes of all locations, stored column-wise.

Node ids are assigned in finalization order, so every node's children have smaller ids
than the node itself (bottom-up, dissertation 4.1.1). Node kinds share one number space
with `EventKind`: ``CALL`` (0) and ``ARTIFICIAL`` (1) take the places of ENTER and LEAVE,
which never become nodes of their own; every other number is an atomic node of that
event kind (4.1.1).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from ..model import KIND_FIELDS, EventKind


class NodeKind(IntEnum):
    CALL = 0        #: a region call: enter, children, leave; key = (region,)
    ARTIFICIAL = 1  #: a node made by splitting a wide node (4.1.2), or a location's root


#: Metric sums are kept modulo 2**64, as signed 64-bit integers.
_WRAP = 1 << 64
_HALF = 1 << 63


def wrap64(x: int) -> int:
    """Reduce an integer to the signed 64-bit range (two's complement wrap-around)."""
    return ((x + _HALF) % _WRAP) - _HALF


def duration_width(durations: tuple[int, ...]) -> int:
    """Bytes per duration in the narrowest unsigned integer type that holds them (4.1.3)."""
    top = max(durations, default=0)
    for width in (1, 2, 4):
        if top < 1 << (8 * width):
            return width
    return 8


def node_bytes(kind: int, children: int, durations: tuple[int, ...]) -> int:
    """The memory size m_C of a node used for R_memory (4.2.5).

    A 4-byte header (kind, duration width, child count), 4 bytes per child reference,
    the durations at their narrowest width (4.1.3) and 8 bytes per hard or soft property.
    """
    if kind <= NodeKind.ARTIFICIAL:
        properties = 1 if kind == NodeKind.CALL else 0
        return 4 + 4 * children + duration_width(durations) * len(durations) + 8 * properties
    fields = KIND_FIELDS[EventKind(kind)]
    return 4 + 8 * (len(fields.hard) + len(fields.soft))


class PerChild:
    """``view[node]``: a column's values for each child of ``node``, as a tuple (for any
    pool's ``children`` column and a column indexable by node id). It holds the two
    columns, not the pool, so that a pool holding it is no reference cycle."""

    __slots__ = ("_children", "_column")

    def __init__(self, children: Any, column: Any):
        self._children = children
        self._column = column

    def __getitem__(self, node: int) -> tuple:
        column = self._column
        return tuple(column[child] for child in self._children[node])


class NodePool:
    """Column lists of all permanent nodes; a node id indexes every column.

    ``key``: the hard properties (region for calls, the kind's hard columns for atomic
    nodes); ``soft``: an atomic node's soft columns (a METRIC holds the difference to the
    previous sample of its metric); ``durations``: the 2n+1 durations of call and
    artificial nodes; ``events``: events in the sub-tree (for access by index);
    ``total``: the sub-tree's duration; ``metric_sums``: per metric, the sum of the
    sub-tree's sample differences, as sorted (metric, sum) pairs (for random access to
    metric values). ``child_events`` and ``child_metric_sums`` give those values for all
    children of a node at once, which lets an archive answer them from the parent's block.
    """

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.key: list[tuple[int, ...]] = []
        self.children: list[tuple[int, ...]] = []
        self.durations: list[tuple[int, ...]] = []
        self.soft: list[tuple[int, ...]] = []
        self.events: list[int] = []
        self.total: list[int] = []
        self.metric_sums: list[tuple[tuple[int, int], ...]] = []

        self.child_events = PerChild(self.children, self.events)
        self.child_metric_sums = PerChild(self.children, self.metric_sums)

    def __len__(self) -> int:
        return len(self.kind)

    def add_inner(self, kind: NodeKind, key: tuple[int, ...], children: tuple[int, ...],
                  durations: tuple[int, ...]) -> int:
        """Store a call or artificial node; its event count and sums derive from its children."""
        own_events = 2 if kind == NodeKind.CALL else 0
        sums: dict[int, int] = {}
        for child in children:
            for metric, value in self.metric_sums[child]:
                sums[metric] = wrap64(sums.get(metric, 0) + value)
        return self._append(kind, key, children, durations, (),
                            own_events + sum(self.events[c] for c in children),
                            sum(durations), tuple(sorted(sums.items())))

    def add_atomic(self, kind: int, key: tuple[int, ...], soft: tuple[int, ...]) -> int:
        """Store an atomic node (one event)."""
        sums = ((key[0], soft[0]),) if kind == EventKind.METRIC else ()
        return self._append(kind, key, (), (), soft, 1, 0, sums)

    def soft_key(self, node: int) -> tuple[int, ...]:
        """The soft properties an S-list compares: durations, or an atomic node's values."""
        return self.durations[node] if self.kind[node] <= NodeKind.ARTIFICIAL else self.soft[node]

    def _append(self, kind: int, key: tuple[int, ...], children: tuple[int, ...],
                durations: tuple[int, ...], soft: tuple[int, ...], events: int, total: int,
                sums: tuple[tuple[int, int], ...]) -> int:
        self.kind.append(int(kind))
        self.key.append(key)
        self.children.append(children)
        self.durations.append(durations)
        self.soft.append(soft)
        self.events.append(events)
        self.total.append(total)
        self.metric_sums.append(sums)
        return len(self.kind) - 1
