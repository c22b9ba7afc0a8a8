"""Replacement search: hash -> S-lists with a priority cache (dissertation 4.2.1, 4.2.2).

Nodes are grouped by a hash key over (node kind, child references, hard properties).
Python's dict plays the part of the hash bins and collision lists of Fig. 4.6: one entry
per distinct key, each holding one S-list of nodes that differ only in soft properties.
Only the cache area - the first L entries - of an S-list is ever searched (4.2.2), so an
S-list keeps just that area; a node pushed out of it stays in the node pool.
"""

from __future__ import annotations

from typing import Callable, Hashable, TypeVar

Result = TypeVar("Result")


class SList:
    """One S-list managed as a priority cache of at most ``limit`` entries (Fig. 4.7).

    Search goes front to back and stops at the first match, which then swaps places with
    its predecessor. A miss inserts the new node at the end of the cache area; when the
    area is full the new node takes its last place and the previous occupant leaves.

    When compatibility means equality of the soft properties (a zero bound), the first
    match is the only equal entry, so ``exact`` keeps a dict from soft properties to node
    and finds it without comparing entry by entry; the result is the same. ``hits`` and
    ``misses`` count the builder's searches of the S-list that found a node and those
    that stored a new one (`Builder._share_leaf`). A ``closed`` S-list is no longer
    searched nor grown (``Params.representatives``, `Builder._finalize`).
    """

    __slots__ = ("entries", "exact", "hits", "misses", "closed")

    def __init__(self, exact: bool):
        self.entries: list[int] = []
        self.exact: dict[Hashable, int] | None = {} if exact else None
        self.hits = self.misses = 0
        self.closed = False

    def find_equal(self, soft: Hashable) -> int | None:
        """The cached node with exactly these soft properties (exact S-lists only)."""
        assert self.exact is not None
        node = self.exact.get(soft)
        if node is not None:
            self._promote(self.entries.index(node))
        return node

    def replace(self, old: int, new: int, soft: Hashable) -> None:
        """Put ``new``, stored instead of sharing the equal cached node ``old``, in its
        place (exact S-lists only); ``old`` leaves the cache area."""
        assert self.exact is not None
        self.entries[self.entries.index(old)] = new
        self.exact[soft] = new

    def search(self, check: Callable[[int], Result | None]) -> tuple[int, Result] | None:
        """The first cached node for which ``check`` gives a result, and that result."""
        for position, node in enumerate(self.entries):
            result = check(node)
            if result is not None:
                self._promote(position)
                return node, result
        return None

    def _promote(self, position: int) -> None:
        if position > 0:
            entries = self.entries
            entries[position - 1], entries[position] = entries[position], entries[position - 1]

    def insert(self, node: int, soft: Hashable, limit: int, soft_of: Callable[[int], Hashable]) -> None:
        """Add a node that found no replacement, at the end of the cache area."""
        entries = self.entries
        if len(entries) < limit:
            entries.append(node)
        else:
            evicted = entries[limit - 1]
            entries[limit - 1] = node
            if self.exact is not None:
                del self.exact[soft_of(evicted)]
        if self.exact is not None:
            self.exact[soft] = node


class ReplacementIndex:
    """All S-lists of a node pool, by hash key; ``limit`` is the search length L."""

    def __init__(self, limit: int, soft_of: Callable[[int], Hashable]):
        self.limit = limit
        self.soft_of = soft_of
        self.slists: dict[Hashable, SList] = {}

    def slist(self, key: Hashable, exact: bool) -> SList:
        found = self.slists.get(key)
        if found is None:
            found = self.slists[key] = SList(exact)
        return found

    def insert(self, slist: SList, node: int, soft: Hashable) -> None:
        slist.insert(node, soft, self.limit, self.soft_of)
