"""Logical time in an OTF2 export (issue 39, item 5), as Ravel saves it: UINT64 attributes
``phase``, ``step``, ``Lateness`` (its description: the unit of the ticks) and, under
Ravel's scheme, ``Lateness_agg`` (the lateness of the aggregate non-messaging event
before, Ravel's ``_agg`` metrics) on the Leave record of the call that holds a
communication event, where Ravel writes them. A communication event outside any call,
or in a call that holds several (an ``MPI_Sendrecv``, a ``MPI_Waitall`` completing
several receives), carries them on its own record instead, so that each event's values
are found. Ravel's own marker attribute ``Ravel`` (its version) is not written: the
file was not written by Ravel.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ...model import EventBatch
from .binding import Binding, enum_value
from .plan import Plan

__all__ = ["ATTRIBUTES", "LogicalAttributes", "Marks"]

#: the attribute names, in the order of each list
ATTRIBUTES = ("phase", "step", "Lateness", "Lateness_agg")
_UNITS = {1: "s", 1000: "ms", 1_000_000: "us", 1_000_000_000: "ns"}


class LogicalAttributes:
    """The attribute definitions of a logical-time answer (`Logical`, or the streamed one
    of `ccg logical`: its ``columns_of``) added to a plan, and per location the events
    that carry attribute lists."""

    def __init__(self, binding: Binding, plan: Plan, logical: Any):
        self.binding = binding
        self.uint64 = enum_value(binding, "Type", "UINT64", "UINT64")
        ravel = logical.scheme == "ravel"
        unit = _UNITS.get(logical.timer_resolution, f"1/{logical.timer_resolution} s")
        names = ATTRIBUTES if ravel else ATTRIBUTES[:3]
        self.refs = [plan.attribute(name, unit if name.startswith("Lateness") else "", self.uint64) for name in names]
        self.logical = logical
        self.ravel = ravel

    def of(self, location: int) -> Marks:
        """The marked events of ``location``, in event order."""
        columns = self.logical.columns_of(location)
        if columns is None:
            return Marks(self.binding, np.zeros(0, np.int64), [])
        leave = columns["leave"]
        # a call's Leave carries its event's values when it holds that event alone
        _, first, counts = np.unique(leave, return_index=True, return_counts=True)
        alone = np.zeros(len(leave), bool)
        alone[first[counts == 1]] = True
        carrier = np.where(alone & (leave >= 0), leave, columns["event"])
        order = np.argsort(carrier, kind="stable")
        names = ("phase", "step", "lateness") + (("aggregate_lateness",) if self.ravel else ())
        entries = [[[ref, self.uint64, int(value) & 0xFFFFFFFFFFFFFFFF] for ref, value in zip(self.refs, row)]
                   for row in zip(*(columns[name][order].tolist() for name in names))]
        return Marks(self.binding, carrier[order], entries)


class Marks:
    """Splits a location's batches at its marked events and gives each mark's attribute list."""

    def __init__(self, binding: Binding, at: np.ndarray, entries: list[list[list[int]]]):
        self.binding, self.at, self.entries = binding, at, entries
        self.seen = 0   #: events of the location before the next batch
        self.next = 0   #: the next mark

    def pieces(self, batch: EventBatch) -> Iterator[tuple[EventBatch, list[list[int]] | None]]:
        """The batch in pieces, each starting at a marked event (with its attribute
        entries) but the first, which may start unmarked (None)."""
        stop = self.seen + len(batch)
        first = self.next
        while self.next < len(self.at) and self.at[self.next] < stop:
            self.next += 1
        cuts = (self.at[first:self.next] - self.seen).tolist()
        bounds = [0, *cuts, len(batch)]
        for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            if b > a:
                yield batch[a:b], self.entries[first + k - 1] if k else None
        self.seen = stop

    def attach(self, pending: int, entries: list[list[int]]) -> int:
        """The attribute list for the next record: ``entries`` added to the ``pending``
        list (0: none, a new one)."""
        if not pending:
            return self.binding.attribute_list(entries)
        for ref, kind, bits in entries:
            if self.binding.lib.OTF2_AttributeList_AddAttribute(pending, ref, kind, bits) != 0:
                raise ValueError(f"attribute {ref} cannot be added")
        return pending
