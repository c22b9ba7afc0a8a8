"""Collective operations over the merged message stream (dissertation 3.4.6).

The k-th COLL_END on communicator C of every location is one operation; a participant's
begin is its location's last COLL_BEGIN since its previous COLL_END (its end when there is
none). A window's ends are numbered on from the counts of the earlier windows, and each
location's open begin is carried to the next window. The participants are kept (11
numbers each) and joined into operations at the end, where the answer lists them after
the messages: memory grows with the collectives of a trace, not with its other events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..model import EventKind
from .messages_match import Table, kind_mask, runs, take

__all__ = ["Collective", "Collectives", "numbered"]

_IS_COLLECTIVE = kind_mask((int(EventKind.COLL_BEGIN), int(EventKind.COLL_END)))
_PART = ("comm", "index", "row", "location", "begin", "end", "operation", "root", "size", "recv_size", "seq")


@dataclass
class Collective:
    """One collective operation: the k-th on its communicator at every participant."""

    comm: int
    index: int
    operation: int
    participants: list[tuple[int, int, int, int, int]]  #: (location, begin, end, bytes sent, bytes received)
    complete: bool  #: every communicator member took part, all with the same operation and root


class Collectives:
    """The participants of the collectives met so far, and what the next window needs:
    per location the time of its open COLL_BEGIN, per (location, communicator) its ends."""

    def __init__(self, rows: int):
        self.open = np.full(rows, -1, np.int64)   #: per location row, its last begin since its last end
        self.has_open = np.zeros(rows, bool)
        self.ends: dict[tuple[int, int], int] = {}  #: (row, comm) -> COLL_ENDs met
        self.parts: list[Table] = []

    def window(self, events: Table) -> None:
        """Take in one window's COLL_BEGIN and COLL_END events (`messages_match` columns)."""
        c = take(events, _IS_COLLECTIVE[events["kind"]])
        if not len(c["seq"]):
            return
        c = take(c, np.lexsort((c["seq"], c["row"])))  # each location's events together, in order
        row, n = c["row"], len(c["seq"])
        is_end = c["kind"] == EventKind.COLL_END
        position = np.arange(n)
        starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
        first = np.repeat(starts, np.diff(np.append(starts, n)))  # the first event of each one's location
        last_begin = np.maximum.accumulate(np.where(is_end, -1, position))
        last_end = np.maximum.accumulate(np.where(is_end, position, -1))
        ends = np.flatnonzero(is_end)
        begin_at = last_begin[ends]
        end_before = np.concatenate(([-1], last_end[:-1]))[ends]
        here = (begin_at >= first[ends]) & (begin_at > end_before)
        carried = ~here & (end_before < first[ends]) & self.has_open[row[ends]]
        begin = np.where(here, c["time"][np.maximum(begin_at, 0)],
                         np.where(carried, self.open[row[ends]], c["time"][ends]))
        # what each location leaves open for the next window
        last = np.append(starts[1:], n) - 1
        still_open = (last_begin[last] >= starts) & (last_begin[last] > last_end[last])
        self.has_open[row[last]] = still_open
        self.open[row[last]] = np.where(still_open, c["time"][np.maximum(last_begin[last], 0)], -1)
        e = take(c, ends)
        index = numbered(e["row"], e["comm"], self.ends)
        self.parts.append({"comm": e["comm"], "index": index, "row": e["row"], "location": e["location"],
                           "begin": begin, "end": e["time"], "operation": e["ref"], "root": e["tag"],
                           "size": e["size"], "recv_size": e["recv_size"], "seq": e["seq"]})

    def finish(self, communicators: list[Any], inside: Callable[[np.ndarray], np.ndarray]) -> list[Collective]:
        """The operations with a participant's begin or end in the window asked for, in the
        order of their first end (ties: the location first in the query's order); each
        one's participants in that order."""
        if not self.parts:
            return []
        p = {name: np.concatenate([part[name] for part in self.parts]) for name in _PART}
        self.parts = []
        p = take(p, np.lexsort((p["seq"], p["row"])))
        instances: dict[tuple[int, int], list[tuple[int, ...]]] = {}
        rows = zip(*(p[name].tolist() for name in ("comm", "index", "location", "begin", "end", "operation", "root",
                                                   "size", "recv_size")))
        for comm, k, location, first, last, operation, root, size, recv_size in rows:
            instances.setdefault((comm, k), []).append((location, first, last, operation, root, size, recv_size))
        seen = inside(p["begin"]) | inside(p["end"])
        wanted = {key for key, keep in zip(zip(p["comm"].tolist(), p["index"].tolist()), seen.tolist()) if keep}
        out = []
        for (comm, k), parts in sorted(instances.items(), key=lambda item: min(q[2] for q in item[1])):
            if (comm, k) not in wanted:
                continue
            members = set(communicators[comm].members) if 0 <= comm < len(communicators) else set()
            present = {q[0] for q in parts}
            complete = (len({(q[3], q[4]) for q in parts}) == 1 and len(present) == len(parts)
                        and (not members or present == members))
            out.append(Collective(comm, k, parts[0][3], [(q[0], q[1], q[2], q[5], q[6]) for q in parts], complete))
        return out


def numbered(row: np.ndarray, comm: np.ndarray, counts: dict[tuple[int, int], int]) -> np.ndarray:
    """Each COLL_END's number among its location's (``row``'s) ends on its communicator,
    numbered on from ``counts`` (the ends met before, per (row, communicator)), which it
    updates; the ends of a location in order."""
    sort, starts = runs([row, comm])
    count = np.diff(np.append(starts, len(sort)))
    first = sort[starts]
    keys = list(zip(row[first].tolist(), comm[first].tolist()))
    base = np.array([counts.get(key, 0) for key in keys], np.int64)
    for key, before, more in zip(keys, base.tolist(), count.tolist()):
        counts[key] = before + more
    number = np.empty(len(sort), np.int64)
    number[sort] = np.repeat(base, count) + np.arange(len(sort)) - np.repeat(starts, count)
    return number
