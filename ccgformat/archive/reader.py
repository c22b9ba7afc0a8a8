"""The lazy .ccg reader: opening reads the header and the footer; every other block is
checked and decompressed when first needed and kept in a bounded LRU cache.

The walker of `ccgformat.graph.walk` runs unchanged on an `ArchivePool`, whose columns
fetch nodes from their blocks on demand (dissertation 4.6: restore in one pass is
possible because children precede parents; here restore is lazy and per block). With the
native core, blocks are decoded in C, and the native walker reaches them through
`ArchivePool.native_block` and `ArchivePool.block_first`.
"""

from __future__ import annotations

import bisect
import mmap
import os
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import numpy as np

from ..aggregate_model import AggregateModel, Hierarchy
from ..errors import CorruptArchiveError, TruncatedError, UnsupportedVersionError
from ..graph.graph import LocationRoot, chosen_roots, root_columns
from ..graph.pool import NodeKind
from ..graph.walk import LocationWalker
from ..hierarchy import hierarchy_of
from ..model import Definitions, EventBatch
from ..ordering import sorted_distinct
from ..params import Params
from .aggregation import AggregationTables, decode_level, decode_slices, join_levels
from .metric_tables import MetricTables, decode_metric_level, join_metric_levels
from .block_ahead import BlockAhead
from .blocks import declared_length, read_block, read_compact, unpack_payload
from .compression import default_threads
from . import primed_lzma
from .bundle import BUNDLE_KINDS, DICTIONARY_FILES, bundle_dictionary, decode_bundle, member_count
from .defaults import fill_definitions, fill_parameters
from ..backends import native
from .codec import NodeBlock
from .export import ExportProgress, exporter_for
from .many import small_events
from .time_order import merge_by_time
from .native import decode_block, walker
from .queries import run_query
from .layout import (BLOCK_OVERHEAD, block_coding, COMPACT_MAJOR_VERSION, END_MAGIC, FILE_HEADER, MAGIC,
                     MAJOR_VERSION, NODE_KINDS, TRAILER, BlockFlags, SectionKind, readable_raw_length)
from .sections import DirectoryEntry, decode_directory, decode_json, decode_roots
from .jsontable import StoredDefinitions, decode_json_members, decode_json_table
from .tables import decode_checkpoint_table, decode_root_table, join_definitions

if TYPE_CHECKING:  # the optional extras of the table methods (ccgformat.interop)
    import pandas as pd
    import polars as pl
    import pyarrow as pa

#: The decoded node blocks an archive keeps, in estimated bytes (`_decoded_bytes`): a
#: 10M-event trace's blocks fit, so that the walks of many locations through shared
#: nodes do not evict each other's blocks (merged iteration of such a lossy archive was
#: 8x slower with 128 blocks).
BLOCK_CACHE_BYTES = 512 << 20
#: Bytes of a decoded block per node (columns widened to int64, measured ~150) on top of
#: its raw payload.
_DECODED_BYTES_PER_NODE = 160
#: the locations `Archive.location_events` reads at once, at most
LOCATIONS_PER_READ = 65536
_KNOWN_KINDS = {int(kind) for kind in SectionKind}


@dataclass(frozen=True)
class ArchiveStats:
    """Sizes and compression figures of an archive (dissertation 4.2.5)."""

    events: int
    N: int
    n: int
    r_nodes: float
    r_memory: float
    file_bytes: int
    bytes_per_event: float


class _Storage:
    """The bytes of an open archive: the file's map and the raw payloads of its bundle
    members. The archive and its pool both hold it, and it holds neither, so that an
    archive nobody holds is freed at once with its map and its decoded blocks (in C): a
    reference cycle would keep them until the garbage collector's next full pass."""

    def __init__(self, path: str, data: mmap.mmap) -> None:
        self.path = path
        self.map = data
        #: the raw payloads of the sections inside BUNDLE blocks
        self.members: dict[DirectoryEntry, bytes] = {}
        self.closed = False
        #: in the compact layout (spec 2.7), the directory entry of the body, the file's one
        #: bundle, and its raw payload
        self.compact_bundle: tuple[DirectoryEntry, bytes] | None = None

    def close(self) -> None:
        self.closed = True
        try:
            self.map.close()
        except BufferError:
            # a view of the map is still referenced, typically by the traceback of an error
            # raised while reading a block; the mapping is released when that view is freed
            pass

    def payload(self, entry: DirectoryEntry) -> bytes:
        """The checked, decompressed payload of one block or bundle member."""
        if self.compact_bundle is not None and entry == self.compact_bundle[0]:
            return self.compact_bundle[1]  # decoded when the file was opened
        dictionary = bundle_dictionary() if entry.kind == SectionKind.DICTIONARY_BUNDLE else None
        return unpack_payload(entry.flags, self.stored(entry), entry.raw_length, self.path, entry.offset,
                              dictionary)

    def stored(self, entry: DirectoryEntry) -> memoryview:
        """The stored payload of one block, its framing and CRC checked (of a bundle
        member: its raw payload)."""
        if self.closed:
            raise ValueError("the archive is closed")
        if entry.member >= 0:
            return memoryview(self.members[entry])
        kind, flags, stored = read_block(self.map, entry.offset, self.path, expect_kind=entry.kind)
        if flags != entry.flags or len(stored) != entry.length:
            raise CorruptArchiveError("block header disagrees with the footer", path=self.path, offset=entry.offset)
        return stored


class _Column:
    """``pool.<column>[node]`` for an archive: finds the node's block and reads one value,
    remembering it for as long as the block stays in the cache. It refers to its pool
    weakly (the pool holds its columns): read it while holding the pool."""

    __slots__ = ("_pool", "_read", "_name")

    def __init__(self, pool: ArchivePool, name: str, read: Callable[[NodeBlock, int], Any]):
        self._pool = weakref.proxy(pool)
        self._name = name
        self._read = read

    def __getitem__(self, node: int) -> Any:
        block = self._pool.block_of(node)
        memo = block.memo.get(self._name)
        if memo is None:
            memo = block.memo[self._name] = {}
        value = memo.get(node)
        if value is None:
            value = memo[node] = self._read(block, node - block.first)
        return value


class ArchivePool:
    """The node pool of an archive, with the column interface of `NodePool`."""

    def __init__(self, storage: _Storage, entries: list[DirectoryEntry]):
        self._storage = storage
        self._entries = entries
        self._firsts = [entry.first for entry in entries]
        self._cache: OrderedDict[int, NodeBlock] = OrderedDict()
        self._cached_bytes = 0
        #: the decoded bytes the cache holds at most, below `BLOCK_CACHE_BYTES` (None: that)
        self.cache_limit: int | None = None
        self._last: NodeBlock | None = None
        #: what decoded blocks' import tables say about the nodes of blocks not decoded
        #: since, by the owner block's index; checked when the owner is decoded
        self._claims: dict[int, list[_Claim]] = {}
        #: hears every block decoded and found to hold the ids the footer lists, before its
        #: import claims are checked (`verify` checks each block as the walk decodes it)
        self.on_decode: Callable[[DirectoryEntry, NodeBlock], None] | None = None
        self._ahead: BlockAhead | None = None
        self.size = entries[-1].first + entries[-1].count if entries else 0
        #: the first node id of every block, then the node count (len = blocks + 1)
        self.block_first = np.array(self._firsts + [self.size], dtype=np.int64)
        self.kind = _Column(self, "kind", lambda b, i: int(b.kind[i]))
        self.children = _Column(self, "children", lambda b, i: tuple(b.children[b.child_start[i]:b.child_start[i + 1]].tolist()))
        self.durations = _Column(self, "durations", lambda b, i: tuple(
            b.durations[b.duration_start[i]:b.duration_start[i + 1]].tolist()))
        self.key = _Column(self, "key", lambda b, i: tuple(b.key[b.key_start[i]:b.key_start[i + 1]].tolist()))
        self.soft = _Column(self, "soft", lambda b, i: tuple(b.soft[b.soft_start[i]:b.soft_start[i + 1]].tolist()))
        self.events = _Column(self, "events", lambda b, i: int(b.events[i]))
        self.total = _Column(self, "total", lambda b, i: int(b.total[i]))
        self.metric_sums = _Column(self, "metric_sums", lambda b, i: b.metric_sums(i))
        self.child_events = _Column(self, "child_events", lambda b, i: tuple(b.child_events[b.child_start[i]:b.child_start[i + 1]]))
        self.child_metric_sums = _Column(self, "child_metric_sums", lambda b, i: b.child_metric_sums(i))

    def __len__(self) -> int:
        return self.size

    def block_of(self, node: int) -> NodeBlock:
        last = self._last
        if last is not None and last.first <= node < last.first + len(last):
            return last
        if not 0 <= node < self.size:
            raise CorruptArchiveError(f"reference to node {node}, but the archive holds {self.size}",
                                      path=self._storage.path)
        return self._block(bisect.bisect_right(self._firsts, node) - 1)

    def blocks(self) -> Iterator[NodeBlock]:
        """Every node block in id order, decoded and checked like `block_of`, without
        filling the cache with those it does not hold (a scan of the whole graph, like
        building the query tables, does not evict the blocks walks use). The scan has seen
        every block before the current one, so each block's import claims are checked at
        once against the event counts and durations seen so far (none is left pending)."""
        events, total = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)
        for index, entry in enumerate(self._entries):
            block = self._cache.get(index) or self._decode(index, claims=False)
            nodes = slice(block.first, block.first + len(block))
            events[nodes], total[nodes] = block.events, block.total
            imports = block.imports
            if len(imports.ids):  # the decoder has checked that they are in earlier blocks
                self._verify(events, total, 0, _Claim(imports.ids, imports.events, imports.total, entry.offset))
            yield block

    def _decode(self, index: int, claims: bool = True) -> NodeBlock:
        """Block ``index``, decoded and checked; with ``claims`` its import claims are
        checked (or kept until the blocks they speak of are decoded)."""
        entry = self._entries[index]
        block = self._decoded(index)
        if block.first != entry.first or len(block) != entry.count:
            raise CorruptArchiveError("node block does not hold the ids the footer lists",
                                      path=self._storage.path, offset=entry.offset)
        if self.on_decode is not None:
            self.on_decode(entry, block)
        if claims:
            self._check_claims(block, entry)
        return block

    def decode_ahead(self, before: int, after: int, keep: int, again: bool = True) -> None:
        """From now on, decode the blocks near each one decoded in a thread of their own
        (`BlockAhead`; ``again``: also those decoded before), until `release` - when the
        process may run on more than one core (`compression.default_threads`; on one, as a
        rank under ``mpirun`` is, the thread would only take turns with the walk)."""
        if default_threads() < 2:
            return
        self._ahead = BlockAhead(self._read, len(self._entries), before, after, keep, again)

    def _decoded(self, index: int) -> NodeBlock:
        """Block ``index`` decoded from its payload, not yet checked against the footer."""
        if self._ahead is not None:
            return self._ahead.block(index, self._cache)
        return self._read(index)

    def _read(self, index: int) -> NodeBlock:
        entry = self._entries[index]
        return decode_block(self._storage.payload(entry), self._storage.path, entry.offset,  # type: ignore[no-any-return]
                            **block_coding(entry.kind))

    def _block(self, index: int) -> NodeBlock:
        block = self._cache.get(index)
        if block is None:
            block = self._cache[index] = self._decode(index)
            self._cached_bytes += _decoded_bytes(self._entries[index])
            limit = BLOCK_CACHE_BYTES if self.cache_limit is None else min(self.cache_limit, BLOCK_CACHE_BYTES)
            while self._cached_bytes > limit and len(self._cache) > 1:
                evicted, _ = self._cache.popitem(last=False)
                self._cached_bytes -= _decoded_bytes(self._entries[evicted])
        else:
            self._cache.move_to_end(index)
        self._last = block
        return block

    def release(self) -> None:
        """Let the decoded blocks go (the archive was closed: no block is read again)."""
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None
        self._cache.clear()
        self._cached_bytes = 0
        self._last = None

    # ----------------------------------------------------------------- native access

    def native_block(self, index: int) -> Any:
        """The ``ccg_block *`` of block ``index``, decoded and checked as `block_of` does
        (native backend only). The block's memory lives as long as the returned object,
        whether or not the cache keeps the block: a native walk holds it for its call."""
        if not native():
            raise RuntimeError("native blocks need the native backend")
        if not 0 <= index < len(self._entries):
            raise CorruptArchiveError(f"node block {index} does not exist ({len(self._entries)} blocks)",
                                      path=self._storage.path)
        return self._block(index).struct

    def _check_claims(self, block: NodeBlock, entry: DirectoryEntry) -> None:
        """A block's import table repeats the event count and duration of the children it
        takes from earlier blocks; a damaged (but well-sealed) table would mislead the
        walker, so every such claim is compared with the node itself once both blocks
        have been decoded (vectorised, per pair of blocks)."""
        index = bisect.bisect_right(self._firsts, block.first) - 1
        pending = self._claims.pop(index, [])
        if pending:
            self._compare(block, pending)
        imports = block.imports
        if not len(imports.ids):
            return
        owners = np.searchsorted(self._firsts, imports.ids, side="right") - 1
        for owner in sorted_distinct(owners).tolist():
            chosen = owners == owner
            claim = _Claim(imports.ids[chosen], imports.events[chosen], imports.total[chosen], entry.offset)
            decoded = self._cache.get(owner)
            if decoded is not None:
                self._compare(decoded, [claim])
            else:
                self._claims.setdefault(owner, []).append(claim)

    def _compare(self, block: NodeBlock, claims: list[_Claim]) -> None:
        # the block's event counts and durations as arrays, made once per block (a Python
        # block holds lists; a native block's views convert for free)
        columns = block.memo.get("claim_columns")
        if columns is None:
            columns = block.memo["claim_columns"] = {0: np.asarray(block.events, dtype=np.int64),
                                                     1: np.asarray(block.total, dtype=np.int64)}
        for claim in claims:
            self._verify(columns[0], columns[1], block.first, claim)

    def _verify(self, events: np.ndarray, total: np.ndarray, first: int, claim: _Claim) -> None:
        """A claim against the event counts and durations of the nodes from ``first`` on."""
        local = claim.ids - first
        wrong = np.flatnonzero((events[local] != claim.events) | (total[local] != claim.total))
        if len(wrong):
            i = int(wrong[0])
            node = int(claim.ids[i])
            raise CorruptArchiveError(
                f"the block at {claim.offset} says node {node} holds {int(claim.events[i])} events over "
                f"{int(claim.total[i])} ticks, its own block gives {int(events[local[i]])} over "
                f"{int(total[local[i]])}", path=self._storage.path, offset=claim.offset)


def _decoded_bytes(entry: DirectoryEntry) -> int:
    """The memory a decoded NODES block takes, estimated from its directory entry."""
    return entry.raw_length + _DECODED_BYTES_PER_NODE * entry.count


@dataclass(frozen=True)
class _Claim:
    """What one block's import table says about nodes of earlier blocks (of one earlier
    block, when claims wait for the blocks they speak of)."""

    ids: np.ndarray
    events: np.ndarray
    total: np.ndarray
    offset: int  #: of the claiming block


class Archive:
    """An open .ccg file. Cheap to open; reads what a question needs."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = str(path)
        with open(self.path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < FILE_HEADER.size:
                raise TruncatedError(f"{size} bytes is too short for an archive", path=self.path, offset=size)
            self._storage = _Storage(self.path, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
        self.file_bytes = size
        try:
            self._directory = self._read_directory()
            self._sections = self._expand_bundles()
        except BaseException:
            self._storage.close()
            raise
        self.pool = ArchivePool(self._storage, [e for e in self._sections if e.kind in NODE_KINDS])
        self._indexes: dict[DirectoryEntry, dict[Any, Any]] = {}  # decoded index sections
        self._index_blocks: dict[SectionKind, tuple[list[int], list[DirectoryEntry]]] = {}

    # ----------------------------------------------------------------- opening

    def _read_directory(self) -> list[DirectoryEntry]:
        """The blocks: from the footer; in the compact layout (spec 2.7), its one bundle."""
        magic, major, minor, reserved = FILE_HEADER.unpack_from(self._storage.map, 0)
        if magic != MAGIC:
            raise CorruptArchiveError("not a .ccg archive (bad magic)", path=self.path, offset=0)
        if major == COMPACT_MAJOR_VERSION:
            return self._read_compact()
        if major != MAJOR_VERSION:
            raise UnsupportedVersionError(f"format version {major}.{minor} is not supported by this reader "
                                          f"(major versions {MAJOR_VERSION} and {COMPACT_MAJOR_VERSION})",
                                          path=self.path, offset=8)
        if reserved:
            raise CorruptArchiveError("reserved header field is not zero", path=self.path, offset=12)
        return self._read_footer()

    def _read_compact(self) -> list[DirectoryEntry]:
        """The one DICTIONARY_BUNDLE of a file in the compact layout: its compressed bundle
        as a directory entry whose count is its member count (spec 2.7); the storage keeps
        its raw payload, decoded here once."""
        dictionary, body = read_compact(self._storage.map, self.path)
        if dictionary not in DICTIONARY_FILES:
            raise UnsupportedVersionError(f"bundle dictionary {dictionary} is unknown to this reader (it knows "
                                          f"{', '.join(map(str, DICTIONARY_FILES))})", path=self.path,
                                          offset=FILE_HEADER.size)
        offset = self._footer_offset = FILE_HEADER.size + 1  # where errors of the directory's rules point
        if dictionary == primed_lzma.DICTIONARY:
            raw = primed_lzma.decompress(body, self.path, offset)
        else:
            raw_length = declared_length(body, self.path, offset)
            if raw_length > readable_raw_length(len(body)):
                raise CorruptArchiveError(f"the compact file's zstd frame declares {raw_length} bytes from "
                                          f"{len(body)}", path=self.path, offset=offset)
            raw = unpack_payload(int(BlockFlags.ZSTD), body, raw_length, self.path, offset,
                                 bundle_dictionary(dictionary))
        entry = DirectoryEntry(SectionKind.DICTIONARY_BUNDLE, int(BlockFlags.MUST_UNDERSTAND | BlockFlags.ZSTD),
                               offset, len(body), len(raw), 0, member_count(raw, self.path, offset))
        self._storage.compact_bundle = (entry, raw)
        return [entry]

    def _read_footer(self) -> list[DirectoryEntry]:
        data, size = self._storage.map, self.file_bytes
        if size < FILE_HEADER.size + TRAILER.size:
            raise TruncatedError(f"{size} bytes is too short for an archive", path=self.path, offset=size)
        footer_length, end_magic = TRAILER.unpack_from(data, size - TRAILER.size)
        if end_magic != END_MAGIC:
            raise TruncatedError("the end marker is missing: the file is truncated or not complete",
                                 path=self.path, offset=size - 8)
        footer_offset = size - TRAILER.size - footer_length
        if footer_length < BLOCK_OVERHEAD or footer_offset < FILE_HEADER.size:
            raise CorruptArchiveError(f"footer length {footer_length} does not fit the file",
                                      path=self.path, offset=size - TRAILER.size)
        _, flags, stored = read_block(data, footer_offset, self.path, expect_kind=SectionKind.FOOTER)
        if flags != BlockFlags.MUST_UNDERSTAND:
            raise CorruptArchiveError(f"footer flags {flags:#x}: a footer has MUST_UNDERSTAND alone (it is never "
                                      f"compressed)", path=self.path, offset=footer_offset)
        if footer_offset + BLOCK_OVERHEAD + len(stored) != size - TRAILER.size:
            raise CorruptArchiveError("footer block does not end at the trailer", path=self.path,
                                      offset=footer_offset)
        directory = decode_directory(bytes(stored), self.path, footer_offset)
        self._footer_offset = footer_offset
        for entry in directory:
            if entry.offset < FILE_HEADER.size or entry.offset + BLOCK_OVERHEAD + entry.length > footer_offset:
                raise CorruptArchiveError(f"block listed at {entry.offset} with {entry.length} bytes lies "
                                          f"outside the data area", path=self.path, offset=footer_offset)
            if entry.flags & ~BlockFlags.known():
                raise CorruptArchiveError(f"unknown flags {entry.flags:#x} in the directory",
                                          path=self.path, offset=entry.offset)
            if entry.raw_length > readable_raw_length(entry.length):
                raise CorruptArchiveError(f"block at {entry.offset} claims {entry.raw_length} bytes "
                                          f"uncompressed from {entry.length}", path=self.path, offset=entry.offset)
        return directory

    def _expand_bundles(self) -> list[DirectoryEntry]:
        """The sections: the footer's blocks with every BUNDLE or DICTIONARY_BUNDLE block
        replaced by its members (decoded now, or for a compact file when it was opened: a
        writer bundles only small sections), checked together."""
        sections: list[DirectoryEntry] = []
        for block in self._directory:
            if block.kind not in _KNOWN_KINDS or block.kind not in BUNDLE_KINDS:
                sections.append(block)
                continue
            if block.first or not block.flags & BlockFlags.MUST_UNDERSTAND:
                raise CorruptArchiveError(f"a {SectionKind(block.kind).name} block's directory entry has a non-zero "
                                          f"first or lacks MUST_UNDERSTAND", path=self.path, offset=block.offset)
            for member, raw in decode_bundle(self.payload(block), block, self.path):
                self._storage.members[member] = raw
                sections.append(member)
        expected_node = 0
        for entry in sections:
            if entry.kind not in _KNOWN_KINDS and entry.flags & BlockFlags.MUST_UNDERSTAND:
                raise UnsupportedVersionError(f"section kind {entry.kind} must be understood but is "
                                              f"unknown to this reader", path=self.path, offset=entry.offset)
            if entry.kind in NODE_KINDS:
                if entry.first != expected_node or entry.count == 0:
                    raise CorruptArchiveError("node blocks do not cover consecutive ids", path=self.path,
                                              offset=entry.offset)
                if entry.count > entry.raw_length:  # every node takes at least its kind byte
                    raise CorruptArchiveError(f"node block at {entry.offset} claims {entry.count} nodes in "
                                              f"{entry.raw_length} bytes", path=self.path, offset=entry.offset)
                expected_node += entry.count
        for kinds, required in (((SectionKind.DEFINITIONS,), True), ((SectionKind.EXTENSION_TABLE,), False),
                                ((SectionKind.PARAMETERS,), True),
                                ((SectionKind.ROOTS, SectionKind.ROOT_TABLE), True),
                                ((SectionKind.LOCATION_TABLE,), False)):
            listed = sum(entry.kind in kinds for entry in sections)
            if listed > 1 or required and not listed:
                names = " or ".join(kind.name for kind in kinds)
                raise CorruptArchiveError(f"the file must hold {'exactly' if required else 'at most'} one {names} "
                                          f"section (a block the footer lists or a bundle member)", path=self.path,
                                          offset=self._footer_offset)
        return sections

    @property
    def version(self) -> tuple[int, int]:
        """The format version (major, minor) from the header."""
        _, major, minor, _ = FILE_HEADER.unpack_from(self._storage.map, 0)
        return major, minor

    @property
    def directory(self) -> list[DirectoryEntry]:
        """Every block the footer lists, in file order."""
        return list(self._directory)

    @property
    def sections(self) -> list[DirectoryEntry]:
        """Every section in file order: the footer's blocks, with the members of each
        BUNDLE or DICTIONARY_BUNDLE block in its place."""
        return list(self._sections)

    def payload(self, entry: DirectoryEntry) -> bytes:
        """The checked, decompressed payload of one block or bundle member."""
        return self._storage.payload(entry)

    def bundled(self, entry: DirectoryEntry) -> bool:
        """Whether a section is a member of a bundle, whose DEFINITIONS and PARAMETERS may
        leave out the members at their defaults (spec 2.5): its payload is not that of a
        block of its own."""
        return entry in self._storage.members

    def stored_frame(self, entry: DirectoryEntry) -> bytes | None:
        """The checked zstd frame a block is stored as, or None for a block stored raw or a
        bundle member: a merge copies a block without compressing it again."""
        if entry.member >= 0 or not entry.flags & BlockFlags.ZSTD:
            return None
        return bytes(self._storage.stored(entry))

    def _section(self, kind: SectionKind) -> DirectoryEntry:
        return next(entry for entry in self._sections if entry.kind == kind)

    def _optional_section(self, kind: SectionKind) -> DirectoryEntry | None:
        return next((entry for entry in self._sections if entry.kind == kind), None)

    def _json(self, kind: SectionKind) -> Any:
        entry = self._section(kind)
        return decode_json(self.payload(entry), kind.name, self.path, entry.offset)

    def close(self) -> None:
        self.pool.release()
        self._storage.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- metadata

    def _filled_json(self, kind: SectionKind, fill: Callable[[Any], Any]) -> Any:
        """A JSON section; a BUNDLE member's with the default values it leaves out filled
        back (spec 4.1, 4.2)."""
        entry = self._section(kind)
        document = self._json(kind)
        if entry.member < 0:
            return document
        try:
            return fill(document)
        except TypeError as error:
            raise CorruptArchiveError(f"{kind.name} section: {error}", path=self.path, offset=entry.offset) from None

    @cached_property
    def definitions(self) -> Definitions:
        entry = self._section(SectionKind.DEFINITIONS)
        document = self._filled_json(SectionKind.DEFINITIONS, fill_definitions)
        extensions = self._optional_section(SectionKind.EXTENSION_TABLE)
        if extensions is not None and isinstance(document, dict) and "extensions" in document:
            raise CorruptArchiveError("definitions section has extensions beside an EXTENSION_TABLE block",
                                      path=self.path, offset=entry.offset)
        try:
            definitions = (Definitions if extensions is None else StoredDefinitions).from_dict(document)
        except (TypeError, KeyError, ValueError, AttributeError) as error:
            raise CorruptArchiveError(f"definitions section: {error}", path=self.path, offset=entry.offset) from None
        if extensions is not None:
            # the stored bytes are copied now (they are small), so the extensions decode also after close
            stored = bytes(self._storage.stored(extensions))
            definitions.load = lambda: self._extensions(extensions, stored)
            definitions.load_members = lambda keys, wanted: decode_json_members(
                unpack_payload(extensions.flags, stored, extensions.raw_length, self.path, extensions.offset),
                self.path, extensions.offset, keys, wanted)
        table = self._optional_section(SectionKind.LOCATION_TABLE)
        if table is None:
            return definitions
        if definitions.system_tree or definitions.locations or any(c.members for c in definitions.communicators):
            raise CorruptArchiveError("definitions section lists locations beside a LOCATION_TABLE block",
                                      path=self.path, offset=entry.offset)
        return join_definitions(definitions, self.payload(table), self.path, table.offset)

    def _extensions(self, entry: DirectoryEntry, stored: bytes) -> dict[str, Any]:
        """The `extensions` an EXTENSION_TABLE block holds (``stored``: its stored payload)."""
        raw = unpack_payload(entry.flags, stored, entry.raw_length, self.path, entry.offset)
        value = decode_json_table(raw, self.path, entry.offset)
        if not isinstance(value, dict):
            raise CorruptArchiveError("extension table: the value is not an object", path=self.path,
                                      offset=entry.offset)
        return value

    @cached_property
    def hierarchy(self) -> Hierarchy:
        """The resource hierarchy over every location (`ccgformat.hierarchy`): the defined
        locations and any other location with events."""
        try:
            return hierarchy_of(self.definitions, set(range(len(self.definitions.locations))) | set(self.roots))
        except ValueError as error:
            entry = (self._optional_section(SectionKind.LOCATION_TABLE)
                     or self._section(SectionKind.DEFINITIONS))
            raise CorruptArchiveError(f"definitions: {error}", path=self.path, offset=entry.offset) from None

    def _levels(self, kind: SectionKind, decode: Callable[[bytes, str, int], Any], name: str
                ) -> tuple[list[DirectoryEntry], list[Any]]:
        """The sections of a pyramid's ``kind`` and their decoded levels, each the level and
        slice count its directory entry says."""
        entries = [entry for entry in self._sections if entry.kind == kind]
        levels = [decode(self.payload(entry), self.path, entry.offset) for entry in entries]
        for entry, level in zip(entries, levels):
            if entry.first != level.level or entry.count != level.slices:
                raise CorruptArchiveError(f"{name} level {level.level}: the directory says level {entry.first} "
                                          f"of {entry.count} slices", path=self.path, offset=entry.offset)
        return entries, levels

    @cached_property
    def aggregation_tables(self) -> AggregationTables | None:
        """The aggregation pyramid (AGGREGATE_LEVEL blocks, spec 4.10) and its level of any
        slice count (AGGREGATE_SLICES, 4.10.3), checked against itself, the hierarchy and
        the roots; None when the file has neither."""
        entries, levels = self._levels(SectionKind.AGGREGATE_LEVEL, decode_level, "aggregate")
        sliced_entries = [entry for entry in self._sections if entry.kind == SectionKind.AGGREGATE_SLICES]
        sliced = [decode_slices(self.payload(entry), self.path, entry.offset) for entry in sliced_entries]
        for entry, level in zip(sliced_entries, sliced):
            if entry.first != 0 or entry.count != level.slices:
                raise CorruptArchiveError(f"aggregate slices: the directory says first {entry.first} and "
                                          f"{entry.count} slices, not 0 and {level.slices}", path=self.path,
                                          offset=entry.offset)
        entries += sliced_entries
        if not entries:
            return None
        tables = join_levels(levels, self.hierarchy, self.path, entries[0].offset, sliced)
        held = tables.levels[0].state
        states = max(len(self.definitions.regions), int(held.max()) + 1 if len(held) else 0)
        if tables.states != states:
            raise CorruptArchiveError(f"aggregation tables have {tables.states} states, not {states} (the defined "
                                      f"regions and those with time)", path=self.path, offset=entries[0].offset)
        first, last = self.time_range
        if (tables.start, tables.stop) != (first, last + 1):
            raise CorruptArchiveError(f"aggregation tables cover {tables.start}..{tables.stop}, the trace "
                                      f"{first}..{last + 1}", path=self.path, offset=entries[0].offset)
        return tables

    @cached_property
    def metric_tables(self) -> MetricTables | None:
        """The metric-integral pyramid (METRIC_LEVEL blocks, spec 4.11), checked against
        itself, the definitions and the roots; None when the file has none."""
        entries, levels = self._levels(SectionKind.METRIC_LEVEL, decode_metric_level, "metric")
        if not entries:
            return None
        first, last = self.time_range
        rows = max(set(range(len(self.definitions.locations))) | set(self.roots), default=-1) + 1
        for entry, level in zip(entries, levels):
            if ((level.start, level.stop) != (first, last + 1) or level.metrics != len(self.definitions.metrics)
                    or level.locations != rows):
                raise CorruptArchiveError(f"metric level {level.level} covers {level.start}..{level.stop}, "
                                          f"{level.metrics} metrics and {level.locations} locations, the trace "
                                          f"{first}..{last + 1}, {len(self.definitions.metrics)} and {rows}",
                                          path=self.path, offset=entry.offset)
        return join_metric_levels(levels, self.path, entries[0].offset)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The PARAMETERS section: bounds, b, L, zstd level, provenance and build metrics."""
        document = self._filled_json(SectionKind.PARAMETERS, lambda document: fill_parameters(
            document, self._filled_json(SectionKind.DEFINITIONS, fill_definitions).get("provenance")))
        if not isinstance(document, dict):
            raise CorruptArchiveError("parameters section is not an object", path=self.path,
                                      offset=self._section(SectionKind.PARAMETERS).offset)
        return document

    @cached_property
    def params(self) -> Params:
        p = self.parameters
        try:
            _check_parameter_types(p)
            params = Params(abs_dev=p["abs_dev"], rel_dev=p["rel_dev"], rel_size=p["rel_size"],
                            rel_metric=p["rel_metric"], branching=p["branching"], search_length=p["search_length"],
                            leaf_window=p.get("leaf_window", 0),  # absent: written before the rule
                            epoch_nodes=p.get("epoch_nodes", _absent_epoch_nodes(p)))
            # absent: with deviation bounds written before the rule, with exact time of no effect
            return replace(params, representatives=p.get("representatives", Params.representatives
                                                          if params.exact_time else 0))
        except (KeyError, TypeError, ValueError) as error:  # ValueError includes CcgError
            raise CorruptArchiveError(f"parameters section: {error}", path=self.path,
                                      offset=self._section(SectionKind.PARAMETERS).offset) from None

    @cached_property
    def roots(self) -> Mapping[int, LocationRoot]:
        entry = self._roots_entry
        decode = decode_root_table if entry.kind == SectionKind.ROOT_TABLE else decode_roots
        roots = decode(self.payload(entry), self.path, entry.offset)
        locations, root, *_ = root_columns(roots)
        outside = np.flatnonzero((root < 0) | (root >= len(self.pool)))
        if len(outside):
            raise CorruptArchiveError(f"location {int(locations[outside[0]])} has root node {int(root[outside[0]])} "
                                      f"outside the {len(self.pool)} nodes", path=self.path, offset=entry.offset)
        return roots

    @property
    def _roots_entry(self) -> DirectoryEntry:
        """The ROOT_TABLE block (1.3) or the ROOTS block (1.0-1.2)."""
        return self._optional_section(SectionKind.ROOT_TABLE) or self._section(SectionKind.ROOTS)

    @property
    def timer_resolution(self) -> int:
        return self.definitions.timer_resolution

    @property
    def locations(self) -> list[int]:
        return chosen_roots(self).locations

    @property
    def time_range(self) -> tuple[int, int]:
        _, _, start, end, events = root_columns(self.roots)
        recorded = events > 0
        if not recorded.any():
            return (0, 0)
        return (int(start[recorded].min()), int(end[recorded].max()))

    @property
    def stats(self) -> ArchiveStats:
        metrics = self.parameters.get("metrics", {})
        try:
            N, n, M, m = (int(metrics[key]) for key in ("N", "n", "M", "m"))
        except (KeyError, TypeError, ValueError, OverflowError):
            raise CorruptArchiveError("parameters section lacks the build metrics", path=self.path,
                                      offset=self._section(SectionKind.PARAMETERS).offset) from None
        events = int(root_columns(self.roots)[4].sum())
        return ArchiveStats(events, N, n, N / n if n else 1.0, M / m if m else 1.0, self.file_bytes,
                            self.file_bytes / events if events else float("inf"))

    # ----------------------------------------------------------------- events

    def location(self, location: int) -> LocationWalker:
        """Random access, iteration and time search over one location's events (a
        `LocationWalker`, or under the native backend its C twin with the same interface)."""
        root = self.roots.get(location)
        if root is None:
            raise KeyError(f"no location {location} in {self.path}")
        pool = self.pool
        if (pool.kind[root.root] > NodeKind.ARTIFICIAL or pool.events[root.root] != root.events
                or pool.total[root.root] != root.end - root.start):
            raise CorruptArchiveError(f"location {location}: root node {root.root} does not match the roots "
                                      f"section", path=self.path, offset=self._roots_entry.offset)
        return walker(self.pool, root.root, root.start, location, path=self.path)

    def checkpoints(self, kind: SectionKind, location: int) -> list[dict[str, Any]]:
        """The snapshot (SNAPSHOTS) or summary (SUMMARY) checkpoints of a location, oldest
        first; empty when the archive has no such index. The checkpoints of a 1.3 file's
        CHECKPOINT_TABLE hold the members of both. The blocks whose first location is at
        most ``location`` are searched nearest first (each block lists locations from its
        first one on), so a look-up parses about one block, whatever their number."""
        firsts, tables = self._index_entries(SectionKind.CHECKPOINT_TABLE)
        if tables:
            for entry in reversed(tables[:bisect.bisect_right(firsts, location)]):
                found = self._checkpoint_table(entry).get(location)
                if found is not None:
                    return found
            return []
        firsts, entries = self._index_entries(kind)
        for entry in reversed(entries[:bisect.bisect_right(firsts, location)]):
            item = self._index_document(entry).get(location)
            if item is not None:
                checkpoints = item.get("checkpoints")
                if not isinstance(checkpoints, list):
                    raise CorruptArchiveError(f"{kind.name} section is malformed", path=self.path,
                                              offset=entry.offset)
                return checkpoints
        return []

    def _index_entries(self, kind: SectionKind) -> tuple[list[int], list[DirectoryEntry]]:
        """The blocks of an index section kind sorted by their first location, and those
        first locations."""
        found = self._index_blocks.get(kind)
        if found is None:
            entries = sorted((entry for entry in self._sections if entry.kind == kind), key=lambda e: e.first)
            found = self._index_blocks[kind] = ([entry.first for entry in entries], entries)
        return found

    def _checkpoint_table(self, entry: DirectoryEntry) -> dict[int, list[dict[str, Any]]]:
        """A CHECKPOINT_TABLE block's checkpoints by location, decoded once."""
        cached = self._indexes.get(entry)
        if cached is None:
            _, locations = decode_checkpoint_table(self.payload(entry), self.path, entry.offset)
            cached = self._indexes[entry] = dict(locations)
        return cached

    def _index_document(self, entry: DirectoryEntry) -> dict[Any, dict[str, Any]]:
        """An index section's items by location (the first of each), parsed once: a
        look-up per location, not a scan of the section."""
        cached = self._indexes.get(entry)
        if cached is None:
            document = decode_json(self.payload(entry), SectionKind(entry.kind).name, self.path, entry.offset)
            if not isinstance(document, dict) or not isinstance(document.get("locations"), list):
                raise CorruptArchiveError("index section is malformed", path=self.path, offset=entry.offset)
            cached = {}
            for item in document["locations"]:
                key = item.get("location") if isinstance(item, dict) else None
                if isinstance(key, (int, float)):  # no other JSON value equals a location id
                    cached.setdefault(key, item)
            self._indexes[entry] = cached
        return cached

    def events(self, start: int | None = None, stop: int | None = None, *,
               locations: list[int] | None = None, batch_size: int = 65536) -> Iterator[tuple[np.ndarray, EventBatch]]:
        """Events of all (or the given) locations with ``start <= time < stop`` in global time
        order (ties by location), as batches paired with each event's location."""
        chosen = self.locations if locations is None else locations
        # locations of at most one batch are walked together, the others one walker each
        left, joined = small_events(self.pool, self.roots, chosen, start, stop, batch_size, self.path)
        return merge_by_time((self._window(location, start, stop, batch_size) for location in left), batch_size,
                             joined)

    def location_events(self, locations: list[int] | None = None,
                        batch_size: int = 65536) -> Iterator[tuple[int, Iterator[EventBatch]]]:
        """Each of ``locations`` (default all) with its events in event order, as batches:
        the locations of at most ``batch_size`` events walked many at a time (one C call
        per group under the native core), each a slice of its group's batch, then the
        others streamed by a walker each; `LOCATIONS_PER_READ` locations held at once at
        most. Locations without events are left out."""
        chosen = self.locations if locations is None else list(locations)
        for first in range(0, len(chosen), LOCATIONS_PER_READ):
            left, parts = small_events(self.pool, self.roots, chosen[first:first + LOCATIONS_PER_READ], None, None,
                                       batch_size, self.path)
            for owner, batch in parts:
                cuts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1], True]).tolist() if len(owner) else [0]
                for a, b in zip(cuts[:-1], cuts[1:]):
                    yield int(owner[a]), iter([batch[a:b]])
            for location in left:
                yield location, self.location(location).events()

    def _window(self, location: int, start: int | None, stop: int | None,
                batch_size: int) -> tuple[int, Iterator[EventBatch], int]:
        """A location's events in ``[start, stop)`` as a stream of `merge_by_time`."""
        walker = self.location(location)
        first = 0 if start is None else walker.find(start)
        last = len(walker) if stop is None else walker.find(stop)
        return location, walker.events(first, last, batch_size=batch_size), max(0, last - first)

    # ----------------------------------------------------------------- queries

    def profile(self, start: int | None = None, stop: int | None = None, locations: list[int] | None = None, *,
                cache_modulus: int = 10, cache_references: int = 5,
                summary_index: bool | None = None) -> Any:
        """The summary profile of ``[start, stop)`` over ``locations`` (`ccgformat.query.profile_query`)."""
        return run_query("profile", self, start, stop, locations, cache_modulus=cache_modulus,
                         cache_references=cache_references, summary_index=summary_index)

    def calltree(self, start: int | None = None, stop: int | None = None,
                 locations: list[int] | None = None) -> Any:
        """Calls, inclusive and exclusive time per call path and location of ``[start, stop)``
        (`ccgformat.query.calltree_query`)."""
        return run_query("calltree", self, start, stop, locations)

    def timeline(self, start: int, stop: int, width: int, locations: list[int] | None = None,
                 by: str = "location", color_by: str = "group", height: int | None = None) -> Any:
        """Per-pixel exclusive-time shares of the region groups, or of the regions with the
        most exclusive time, in at most ``height`` rows by location (`ccgformat.query.timeline_query`)."""
        return run_query("timeline", self, start, stop, width, locations, by, color_by, height)

    def aggregate(self, slices: int, start: int | None = None, stop: int | None = None, states: str = "region",
                  locations: list[int] | None = None) -> AggregateModel:
        """The microscopic model of ``[start, stop)`` in ``slices`` time slices, per location
        and state (regions, or their groups), exactly (`ccgformat.query.aggregate_query`)."""
        result: AggregateModel = run_query("aggregate", self, slices, start, stop, states, locations)
        return result

    def metric_integrals(self, slices: int, start: int | None = None, stop: int | None = None,
                         metrics: list[int] | None = None, locations: list[int] | None = None) -> Any:
        """Per location, time slice and metric, the metric's integral over the slice (spec
        4.11, `ccgformat.query.metric_integrals`)."""
        return run_query("metric_integrals", self, slices, start, stop, metrics, locations)

    def topology(self, start: int | None = None, stop: int | None = None, depth: int | None = None,
                 aggregate: str = "sum", within: str | None = None) -> Any:
        """The topology graph of ``[start, stop)`` (paper 001): the containers of ``depth``
        with the ``aggregate`` of their metrics' time-weighted means, joined by the
        messages and links between them (`ccgformat.analysis.topology`)."""
        return run_query("topology", self, start, stop, depth, aggregate, within)

    def messages(self, start: int | None = None, stop: int | None = None,
                 locations: list[int] | None = None) -> Any:
        """Matched messages and collectives, held whole (`ccgformat.query.messages_query`)."""
        return run_query("messages", self, start, stop, locations)

    def iter_messages(self, start: int | None = None, stop: int | None = None,
                      locations: list[int] | None = None, ahead: bool = False) -> Any:
        """Matched messages in chunks as they complete, then the unmatched events and
        collectives, in bounded memory; with ``ahead`` the walk runs in a thread of its own,
        and nothing else may read the archive meanwhile (`ccgformat.query.iter_messages`)."""
        return run_query("iter_messages", self, start, stop, locations, ahead=ahead)

    def logical(self, scheme: str = "ravel", *, clusters: int | None = None) -> Any:
        """Logical steps, phases, lateness and per-phase clusters (at most ``clusters``
        each) of the communication events by ``scheme``, ``"ravel"`` or ``"lamport"``
        (`ccgformat.query.logical_query`)."""
        return run_query("logical", self, scheme, clusters)

    def streamed_logical(self, scheme: str = "ravel", *, clusters: int | None = None) -> Any:
        """`logical` in bounded memory: a context manager whose answer spools the closed
        phases to a temporary file and reads them back a location at a time
        (`ccgformat.query.logical_spool`)."""
        return run_query("streamed_logical", self, scheme, clusters)

    def overview(self, slices: int = 30, p: float | None = None, states: str = "region", start: int | None = None,
                 stop: int | None = None, normalize: bool = False, kind: str = "spatiotemporal") -> Any:
        """The optimal spatiotemporal (or spatial, temporal) aggregation of the model of
        ``[start, stop)`` at gain/loss ratio ``p`` (`ccgformat.query.overview_query`)."""
        return run_query("overview", self, slices, p, states, start, stop, normalize, kind)

    # ----------------------------------------------------------------- tables

    def to_arrow_batches(self, start: int | None = None, stop: int | None = None,
                         locations: list[int] | None = None, batch_size: int = 65536) -> pa.RecordBatchReader:
        """The events of ``[start, stop)`` as a ``pyarrow.RecordBatchReader`` streaming one
        row per event in global time order, one batch in memory at a time (columns:
        `ccgformat.interop.events`; extra ``arrow``)."""
        return run_query("to_arrow_batches", self, start, stop, locations, batch_size)

    def to_arrow(self, start: int | None = None, stop: int | None = None,
                 locations: list[int] | None = None) -> pa.Table:
        """The events of ``[start, stop)`` as a ``pyarrow.Table``, one row per event
        (`to_arrow_batches`; extra ``arrow``)."""
        return run_query("to_arrow", self, start, stop, locations)

    def to_pandas(self, start: int | None = None, stop: int | None = None,
                  locations: list[int] | None = None) -> pd.DataFrame:
        """The events of ``[start, stop)`` as a ``pandas.DataFrame`` (`to_arrow`; extras
        ``arrow`` and ``pandas``)."""
        return run_query("to_pandas", self, start, stop, locations)

    def to_polars(self, start: int | None = None, stop: int | None = None,
                  locations: list[int] | None = None) -> pl.DataFrame:
        """The events of ``[start, stop)`` as a ``polars.DataFrame`` (`to_arrow`; extras
        ``arrow`` and ``polars``)."""
        return run_query("to_polars", self, start, stop, locations)

    # ----------------------------------------------------------------- notebooks

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    # ----------------------------------------------------------------- export

    def export(self, target: str | os.PathLike[str], to: str | None = None, *,
               progress: ExportProgress | None = None, logical: Any = None) -> Path:
        """Write the trace to another format: ``to`` names it (``otf2``, ``paje``,
        ``chrome``...), else the target's suffix decides. The target is written atomically
        and never replaces this archive's own file. ``progress`` is called with the number
        of events just written, as the export goes. ``logical`` (OTF2 only): a scheme's
        name or an answer of `logical`, whose steps, phases and lateness the events then
        carry as attributes (docs/logical.md)."""
        target = Path(target)
        if target.exists() and os.path.samefile(target, self.path):
            raise FileExistsError(17, "the export target is the archive itself", str(target))
        exporter_for(target, to).run(self, target, progress, logical=logical)
        return target


def _absent_epoch_nodes(parameters: dict[str, Any]) -> int:
    """``epoch_nodes`` of a file without the member (spec 4.2): the default where the
    graph stores at most that many nodes (the same graph under it), else 0 (a file
    written before the member, whose index never started empty)."""
    stored = parameters.get("metrics", {}).get("n", 0)
    return Params.epoch_nodes if isinstance(stored, int) and stored <= Params.epoch_nodes else 0


def open_archive(path: str | os.PathLike[str]) -> Archive:
    """Open a .ccg archive (`ccgformat.open`)."""
    return Archive(Path(path))


#: The PARAMETERS members and their types (spec 4.2), checked where present: a number is
#: an integer or a fraction, never a string or a boolean; `metrics` holds N, n, M, m.
_PARAMETER_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    **{name: ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
       for name in ("abs_dev", "branching", "search_length", "leaf_window", "representatives", "epoch_nodes",
                    "zstd_level",
                    "checkpoint_interval", "nodes_per_block")},
    **{name: ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
       for name in ("rel_dev", "rel_size", "rel_metric")},
    "converter": ("a string", lambda v: isinstance(v, str)),
    "provenance": ("an object", lambda v: isinstance(v, dict)),
    "metrics": ("an object of integers N, n, M and m", lambda v: isinstance(v, dict) and all(
        isinstance(v.get(key), int) and not isinstance(v.get(key), bool) for key in ("N", "n", "M", "m"))),
}


def _check_parameter_types(document: dict[str, Any]) -> None:
    """Raise TypeError naming the first PARAMETERS member whose type is not that of spec 4.2."""
    for name, (expected, fits) in _PARAMETER_TYPES.items():
        if name in document and not fits(document[name]):
            raise TypeError(f"{name} must be {expected}, got {type(document[name]).__name__} "
                            f"{_short_repr(document[name])}")


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
