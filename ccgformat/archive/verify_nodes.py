"""What `verify` keeps of the node blocks it has checked, in bounded memory.

A node block's import table repeats the event count, duration and metric sums of every
child that lies in an earlier block (spec 5.4), and the roots repeat their root nodes'.
`verify` checks each such claim against the node's own block. Keeping every block's
columns would cost 16 bytes per node for the whole file (700 MB at 10^8 jittered
events), so `NodeSummaries` keeps those of the blocks used most recently, within a byte
budget. The blocks come in any order (`verify` checks each as its walk decodes it): a
claim on a block not checked yet waits for that block, and is checked when it comes. A
claim on a block it has let go waits in a ledger; the ledger is settled (each block it
names decoded once more, in file order) when it holds a budget's worth of claims, and at
the end. Memory is then bounded by the two budgets and the claims waiting for blocks to
come (at most every claim of the file: 40 bytes each, 10 MB at 3 * 10^7 jittered
events).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .codec import NodeBlock, ImportTable
from .sections import DirectoryEntry
from ..ordering import sorted_distinct

#: Bytes of block columns kept, and bytes of claims waiting, by default.
SUMMARY_BYTES = 128 << 20
LEDGER_BYTES = 64 << 20
#: Bytes counted per node kept (events and total) and per claim waiting (id, events,
#: total, the importing block and the claim's row there).
_NODE_BYTES = 16
_CLAIM_BYTES = 40
_SUMS_BYTES = 96  # a node's non-empty metric sums: a dict entry and its tuples

Sums = tuple[tuple[int, int], ...]


@dataclass
class BlockSummary:
    """The columns of one decoded node block that claims are checked against."""

    first: int
    events: np.ndarray
    total: np.ndarray
    metric_sums: dict[int, Sums]  # by index in the block; only the non-empty ones

    @classmethod
    def of(cls, block: NodeBlock) -> BlockSummary:
        return cls(block.first, np.array(block.events, dtype=np.int64), np.array(block.total, dtype=np.int64),
                   {i: block.metric_sums(i) for i in block.sampled().tolist()})

    @property
    def nbytes(self) -> int:
        return _NODE_BYTES * len(self.events) + _SUMS_BYTES * len(self.metric_sums)

    def sums(self, local: int) -> Sums:
        return self.metric_sums.get(local, ())


@dataclass
class _Claims:
    """Import-table rows of one block that name nodes of a block let go."""

    entry: DirectoryEntry
    imports: ImportTable
    rows: np.ndarray


@dataclass
class NodeSummaries:
    """The node blocks the footer lists, which are sound, the recent ones' columns, and the
    waiting claims. Blocks are checked in any order (`verify` checks them as its walk
    decodes them): a claim on a block not checked yet waits for it, one on a block let go
    waits in the ledger, one on a damaged block is dropped (the damage is reported there).

    ``entries`` are the footer's node blocks in id order. ``decode(entry)`` decodes a
    block again (None if it cannot be read now); ``report(entry, mismatches)`` receives
    (child, message) pairs of the claims in block ``entry``'s import table that disagree,
    some now and some when the ledger is settled."""

    entries: list[DirectoryEntry]
    decode: Callable[[DirectoryEntry], NodeBlock | None]
    report: Callable[[DirectoryEntry, list[tuple[int, str]]], None]
    summary_bytes: int = SUMMARY_BYTES
    ledger_bytes: int = LEDGER_BYTES
    #: per block: None not checked yet, True sound, False damaged
    sound: list[bool | None] = field(init=False)
    _firsts: np.ndarray = field(init=False)
    _counts: np.ndarray = field(init=False)
    _index: dict[DirectoryEntry, int] = field(init=False)
    _kept: OrderedDict[int, BlockSummary] = field(default_factory=OrderedDict)
    _kept_bytes: int = 0
    _ledger: dict[int, list[_Claims]] = field(default_factory=dict)
    _ledger_claims: int = 0
    _waiting: dict[int, list[_Claims]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sound = [None] * len(self.entries)
        self._firsts = np.array([entry.first for entry in self.entries], dtype=np.int64)
        self._counts = np.array([entry.count for entry in self.entries], dtype=np.int64)
        self._index = {entry: index for index, entry in enumerate(self.entries)}

    def checked(self, entry: DirectoryEntry) -> bool:
        """Whether block ``entry`` was found sound or damaged already."""
        return self.sound[self._index[entry]] is not None

    def add(self, entry: DirectoryEntry, summary: BlockSummary) -> None:
        """Record a sound block (its columns), after its own import table was checked:
        the claims waiting for it are checked now."""
        index = self._index[entry]
        self.sound[index] = True
        self._keep(index, summary)
        found: list[tuple[DirectoryEntry, list[tuple[int, str]]]] = [
            (claims.entry, _mismatches(summary, claims.imports, claims.rows)) for claims in self._waiting.pop(index, [])]
        for claiming, mismatches in found:
            if mismatches:
                self.report(claiming, mismatches)

    def damaged(self, entry: DirectoryEntry) -> None:
        """Record a block that does not read (or not as the footer lists it)."""
        index = self._index[entry]
        self.sound[index] = False
        self._waiting.pop(index, None)

    def _keep(self, index: int, summary: BlockSummary) -> None:
        self._kept[index] = summary
        self._kept_bytes += summary.nbytes
        while self._kept_bytes > self.summary_bytes and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            self._kept_bytes -= dropped.nbytes

    def _summary(self, index: int) -> BlockSummary | None:
        """Block ``index``'s columns, decoded again if they were let go."""
        summary = self._kept.get(index)
        if summary is not None:
            self._kept.move_to_end(index)
            return summary
        block = self.decode(self.entries[index])
        if block is None:
            return None
        summary = BlockSummary.of(block)
        self._keep(index, summary)
        return summary

    def node(self, node: int) -> tuple[int, int] | None:
        """(events, total) of a node, None if no block found sound holds it."""
        index = int(self._block_of(np.array([node], dtype=np.int64))[0])
        summary = self._summary(index) if index >= 0 and self.sound[index] else None
        if summary is None:
            return None
        local = node - summary.first
        return int(summary.events[local]), int(summary.total[local])

    def _block_of(self, ids: np.ndarray) -> np.ndarray:
        """The index of the listed block holding each id, -1 for none."""
        position = np.searchsorted(self._firsts, ids, side="right") - 1
        inside = position >= 0
        inside[inside] = ids[inside] - self._firsts[position[inside]] < self._counts[position[inside]]
        return np.where(inside, position, -1)

    def check_imports(self, entry: DirectoryEntry, imports: ImportTable) -> None:
        """Check the claims of block ``entry``'s import table on the blocks kept now; those
        on blocks let go go in the ledger, those on blocks not checked yet wait for them."""
        if not len(imports.ids):
            return
        position = self._block_of(imports.ids)
        mismatches: list[tuple[int, str]] = []
        for index in sorted_distinct(position).tolist():
            if index < 0 or self.sound[index] is False:
                continue  # a damaged block's nodes: already reported there
            rows = np.flatnonzero(position == index)
            summary = self._kept.get(index)
            if self.sound[index] is None:
                self._waiting.setdefault(index, []).append(_Claims(entry, imports, rows))
            elif summary is None:
                self._ledger.setdefault(index, []).append(_Claims(entry, imports, rows))
                self._ledger_claims += len(rows)
            else:
                self._kept.move_to_end(index)
                mismatches += _mismatches(summary, imports, rows)
        if mismatches:
            self.report(entry, mismatches)
        if self._ledger_claims * _CLAIM_BYTES > self.ledger_bytes:
            self.settle()

    def settle(self) -> None:
        """Check every claim waiting in the ledger: each block it names is decoded once."""
        found: dict[int, list[tuple[int, str]]] = {}
        by_entry: dict[int, DirectoryEntry] = {}
        for index in sorted(self._ledger):
            summary = self._summary(index)
            for claims in self._ledger[index]:
                if summary is not None:
                    found.setdefault(id(claims.entry), []).extend(_mismatches(summary, claims.imports, claims.rows))
                    by_entry[id(claims.entry)] = claims.entry
        self._ledger.clear()
        self._ledger_claims = 0
        for key, mismatches in found.items():
            if mismatches:
                self.report(by_entry[key], mismatches)


def _mismatches(summary: BlockSummary, imports: ImportTable, rows: np.ndarray) -> list[tuple[int, str]]:
    """The claims of import rows ``rows`` that disagree with the block's own columns, as
    (child, message) pairs."""
    local = imports.ids[rows] - summary.first
    bad = (summary.events[local] != imports.events[rows]) | (summary.total[local] != imports.total[rows])
    found = [(int(imports.ids[row]), f"child {int(imports.ids[row])} has {int(summary.events[i])} events and duration "
             f"{int(summary.total[i])}, the import table says {int(imports.events[row])} and "
             f"{int(imports.total[row])}") for row, i in zip(rows[bad].tolist(), local[bad].tolist())]
    rows, local = rows[~bad], local[~bad]
    # the sums differ only where the claim or the node has some (most have none)
    some = (imports.pair_start[rows + 1] > imports.pair_start[rows]) | np.isin(
        local, np.fromiter(summary.metric_sums, np.int64, len(summary.metric_sums)))
    for row, i in zip(rows[some].tolist(), local[some].tolist()):
        child = int(imports.ids[row])
        claimed, actual = imports.sums(child), summary.sums(i)
        if claimed != actual:
            found.append((child, f"child {child} has metric sums {actual}, the import table says {claimed}"))
    return found
