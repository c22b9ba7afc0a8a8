"""The definitions of several archives unified into one (docs/merge.md, "Definitions").

Every list is matched record by record: a record of a later archive is the earlier
record equal to it (regions, metrics and strings as they are; system tree nodes and
locations by name, kind and parent, the parent matched first; communicators by name and
members, the members matched as locations), else appended. The k-th of equal records in
one archive matches the k-th such record of the result, so an archive's own duplicates
stay apart, and the first archive's definitions are taken over whole: their ids do not
change. A name that stands for one record in each of two archives but for different
records is a conflict (`MergeConflictError`): a region or metric of another role, unit
or type, a system tree node or location of another kind under the same parent, a
communicator with other members. The timer resolution and the clock offset must agree.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from ...errors import CorruptArchiveError, MergeConflictError
from ...model import Communicator, Definitions, Location, SystemTreeNode


@dataclass
class Maps:
    """Per archive, each definitions list's ids mapped to the merged ids (int64 arrays)."""

    regions: np.ndarray
    system_tree: np.ndarray
    locations: np.ndarray
    communicators: np.ndarray
    metrics: np.ndarray
    strings: np.ndarray

    @property
    def identity(self) -> bool:
        """Whether every id keeps its number."""
        return all(np.array_equal(ids, np.arange(len(ids))) for ids in vars(self).values())

    @property
    def numbers_kept(self) -> bool:
        """Whether every id but the strings' keeps its number: what an extension names
        (the importers intern strings for events only, never for their extension)."""
        return all(np.array_equal(ids, np.arange(len(ids))) for name, ids in vars(self).items() if name != "strings")


def identity_maps(definitions: Definitions) -> Maps:
    """The maps of an archive whose every id keeps its number."""
    return Maps(*(np.arange(len(getattr(definitions, name)), dtype=np.int64) for name in
                  ("regions", "system_tree", "locations", "communicators", "metrics", "strings")))


@dataclass
class _Table:
    """One definitions list being unified: the merged records, where each equal record
    lies, which archive brought each, and the records of each name."""

    what: str
    name: Callable[[Any], Hashable]
    describe: Callable[[Any], str]
    records: list[Any] = field(default_factory=list)
    places: dict[Any, list[int]] = field(default_factory=dict)
    origin: list[str] = field(default_factory=list)
    named: dict[Hashable, list[int]] = field(default_factory=dict)

    def add(self, record: Any, occurrence: int, path: str, *, alone: bool, earlier: int) -> int:
        """The merged id of the ``occurrence``-th (from 0) of equal records of an archive;
        ``alone``: the record's name stands for it alone in its archive, so that it must
        not differ from the one record of that name of the archives before (the merged
        ids below ``earlier``)."""
        name = self.name(record)
        known = [number for number in self.named.get(name, ()) if number < earlier]
        if alone and len(known) == 1 and self.records[known[0]] != record:
            raise MergeConflictError(f"{self.describe(self.records[known[0]])} there, {self.describe(record)} here",
                                     paths=(self.origin[known[0]], path), what=f"{self.what} {_shown(name)}")
        places = self.places.setdefault(record, [])
        if occurrence < len(places):
            return places[occurrence]
        number = len(self.records)
        places.append(number)
        self.records.append(record)
        self.origin.append(path)
        self.named.setdefault(name, []).append(number)
        return number

    def extend(self, records: Sequence[Any], path: str) -> np.ndarray:
        """The merged ids of an archive's records, in order (added where new)."""
        names = Counter(self.name(record) for record in records)
        seen: Counter[Any] = Counter()
        earlier = len(self.records)
        ids = np.empty(len(records), np.int64)
        for i, record in enumerate(records):
            ids[i] = self.add(record, seen[record], path, alone=names[self.name(record)] == 1, earlier=earlier)
            seen[record] += 1
        return ids


def _shown(name: Hashable) -> str:
    return repr(name[0]) if isinstance(name, tuple) else repr(name)


def _entity(record: tuple[str, str, int | None]) -> str:
    return f"kind {record[1]!r}"


def _parents_first(parents: list[int | None], path: str, what: str) -> list[int]:
    """The entries of a tree (every parent defined) in an order that puts every parent
    before its children."""
    order: list[int] = []
    state = [0] * len(parents)  # 0 new, 1 on the path, 2 placed
    for start in range(len(parents)):
        chain = []
        node: int | None = start
        while node is not None and state[node] == 0:
            state[node] = 1
            chain.append(node)
            node = parents[node]
        if node is not None and state[node] == 1:
            raise CorruptArchiveError(f"{what} {node} is its own ancestor", path=path)
        for entry in reversed(chain):
            state[entry] = 2
            order.append(entry)
    return order


class Unifier:
    """Adds archives' definitions one after another; `definitions` is the result."""

    def __init__(self) -> None:
        self.regions = _Table("region", lambda r: r.name, lambda r: f"role {r.role!r}, paradigm {r.paradigm!r}, "
                                                                     f"group {r.group!r}")
        self.metrics = _Table("metric", lambda m: m.name, lambda m: f"unit {m.unit!r}, mode {m.mode!r}, "
                                                                     f"type {m.value_type!r}")
        self.system_tree = _Table("system tree node", lambda n: (n[0], n[2]), _entity)
        self.locations = _Table("location", lambda n: (n[0], n[2]), _entity)
        self.communicators = _Table("communicator", lambda c: c[0], lambda c: f"members {list(c[1])}")
        self.strings = _Table("string", lambda s: s, repr)
        self.first: Definitions | None = None
        self.first_path = ""
        self.first_stored: bytes | None = None
        self.first_maps: Maps | None = None
        self.same = True  # every archive's definitions equal the first's
        self.extensions_agree = True  # every archive's extensions equal the first's, and what they name keeps its number
        self.provenance: list[dict[str, str]] = []

    def add(self, definitions: Definitions, path: str, stored: bytes | None = None) -> Maps:
        """Unify one archive's definitions; its ids' merged numbers. ``stored``: the bytes
        its file stores them in, when known: an archive whose bytes are the first's (the
        parts of one conversion) takes the first's numbers without a look at its records."""
        if self.first is None:
            self.first, self.first_path, self.first_stored = definitions, path, stored
        elif stored is not None and stored == self.first_stored:
            self.provenance.append(dict(definitions.provenance))
            return self.first_maps
        else:
            self._check_timer(definitions, path)
            self.same = self.same and _document(definitions) == _document(self.first)
        self.provenance.append(dict(definitions.provenance))
        system_tree = self._tree(self.system_tree, list(definitions.system_tree), path, "system tree node", None)
        locations = self._tree(self.locations, list(definitions.locations), path, "location", system_tree)
        _check_members(definitions, path)
        communicators = self.communicators.extend(
            [(c.name, tuple(locations[list(c.members)].tolist())) for c in definitions.communicators], path)
        maps = Maps(self.regions.extend(list(definitions.regions), path), system_tree, locations, communicators,
                    self.metrics.extend(list(definitions.metrics), path), self.strings.extend(list(definitions.strings),
                                                                                            path))
        if self.first is definitions:
            self.first_maps = maps
        else:
            self.extensions_agree = (self.extensions_agree and definitions.extensions == self.first.extensions
                                     and maps.numbers_kept)
        return maps

    def _check_timer(self, definitions: Definitions, path: str) -> None:
        assert self.first is not None
        for name in ("timer_resolution", "clock_offset"):
            mine, theirs = getattr(definitions, name), getattr(self.first, name)
            if mine != theirs:
                raise MergeConflictError(f"{theirs} there, {mine} here", paths=(self.first_path, path),
                                         what=name.replace("_", " "))

    @staticmethod
    def _tree(table: _Table, entries: list[Any], path: str, what: str, parents: np.ndarray | None) -> np.ndarray:
        """System tree nodes (``parents`` None: their parents are their own list's) or
        locations (``parents``: the merged ids of the system tree nodes) unified, parents
        first; a name is the entry's name and its (merged) parent."""
        own = parents is None
        limit = len(entries) if parents is None else len(parents)
        for i, entry in enumerate(entries):
            if entry.parent is not None and not 0 <= entry.parent < limit:
                raise CorruptArchiveError(f"{what} {i} has the parent {entry.parent}, which is not defined", path=path)
        ids = np.full(len(entries), -1, np.int64)
        up = ids if parents is None else parents
        names = Counter((entry.name, entry.parent) for entry in entries)
        seen: Counter[Any] = Counter()
        earlier = len(table.records)
        for i in _parents_first([e.parent for e in entries], path, what) if own else range(len(entries)):
            entry = entries[i]
            record = (entry.name, entry.kind, None if entry.parent is None else int(up[entry.parent]))
            ids[i] = table.add(record, seen[record], path, alone=names[(entry.name, entry.parent)] == 1,
                               earlier=earlier)
            seen[record] += 1
        return ids

    @property
    def definitions(self) -> Definitions:
        """The merged definitions."""
        assert self.first is not None
        first = self.first
        return Definitions(
            regions=list(self.regions.records), metrics=list(self.metrics.records), strings=list(self.strings.records),
            system_tree=[SystemTreeNode(name, kind, parent) for name, kind, parent in self.system_tree.records],
            locations=[Location(name, kind, parent) for name, kind, parent in self.locations.records],
            communicators=[Communicator(name, members) for name, members in self.communicators.records],
            timer_resolution=first.timer_resolution, clock_offset=first.clock_offset,
            provenance=merged_provenance(self.provenance),
            # their numbers follow the first archive's definitions: kept only where all agree
            # and keep their numbers in the merge (the strings interned by events may differ)
            extensions=dict(first.extensions) if self.same or self.extensions_agree_in_full else {})

    @property
    def extensions_agree_in_full(self) -> bool:
        """Whether the extensions agree and the merged tables but the strings are the first's."""
        assert self.first is not None
        first = self.first
        return self.extensions_agree and all(
            len(table.records) == len(getattr(first, name)) for name, table in
            (("regions", self.regions), ("metrics", self.metrics), ("system_tree", self.system_tree),
             ("locations", self.locations), ("communicators", self.communicators)))


def _check_members(definitions: Definitions, path: str) -> None:
    """Refuse a communicator member that is no defined location."""
    for c in definitions.communicators:
        bad = [m for m in c.members if not 0 <= m < len(definitions.locations)]
        if bad:
            raise CorruptArchiveError(f"communicator {c.name!r} has the member {bad[0]}, which is no defined location",
                                      path=path)


def merged_provenance(documents: list[dict[str, str]]) -> dict[str, str]:
    """The provenance of every archive: a member all agree on as it is, one they differ
    in with each archive's value (or "-") joined by " | "."""
    keys = list(dict.fromkeys(key for document in documents for key in document))
    merged = {}
    for key in keys:
        values = [document.get(key, "-") for document in documents]
        merged[key] = values[0] if len(set(values)) == 1 else " | ".join(values)
    return merged


def _document(definitions: Definitions) -> str:
    """The definitions but their provenance, as one comparable text."""
    document = definitions.to_dict()
    document.pop("provenance")
    return json.dumps(document, sort_keys=True)

