"""The streaming, atomic .ccg writer (spec/format.md; dissertation 4.6 serialization).

Nodes are written bottom-up in id order, which is the order the builder finalizes them,
so node blocks can leave as soon as they fill while the builder goes on: memory is
bounded by the node pool, never by the event count. The file is written under a
temporary name in the target's folder, flushed to disk and renamed at the end
(`ccgformat.atomic`); a failure leaves no file under the target name.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from .._version import __version__
from ..atomic import AtomicOutput
from ..graph.graph import Graph
from ..graph.pool import NodePool
from ..graph.walk import LocationWalker
from ..model import Definitions, EventBatch
from ..params import Params
from .blocks import compress, frame_block
from .compression import CompressionQueue, Level, default_threads
from .indexes import Checkpoint, checkpoints, recorder
from .jsontable import encode_json_table
from .layout import (BLOCK_OVERHEAD, CODED_GAPS_MINOR_VERSION, DIRECTORY_ENTRY, END_MAGIC,
                     EXTENSION_TABLE_MINOR_VERSION,
                     EXTENSIONS_MINOR_VERSION, FILE_HEADER, MAGIC, MAJOR_VERSION, PREDICTED_NODES_MINOR_VERSION,
                     ROOTS_COMPLETE_MINOR_VERSION,
                     SUMMARY_MINOR_VERSION, TABLES_MINOR_VERSION, TRAILER, BlockFlags, SectionKind,
                     largest_raw_length)
from .codec import CODED_LENGTH, decode_stream, gap_rows, stream_bytes, with_coded_gaps
from .native import builder as make_builder, gap_coder, node_encoder, walker as location_walker
from .sections import DirectoryEntry, encode_directory, encode_json, encode_roots
from .tables import encode_checkpoint_table, encode_root_table, split_definitions

#: zstd level of every block but NODES by default: once per file, small, and the strongest
#: levels pay off on large definitions (a Chrome trace's file: 26% larger all at 15)
DEFAULT_LEVEL = 19
#: zstd level of the NODES blocks by default, those it shrinks more than
#: `compression.STRONG_RATIO` times compressed at DEFAULT_LEVEL if that is smaller: every
#: trace measured stays within 2% of its file size at level 19 (at most +1.1%), at a
#: quarter of its time (docs/compression.md, `tools/bench.py levels`)
DEFAULT_NODES_LEVEL = 15
DEFAULT_CHECKPOINT_INTERVAL = 65536
DEFAULT_NODES_PER_BLOCK = 4096
LOCATIONS_PER_INDEX_BLOCK = 64
#: How node blocks store the children that are not fresh (spec 5.7): "ids" (NODES
#: blocks), "predicted" (PREDICTED_NODES blocks) or "auto" (per block the one whose
#: child reference stream compresses smaller, NODES on a tie; without the tables, the
#: layout for older readers, always NODES).
REFERENCE_CODINGS = ("auto", "ids", "predicted")
#: How node blocks store their gaps (spec 5.8): "plain" (byte planes), "coded" (range
#: coded, in PREDICTED_NODES blocks, format 1.4) or "auto" (per block the smaller, see
#: `Writer._node_block`; without the tables or with references "ids", always plain).
GAP_CODINGS = ("auto", "plain", "coded")
#: "auto" compares the two child reference streams compressed at this zstd level (or
#: the writer's, if lower): nearly the same choice as at level 19, at a fraction of its time.
CHOICE_LEVEL = 3
#: checkpoints that fill a CHECKPOINT_TABLE block (a location's are never split)
CHECKPOINTS_PER_TABLE_BLOCK = 4096
#: JSON (or a raw extension table) of this size or more is not tried as DEFINITIONS
JSON_TRIAL_BYTES = 1 << 20


class Writer:
    """Writes one archive. Use as a context manager; `finish` makes the file appear.

    With ``tables`` (the default) the per-location sections are the columnar tables of
    format 1.3; without, they are ROOTS, the JSON SNAPSHOTS and SUMMARY and the whole
    DEFINITIONS in JSON, which readers of 1.0-1.2 read too.

    ``level``: the zstd level of every block; None (the default) compresses the NODES
    blocks at DEFAULT_NODES_LEVEL (the most compressible of them at DEFAULT_LEVEL, see
    `compression.Level`) and the rest at DEFAULT_LEVEL. ``threads``: how many
    threads compress blocks (default: the cores available); the file is the same for any.
    ``references``: one of `REFERENCE_CODINGS`; ``gaps``: one of `GAP_CODINGS`.
    """

    def __init__(self, path: str | os.PathLike[str], *, level: int | None = None,
                 checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                 nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True,
                 threads: int | None = None, references: str = "auto", gaps: str = "auto"):
        if level is not None and not 1 <= level <= 22:
            raise ValueError(f"zstd level must be in 1..22, got {level}")
        if references not in REFERENCE_CODINGS:
            raise ValueError(f"references must be one of {', '.join(REFERENCE_CODINGS)}, got {references!r}")
        if gaps not in GAP_CODINGS:
            raise ValueError(f"gaps must be one of {', '.join(GAP_CODINGS)}, got {gaps!r}")
        if gaps == "coded" and (references == "ids" or not tables):
            raise ValueError("coded gaps need PREDICTED_NODES blocks: references other than 'ids', and the tables")
        if checkpoint_interval < 1 or nodes_per_block < 1:
            raise ValueError("checkpoint_interval and nodes_per_block must be positive")
        self.path = Path(path)
        #: the level of the NODES blocks, as PARAMETERS records it
        self.level = DEFAULT_NODES_LEVEL if level is None else level
        self._nodes_level = Level(DEFAULT_NODES_LEVEL, DEFAULT_LEVEL) if level is None else Level(level)
        self._other_level = Level(DEFAULT_LEVEL if level is None else level)
        self.checkpoint_interval = checkpoint_interval
        self.nodes_per_block = nodes_per_block
        self.tables = tables
        self._queue: CompressionQueue[tuple[SectionKind, bool, int, int]] = \
            CompressionQueue(default_threads() if threads is None else threads)
        self.references = references
        self._predicted = False  # whether a PREDICTED_NODES block was written
        self.gaps = gaps
        self._coded_gaps = False  # whether a coded gaps stream was written
        self._code_gaps = gap_coder()
        self._output = AtomicOutput(self.path)
        try:
            self._file = open(self._output.path, "wb")
        except BaseException:
            self._output.discard()
            self._queue.close()
            raise
        self._directory: list[DirectoryEntry] = []
        self._nodes_written = 0
        self._encoder = node_encoder()
        self._indexes: list[tuple[int, list[Checkpoint]]] = []
        self._summaries = False  # whether a SUMMARY block (with the members of 1.2) was written
        self._extension_table = False  # whether a feature of 1.4 (an EXTENSION_TABLE) was written
        self._pending_checkpoints = 0
        self._offset = 0
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
               count: int = 0, compressed: bytes | None = None, coded: bool = False) -> None:
        """Queue a block; it is written once it and the blocks before it are compressed.
        A node block with ``coded`` gaps is compressed like the other sections (by default
        at DEFAULT_LEVEL): what the coded stream leaves is 3% smaller at level 19 than at
        DEFAULT_NODES_LEVEL, while level 19 takes less time on such a block than on its
        byte planes."""
        nodes = kind in (SectionKind.NODES, SectionKind.PREDICTED_NODES) and not coded
        level = self._nodes_level if nodes else self._other_level
        self._queue.put((kind, must_understand, first, count), raw, level, compressed)
        self._write_ready()

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
        location, or the raw extension table) are not tried: they do not win there."""
        if not self.tables:
            self._block(SectionKind.DEFINITIONS, encode_json(definitions.to_dict()), must_understand=True)
            return
        extensions = definitions.extensions  # read, never copied
        plain = replace(definitions, extensions={})
        document = plain.to_dict()
        split, table = split_definitions(plain)
        columns = encode_json_table(extensions) if extensions else None
        in_json = columns is None or len(columns) < JSON_TRIAL_BYTES
        choices = []
        for base, rest in ((document, []), (split, [(SectionKind.LOCATION_TABLE, table)])):
            text = encode_json(base)
            if rest or len(text) < JSON_TRIAL_BYTES:
                if columns is not None:
                    choices.append([(SectionKind.DEFINITIONS, text), *rest, (SectionKind.EXTENSION_TABLE, columns)])
                if in_json:
                    choices.append([(SectionKind.DEFINITIONS, encode_json({**base, "extensions": extensions})
                                     if extensions else text), *rest])
        packed: dict[int, bytes] = {}  # per raw payload, compressed once
        for blocks in choices:
            for _, raw in blocks:
                if id(raw) not in packed:
                    packed[id(raw)] = self._other_level.compress(raw)
        best = min(choices, key=lambda blocks: sum(BLOCK_OVERHEAD + DIRECTORY_ENTRY.size
                                                   + len(self._stored(raw, packed[id(raw)])[0]) for _, raw in blocks))
        for kind, raw in best:
            self._block(kind, raw, must_understand=True, compressed=packed[id(raw)])
            self._extension_table |= kind == SectionKind.EXTENSION_TABLE

    def add_nodes(self, pool: NodePool, *, final: bool = False) -> None:
        """Write the pool's new nodes in full blocks (and, if ``final``, the remainder)."""
        while len(pool) - self._nodes_written >= (1 if final else self.nodes_per_block):
            first = self._nodes_written
            stop = min(len(pool), first + self.nodes_per_block)
            kind, raw, coded = self._node_block(*self._encoder.encode_both(pool, first, stop))
            self._predicted |= kind == SectionKind.PREDICTED_NODES
            self._coded_gaps |= coded
            self._block(kind, raw, must_understand=True, first=first, count=stop - first, coded=coded)
            self._nodes_written = stop

    def _node_block(self, ids: bytes, predicted: bytes) -> tuple[SectionKind, bytes, bool]:
        """The kind and payload of a node range and whether its gaps are coded, given its NODES and PREDICTED_NODES
        payloads: NODES, PREDICTED_NODES, or PREDICTED_NODES with coded gaps (spec 5.7,
        5.8) as ``references`` and ``gaps`` allow; among those allowed the smallest by the
        streams in which they differ, compressed at CHOICE_LEVEL (or the writer's level,
        if lower; a coded stream counts as it is, a plain one at most as it is), the
        earlier in that order on a tie."""
        if not self.tables or self.references == "ids":
            return SectionKind.NODES, ids, False
        level = min(self.level, CHOICE_LEVEL)
        a, b = stream_bytes(ids, "child_id"), stream_bytes(predicted, "child_id")
        ids_cost, predicted_cost = (len(compress(a, level)), len(compress(b, level))) \
            if self.references == "auto" and a != b else (0, 0)
        options = []
        if self.gaps != "coded":
            if self.references == "auto":
                options.append((ids_cost, 0, SectionKind.NODES, ids))
            options.append((predicted_cost, 1, SectionKind.PREDICTED_NODES, predicted))
        if self.gaps != "plain":
            plain = stream_bytes(predicted, "gaps")
            coded = self._code_gaps(decode_stream(plain, 0)[0], gap_rows(predicted))
            extra = CODED_LENGTH.size + len(coded) - min(len(plain), len(compress(plain, level)))
            options.append((predicted_cost + extra, 2, SectionKind.PREDICTED_NODES, with_coded_gaps(predicted, coded)))
        _, choice, kind, raw = min(options)
        return kind, raw, choice == 2

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

    def _flush_indexes(self) -> None:
        if not self._indexes:
            return
        self._indexes.sort(key=lambda item: item[0])
        first = self._indexes[0][0]
        if self.tables:
            self._block(SectionKind.CHECKPOINT_TABLE, encode_checkpoint_table(self.checkpoint_interval, self._indexes),
                        must_understand=False, first=first, count=len(self._indexes))
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

    def finish(self, graph: Graph) -> Path:
        """Write the rest of the graph, the footer and the trailer; publish the file.

        Every location the definitions define must have a root (spec 4.3)."""
        missing = sorted(set(range(len(graph.definitions.locations))) - set(graph.roots))
        if missing:
            raise ValueError(f"defined locations without a root: {missing[:10]}")
        self.add_nodes(graph.pool, final=True)
        self._flush_indexes()
        self._definitions(graph.definitions)
        self._block(SectionKind.PARAMETERS, encode_json(self._parameters(graph)), must_understand=True)
        self._block(SectionKind.ROOT_TABLE if self.tables else SectionKind.ROOTS,
                    (encode_root_table if self.tables else encode_roots)(graph.roots), must_understand=True,
                    count=len(graph.roots))
        self._write_ready(wait=True)
        self._queue.close()
        footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND),
                             encode_directory(self._directory))
        self._emit(footer)
        self._emit(TRAILER.pack(len(footer), END_MAGIC))
        # the lowest minor version whose features the file uses
        minor = PREDICTED_NODES_MINOR_VERSION if self._predicted else CODED_GAPS_MINOR_VERSION \
            if self._coded_gaps else EXTENSION_TABLE_MINOR_VERSION if self._extension_table else TABLES_MINOR_VERSION if self.tables else ROOTS_COMPLETE_MINOR_VERSION if graph.definitions.locations \
            else SUMMARY_MINOR_VERSION if self._summaries \
            else EXTENSIONS_MINOR_VERSION if graph.definitions.extensions else 0
        if minor:
            self._file.seek(0)
            self._file.write(FILE_HEADER.pack(MAGIC, MAJOR_VERSION, minor, 0))
            self._file.seek(self._offset)
        self._file.flush()  # an error here leaves the file open, so that __exit__ aborts
        self._file.close()
        return self._output.commit()

    def abort(self) -> None:
        """Drop the temporary file; nothing appears under the target name."""
        self._queue.close()
        self._file.close()
        self._output.discard()

    def _parameters(self, graph: Graph) -> dict[str, object]:
        p, m = graph.params, graph.metrics
        return {
            "abs_dev": p.abs_dev, "rel_dev": p.rel_dev, "rel_size": p.rel_size, "rel_metric": p.rel_metric,
            "branching": p.branching, "search_length": p.search_length,
            "zstd_level": self.level, "checkpoint_interval": self.checkpoint_interval,
            "nodes_per_block": self.nodes_per_block,
            "converter": f"ccgformat {__version__}",
            "provenance": dict(graph.definitions.provenance),
            "metrics": {"N": m.N, "n": m.n, "M": m.M, "m": m.m},
        }


def write_trace(path: str | os.PathLike[str], definitions: Definitions,
                locations: Iterable[tuple[int, Iterable[EventBatch]]], params: Params = Params(), *,
                repair: bool = False, level: int | None = None,
                checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True,
                threads: int | None = None, references: str = "auto", gaps: str = "auto") -> Graph:
    """Build and write an archive in one streaming pass, one location after another.

    Node blocks are written as they fill and each location's indexes as soon as it ends,
    so only the node pool stays in memory. Defined locations that ``locations`` leaves
    out are written without events. ``level``, ``tables``, ``threads``,
    ``references``, ``gaps``: as for `Writer`.
    Returns the built graph.

    A lossless graph gives back its input, so without ``repair`` the indexes are made from
    the input batches as they pass instead of from a walk of the built location.
    """
    builder = make_builder(params, definitions, repair=repair)
    from_input = params.lossless and not repair
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval,
                nodes_per_block=nodes_per_block, tables=tables, threads=threads,
                references=references, gaps=gaps) as writer:
        indexed: set[int] = set()
        for location, batches in locations:
            record = recorder(writer.checkpoint_interval) if from_input else None
            for batch in batches:
                builder.add(location, batch)
                if record is not None:
                    record.add(batch)
                writer.add_nodes(builder.pool)
            root = builder.end_location(location)
            writer.add_nodes(builder.pool)
            if record is not None:
                writer.add_checkpoints(location, record.finish(root.start))
            else:
                writer.add_location(location, location_walker(builder.pool, root.root, root.start, location))
            indexed.add(location)
        graph = builder.finish()
        for location in sorted(graph.roots.keys() - indexed):  # defined locations never fed (spec 4.3)
            writer.add_location(location, graph.location(location))
        writer.finish(graph)
    return graph



def save_graph(graph: Graph, path: str | os.PathLike[str], *, level: int | None = None,
               checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
               nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, references: str = "auto",
               gaps: str = "auto") -> Path:
    """Write an already built graph as an archive (``references``, ``gaps`` as for `Writer`)."""
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval,
                nodes_per_block=nodes_per_block, references=references, gaps=gaps) as writer:
        writer.add_nodes(graph.pool, final=True)
        for location in graph.roots:
            writer.add_location(location, graph.location(location))
        return writer.finish(graph)
