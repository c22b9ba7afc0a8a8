"""The streaming, atomic .ccg writer (spec/format.md; dissertation 4.6 serialization).

Nodes are written bottom-up in id order, which is the order the builder finalizes them,
so node blocks can leave as soon as they fill while the builder goes on: memory is
bounded by the node pool, never by the event count. The file is written under a
temporary name in the target's folder, flushed to disk and renamed at the end
(`ccgformat.atomic`); a failure leaves no file under the target name.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Iterator

import numpy as np

from .._version import __version__
from ..ahead import locations_ahead
from ..atomic import AtomicOutput
from ..backends import native as native_backend
from ..bulkstep import bulk_step
from ..graph.graph import Graph, LocationRoot, root_columns
from ..graph.pool import NodePool
from ..graph.walk import LocationWalker
from ..model import Definitions, EventBatch, LocationItem, LocationRun, location_pairs
from ..params import Params
from .blocks import compress, frame_block, frame_compact
from .compression import CompressionQueue, Level, Recompressed, default_threads
from .indexes import INDEX_NODES_PER_LOCATION, Checkpoint, checkpoints, recorder
from .jsontable import encode_json_table
from . import primed_lzma
from .bundle import ZSTD_DICTIONARIES, compress_with_dictionary, encode_bundle
from .defaults import PARAMETERS as PARAMETER_DEFAULTS, strip_definitions, strip_parameters
from .layout import (AGGREGATION_MINOR_VERSION, BLOCK_OVERHEAD, CODED_GAPS_MINOR_VERSION, CODED_SOFT_MINOR_VERSION,
                     COMPACT_SLICES_MINOR_VERSION,
                     DICTIONARY_BUNDLE_MINOR_VERSION,
                     DIRECTORY_ENTRY,
                     END_MAGIC, EXTENSION_TABLE_MINOR_VERSION,
                     EXTENSIONS_MINOR_VERSION, FILE_HEADER, MAGIC, MAJOR_VERSION, PREDICTED_NODES_MINOR_VERSION,
                     PRIMED_LZMA_MINOR_VERSION, ROOTS_COMPLETE_MINOR_VERSION,
                     SLICES_MINOR_VERSION, SUMMARY_MINOR_VERSION, TABLES_MINOR_VERSION, TRAILER, NODE_KINDS, BlockFlags,
                     SectionKind,
                     largest_raw_length)
from .codec import METRIC_CELL_LIMIT, STREAM_HEADER, stream_bytes
from .aggregation import SLICES, encode_level
from .metric_tables import encode_metric_level
from .queries import run_query
from .read_back import read_back
from .samples import MetricSamples
from .native import builder as make_builder, node_encoder, walker as location_walker
from .sections import DirectoryEntry, encode_directory, encode_json, encode_roots
from .checkpoint_columns import CheckpointColumns
from .groups import SmallLocations, add_empty_locations, add_graph_locations
from .tables import encode_checkpoint_columns, encode_root_table, split_definitions

#: zstd level of every block by default: the other blocks are written once per file, and
#: the strongest levels pay off on large definitions (a Chrome trace's file: 26% larger all
#: at 15)
DEFAULT_LEVEL = 19
#: the node blocks are compressed by default with level 19's parameters for their size but
#: this shorter search (search_log, target_length), those it shrinks more than
#: `compression.STRONG_RATIO` times with level 19's own too if smaller: every trace
#: measured stays within 2% of its file size at level 19 (at most +1.1%), at 0.64 of its
#: zstd time (docs/compression.md, `tools/bench.py levels` and `archive`)
DEFAULT_NODES_SEARCH = (4, 32)
#: the default zstd level of the aggregation and metric tables (spec 4.10, 4.11) that are
#: not bundled: their payloads repeat themselves so much (20,000 ranks: 2.2 MB per level,
#: 300 bytes stored) that level 19's search took 0.07 s of a 2.2 s conversion for 0.5% of
#: their bytes (bundled tables are compressed with the bundle, at the writer's level)
DEFAULT_TABLES_LEVEL = 9
DEFAULT_CHECKPOINT_INTERVAL = 65536
#: node ids per node block: larger blocks import fewer children from earlier ones and give
#: zstd and the gap coder more context, while a cold event(i) decodes a block or two: at
#: 8,192 nodes a CODED_NODES block takes about 1 ms (docs/compression.md, "Node blocks")
DEFAULT_NODES_PER_BLOCK = 8192
LOCATIONS_PER_INDEX_BLOCK = 64
#: How node blocks store the children that are not fresh (spec 5.7): "ids" (NODES
#: blocks), "predicted" (PREDICTED_NODES blocks) or "auto" (per block the one whose
#: child reference stream compresses smaller, NODES on a tie; without the tables, the
#: layout for older readers, always NODES).
REFERENCE_CODINGS = ("auto", "ids", "predicted")
#: How node blocks store their gaps (spec 5.8): "plain" (byte planes), "coded" (range
#: coded, in CODED_NODES blocks, format 1.6, and their soft values too where that is
#: smaller, CODED_SOFT_NODES, 1.7) or "auto" (per block the smallest, see
#: `Writer._node_block`; without the tables or with references "ids", always plain).
GAP_CODINGS = ("auto", "plain", "coded")
#: whether a writer writes the checkpoint index of every file ("always") or leaves it out
#: where no query would read it ("auto": a graph of at most `INDEX_NODES_PER_LOCATION` nodes)
INDEX_CHOICES = ("auto", "always")
#: "auto" compares the two child reference streams compressed at this zstd level (or
#: the writer's, if lower): nearly the same choice as at level 19, at a fraction of its time.
CHOICE_LEVEL = 3
#: checkpoints that fill a CHECKPOINT_TABLE block (a location's are never split)
CHECKPOINTS_PER_TABLE_BLOCK = 4096
#: JSON (or a raw extension table) of this size or more is not tried as DEFINITIONS
JSON_TRIAL_BYTES = 1 << 20
#: The aggregation tables take at most this share of the bytes written before them (the
#: graph and its indexes); level 0 is written whatever its size (spec 4.10). 2% keeps the
#: archive within 2% of its graph alone (a jittered 1M-event trace then gets 64 slices
#: at every node, a 10M-event one more), where 10% cost a jittered trace
#: 9% of its bytes for levels that the graph answers in milliseconds when warm.
AGGREGATION_BUDGET = 0.02
#: LOCATION_TABLE bytes (before compression) up to which the whole DEFINITIONS in JSON
#: is tried as well (about 1,200 locations of regular names)
WHOLE_DEFINITIONS_TRIAL = 16384
#: a DEFINITIONS layout is compressed at the writer's level only when its blocks take at
#: most this many times the smallest layout's at CHOICE_LEVEL: the others do not win, and
#: at 1,000 OTF2 ranks the extensions in JSON (181 KB, 7 times the tables' bytes) took half
#: of the conversion at level 19
LAYOUT_TRIAL_MARGIN = 2
#: the sections written last are tried in one DICTIONARY_BUNDLE block while their raw payloads
#: total less than this (256 KiB): beyond, the framing they would save is noise, and a reader
#: decodes a bundle when it opens the file
BUNDLE_RAW_BYTES = 1 << 18


def nodes_level(level: int | None = None) -> Level:
    """How a writer of zstd ``level`` (None: its default) compresses the node blocks."""
    return Level(DEFAULT_LEVEL if level is None else level, DEFAULT_NODES_SEARCH if level is None else None)


#: a block of definitions kept as another file stores it: its kind, raw payload and, when
#: known, its zstd frame as this writer compresses it
KeptBlock = tuple[SectionKind, bytes, bytes | None]


def extension_table(extensions: dict[str, Any], level: int | None = None) -> KeptBlock:
    """The EXTENSION_TABLE block of ``extensions`` (spec 4.9) and its frame as a writer of
    zstd ``level`` (None: its default) compresses it: what `Writer.keep_definitions`
    adds when the definitions kept leave the extensions out."""
    raw = encode_json_table(extensions)
    return SectionKind.EXTENSION_TABLE, raw, Level(DEFAULT_LEVEL if level is None else level).compress(raw)


class Writer:
    """Writes one archive. Use as a context manager; `finish` makes the file appear.

    With ``tables`` (the default) the per-location sections are the columnar tables of
    format 1.3; without, they are ROOTS, the JSON SNAPSHOTS and SUMMARY and the whole
    DEFINITIONS in JSON, which readers of 1.0-1.2 read too.

    ``level``: the zstd level of every block; None (the default) compresses every block at
    DEFAULT_LEVEL, the node blocks with its shorter search DEFAULT_NODES_SEARCH (see
    `compression.Level`) and the aggregation and metric tables that are not bundled at
    DEFAULT_TABLES_LEVEL.
    ``threads``: how many
    threads compress blocks (default: the cores available); the file is the same for any.
    ``references``: one of `REFERENCE_CODINGS`; ``gaps``: one of `GAP_CODINGS`. With ``tables``, the file also holds the
    aggregation pyramid (format 1.4) unless ``aggregation`` is None: its levels k = 0, 1,
    ... while they take at most that share of the bytes written before them (default
    `AGGREGATION_BUDGET`; none when level 0 does not fit), and after them, within that
    budget, the level of ``slices`` slices (format 1.8, spec 4.10.3; None: none).
    ``bundle`` (with the
    tables): the blocks `finish` makes go in one DICTIONARY_BUNDLE block when that is smaller
    (format 1.5); with ``compact`` too (the default), a file that bundle holds whole is
    written in the compact layout, format 2.0 (spec 2.7), which 1.x readers refuse.
    ``metrics``: how many metrics the trace defines; with any, a node block
    ends early where the reader's limit on its metrics times its nodes and child
    references (spec 7) could be passed. ``index`` (`INDEX_CHOICES`): "auto" leaves the
    checkpoints out of a file whose graph holds at most `INDEX_NODES_PER_LOCATION` nodes
    (no query reads them there; spec 4.8), "always" writes them. ``encoded_extensions``:
    gives `extension_table` of the definitions' extensions at this writer's ``level``,
    called once when `finish` writes the definitions (another process may encode and
    compress them meanwhile: docs/parallel.md); the file is the same.
    """

    def __init__(self, path: str | os.PathLike[str], *, level: int | None = None,
                 checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                 nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True,
                 threads: int | None = None, references: str = "auto", gaps: str = "auto",
                 aggregation: float | None = AGGREGATION_BUDGET, bundle: bool = True, compact: bool = True,
                 metrics: int = 0, index: str = "auto", slices: int | None = SLICES,
                 encoded_extensions: Callable[[], KeptBlock] | None = None):
        if index not in INDEX_CHOICES:
            raise ValueError(f"index must be one of {', '.join(INDEX_CHOICES)}, got {index!r}")
        if level is not None and not 1 <= level <= 22:
            raise ValueError(f"zstd level must be in 1..22, got {level}")
        if references not in REFERENCE_CODINGS:
            raise ValueError(f"references must be one of {', '.join(REFERENCE_CODINGS)}, got {references!r}")
        if gaps not in GAP_CODINGS:
            raise ValueError(f"gaps must be one of {', '.join(GAP_CODINGS)}, got {gaps!r}")
        if gaps == "coded" and (references == "ids" or not tables):
            raise ValueError("coded gaps need CODED_NODES blocks: references other than 'ids', and the tables")
        if checkpoint_interval < 1 or nodes_per_block < 1:
            raise ValueError("checkpoint_interval and nodes_per_block must be positive")
        self.path = Path(path)
        #: the level of the NODES blocks, as PARAMETERS records it
        self.level = DEFAULT_LEVEL if level is None else level
        self._nodes_level = nodes_level(level)
        self._other_level = Level(self.level)
        self._tables_level = Level(DEFAULT_TABLES_LEVEL if level is None else level)
        self.checkpoint_interval = checkpoint_interval
        self.index = index
        self.nodes_per_block = nodes_per_block
        self.metrics = metrics
        self._kept_definitions: list[tuple[SectionKind, bytes]] | None = None
        self._later_definitions: Callable[[], KeptBlock] | None = None
        self._encoded_extensions = encoded_extensions
        self.tables = tables
        self.bundle = bundle and tables  # the layout for older readers has no bundles
        self.compact = compact and self.bundle
        self._queue: CompressionQueue[tuple[SectionKind, bool, int, int]] = \
            CompressionQueue(default_threads() if threads is None else threads)
        self.references = references
        self._node_kinds: set[SectionKind] = set()  # the kinds of the node blocks written
        self.gaps = gaps
        self.aggregation = aggregation if tables else None
        self.slices = slices
        self._aggregated = False
        self._output = AtomicOutput(self.path)
        try:
            self._file = open(self._output.path, "wb")
        except BaseException:
            self._output.discard()
            self._queue.close()
            raise
        self._directory: list[DirectoryEntry] = []
        self._nodes_written = 0
        self._largest_block = 0  # the most nodes a node block written holds
        self._encoder = node_encoder()
        self._indexes: list[tuple[int, list[Checkpoint]]] = []
        self._columns: list[CheckpointColumns] = []  # locations of `add_location_columns` not yet written
        self._summaries = False  # whether a SUMMARY block (with the members of 1.2) was written
        self._extension_table = False  # whether a feature of 1.4 (an EXTENSION_TABLE) was written
        self._bundle = False  # whether a DICTIONARY_BUNDLE block (1.5) was written
        self._sliced = False  # whether an AGGREGATE_SLICES block (1.8) was written
        #: its raw payload and frame, for the body of a file in the compact layout
        self._bundle_raw, self._bundle_frame = b"", b""
        #: while `finish` runs with the tables: the blocks it makes, kept to be tried as a bundle
        self._deferred: list[tuple[SectionKind, bytes, bool, int, int, bytes | None]] | None = None
        self._pending_checkpoints = 0
        #: the last CHECKPOINT_TABLE block of `add_checkpoint_columns` while it holds fewer
        #: than CHECKPOINTS_PER_TABLE_BLOCK checkpoints
        self._held_columns: CheckpointColumns | None = None
        self._offset = 0
        #: the graph read back from the node blocks written (`read_back`), and their storage
        self._read_back: tuple[Graph, Any] | None = None
        self._emit(FILE_HEADER.pack(MAGIC, MAJOR_VERSION, 0, 0))

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        if not self._file.closed:
            self.abort()

    def _emit(self, data: bytes) -> None:
        self._file.write(data)
        self._offset += len(data)

    def _stored(self, raw: bytes, compressed: bytes) -> tuple[bytes, BlockFlags]:
        """The payload as a block stores it, and whether compressed."""
        if len(raw) > largest_raw_length(len(compressed), TABLES_MINOR_VERSION if self.tables else 0):
            return raw, BlockFlags(0)
        return compressed, BlockFlags.ZSTD

    def _block(self, kind: SectionKind, raw: bytes, *, must_understand: bool, first: int = 0,
               count: int = 0, compressed: bytes | None = None, level: Recompressed | None = None) -> None:
        """Queue a block; it is written once it and the blocks before it are compressed
        (in `finish`, once the writer has chosen whether to bundle it), at ``level`` if
        given (a node block, never one of those `finish` makes), else its kind's."""
        if self._deferred is not None:
            self._deferred.append((kind, raw, must_understand, first, count, compressed))
            return
        self._queue.put((kind, must_understand, first, count), raw, level or self._level_of(kind), compressed)
        self._write_ready()

    def _level_of(self, kind: SectionKind) -> Level:
        return self._nodes_level if kind in NODE_KINDS else self._other_level

    def _write_deferred(self) -> None:
        """Write the blocks `finish` made: in one DICTIONARY_BUNDLE block when their raw
        payloads total less than BUNDLE_RAW_BYTES and that makes the file smaller, else each
        alone."""
        deferred, self._deferred = self._deferred or [], None
        if len(deferred) > 1 and sum(len(item[1]) for item in deferred) < BUNDLE_RAW_BYTES:
            alone = sum(BLOCK_OVERHEAD + DIRECTORY_ENTRY.size + len(self._stored(
                raw, compressed or self._level_of(kind).compress(raw))[0])
                for kind, raw, _, _, _, compressed in deferred)
            raw = encode_bundle([(kind, int(BlockFlags.MUST_UNDERSTAND) if must_understand else 0, first, count, raw)
                                 for kind, raw, must_understand, first, count, _ in _without_defaults(deferred)])
            packed = compress_with_dictionary(raw, self.level)
            if BLOCK_OVERHEAD + DIRECTORY_ENTRY.size + len(self._stored(raw, packed)[0]) < alone:
                self._bundle, self._bundle_raw, self._bundle_frame = True, raw, packed
                self._block(SectionKind.DICTIONARY_BUNDLE, raw, must_understand=True, count=len(deferred),
                            compressed=packed)
                return
        for kind, raw, must_understand, first, count, compressed in deferred:
            self._block(kind, raw, must_understand=must_understand, first=first, count=count, compressed=compressed)

    def _write_ready(self, *, wait: bool = False) -> None:
        for (kind, must_understand, first, count), raw, compressed in self._queue.ready(wait=wait):
            payload, flags = self._stored(raw, compressed)
            flags |= BlockFlags.MUST_UNDERSTAND if must_understand else 0
            self._directory.append(DirectoryEntry(kind, int(flags), self._offset, len(payload), len(raw),
                                                  first, count))
            self._emit(frame_block(kind, int(flags), payload))

    def _definitions(self, definitions: Definitions) -> None:
        """DEFINITIONS in JSON, with (when the tables are on) the lists that grow with the
        locations in a LOCATION_TABLE and the `extensions` in an EXTENSION_TABLE, each when
        that makes the file smaller (a few locations are smaller in JSON than a table's
        block costs). Layouts with JSON of `JSON_TRIAL_BYTES` or more (the lists of every
        location, or the raw extension table) are not tried: they do not win there; nor is
        the whole JSON when the LOCATION_TABLE exceeds WHOLE_DEFINITIONS_TRIAL bytes
        (compressing it costs a second per 10^5 locations at level 19). Of the layouts
        tried, those more than LAYOUT_TRIAL_MARGIN times the smallest at CHOICE_LEVEL are
        left out before the others are compressed at the writer's level."""
        if not self.tables:
            self._block(SectionKind.DEFINITIONS, encode_json(definitions.to_dict()), must_understand=True)
            return
        extensions = definitions.extensions  # read, never copied
        plain = replace(definitions, extensions={})
        split, table = split_definitions(plain)
        columns, known = None, {}
        if extensions and self._encoded_extensions is None:
            columns = encode_json_table(extensions)
        elif extensions:
            _, columns, frame = self._encoded_extensions()
            known = {} if frame is None else {id(columns): frame}  # as this writer's level compresses them
        in_json = columns is None or len(columns) < JSON_TRIAL_BYTES
        layouts: list[tuple[dict, list[tuple[SectionKind, bytes]]]] = \
            [(split, [(SectionKind.LOCATION_TABLE, table)])]
        if len(table) <= WHOLE_DEFINITIONS_TRIAL:
            layouts.insert(0, (plain.to_dict(), []))
        choices = []
        for base, rest in layouts:
            text = encode_json(base)
            if rest or len(text) < JSON_TRIAL_BYTES:
                if columns is not None:
                    choices.append([(SectionKind.DEFINITIONS, text), *rest, (SectionKind.EXTENSION_TABLE, columns)])
                if in_json:
                    choices.append([(SectionKind.DEFINITIONS, encode_json({**base, "extensions": extensions})
                                     if extensions else text), *rest])
        if len(choices) > 1:
            _, estimates = self._layout_bytes(choices, lambda raw: compress(raw, min(self.level, CHOICE_LEVEL)))
            choices = [blocks for blocks, estimate in zip(choices, estimates)
                       if estimate <= LAYOUT_TRIAL_MARGIN * min(estimates)]
        packed, sizes = self._layout_bytes(choices, self._other_level.compress, known)
        best = choices[sizes.index(min(sizes))]
        for kind, raw in best:
            self._block(kind, raw, must_understand=True, compressed=packed[id(raw)])
            self._extension_table |= kind == SectionKind.EXTENSION_TABLE

    def keep_definitions(self, blocks: list[tuple[SectionKind, bytes]],
                         later: Callable[[], KeptBlock] | None = None) -> None:
        """Store the graph's definitions as ``blocks`` (kinds and raw payloads as another
        file of this layout stores the same definitions) instead of encoding them anew;
        ``later``: gives the block those leave out (`extension_table`), called once, when
        `finish` writes the definitions - after the node blocks and the tables, so that
        another process may encode them meanwhile (docs/parallel.md)."""
        if not self.tables:
            raise ValueError("kept definitions blocks are of the tables' layout")
        self._kept_definitions, self._later_definitions = blocks, later

    def _layout_bytes(self, layouts: list[list[tuple[SectionKind, bytes]]], compressed: Callable[[bytes], bytes],
                      known: dict[int, bytes] | None = None) -> tuple[dict[int, bytes], list[int]]:
        """Every distinct raw payload of ``layouts`` compressed once (by id; ``known``: the
        frames of some, as ``compressed`` makes them), and the bytes each layout's blocks
        take in the file stored that way (framing and directory entries included)."""
        packed = dict(known or {})
        for blocks in layouts:
            for _, raw in blocks:
                if id(raw) not in packed:
                    packed[id(raw)] = compressed(raw)
        return packed, [sum(BLOCK_OVERHEAD + DIRECTORY_ENTRY.size + len(self._stored(raw, packed[id(raw)])[0])
                            for _, raw in blocks) for blocks in layouts]

    def add_nodes(self, pool: NodePool, *, final: bool = False) -> None:
        """Write the pool's new nodes in full blocks (and, if ``final``, the remainder)."""
        while len(pool) - self._nodes_written >= (1 if final else self.nodes_per_block):
            first = self._nodes_written
            stop = min(len(pool), first + self.nodes_per_block)
            if self.metrics:
                stop = _within_metric_limit(pool, first, stop, METRIC_CELL_LIMIT // self.metrics)
            kind, raw = self._node_block(*self._encoder.encode_all(pool, first, stop) if self._codes_gaps
                                         else self._encoder.encode_both(pool, first, stop))
            self._node_kinds.add(kind)
            self._block(kind, raw, must_understand=True, first=first, count=stop - first)
            self._nodes_written = stop
            self._largest_block = max(self._largest_block, stop - first)

    @property
    def nodes_written(self) -> int:
        """The node ids below which every node is in a block handed to the file."""
        return self._nodes_written

    def release_written(self, builder: Any) -> None:
        """Let a builder that can (the native one) drop the records of the nodes written
        that its replacement index no longer holds (`Params.epoch_nodes`; docs/scale.md)."""
        release = getattr(builder, "release", None)
        if release is not None:
            release(self._nodes_written)

    def read_back(self, graph: Graph) -> Graph:
        """``graph`` with its nodes read from the blocks written (`read_back.WrittenGraph`),
        once every node is written: for a graph whose builder has let written records go
        (`Params.epoch_nodes`). Its node blocks are then written before the blocks
        `finish` makes, never in their bundle."""
        if self._read_back is None:
            self.add_nodes(graph.pool, final=True)
            self._write_ready(wait=True)
            self._file.flush()
            self._read_back = read_back(self._output.path, self._directory, graph)
        return self._read_back[0]

    def _close_read_back(self) -> None:
        if self._read_back is not None:
            self._read_back[0].pool.release()
            self._read_back[1].close()
            self._read_back = None

    def add_node_block(self, kind: SectionKind, raw: bytes, first: int, count: int,
                       compressed: bytes | None = None, before: int | None = None) -> None:
        """A node block encoded already (a merge copies other archives' blocks, their ids
        moved: `codec.moved_block`): its payload ``raw`` holds ids ``first .. first + count
        - 1``, the next after those written; ``compressed``: its zstd frame, when known;
        else ``before``: the bytes its source stored it in, when it differs from that
        payload in a few bytes only (compressed as `compression.Recompressed` says)."""
        if first != self._nodes_written or count < 1:
            raise ValueError(f"node block of ids {first}.. after {self._nodes_written} nodes written")
        self._node_kinds.add(kind)
        level = None if before is None else Recompressed(self._nodes_level, before)
        self._block(kind, raw, must_understand=True, first=first, count=count, compressed=compressed, level=level)
        self._nodes_written = first + count
        self._largest_block = max(self._largest_block, count)
        self.nodes_per_block = max(self.nodes_per_block, count)  # PARAMETERS states a bound that holds

    def end_location(self, builder: Any, location: int, first_node: int, events: int) -> LocationRoot:
        """``builder.end_location(location)`` for a location whose nodes start at
        ``first_node`` in the pool and which had ``events`` events, its nodes written in
        full blocks. A location too long to be grouped (more than a checkpoint interval of
        events) that made ``nodes_per_block`` nodes or more ends the node block before its
        last nodes (its root and the artificial nodes made with it, dissertation 4.1.2)
        and again after them: every access to the location descends through them, and a
        cold one then decodes those few nodes instead of a whole block beside them
        (docs/compression.md, "The top block")."""
        top_block = events > self.checkpoint_interval and len(builder.pool) - first_node >= self.nodes_per_block
        if top_block:
            self.add_nodes(builder.pool, final=True)
        root = builder.end_location(location)
        self.add_nodes(builder.pool, final=top_block)
        return root

    @property
    def _codes_gaps(self) -> bool:
        """Whether `_node_block` weighs CODED_NODES blocks (only with the tables)."""
        return self.gaps != "plain" and self.tables and self.references != "ids"

    def _node_block(self, ids: bytes, predicted: bytes, coded: bytes | None = None,
                    coded_soft: bytes | None = None) -> tuple[SectionKind, bytes]:
        """The kind and payload of a node range, given its NODES, PREDICTED_NODES and
        (`_codes_gaps`) CODED_NODES and CODED_SOFT_NODES payloads (the last None when its
        soft values cannot be coded): one of them (spec 5.7-5.9) as ``references``,
        ``gaps`` and the tables allow; among those allowed the smallest by the streams in
        which they differ, compressed at CHOICE_LEVEL (or the writer's level, if lower; a
        coded stream counts as it is, a plain one at most as it is), the earlier in that
        order on a tie."""
        if self.references == "ids" or (self.references == "auto" and not self.tables):
            return SectionKind.NODES, ids
        if not self.tables:  # "predicted" asked for, without the tables: no coded gaps
            return SectionKind.PREDICTED_NODES, predicted
        level = min(self.level, CHOICE_LEVEL)
        a, b = stream_bytes(ids, "child_id"), stream_bytes(predicted, "child_id")
        ids_cost, predicted_cost = (len(compress(a, level)), len(compress(b, level))) \
            if self.references == "auto" and a != b else (0, 0)
        options = []
        if self.gaps != "coded":
            if self.references == "auto":
                options.append((ids_cost, 0, SectionKind.NODES, ids))
            options.append((predicted_cost, 1, SectionKind.PREDICTED_NODES, predicted))
        if coded is not None:
            coded_cost = predicted_cost + self._coded_extra(predicted, coded, "gaps", level)
            options.append((coded_cost, 2, SectionKind.CODED_NODES, coded))
            if coded_soft is not None:
                options.append((coded_cost + self._coded_extra(predicted, coded_soft, "soft", level), 3,
                                SectionKind.CODED_SOFT_NODES, coded_soft))
        _, _, kind, raw = min(options)
        return kind, raw

    @staticmethod
    def _coded_extra(plain_payload: bytes, coded_payload: bytes, name: str, level: int) -> int:
        """The bytes the coded stream ``name`` costs more than the plain one (negative: it
        saves), the plain one compressed alone at ``level`` if that is smaller."""
        plain = stream_bytes(plain_payload, name)
        return len(stream_bytes(coded_payload, name)) - STREAM_HEADER.size - min(len(plain), len(compress(plain, level)))

    def add_location(self, location: int, walker: LocationWalker) -> None:
        """Record the snapshot and summary indexes of a finished location; they are written
        in CHECKPOINT_TABLE blocks of whole locations holding CHECKPOINTS_PER_TABLE_BLOCK
        checkpoints or more (the last fewer), or in the JSON layout in groups of up to
        LOCATIONS_PER_INDEX_BLOCK locations."""
        self.add_checkpoints(location, checkpoints(walker, self.checkpoint_interval))

    def add_checkpoints(self, location: int, points: list[Checkpoint]) -> None:
        """`add_location` with the location's checkpoints already made."""
        self._indexes.append((location, points))
        self._pending_checkpoints += len(points)
        if self._pending_checkpoints >= CHECKPOINTS_PER_TABLE_BLOCK if self.tables else \
                len(self._indexes) == LOCATIONS_PER_INDEX_BLOCK:
            self._flush_indexes()

    def checkpoints_before_flush(self) -> int:
        """How many more checkpoints make `add_checkpoints` write the CHECKPOINT_TABLE
        block (tables only)."""
        return CHECKPOINTS_PER_TABLE_BLOCK - self._pending_checkpoints

    def add_location_columns(self, columns: CheckpointColumns) -> None:
        """`add_checkpoints` of the locations of ``columns`` one after another (tables
        only): only their last may bring the pending checkpoints to
        `checkpoints_before_flush`."""
        total = int(columns.counts.sum())
        if not self.tables or total - int(columns.counts[-1]) >= self.checkpoints_before_flush():
            raise ValueError("location columns must fit before the next CHECKPOINT_TABLE block of tables")
        self._columns.append(columns)
        self._pending_checkpoints += total
        if self._pending_checkpoints >= CHECKPOINTS_PER_TABLE_BLOCK:
            self._flush_indexes()

    def add_checkpoint_columns(self, columns: CheckpointColumns) -> None:
        """Record the checkpoints of many finished locations (after those of `add_location`),
        in the CHECKPOINT_TABLE blocks `add_location` would write for them one at a time."""
        if not self.tables:
            raise ValueError("checkpoint columns are written as tables; this writer writes the JSON layout")
        self._flush_indexes()
        for part in columns.blocks(CHECKPOINTS_PER_TABLE_BLOCK):
            if int(part.counts.sum()) >= CHECKPOINTS_PER_TABLE_BLOCK:
                self._checkpoint_block(part)
            else:  # the last, short block waits for `finish`, as `add_location`'s do
                self._held_columns = part

    def _checkpoint_block(self, columns: CheckpointColumns) -> None:
        self._block(SectionKind.CHECKPOINT_TABLE, encode_checkpoint_columns(self.checkpoint_interval, columns),
                    must_understand=False, first=int(columns.locations[0]), count=len(columns))
        self._summaries = True

    def _drop_indexes(self) -> None:
        """Forget the checkpoints not yet written, none having been: the file gets no index
        (spec 4.8 allows none; a reader answers every query from the graph, which a profile
        reads whole for so few nodes anyway, `query.profile.index_pays`)."""
        self._indexes.clear()
        self._columns.clear()
        self._held_columns = None
        self._pending_checkpoints = 0

    def _flush_indexes(self) -> None:
        if self._held_columns is not None:
            self._checkpoint_block(self._held_columns)
            self._held_columns = None
        if not self._indexes and not self._columns:
            return
        self._indexes.sort(key=lambda item: item[0])
        if self.tables:
            self._checkpoint_block(CheckpointColumns.concat(
                [CheckpointColumns.from_checkpoints(self._indexes)] + self._columns if self._indexes else self._columns))
            self._columns.clear()
        first = self._indexes[0][0] if self._indexes else 0
        for kind, part in () if self.tables else ((SectionKind.SNAPSHOTS, Checkpoint.snapshot_json),
                                                  (SectionKind.SUMMARY, Checkpoint.summary_json)):
            payload = {"interval": self.checkpoint_interval,
                       "locations": [{"location": location, "checkpoints": [part(p) for p in points]}
                                     for location, points in self._indexes]}
            self._block(kind, encode_json(payload), must_understand=False,
                        first=first, count=len(self._indexes))
        self._summaries = True
        self._indexes.clear()
        self._pending_checkpoints = 0

    def finish(self, graph: Graph, samples: MetricSamples | None = None, rows: Any = None) -> Path:
        """Write the rest of the graph, the footer and the trailer; publish the file.
        ``samples``: every metric sample of the graph's events, when they are known
        without a walk (the metric tables then read them); ``rows``: the finest table
        levels' leaf rows, when known (a merge's `merge.tables.TableRows`: the tables are
        their sums, no event is walked).

        Every location the definitions define must have a root (spec 4.3)."""
        missing = sorted(set(range(len(graph.definitions.locations))) - set(graph.roots))
        if missing:
            raise ValueError(f"defined locations without a root: {missing[:10]}")
        if graph.epochs:  # the builder may have let written nodes go: the tables read them back
            graph = self.read_back(graph)
        if self.bundle:
            self._deferred = []
        self.add_nodes(graph.pool, final=True)
        if not self._summaries and not index_kept(self.index, graph):  # blocks written stay
            self._drop_indexes()
        self._flush_indexes()
        if self.aggregation is not None:
            self._aggregation_levels(graph, self.aggregation, samples, rows)
        if self._kept_definitions is None:
            self._definitions(graph.definitions)
        later = [self._later_definitions()] if self._later_definitions is not None else []
        for kind, raw, frame in [(kind, raw, None) for kind, raw in self._kept_definitions or ()] + later:
            self._block(kind, raw, must_understand=True, compressed=frame)
            self._extension_table |= kind == SectionKind.EXTENSION_TABLE
        self._block(SectionKind.PARAMETERS, encode_json(self._parameters(graph)), must_understand=True)
        self._block(SectionKind.ROOT_TABLE if self.tables else SectionKind.ROOTS,
                    (encode_root_table if self.tables else encode_roots)(graph.roots), must_understand=True,
                    count=len(graph.roots))
        self._write_deferred()
        self._write_ready(wait=True)
        self._queue.close()
        self._close_read_back()
        if self._compact_body():
            self._file.seek(0)
            number, body = self._compact_frame()
            minor = COMPACT_SLICES_MINOR_VERSION if self._sliced \
                else PRIMED_LZMA_MINOR_VERSION if number == primed_lzma.DICTIONARY else 0
            self._file.write(frame_compact(number, body, minor))
            self._file.truncate()
        else:
            self._end_blocks(graph)
        self._file.flush()  # an error here leaves the file open, so that __exit__ aborts
        self._file.close()
        return self._output.commit()

    def _compact_body(self) -> bool:
        """Whether the file is written in the compact layout: its one block is a compressed
        DICTIONARY_BUNDLE (spec 2.7)."""
        if not self.compact or len(self._directory) != 1:
            return False
        block = self._directory[0]
        return block.kind == SectionKind.DICTIONARY_BUNDLE and bool(block.flags & BlockFlags.ZSTD)

    def _compact_frame(self) -> tuple[int, bytes]:
        """The bundle dictionary whose compressed bundle is the smallest, and that body
        (spec 2.7-2.9; the lower number on a tie): a zstd frame made with dictionary 1 or
        2, or the primed LZMA2 body of dictionary 3 where liblzma makes it."""
        frames = {1: self._bundle_frame}  # the block's, made with dictionary 1
        frames.update((number, compress_with_dictionary(self._bundle_raw, self.level, number))
                      for number in ZSTD_DICTIONARIES if number not in frames)
        # never more than a reader decodes of a body (spec 2.9; a bundle holds under BUNDLE_RAW_BYTES)
        primed = primed_lzma.compress(self._bundle_raw) \
            if len(self._bundle_raw) <= primed_lzma.LARGEST_RAW_LENGTH else None
        if primed is not None:
            frames[primed_lzma.DICTIONARY] = primed
        number = min(frames, key=lambda n: (len(frames[n]), n))
        return number, frames[number]

    def _end_blocks(self, graph: Graph) -> None:
        """The footer and the trailer of the block layout, and the header's minor version."""
        footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND),
                             encode_directory(self._directory))
        self._emit(footer)
        self._emit(TRAILER.pack(len(footer), END_MAGIC))
        # the lowest minor version whose features the file uses
        kinds = self._node_kinds
        minor = SLICES_MINOR_VERSION if self._sliced \
            else CODED_SOFT_MINOR_VERSION if SectionKind.CODED_SOFT_NODES in kinds \
            else CODED_GAPS_MINOR_VERSION if SectionKind.CODED_NODES in kinds \
            else DICTIONARY_BUNDLE_MINOR_VERSION if self._bundle \
            else AGGREGATION_MINOR_VERSION if self._aggregated \
            else PREDICTED_NODES_MINOR_VERSION if SectionKind.PREDICTED_NODES in kinds \
            else EXTENSION_TABLE_MINOR_VERSION if self._extension_table else TABLES_MINOR_VERSION if self.tables \
            else ROOTS_COMPLETE_MINOR_VERSION if graph.definitions.locations else SUMMARY_MINOR_VERSION if self._summaries \
            else EXTENSIONS_MINOR_VERSION if graph.definitions.extensions else 0
        if minor:
            self._file.seek(0)
            self._file.write(FILE_HEADER.pack(MAGIC, MAJOR_VERSION, minor, 0))
            self._file.seek(self._offset)

    def _aggregation_levels(self, graph: Graph, share: float, samples: MetricSamples | None, rows: Any) -> None:
        """AGGREGATE_LEVEL blocks for k = 0, 1, ..., then METRIC_LEVEL blocks likewise, while
        all of them together stay within ``share`` of the bytes written so far, and while
        the budget left holds the last level's bytes again (the next level has at least as
        many non-zero cells); nothing is computed when not even an empty block would fit (a
        small trace, whose graph answers the model at once). Last, the AGGREGATE_SLICES
        level of ``slices`` slices (spec 4.10.3) where it fits too; it is computed only after
        the pyramid's finest level was written with the budget left to hold it again."""
        self._write_ready(wait=True)  # the budget counts every block before, whatever the threads
        budget = int(self._offset * share)
        if budget < BLOCK_OVERHEAD + DIRECTORY_ENTRY.size:
            return
        used = 0
        sliced: list[bytes] = []

        def pyramid() -> Iterator[tuple[int, bytes]]:
            for k, start, stop, values in run_query("aggregation_levels", graph, None, self.slices, rows=rows):
                if k < 0:  # the level of SLICES slices comes after the pyramid's finest
                    sliced.append(encode_level(values.shape[1], start, stop, values))
                    return
                yield k, encode_level(k, start, stop, values)

        def cost(raw: bytes, packed: bytes) -> int:
            return len(self._stored(raw, packed)[0]) + BLOCK_OVERHEAD + DIRECTORY_ENTRY.size

        # the metric tables (spec 4.11) share the budget, after the aggregation tables
        metric = ((level.level, encode_metric_level(level))
                  for level in run_query("metric_levels", graph, None, samples and samples.columns(), rows=rows))
        for kind, levels in ((SectionKind.AGGREGATE_LEVEL, pyramid()), (SectionKind.METRIC_LEVEL, metric)):
            for k, raw in levels:
                packed = self._tables_level.compress(raw)
                if used + cost(raw, packed) > budget:  # this pyramid stops here; the next one may still fit
                    break
                used += cost(raw, packed)
                self._block(kind, raw, must_understand=False, first=k, count=1 << k, compressed=packed)
                self._aggregated = True
                if used + cost(raw, packed) > budget:  # the next level holds at least as many cells: not computed
                    break
        for raw in sliced:
            packed = self._tables_level.compress(raw)
            if used + cost(raw, packed) <= budget:
                self._block(SectionKind.AGGREGATE_SLICES, raw, must_understand=False, count=self.slices,
                            compressed=packed)
                self._sliced = True

    def abort(self) -> None:
        """Drop the temporary file; nothing appears under the target name."""
        self._queue.close()
        self._close_read_back()
        self._file.close()
        self._output.discard()

    def _parameters(self, graph: Graph) -> dict[str, object]:
        p, m = graph.params, graph.metrics
        return {
            "abs_dev": p.abs_dev, "rel_dev": p.rel_dev, "rel_size": p.rel_size, "rel_metric": p.rel_metric,
            "branching": p.branching, "search_length": p.search_length, "leaf_window": p.leaf_window,
            "zstd_level": self.level, "checkpoint_interval": self.checkpoint_interval,
            # a bound on every block; the bundle default when it holds, which a bundle leaves out
            "nodes_per_block": min(self.nodes_per_block,
                                   max(self._largest_block, PARAMETER_DEFAULTS["nodes_per_block"])),
            "converter": f"ccgformat {__version__}",
            "provenance": dict(graph.definitions.provenance),
            "metrics": {"N": m.N, "n": m.n, "M": m.M, "m": m.m},
            # searched S-lists exist only with deviation bounds: with exact time, the default says nothing
            **({} if p.exact_time and p.representatives == Params.representatives
               else {"representatives": p.representatives}),
            # the default leaves it out where the index never started empty (a reader then reads it)
            **({"epoch_nodes": p.epoch_nodes} if graph.epochs or p.epoch_nodes != Params.epoch_nodes else {}),
        }


def _within_metric_limit(pool: NodePool, first: int, stop: int, budget: int) -> int:
    """The end of a node block from ``first`` (at most ``stop``, at least one node) whose
    nodes plus child references stay within ``budget``: the reader's limit on a block's
    metrics times those (spec 7) divided by the metrics the trace defines."""
    arrays = getattr(pool, "arrays", None)
    if arrays is not None:  # a table kept in C: its child offsets
        columns, base = arrays()
        starts = columns["child_start"][first - base:stop - base + 1]
        cells = np.arange(1, stop - first + 1) + (starts[1:] - starts[0])
    else:
        cells = np.cumsum([1 + len(pool.children[node]) for node in range(first, stop)])
    return max(first + 1, first + int(np.searchsorted(cells, budget, side="right")))


def _without_defaults(blocks: list[tuple[SectionKind, bytes, bool, int, int, bytes | None]]
                      ) -> list[tuple[SectionKind, bytes, bool, int, int, bytes | None]]:
    """The blocks with DEFINITIONS and PARAMETERS stripped of their default values, as
    members of a BUNDLE block store them (spec 4.1, 4.2)."""
    definitions = next(json.loads(raw) for kind, raw, *_ in blocks if kind == SectionKind.DEFINITIONS)
    stripped = {SectionKind.DEFINITIONS: strip_definitions(definitions)}
    for kind, raw, *_ in blocks:
        if kind == SectionKind.PARAMETERS:
            stripped[kind] = strip_parameters(json.loads(raw), definitions.get("provenance", {}))
    return [(kind, encode_json(stripped[kind]) if kind in stripped else raw, *rest)
            for kind, raw, *rest in blocks]


def index_kept(index: str, graph: Graph) -> bool:
    """Whether a file of ``graph`` gets its checkpoint index: always with ``index``
    "always", else when the graph has more than `INDEX_NODES_PER_LOCATION` nodes (below,
    no query reads the index; spec 4.8). `Writer.finish` keeps the checkpoint blocks a
    long stream of locations made it write before the graph was complete."""
    return index == "always" or len(graph.pool) > INDEX_NODES_PER_LOCATION


def write_trace(path: str | os.PathLike[str], definitions: Definitions,
                locations: Iterable[LocationItem], params: Params = Params(), *,
                repair: bool = False, level: int | None = None,
                checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True,
                threads: int | None = None, references: str = "auto", gaps: str = "auto",
                aggregation: float | None = AGGREGATION_BUDGET, bundle: bool = True, compact: bool = True,
                index: str = "auto", recorded: Params | None = None, overlap: bool | None = None,
                slices: int | None = SLICES, encoded_extensions: Callable[[], KeptBlock] | None = None) -> Graph:
    """Build and write an archive in one streaming pass, one location after another
    (with ``tables`` and without ``repair``, the small locations in groups:
    `groups.SmallLocations`, the same file). ``locations``: ``(location, batches)``
    pairs, or `LocationRun` items in their place.

    Node blocks are written as they fill and each location's indexes as soon as it ends,
    so only the node pool stays in memory; a long location's last nodes get a block of
    their own (`Writer.end_location`). Defined locations that ``locations`` leaves
    out are written without events. ``level``, ``tables``, ``threads``,
    ``references``, ``gaps``, ``aggregation``, ``bundle``, ``compact``, ``index``,
    ``slices``, ``encoded_extensions``: as for `Writer`. ``recorded``: the parameters
    PARAMETERS states, when they are not those the graph was built with (a merge rebuilds
    lossy archives losslessly, and records their bounds). ``overlap``: read the input on
    one core while the builder works on the other (threads, `_build_locations`; the same
    file); None: with the native builder, whose C code lets go of the GIL (with the
    Python one, the threads would only take turns), in a process that may run on more
    than one core (`compression.default_threads`: `mpirun` binds each of 2 ranks to one;
    there the reader thread only took turns with the builder, 0.01-0.03 s of a 1 M-event
    part). Returns the built graph, with those parameters.

    A lossless graph gives back its input, so without ``repair`` the indexes are made from
    the input batches as they pass instead of from a walk of the built location.

    Memory stays bounded (`Params.epoch_nodes`, docs/scale.md): the native builder lets
    the records of written nodes of earlier epochs go, and the graph returned then holds
    its last nodes only (its roots, metrics and repairs are whole; open the file to walk
    it). A location built over several epochs without its input events gets its
    checkpoints from a walk of the nodes read back from the file, after the others.
    """
    builder = make_builder(params, definitions, repair=repair)
    from_input = params.lossless and not repair
    # the collector paused: the importer's and the builder's objects are acyclic, and its
    # passes over them took a quarter of the CPU at 20,000 locations; no huge pages (bulkstep)
    with bulk_step(), Writer(path, level=level, checkpoint_interval=checkpoint_interval,
                             nodes_per_block=nodes_per_block, tables=tables, threads=threads,
                             references=references, gaps=gaps, aggregation=aggregation, bundle=bundle,
                             compact=compact, metrics=len(definitions.metrics), index=index,
                             slices=slices, encoded_extensions=encoded_extensions) as writer:
        # repairs may change a location's event count, so its checkpoint count, after the fact
        samples = MetricSamples() if from_input and definitions.metrics and aggregation is not None else None
        ahead = native_backend() and default_threads() > 1 if overlap is None else overlap
        small = SmallLocations(builder, writer, from_input, samples, ahead=ahead) if tables and not repair else None
        indexed: set[int] = set()
        late: list[int] = []  # locations whose checkpoints a walk of the written nodes makes
        source = _Locations(locations)
        try:
            _build_locations(builder, writer, source, small, samples, from_input, indexed, late)
        finally:
            try:
                source.close()
            finally:
                if small is not None:
                    small.close()
        graph = builder.finish()
        if recorded is not None:
            graph = replace(graph, params=recorded)
        walked = writer.read_back(graph) if late else graph
        for location in late:
            writer.add_location(location, walked.location(location))
        never = sorted(graph.roots.keys() - indexed)  # defined locations never fed (spec 4.3)
        if writer.tables and not any(graph.roots[location].events for location in never):
            add_empty_locations(writer, {location: graph.roots[location].start for location in never})
        else:
            for location in never:
                writer.add_location(location, walked.location(location))
        writer.finish(graph, samples)
    return graph


def _build_locations(builder: Any, writer: Writer, source: _Locations,
                     small: SmallLocations | None, samples: MetricSamples | None, from_input: bool,
                     indexed: set[int], late: list[int]) -> None:
    """`write_trace`'s pass over the input: every location built, its nodes written and
    its checkpoints made (``indexed`` gets the locations seen, ``late`` those whose
    checkpoints need a walk of the nodes read back). With the native builder
    (``small.ahead``), the input is read on one core while the builder works on the
    other: the small locations' groups built in a thread while the next group is read
    (`SmallLocations`); from the first large location on, the input read in a thread
    (`_Locations.ahead`). A `LocationRun` of small locations joins their group whole."""
    for item in source:
        if isinstance(item, LocationRun):
            if small is not None and int(item.counts.max(initial=0)) <= writer.checkpoint_interval:
                indexed.update(item.locations.tolist())
                small.add_run(item)
            else:
                source.expand(item)
            continue
        location, batches = item
        indexed.add(location)
        stream, head, events = iter(batches), [], 0
        if small is not None:  # read up to one checkpoint interval of events ahead
            for batch in stream:
                head.append(batch)
                events += len(batch)
                if events > writer.checkpoint_interval:
                    break
            else:
                small.add(location, head)
                continue
            small.flush()  # the locations before this large one are built before it
        record = recorder(writer.checkpoint_interval) if from_input else None
        first_node, events, epochs = len(builder.pool), 0, builder.epochs
        if small is not None and small.ahead:  # from here on, the input is read in a thread
            stream = source.ahead(location, stream)
        for batch in itertools.chain(head, stream):
            builder.add(location, batch)
            events += len(batch)
            if record is not None:
                record.add(batch)
            if samples is not None:
                samples.add([location], batch, [0, len(batch)])
            writer.add_nodes(builder.pool)
            writer.release_written(builder)
        root = writer.end_location(builder, location, first_node, events)
        if record is not None:
            writer.add_checkpoints(location, record.finish(root.start))
        elif builder.epochs != epochs:  # built over epochs whose nodes may be gone: walked at the end
            late.append(location)
        else:
            writer.add_location(location, location_walker(builder.pool, root.root, root.start, location))
    if small is not None:
        small.flush()


class _Locations:
    """The input's ``(location, batches)`` pairs and `LocationRun` items; `ahead` has the
    rest read in a thread (as pairs)."""

    def __init__(self, locations: Iterable[LocationItem]) -> None:
        self._items: Iterator[LocationItem] = iter(locations)
        self._ahead: Generator[tuple[int, Iterator[EventBatch]], None, None] | None = None

    def __iter__(self) -> _Locations:
        return self

    def __next__(self) -> LocationItem:
        return next(self._items)

    def expand(self, run: LocationRun) -> None:
        """Give ``run``'s locations next, one pair each."""
        self._items = itertools.chain(run.pairs(), self._items)

    def ahead(self, location: int, batches: Iterator[EventBatch]) -> Iterator[EventBatch]:
        """``batches`` (the rest of ``location``'s), and from now on every location after
        it, read in a thread (`ahead.locations_ahead`): the next batches and the next
        location's first pass run on one core while the builder works on the other."""
        if self._ahead is None:
            self._ahead = self._items = locations_ahead(itertools.chain([(location, batches)],
                                                                       location_pairs(self._items)))
            batches = next(self._ahead)[1]
        return batches

    def close(self) -> None:
        """Stop the reader thread, if one was started."""
        if self._ahead is not None:
            self._ahead.close()


def save_graph(graph: Graph, path: str | os.PathLike[str], *, level: int | None = None,
               checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
               nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, references: str = "auto", gaps: str = "auto",
               aggregation: float | None = AGGREGATION_BUDGET, bundle: bool = True, compact: bool = True,
               index: str = "auto", streamed: bool = False, rows: Any = None,
               stored_definitions: list[tuple[SectionKind, bytes]] | None = None,
               later_definitions: Callable[[], KeptBlock] | None = None, slices: int | None = SLICES,
               checkpoints: Callable[[int], CheckpointColumns] | None = None) -> Path:
    """Write an already built graph as an archive (``references``, ``gaps``,
    ``aggregation``, ``bundle``, ``compact``, ``index``, ``slices``: as for `Writer`). ``streamed``:
    the last node block goes with `Writer.finish`, as `write_trace` writes it (into the
    bundle of the sections written last where that is smaller: a small graph's file is
    then in the compact layout), rather than before the checkpoints. ``rows``: as for
    `Writer.finish`; ``stored_definitions``, ``later_definitions``: as for
    `Writer.keep_definitions`. ``checkpoints``: gives every location's checkpoints at an
    interval, when they are known, asked only if the file keeps its index (else the
    locations are walked for them, the small ones together: `groups.add_graph_locations`)."""
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval, nodes_per_block=nodes_per_block,
                references=references, gaps=gaps, aggregation=aggregation, bundle=bundle, compact=compact,
                metrics=len(graph.definitions.metrics), index=index, slices=slices) as writer:
        if stored_definitions is not None:
            writer.keep_definitions(stored_definitions, later_definitions)
        writer.add_nodes(graph.pool, final=not streamed)
        if index_kept(index, graph):
            if checkpoints is not None:
                writer.add_checkpoint_columns(checkpoints(checkpoint_interval))
            else:
                add_graph_locations(writer, graph.pool, root_columns(graph.roots), str(path))
        return writer.finish(graph, rows=rows)
