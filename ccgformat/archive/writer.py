"""The streaming, atomic .ccg writer (spec/format.md; dissertation 4.6 serialization).

Nodes are written bottom-up in id order, which is the order the builder finalizes them,
so node blocks can leave as soon as they fill while the builder goes on: memory is
bounded by the node pool, never by the event count. The file is written under a
temporary name in the target's folder, flushed to disk and renamed at the end
(`ccgformat.atomic`); a failure leaves no file under the target name.
"""

from __future__ import annotations

import os
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
from .indexes import Checkpoint, checkpoints
from .layout import (BLOCK_OVERHEAD, DIRECTORY_ENTRY, END_MAGIC, EXTENSIONS_MINOR_VERSION, FILE_HEADER, MAGIC,
                     MAJOR_VERSION, ROOTS_COMPLETE_MINOR_VERSION, SUMMARY_MINOR_VERSION, TABLES_MINOR_VERSION,
                     TRAILER, BlockFlags, SectionKind,
                     largest_raw_length)
from .native import builder as make_builder, node_encoder, walker as location_walker
from .sections import DirectoryEntry, encode_directory, encode_json, encode_roots
from .checkpoint_columns import CheckpointColumns
from .tables import encode_checkpoint_columns, encode_root_table, split_definitions

DEFAULT_LEVEL = 19
DEFAULT_CHECKPOINT_INTERVAL = 65536
DEFAULT_NODES_PER_BLOCK = 4096
LOCATIONS_PER_INDEX_BLOCK = 64
#: checkpoints that fill a CHECKPOINT_TABLE block (a location's are never split)
CHECKPOINTS_PER_TABLE_BLOCK = 4096
#: LOCATION_TABLE bytes (before compression) up to which the whole DEFINITIONS in JSON
#: is tried as well (about 1,200 locations of regular names)
WHOLE_DEFINITIONS_TRIAL = 16384


class Writer:
    """Writes one archive. Use as a context manager; `finish` makes the file appear.

    With ``tables`` (the default) the per-location sections are the columnar tables of
    format 1.3; without, they are ROOTS, the JSON SNAPSHOTS and SUMMARY and the whole
    DEFINITIONS in JSON, which readers of 1.0-1.2 read too.
    """

    def __init__(self, path: str | os.PathLike[str], *, level: int = DEFAULT_LEVEL,
                 checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                 nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True):
        if not 1 <= level <= 22:
            raise ValueError(f"zstd level must be in 1..22, got {level}")
        if checkpoint_interval < 1 or nodes_per_block < 1:
            raise ValueError("checkpoint_interval and nodes_per_block must be positive")
        self.path = Path(path)
        self.level = level
        self.checkpoint_interval = checkpoint_interval
        self.nodes_per_block = nodes_per_block
        self.tables = tables
        self._output = AtomicOutput(self.path)
        try:
            self._file = open(self._output.path, "wb")
        except BaseException:
            self._output.discard()
            raise
        self._directory: list[DirectoryEntry] = []
        self._nodes_written = 0
        self._encoder = node_encoder()
        self._indexes: list[tuple[int, list[Checkpoint]]] = []
        self._summaries = False  # whether a SUMMARY block (with the members of 1.2) was written
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

    def _stored(self, raw: bytes) -> tuple[bytes, BlockFlags]:
        """The payload as a block stores it, and whether compressed."""
        stored = compress(raw, self.level)
        if len(raw) > largest_raw_length(len(stored), TABLES_MINOR_VERSION if self.tables else 0):
            return raw, BlockFlags(0)
        return stored, BlockFlags.ZSTD

    def _block(self, kind: SectionKind, raw: bytes, *, must_understand: bool, first: int = 0,
               count: int = 0, stored: tuple[bytes, BlockFlags] | None = None) -> None:
        payload, flags = stored or self._stored(raw)
        flags |= BlockFlags.MUST_UNDERSTAND if must_understand else 0
        self._directory.append(DirectoryEntry(kind, int(flags), self._offset, len(payload), len(raw), first, count))
        self._emit(frame_block(kind, int(flags), payload))

    def _definitions(self, definitions: Definitions) -> None:
        """DEFINITIONS, with the lists that grow with the locations in a LOCATION_TABLE
        when the tables are on and that makes the file smaller (a few locations are
        smaller in the JSON than the table's block costs; a table of more than
        WHOLE_DEFINITIONS_TRIAL bytes is taken without compressing the whole JSON, which
        costs a second per 10^5 locations at level 19)."""
        if self.tables:
            split, table = split_definitions(definitions)
            split_json = encode_json(split)
            parts = self._stored(split_json), self._stored(table)
            size = len(parts[0][0]) + len(parts[1][0]) + BLOCK_OVERHEAD + DIRECTORY_ENTRY.size
            if len(table) > WHOLE_DEFINITIONS_TRIAL:
                whole = None
            else:
                document = encode_json(definitions.to_dict())
                whole = self._stored(document)
            if whole is None or size < len(whole[0]):
                self._block(SectionKind.DEFINITIONS, split_json, must_understand=True, stored=parts[0])
                self._block(SectionKind.LOCATION_TABLE, table, must_understand=True, stored=parts[1])
                return
        else:
            document = encode_json(definitions.to_dict())
            whole = self._stored(document)
        self._block(SectionKind.DEFINITIONS, document, must_understand=True, stored=whole)

    def add_nodes(self, pool: NodePool, *, final: bool = False) -> None:
        """Write the pool's new nodes in full blocks (and, if ``final``, the remainder)."""
        while len(pool) - self._nodes_written >= (1 if final else self.nodes_per_block):
            first = self._nodes_written
            stop = min(len(pool), first + self.nodes_per_block)
            self._block(SectionKind.NODES, self._encoder.encode(pool, first, stop), must_understand=True,
                        first=first, count=stop - first)
            self._nodes_written = stop

    def add_location(self, location: int, walker: LocationWalker) -> None:
        """Record the snapshot and summary indexes of a finished location; they are written
        in CHECKPOINT_TABLE blocks of whole locations holding CHECKPOINTS_PER_TABLE_BLOCK
        checkpoints or more (the last fewer), or in the JSON layout in groups of up to
        LOCATIONS_PER_INDEX_BLOCK locations."""
        self._indexes.append((location, checkpoints(walker, self.checkpoint_interval)))
        self._pending_checkpoints += len(self._indexes[-1][1])
        if self._pending_checkpoints >= CHECKPOINTS_PER_TABLE_BLOCK if self.tables else \
                len(self._indexes) == LOCATIONS_PER_INDEX_BLOCK:
            self._flush_indexes()

    def add_checkpoints(self, columns: CheckpointColumns) -> None:
        """Record the checkpoints of many finished locations (after those of `add_location`),
        in the CHECKPOINT_TABLE blocks `add_location` would write for them one at a time."""
        if not self.tables:
            raise ValueError("checkpoint columns are written as tables; this writer writes the JSON layout")
        self._flush_indexes()
        for part in columns.blocks(CHECKPOINTS_PER_TABLE_BLOCK):
            self._checkpoint_block(part)

    def _checkpoint_block(self, columns: CheckpointColumns) -> None:
        self._block(SectionKind.CHECKPOINT_TABLE, encode_checkpoint_columns(self.checkpoint_interval, columns),
                    must_understand=False, first=int(columns.locations[0]), count=len(columns))
        self._summaries = True

    def _flush_indexes(self) -> None:
        if not self._indexes:
            return
        self._indexes.sort(key=lambda item: item[0])
        first = self._indexes[0][0]
        if self.tables:
            self._checkpoint_block(CheckpointColumns.from_checkpoints(self._indexes))
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
        footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND),
                             encode_directory(self._directory))
        self._emit(footer)
        self._emit(TRAILER.pack(len(footer), END_MAGIC))
        # the lowest minor version whose features the file uses
        minor = TABLES_MINOR_VERSION if self.tables else ROOTS_COMPLETE_MINOR_VERSION \
            if graph.definitions.locations else SUMMARY_MINOR_VERSION if self._summaries \
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
                repair: bool = False, level: int = DEFAULT_LEVEL,
                checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, tables: bool = True) -> Graph:
    """Build and write an archive in one streaming pass, one location after another.

    Node blocks are written as they fill and each location's indexes as soon as it ends,
    so only the node pool stays in memory. Defined locations that ``locations`` leaves
    out are written without events. ``tables``: as for `Writer`. Returns the built graph.
    """
    builder = make_builder(params, definitions, repair=repair)
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval,
                nodes_per_block=nodes_per_block, tables=tables) as writer:
        indexed: set[int] = set()
        for location, batches in locations:
            for batch in batches:
                builder.add(location, batch)
                writer.add_nodes(builder.pool)
            root = builder.end_location(location)
            writer.add_nodes(builder.pool)
            writer.add_location(location, location_walker(builder.pool, root.root, root.start, location))
            indexed.add(location)
        graph = builder.finish()
        for location in sorted(graph.roots.keys() - indexed):  # defined locations never fed (spec 4.3)
            writer.add_location(location, graph.location(location))
        writer.finish(graph)
    return graph



def save_graph(graph: Graph, path: str | os.PathLike[str], *, level: int = DEFAULT_LEVEL,
               checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
               nodes_per_block: int = DEFAULT_NODES_PER_BLOCK) -> Path:
    """Write an already built graph as an archive."""
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval,
                nodes_per_block=nodes_per_block) as writer:
        writer.add_nodes(graph.pool, final=True)
        for location in graph.roots:
            writer.add_location(location, graph.location(location))
        return writer.finish(graph)
