"""Full structural check of a .ccg file (`ccg verify`).

Opening an archive checks only the header, the trailer and the footer; `verify` goes on
to read every block the footer lists and checks what a reader relies on: each block's
CRC32C and decompressed size, the node blocks' encoding, the import tables against the
nodes they name, the node keys against the definitions, the roots against their nodes
the snapshot and summary indexes against the roots, and the aggregation tables against
the graph and the summary index. It keeps going after a problem
wherever the rest can still be checked, and returns every problem found in file-offset
order.
"""

from __future__ import annotations

import itertools

import os
from functools import partial
from typing import Any, Callable, Iterator

import numpy as np

from ..ahead import read_ahead
from ..errors import CcgError
from ..graph.graph import LocationRoot
from ..model import Definitions
from .codec import NodeBlock
from .indexes import ROW_WIDTHS
from .layout import (AGGREGATION_KINDS, BLOCK_OVERHEAD, block_coding, COMPACT_MAJOR_VERSION, FILE_HEADER,
                     MAJOR_VERSION, NODE_KINDS, ROOTS_COMPLETE_MINOR_VERSION, TRAILER,
                     SectionKind)
from .native import decode_block
from .queries import run_query
from .reader import Archive
from .sections import DirectoryEntry, decode_json, decode_roots
from .tables import decode_checkpoint_table, decode_root_table
from .problems import Problem, kind_name, problem_of
from .verify_blocks import BlockCheck, Defined, block_check
from .verify_nodes import LEDGER_BYTES, SUMMARY_BYTES, NodeSummaries

__all__ = ["Problem", "Walk", "kind_name", "verify"]

#: walks every location's events for the verifier, with the arguments of the query
#: ``verify_walk`` (the default), and gives its levels - or a function giving them, which
#: the verifier calls with a function that takes the checks of node blocks made
#: elsewhere (`verify_blocks.BlockCheck`), before it checks the node blocks no walk
#: decoded (``ccg verify --mpi``: the other ranks walk their shares, checking the blocks
#: they decode)
Walk = Callable[[Archive, dict[int, set[int]], Callable[[int, int, list[Any]], None], int | None, int | None,
                 int | None], Any]

#: the SUMMARY members format 1.2 added (spec 4.5)
_SUMMARY_1_2 = ("peers", "operations", "durations", "open")
#: node blocks decoded ahead of their check (about 1.5 MB each, decoded)
AHEAD_BLOCKS = 4
#: the node blocks the walk decodes ahead (`BlockAhead`): from 1 before to 3 after each one
#: it reads, at most 48 waiting (about 1.5 MB each, decoded), and only those it has not
#: read yet (each block is decoded once)
WALK_AHEAD = (1, 3, 48, False)
#: the checkpoint row lists whose first column is a region
_REGION_ROWS = ("stack", "regions", "durations", "open")


#: called by `verify` with the bytes of node blocks it has checked and the bytes they total
VerifyProgress = Callable[[int, int], None]


def verify(path: str | os.PathLike[str], progress: VerifyProgress | None = None, *,
           walk: Walk | None = None) -> list[Problem]:
    """Check every structural invariant of the archive at ``path``.

    Returns the problems found, in file-offset order (empty for a sound archive). A file
    that cannot be opened at all (bad header, trailer or footer) gives one problem.
    Raises OSError only when the file cannot be read. ``progress`` hears of each node
    block checked (the node blocks are nearly all of a large archive's bytes). ``walk``:
    how every location's events are walked (`Walk`; default the query ``verify_walk`` in
    this process), called once, unless the file cannot be opened.
    """
    try:
        archive = Archive(path)
    except CcgError as error:
        return [problem_of(error, None, 0)]
    with archive:
        return _Verifier(archive, progress, walk).run()


class _Verifier:
    def __init__(self, archive: Archive, progress: VerifyProgress | None = None, walk: Walk | None = None):
        self.archive = archive
        self.progress = progress
        self.walker: Walk = walk or partial(run_query, "verify_walk")
        self.path = archive.path
        self.problems: list[Problem] = []
        #: the sections (a BUNDLE block's members at its offset, in their order)
        self.entries = sorted(archive.sections, key=lambda e: (e.offset, e.member))
        self.definitions: Definitions | None = None
        self.roots: dict[int, LocationRoot] | None = None
        #: the node blocks found sound, and their columns that other blocks' claims are checked against
        self.nodes: NodeSummaries
        #: bytes of the node blocks checked, and of all
        self.node_bytes = (0, 0)
        #: what the walk finds wrong with the checkpoints (problems once the node blocks are sound)
        self.walk_problems: list[Problem] = []
        #: per node block (by offset) whose import table disagrees: the block, the mismatch
        #: of the lowest child and how many
        self.import_mismatches: dict[int, tuple[DirectoryEntry, tuple[int, str], int]] = {}
        #: per index kind, location -> (its block, its checkpoint indexes), for the sound ones
        self.indexed: dict[int, dict[int, tuple[DirectoryEntry, list[int]]]] = {}
        #: per index kind, location -> (its block, its interval, its checkpoints), for the sound ones
        self.contents: dict[int, dict[int, tuple[DirectoryEntry, int, list[dict[str, Any]]]]] = {}
        #: whether the SUMMARY checkpoints have the members of 1.2 (all must, or none)
        self.summary_members: bool | None = None

    def add(self, entry: DirectoryEntry | None, reason: str, offset: int | None = None) -> None:
        kind = None if entry is None else entry.kind
        if offset is None:
            offset = 0 if entry is None else entry.offset
        self.problems.append(Problem(offset, kind, reason))

    def payload(self, entry: DirectoryEntry) -> bytes | None:
        try:
            return self.archive.payload(entry)
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))
            return None

    # ------------------------------------------------------------------ driver

    def run(self) -> list[Problem]:
        self.check_layout()
        by_kind: dict[int, list[DirectoryEntry]] = {}
        for entry in self.entries:
            by_kind.setdefault(entry.kind, []).append(entry)
        # opening checked there is one of each, and one ROOTS or ROOT_TABLE
        parameters = by_kind[SectionKind.PARAMETERS][0]
        roots = (by_kind.get(SectionKind.ROOT_TABLE) or by_kind[SectionKind.ROOTS])[0]
        self.check_definitions(by_kind[SectionKind.DEFINITIONS][0])
        self.check_roots_section(roots)
        node_entries = sorted((e for kind in NODE_KINDS for e in by_kind.get(kind, [])), key=lambda e: e.first)
        self.nodes = NodeSummaries(node_entries, self.decode_again, self.disagreeing_imports, SUMMARY_BYTES,
                                   LEDGER_BYTES)
        self.node_bytes = (0, sum(e.length for e in node_entries))
        # each node block is checked as the reader decodes it: for the roots, in the walk,
        # and then (in id order, decoded ahead) those no walk reached
        self.archive.pool.on_decode = self.check_decoded
        self.check_roots(roots)
        self.check_parameters(parameters)
        self.check_stats(parameters)
        listed: dict[int, set[int]] = {}
        readable = True
        # a 1.3 file's CHECKPOINT_TABLE holds both indexes; readers then ignore the others
        for kind in ((SectionKind.CHECKPOINT_TABLE,) if SectionKind.CHECKPOINT_TABLE in by_kind
                     else (SectionKind.SNAPSHOTS, SectionKind.SUMMARY)):
            seen = listed[kind] = set()
            for entry in by_kind.get(kind, []):
                readable = self.check_index(entry, seen) and readable
        if readable and any(listed.values()):
            self.check_indexes_agree(listed, by_kind)
        self.archive.pool.decode_ahead(*WALK_AHEAD)
        walked = self.walk(readable and any(listed.values()), by_kind)
        self.archive.pool.on_decode = None
        if callable(walked):  # finished here: it hands over the blocks the other walks checked
            try:
                walked = walked(self.checked_elsewhere)
            except Exception as error:
                walked = error
        unchecked = [entry for entry in node_entries if not self.nodes.checked(entry)]
        for entry, decoded in read_ahead(self.decoded(unchecked), depth=AHEAD_BLOCKS):
            self.check_nodes(entry, decoded)
        self.nodes.settle()
        for entry, (_, first), count in self.import_mismatches.values():
            more = f" (and {count - 1} more)" if count > 1 else ""
            self.add(entry, f"import table disagrees with an earlier block: {first}{more}")
        walked = self.walk_results(walked)
        aggregation = self.read_tables(by_kind, AGGREGATION_KINDS, "aggregation_tables")
        if aggregation is not None:
            self.check_aggregation(*aggregation, walked.aggregation if walked else None)
        metric = self.read_tables(by_kind, (SectionKind.METRIC_LEVEL,), "metric_tables")
        if metric is not None:
            self.check_metric_tables(*metric, walked.metrics if walked else None)
        handled = {int(kind) for kind in SectionKind}
        for entry in self.entries:
            if entry.kind not in handled or entry.kind == SectionKind.FOOTER:
                self.payload(entry)  # optional sections unknown here: framing and CRC only
        self.problems.sort(key=lambda p: p.offset)
        return self.problems

    # ------------------------------------------------------------------ aggregation tables

    def read_tables(self, by_kind: dict[int, list[DirectoryEntry]], kinds: tuple[SectionKind, ...],
                    name: str) -> tuple[DirectoryEntry, Any] | None:
        """The first block of ``kinds`` and the archive's tables ``name`` it starts, when the
        file has them and they read (a problem reported, None, when not)."""
        entries = [entry for kind in kinds for entry in by_kind.get(kind, [])]
        if not entries:
            return None
        entry = entries[0]
        try:
            return entry, getattr(self.archive, name)
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))
            return None

    def quiet_tables(self, by_kind: dict[int, list[DirectoryEntry]], kinds: tuple[SectionKind, ...], name: str) -> Any:
        """The tables `read_tables` gives, without reporting a problem (None then)."""
        try:
            return getattr(self.archive, name) if any(by_kind.get(kind) for kind in kinds) else None
        except CcgError:
            return None

    def walk(self, indexed: bool, by_kind: dict[int, list[DirectoryEntry]]) -> Any:
        """Walk every location's events once (`walker`, the query ``verify_walk``): compare the
        rebuilt checkpoints as they come (`check_index_contents`), and keep the
        aggregation and metric levels the tables are compared with where they come from
        the events (None where they do not; the tables' checks then ask their queries).
        The node blocks are checked as the walk decodes them, so what it finds counts
        only once they are known to be sound (`walk_results`). Returns the levels, or
        the exception the walk raised."""
        intervals: dict[int, set[int]] = {}
        if indexed:
            for _, by_location in sorted(self.contents.items()):
                for location, (_, interval, _) in by_location.items():
                    intervals.setdefault(location, set()).add(interval)
        # the tables are compared only while no problem is known (`check_aggregation`)
        tables = [None if self.problems else self.quiet_tables(by_kind, kind, name) for kind, name in (
            (AGGREGATION_KINDS, "aggregation_tables"), ((SectionKind.METRIC_LEVEL,), "metric_tables"))]
        try:
            return self.walker(self.archive, intervals, self.check_index_contents,
                               None if tables[0] is None else len(tables[0].levels),
                               None if tables[1] is None else tables[1].levels[0].finest,
                               None if tables[0] is None or tables[0].sliced is None else tables[0].sliced.slices)
        except Exception as error:  # a damaged node block's doing, or not: `walk_results` tells
            return error

    def walk_results(self, walked: Any) -> Any:
        """What the walk found, once every node block is checked: nothing if one is
        damaged (the events cannot be rebuilt; the node blocks' problems say why), else
        the checkpoint problems it found and its levels (None when it raised a `CcgError`
        or KeyError, which the checks of the roots report)."""
        if any(problem.kind in NODE_KINDS for problem in self.problems):
            return None
        self.problems += self.walk_problems
        if isinstance(walked, (CcgError, KeyError)):
            return None
        if isinstance(walked, BaseException):
            raise walked
        return walked

    def check_index_contents(self, location: int, interval: int, rebuilt: list[Any]) -> None:
        """Spec 4.4, 4.5: what each checkpoint holds (time, stack, metrics, sums, `open`,
        ...) is what the events the reader rebuilds give, by the writer's own count
        (`indexes.checkpoints`, ``rebuilt`` every ``interval`` events of ``location``);
        the first member of a location that differs is reported."""
        points = [{**point.snapshot_json(), **point.summary_json()} for point in rebuilt]
        for _, by_location in sorted(self.contents.items()):
            entry, stored_interval, stored = by_location.get(location, (None, None, None))
            if entry is None or stored_interval != interval:
                continue
            reason = _first_difference(stored, points)
            if reason:
                self.walk_problems.append(Problem(
                    entry.offset, entry.kind, f"location {location}: {reason} (spec 4.4, 4.5: a checkpoint "
                                              f"describes the events a reader rebuilds)"))

    # ------------------------------------------------------------------ aggregation tables

    def check_aggregation(self, entry: DirectoryEntry, tables: Any, walked: list[Any] | None) -> None:
        """The pyramid (spec 4.10) and the level of any slice count (4.10.3) are sound, equal
        the times the graph gives at every level (``walked`` when the walk made them), and
        level 0 equals the exclusive times of the summary index's final checkpoints."""
        if tables is None or self.problems:  # the graph or the indexes are damaged: compared with nothing sound
            return
        sliced = tables.sliced.slices if tables.sliced is not None else None
        expected = walked if walked is not None else run_query("aggregation_levels", self.archive, len(tables.levels),
                                                               sliced)
        stored = tables.levels + ((tables.sliced,) if tables.sliced is not None else ())
        for level, computed in itertools.zip_longest(stored, expected):
            values = None if computed is None else computed[3]
            if level is None or values is None or level.states != values.shape[2] \
                    or not np.array_equal(level.dense(), values):
                name = f"level {computed[0]}" if level is None else f"level {level.level}" if level.level >= 0 \
                    else f"level of {level.slices} slices"
                self.add(entry, f"aggregation {name} differs from the times of the graph")
                return
        hierarchy = self.archive.hierarchy
        whole = tables.levels[0].dense()[:, 0, :]
        leaves = np.flatnonzero(hierarchy.stop_leaf - hierarchy.first_leaf == 1)
        for node in leaves[np.isin(leaves, hierarchy.parents, invert=True)].tolist():
            location = int(hierarchy.leaf_locations[hierarchy.first_leaf[node]])
            final = self.archive.checkpoints(SectionKind.SUMMARY, location)
            if not final:
                continue  # a file without an index (spec 4.8); one with an index lists every location
            summary = np.zeros(tables.states, np.int64)
            for row in final[-1]["regions"]:
                if 0 <= row[0] < tables.states:
                    summary[row[0]] += row[3]
            if not np.array_equal(summary, whole[node]):
                self.add(entry, f"aggregation level 0 differs from the summary index at location {location}")
                return

    def check_metric_tables(self, entry: DirectoryEntry, tables: Any, walked: list[Any] | None) -> None:
        """The metric pyramid (spec 4.11) is sound and equals, bit for bit, the integrals the
        graph gives at its finest level (``walked`` when the walk made them) and their
        pairwise sums."""
        if tables is None or self.problems:
            return
        expected = walked if walked is not None else run_query("metric_levels", self.archive, tables.levels[0].finest)
        for level, computed in zip(tables.levels, expected):
            if not np.array_equal(level.dense(), computed.dense(), equal_nan=True):
                self.add(entry, f"metric level {level.level} differs from the integrals of the graph")
                return

    # ------------------------------------------------------------------ framing

    def check_layout(self) -> None:
        """Blocks tile the data area: no overlap and no bytes the footer does not list. A
        file in the compact layout (spec 2.7) has no blocks: its body is its bundle."""
        if self.archive.version[0] == COMPACT_MAJOR_VERSION:
            return
        size = self.archive.file_bytes
        footer_length, _ = TRAILER.unpack_from(self.archive._storage.map, size - TRAILER.size)
        footer_offset = size - TRAILER.size - footer_length
        position = FILE_HEADER.size
        for entry in sorted(self.archive.directory, key=lambda e: e.offset):
            if entry.kind == SectionKind.FOOTER:
                self.add(entry, "the footer lists a FOOTER block")
            if entry.offset < position:
                self.add(entry, f"block overlaps the bytes before {position}")
            elif entry.offset > position:
                self.add(None, f"{entry.offset - position} bytes are not part of any block the footer lists",
                         offset=position)
            position = max(position, entry.offset + BLOCK_OVERHEAD + entry.length)
        if position < footer_offset:
            self.add(None, f"{footer_offset - position} bytes before the footer are not part of any block "
                           f"the footer lists", offset=position)

    # ------------------------------------------------------------------ metadata

    def check_definitions(self, entry: DirectoryEntry) -> None:
        if self.payload(entry) is None:
            return
        try:
            self.definitions = self.archive.definitions
            self.definitions.extensions  # an EXTENSION_TABLE is decoded when first used
        except CcgError as error:  # in DEFINITIONS, its LOCATION_TABLE (1.3) or EXTENSION_TABLE (1.4)
            found = next((e for e in self.entries if e.offset == getattr(error, "offset", None)), entry)
            self.problems.append(problem_of(error, found.kind, found.offset))

    def check_parameters(self, entry: DirectoryEntry) -> None:
        if self.payload(entry) is None:
            return
        try:
            parameters = self.archive.parameters
            self.archive.params
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))
            return
        metrics = parameters.get("metrics")
        values = {}
        for name in ("N", "n", "M", "m"):
            value = metrics.get(name) if isinstance(metrics, dict) else None
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                self.add(entry, f"build metric {name} is missing or not a non-negative integer")
                return
            values[name] = value
        nodes = len(self.archive.pool)
        if values["n"] != nodes:
            self.add(entry, f"build metric n = {values['n']} but the node blocks hold {nodes} nodes")
        if values["N"] < values["n"] or values["M"] < values["m"]:
            self.add(entry, "build metrics say the compressed graph is larger than the uncompressed one")
        interval = parameters.get("checkpoint_interval")
        if interval is not None and (not isinstance(interval, int) or isinstance(interval, bool) or interval < 1):
            self.add(entry, f"checkpoint_interval {interval!r} is not a positive integer")

    def check_stats(self, entry: DirectoryEntry) -> None:
        """`Archive.stats` works once the parameters and roots are sound."""
        if self.roots is None or any(p.kind in (SectionKind.PARAMETERS, SectionKind.ROOTS, SectionKind.ROOT_TABLE)
                                     for p in self.problems):
            return
        try:
            self.archive.stats
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))

    def check_roots_section(self, entry: DirectoryEntry) -> None:
        raw = self.payload(entry)
        if raw is None:
            return
        try:
            decode = decode_root_table if entry.kind == SectionKind.ROOT_TABLE else decode_roots
            self.roots = decode(raw, self.path, entry.offset)
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))
            return
        if entry.count != len(self.roots):
            self.add(entry, f"the footer says {entry.count} roots, the section holds {len(self.roots)}")
        if self.definitions is not None and self.archive.version >= (MAJOR_VERSION, ROOTS_COMPLETE_MINOR_VERSION):
            defined = len(self.definitions.locations)
            for locations, what in (([loc for loc in range(defined) if loc not in self.roots], "have no root"),
                                    ([loc for loc in self.roots if loc >= defined], "are not defined")):
                if locations:
                    self.add(entry, f"locations {', '.join(map(str, locations[:5]))}"
                                    f"{' ...' if len(locations) > 5 else ''} {what} ({defined} defined; since "
                                    f"format 1.3 the roots list every defined location and only those)")

    def check_roots(self, entry: DirectoryEntry) -> None:
        """Every root names an existing node whose event count and duration it repeats."""
        if self.roots is None:
            return
        nodes = len(self.archive.pool)
        for location, root in sorted(self.roots.items()):
            if not 0 <= root.root < nodes:
                self.add(entry, f"location {location}: root node {root.root} is outside the {nodes} nodes")
                continue
            try:
                self.archive.pool.block_of(root.root)  # decoded (and checked: `check_decoded`) if it was not
            except CcgError:
                pass  # reported by the check of its block
            found = self.nodes.node(root.root)
            if found is None:
                continue  # its block is damaged; already reported there
            events, total = found
            if events != root.events:
                self.add(entry, f"location {location}: {root.events} events listed, its root node "
                                f"{root.root} holds {events}")
            if root.end != root.start + total:
                self.add(entry, f"location {location}: end {root.end} is not start {root.start} + the "
                                f"root node's duration {total}")

    # ------------------------------------------------------------------ nodes

    def decode_again(self, entry: DirectoryEntry) -> NodeBlock | None:
        """A node block that decoded before, decoded again (None if it no longer reads)."""
        try:
            return decode_block(self.archive.payload(entry), self.path, entry.offset, **block_coding(entry.kind))
        except CcgError:
            return None

    def disagreeing_imports(self, entry: DirectoryEntry, mismatches: list[tuple[int, str]]) -> None:
        """Count a node block's disagreeing import claims, keeping that of the lowest child."""
        lowest = min(mismatches)
        _, first, count = self.import_mismatches.get(entry.offset, (entry, lowest, 0))
        self.import_mismatches[entry.offset] = (entry, min(first, lowest), count + len(mismatches))

    def decoded(self, entries: list[DirectoryEntry]) -> Iterator[tuple[DirectoryEntry, NodeBlock | CcgError]]:
        """Each node block decoded, or why its bytes or its encoding do not read (run
        ahead of `check_nodes` in a thread of its own)."""
        for entry in entries:
            try:
                yield entry, decode_block(self.archive.payload(entry), self.path, entry.offset,
                                          **block_coding(entry.kind))
            except CcgError as error:
                yield entry, error

    def check_decoded(self, entry: DirectoryEntry, block: NodeBlock) -> None:
        """A node block the reader decoded (for the roots or the walk, in its thread),
        checked the first time."""
        if not self.nodes.checked(entry):
            self.check_nodes(entry, block)

    def check_nodes(self, entry: DirectoryEntry, block: NodeBlock | CcgError) -> None:
        self.take_check(block_check(entry, block, self.key_counts))

    def checked_elsewhere(self, check: BlockCheck) -> None:
        """A node block checked on its own by another rank's walk (``ccg verify --mpi``),
        taken unless this process checked it already or its keys were checked against
        other definitions than these (it is then decoded here)."""
        if not self.nodes.checked(check.entry) and check.defined == self.key_counts:
            self.take_check(check)

    def take_check(self, check: BlockCheck) -> None:
        """A node block checked on its own (`verify_blocks.block_check`, here or
        elsewhere): its problems, and its import claims checked against the other blocks
        (`NodeSummaries`)."""
        entry = check.entry
        self.problems += check.problems
        if check.summary is None or check.imports is None:
            self.nodes.damaged(entry)
        else:
            self.nodes.check_imports(entry, check.imports)
            self.nodes.add(entry, check.summary)
        done, total = self.node_bytes
        self.node_bytes = done + entry.length, total
        if self.progress is not None:
            self.progress(*self.node_bytes)

    @property
    def key_counts(self) -> Defined | None:
        """What node keys are checked against: None while the definitions are unknown."""
        return None if self.definitions is None else Defined.of(self.definitions)

    # ------------------------------------------------------------------ indexes

    def check_index(self, entry: DirectoryEntry, seen: set[int]) -> bool:
        """A SNAPSHOTS, SUMMARY or CHECKPOINT_TABLE block: per location, checkpoints every
        `interval` events with increasing indexes in [1, events], the last one at the end;
        False when the block cannot be read as such at all."""
        raw = self.payload(entry)
        if raw is None:
            return False
        name = kind_name(entry.kind)
        try:
            if entry.kind == SectionKind.CHECKPOINT_TABLE:
                interval, table = decode_checkpoint_table(raw, self.path, entry.offset)
                document = {"interval": interval,
                            "locations": [{"location": location, "checkpoints": points} for location, points in table]}
                if table and table[0][0] != entry.first:
                    self.add(entry, f"the footer says the block starts at location {entry.first}, it starts at "
                                    f"{table[0][0]}")
            else:
                document = decode_json(raw, name, self.path, entry.offset)
        except CcgError as error:
            self.problems.append(problem_of(error, entry.kind, entry.offset))
            return False
        if not isinstance(document, dict) or not isinstance(document.get("locations"), list):
            self.add(entry, "not an object with a 'locations' list")
            return False
        interval = document.get("interval")
        if not _is_int(interval) or interval < 1:
            self.add(entry, f"interval {interval!r} is not a positive integer")
            interval = None
        items = document["locations"]
        if entry.count != len(items):
            self.add(entry, f"the footer says {entry.count} locations, the block lists {len(items)}")
        for item in items:
            if not isinstance(item, dict) or not _is_int(item.get("location")) \
                    or not isinstance(item.get("checkpoints"), list):
                self.add(entry, "a location entry is not an object with an integer 'location' and a "
                                "'checkpoints' list")
                continue
            location = item["location"]
            if location < entry.first:
                self.add(entry, f"location {location} is listed in a block the footer says starts at "
                                f"location {entry.first}: readers will not find it")
            if location in seen:
                self.add(entry, f"location {location} is listed twice")
            seen.add(location)
            reason = self.check_checkpoints(location, item["checkpoints"], interval, entry.kind)
            if reason:
                self.add(entry, f"location {location}: {reason}")
            elif self.roots is not None:
                self.indexed.setdefault(entry.kind, {})[location] = \
                    (entry, [point["index"] for point in item["checkpoints"]])
                if interval is not None:
                    self.contents.setdefault(entry.kind, {})[location] = (entry, interval, item["checkpoints"])
        return True

    def check_indexes_agree(self, listed: dict[int, set[int]], by_kind: dict[int, list[DirectoryEntry]]) -> None:
        """What the queries read together: every location in both indexes, at the same events."""
        if self.roots is None:
            return
        for kind, seen in listed.items():
            missing = sorted(set(self.roots) - seen)
            if missing:
                blocks = by_kind.get(kind)
                self.add(blocks[0] if blocks else None,
                         f"no {kind_name(kind)} checkpoints for location{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(str, missing[:5]))}{' ...' if len(missing) > 5 else ''} "
                         f"(the queries read both indexes of every location)")
        snapshots = self.indexed.get(SectionKind.SNAPSHOTS, {})
        for location, (entry, indexes) in sorted(self.indexed.get(SectionKind.SUMMARY, {}).items()):
            if location in snapshots and snapshots[location][1] != indexes:
                self.add(entry, f"location {location}: the SUMMARY checkpoints are at other events than the "
                                f"SNAPSHOTS checkpoints")

    def check_checkpoints(self, location: int, checkpoints: list[Any], interval: int | None,
                          kind: int) -> str | None:
        if self.roots is None:
            return None
        root = self.roots.get(location)
        if root is None:
            return "no such location in the roots section"
        if not checkpoints:
            return "no checkpoints (the final one at the end is required)"
        events = root.events
        previous_index, previous_time = 0, root.start
        for k, point in enumerate(checkpoints):
            if not isinstance(point, dict) or not _is_int(point.get("index")) or not _is_int(point.get("time")):
                return f"checkpoint {k} lacks an integer index or time"
            index, time = point["index"], point["time"]
            if events and not previous_index < index <= events:
                return (f"checkpoint {k} has index {index}, outside ({previous_index}, {events}]"
                        if index > previous_index else
                        f"checkpoint indexes do not increase ({previous_index} then {index})")
            if not events and index != 0:
                return f"checkpoint {k} has index {index}, but the location has no events"
            last = k == len(checkpoints) - 1
            if interval is not None and not last and index != (k + 1) * interval:
                return f"checkpoint {k} has index {index}, expected {(k + 1) * interval} (interval {interval})"
            if not previous_time <= time <= root.end:
                return (f"checkpoint {k} has time {time}, outside [{previous_time}, {root.end}] "
                        f"(times must not decrease and lie within the location's time range)")
            for member, width in ROW_WIDTHS.items():
                rows = point.get(member, [])
                if not isinstance(rows, list) or not all(
                        isinstance(row, list) and len(row) == width and all(map(_is_int, row)) for row in rows):
                    return f"checkpoint {k}: '{member}' is not a list of {width}-integer rows"
                defined = self.defined(member)
                if defined is not None and any(not 0 <= row[0] < defined[1] for row in rows):
                    return f"checkpoint {k}: '{member}' names a {defined[0]} that is not defined"
            if kind != SectionKind.SNAPSHOTS:
                present = [member in point for member in _SUMMARY_1_2]
                if any(present) != all(present) or self.summary_members not in (None, all(present)):
                    return (f"checkpoint {k} {'has' if any(present) else 'lacks'} members of format 1.2 "
                            f"({', '.join(_SUMMARY_1_2)}), which every SUMMARY checkpoint must have, or none")
                self.summary_members = all(present)
            previous_index, previous_time = index, time
        if previous_index != events:
            return f"the last checkpoint is at index {previous_index}, not at the location's {events} events"
        return None

    def defined(self, member: str) -> tuple[str, int] | None:
        """What the first column of a checkpoint row list ``member`` names, and how many are
        defined (None: nothing the definitions bound, or no definitions)."""
        if self.definitions is None:
            return None
        if member in _REGION_ROWS:
            return "region", len(self.definitions.regions)
        if member == "metrics":
            return "metric", len(self.definitions.metrics)
        return None


def _plain(value: Any) -> Any:
    """``value`` with its sequences as lists, for comparing stored and rebuilt members."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item) for item in value]
    return int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value


def _first_difference(stored: list[dict[str, Any]], rebuilt: list[dict[str, Any]]) -> str | None:
    """Where the stored checkpoints of a location first differ from the rebuilt ones (the
    members the stored ones hold; their indexes are checked before), or None."""
    if len(stored) != len(rebuilt):
        return f"{len(stored)} checkpoints, the rebuilt events give {len(rebuilt)}"
    for k, (point, expected) in enumerate(zip(stored, rebuilt)):
        for member in sorted(point):
            if member in expected and _plain(point[member]) != expected[member]:
                return (f"checkpoint {k}: '{member}' is {_short(_plain(point[member]))}, the rebuilt events give "
                        f"{_short(expected[member])}")
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
