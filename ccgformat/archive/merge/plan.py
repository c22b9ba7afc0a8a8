"""What a merge joins: the archives opened, their definitions unified, and per merged
location the archives' pieces of it (docs/merge.md).

A location is one of several archives' when its definitions match (`definitions`). Its
events are the events of every archive that has some for it, in time order: archives of
disjoint locations give each location one piece, archives of consecutive time segments
several, each starting no earlier than the one before ends. Pieces that overlap in time
are a conflict.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ...errors import MergeConflictError, ParameterError
from ...graph.graph import BuildMetrics, root_columns
from ...graph.pool import NodeKind, node_bytes
from ...hierarchy import Hierarchy, defined_hierarchy
from ...model import Definitions, Location
from ...params import Params
from ..jsontable import decode_json_table
from ..layout import MAJOR_VERSION, TABLES_MINOR_VERSION, SectionKind
from ..reader import Archive, open_archive
from ..writer import KeptBlock
from .definitions import Maps, Unifier, identity_maps


#: the bytes of an empty location's root (an ARTIFICIAL node without children, 4.2.5)
EMPTY_ROOT_BYTES = node_bytes(NodeKind.ARTIFICIAL, 0, (0,))
#: the sections a file stores its definitions in (spec 4.1, 4.7, 4.9)
_DEFINING = (SectionKind.DEFINITIONS, SectionKind.LOCATION_TABLE, SectionKind.EXTENSION_TABLE)
#: a merged graph of at least this many nodes is copied block by block when the archives
#: define the same (`blocks`; a smaller one is hash consed, `nodes`); from this size the
#: writer's tables walk the events instead of reading every node
#: (`query.streaming.STREAM_NODES`), and definitions stored in the same bytes are kept
#: as they are even from a bundle (`plan`)
COPY_NODES = 1 << 18


def copied(archives: Sequence[Archive]) -> bool:
    """Whether the merged graph of ``archives`` is large enough (COPY_NODES) to be copied
    block by block, where they define the same."""
    return sum(len(archive.pool) for archive in archives) >= COPY_NODES


class Piece(NamedTuple):
    """Events of a merged location that one archive holds."""

    source: int     #: the archive's position among the sources
    location: int   #: the location's id in that archive
    start: int
    end: int
    events: int


@dataclass
class Plan:
    """The opened archives (closed with the plan), their maps and the merged definitions,
    per merged location its pieces in time order, and the parameters to record."""

    paths: list[str]
    archives: list[Archive]
    maps: list[Maps]
    definitions: Definitions
    pieces: dict[int, list[Piece]]
    params: Params
    stack: ExitStack
    #: every archive defines what the first does (then every id keeps its number)
    same_definitions: bool
    #: the merged definitions keep the format extensions (every archive agreed, docs/merge.md)
    extensions_kept: bool
    #: the blocks every archive stores its definitions in, when these are the same bytes
    #: (the parts of one conversion): the merged file stores them as they are
    stored_definitions: list[tuple[SectionKind, bytes]] | None = None
    #: with those, the extensions every archive leaves out, as a block to store after them
    #: (`Writer.keep_definitions` ``later``)
    later_definitions: Callable[[], KeptBlock] | None = None

    @cached_property
    def hierarchy(self) -> Hierarchy:
        """The resource hierarchy over every merged location, made once."""
        return defined_hierarchy(self.definitions)

    @property
    def events(self) -> int:
        return sum(map(self.source_events, range(len(self.archives))))

    def source_events(self, source: int) -> int:
        """The events of archive ``source``: its pieces' (those of every root), column-wise."""
        return int(root_columns(self.archives[source].roots)[4].sum())

    @property
    def segmented(self) -> bool:
        """Whether a location has pieces in several archives (time segments)."""
        return sum(map(len, self.pieces.values())) > len(self.pieces)

    @property
    def repeated_empty_roots(self) -> int:
        """The roots of locations without events that the archives hold beyond one per
        merged location without events: each archive's N and M (dissertation 4.2.5)
        counted its own, a conversion of the whole counts one (the parts of an MPI
        conversion each hold every other part's locations without events)."""
        held = sum(int((root_columns(archive.roots)[4] == 0).sum()) for archive in self.archives)
        return held - (len(self.definitions.locations) - len(self.pieces))

    def build_metrics(self, n: int, m: int, unreached: int = 0) -> BuildMetrics:
        """N and M of the merged graph (the archives' sums, each empty root counted once)
        with its ``n`` nodes and ``m`` bytes kept; ``unreached``: empty roots stored
        although no merged location has them (copied with their blocks), counted too."""
        repeated = self.repeated_empty_roots - unreached
        return BuildMetrics(sum(archive.stats.N for archive in self.archives) - repeated, n,
                            sum(int(archive.parameters["metrics"]["M"]) for archive in self.archives)
                            - repeated * EMPTY_ROOT_BYTES, m)

    def with_extensions(self) -> None:
        """The merged definitions with the extensions `later_definitions` gives, for a
        merge that encodes its definitions anew (`rebuild`) instead of storing those kept."""
        if self.later_definitions is not None:
            self.definitions = replace(self.definitions, extensions=_decoded(self.later_definitions()))
            self.stored_definitions = self.later_definitions = None

    def close(self) -> None:
        self.stack.close()


def plan(sources: Sequence[str | os.PathLike[str]], target: str | os.PathLike[str],
         extensions: Callable[[], KeptBlock] | None = None) -> Plan:
    """Open and check the archives to merge into ``target``; `MergeConflictError` when
    they cannot be joined. ``extensions``: the format extensions the archives leave out
    (`merge`), as their EXTENSION_TABLE block: asked for when the merged file stores its
    definitions (when the archives store the same definitions bytes), else now, every
    archive's definitions then holding them."""
    paths = [str(source) for source in sources]
    if not paths:
        raise ParameterError("a merge needs at least one archive")
    for path in paths:
        if Path(target).exists() and Path(path).exists() and os.path.samefile(path, target):
            raise ParameterError(f"the target {target} is one of the archives merged; a merge never modifies its "
                                 f"inputs")
    stack = ExitStack()
    try:
        archives = [stack.enter_context(open_archive(path)) for path in paths]
        defined = [_defining_roots(archive) for archive in archives]
        params = loosest([archive.params for archive in archives])
        defining = [entry for entry in archives[0].sections if entry.kind in _DEFINING]
        if defined[0][1] is not None and all(stored == defined[0][1] for _, stored in defined) and \
                archives[0].version >= (MAJOR_VERSION, TABLES_MINOR_VERSION) and \
                (not any(archives[0].bundled(entry) for entry in defining) or
                 copied(archives)):
            # the same bytes (the parts of one conversion): the first's definitions and
            # numbers, taken without decoding their records (20,000 locations: 5 s) -
            # stored alone, as this writer stores them, or from a bundle in a large graph:
            # a bundled part chose their layout without the extensions the merged file
            # then keeps in a table of their own, a few hundred bytes more than encoding
            # them anew (small files: 6%), and 6 ms less of the merge's 29 at 1 M events
            definitions = archives[0].definitions
            maps = [identity_maps(definitions)] * len(archives)
            return Plan(paths, archives, maps, definitions, _pieces(archives, maps, paths), params, stack, True, True,
                        [(SectionKind(entry.kind), archives[0].payload(entry)) for entry in defining], extensions)
        if extensions is not None:
            given = _decoded(extensions())
            defined = [(replace(definitions, extensions=given), stored) for definitions, stored in defined]
        unifier = Unifier()
        maps = [unifier.add(definitions, path, stored) for (definitions, stored), path in zip(defined, paths)]
        merged = unifier.definitions
        return Plan(paths, archives, maps, merged, _pieces(archives, maps, paths), params, stack, unifier.same,
                    bool(merged.extensions) or not any(archive.definitions.extensions for archive in archives))
    except BaseException:
        stack.close()
        raise


def _decoded(block: KeptBlock) -> dict:
    """The extensions an EXTENSION_TABLE block given to the merge holds."""
    kind, raw, _ = block
    if kind != SectionKind.EXTENSION_TABLE:
        raise ValueError(f"the extensions given to a merge are a {SectionKind(kind).name} block")
    return decode_json_table(raw, "the extensions given to the merge", 0)


def _defining_roots(archive: Archive) -> tuple[Definitions, bytes | None]:
    """An archive's definitions, with a location for every location its roots list beyond
    them (only a file of 1.0-1.2 has such roots, spec 4.3), named `location N` and of kind
    `location` as in its resource hierarchy (4.10.1): the merged file defines every
    location it holds; and the bytes the file stores its definitions in (None with such
    locations added)."""
    definitions = archive.definitions
    listed = root_columns(archive.roots)[0]
    last = int(listed.max()) if len(listed) else -1
    if last < len(definitions.locations):
        return definitions, b"".join(archive.payload(entry) for entry in archive.sections
                                     if entry.kind in _DEFINING)
    extra = [Location(f"location {i}", "location") for i in range(len(definitions.locations), last + 1)]
    return replace(definitions, locations=[*definitions.locations, *extra]), None


def _pieces(archives: list[Archive], maps: list[Maps], paths: list[str]) -> dict[int, list[Piece]]:
    """Per merged location with events (in increasing order), its pieces in time order
    (archives' order on a tie); overlapping pieces raise `MergeConflictError`. Sorted
    column-wise: at 20,000 locations a piece at a time took 0.05 s of a merge's 0.23."""
    columns = []
    for source, (archive, mapping) in enumerate(zip(archives, maps)):
        locations, _, start, end, events = root_columns(archive.roots)
        kept = events > 0
        columns.append((np.asarray(mapping.locations, np.int64)[locations[kept]], np.full(int(kept.sum()), source),
                        locations[kept], start[kept], end[kept], events[kept]))
    merged, source, location, start, end, events = (np.concatenate(column) for column in zip(*columns))
    if not len(merged):
        return {}
    order = np.lexsort((source, start, merged))
    merged, source, location, start, end, events = (column[order] for column in
                                                     (merged, source, location, start, end, events))
    overlaps = np.flatnonzero((merged[1:] == merged[:-1]) & (start[1:] < end[:-1]))
    if len(overlaps):
        at = int(overlaps[0])
        raise MergeConflictError(
            f"events over [{start[at]}, {end[at]}] there and [{start[at + 1]}, {end[at + 1]}] here overlap "
            f"(archives of one location must hold consecutive time segments)",
            paths=(paths[source[at]], paths[source[at + 1]]), what=f"location {merged[at]}")
    firsts = np.flatnonzero(np.r_[True, merged[1:] != merged[:-1]]).tolist()
    pieces = list(map(Piece, source.tolist(), location.tolist(), start.tolist(), end.tolist(), events.tolist()))
    return {int(merged[a]): pieces[a:b] for a, b in zip(firsts, firsts[1:] + [len(pieces)])}


def loosest(params: list[Params]) -> Params:
    """The parameters a merge of archives with these records: the first's graph shape
    (branching, search), and each bound the loosest of the inputs' - time's among the
    inputs whose time is not exact - so that every event of the result is within the
    recorded bounds of the original."""
    timed = [p for p in params if not p.exact_time]
    return replace(params[0], abs_dev=max((p.abs_dev for p in timed), default=0),
                   rel_dev=max((p.rel_dev for p in timed), default=0.0),
                   rel_size=max(p.rel_size for p in params), rel_metric=max(p.rel_metric for p in params))


def lossless(params: Params) -> Params:
    """``params`` without bounds: a merge never adds deviation to its inputs' events."""
    return replace(params, abs_dev=0, rel_dev=0.0, rel_size=0.0, rel_metric=0.0)

