"""Node blocks moved before the merge (docs/parallel.md): each rank of an MPI conversion
moves its own part's node ids to where the merged file numbers them and compresses the
blocks at the merge's level itself, all ranks at once, into a file beside its part; the
blocks way of the merge (`blocks.write_blocks`) then stores those frames as they are
(dissertation 4.7.4: parts numbered disjointly, united by concatenation).

The file is the zstd frames one after another; their `MovedBlock` list, which says where
each starts, travels with the ranks' table rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

from ..blocks import unpack_payload
from ..codec import moved_block
from ..layout import NODE_KINDS, BlockFlags, SectionKind
from ..reader import Archive
from ..compression import Recompressed
from ..writer import nodes_level


class MovedBlock(NamedTuple):
    """One node block of a moved-blocks file."""

    kind: int        #: its `SectionKind` (NODES or CODED_NODES)
    first: int       #: its first node id in the merged file
    count: int
    raw_length: int  #: its payload's bytes
    length: int      #: its zstd frame's bytes in the file


#: a moved-blocks file and its blocks
Moved = tuple[Path, list[MovedBlock]]


def write_moved(archive: Archive, base: int, path: Path, *, fresh: bool = False, level: int | None = None
                ) -> list[MovedBlock]:
    """Write ``archive``'s node blocks to ``path``, their ids moved up by ``base``
    (`codec.moved_block`, spec 5.3) and compressed as a merge at the writer's default
    level compresses the blocks it moves (`moved_blocks`; `compression.Recompressed`:
    within 1% of the archive's frames); with ``fresh`` or a zstd ``level`` as a writer
    (at that level) compresses node blocks (`writer.nodes_level`), whatever the archive
    stored - the part of an MPI conversion, stored at a fast level, whose frames bound
    nothing. Their list, in id order."""
    compression, blocks = nodes_level(level), []
    with open(path, "wb") as file:
        for block in moved_blocks(archive, base):
            if fresh or level is not None:
                frame = compression.compress(block.raw)
            else:  # as the merge stores them: the first archive's as they are
                frame = block.frame or Recompressed(compression, block.before).compress(block.raw)
            file.write(frame)
            blocks.append(MovedBlock(int(block.kind), block.first, block.count, len(block.raw), len(frame)))
    return blocks


class SourceBlock(NamedTuple):
    """A node block of a source archive as a merged file stores it."""

    kind: SectionKind
    raw: bytes           #: its payload, node ids moved
    first: int           #: its first node id in the merged file
    count: int
    frame: bytes | None  #: the zstd frame the source stores, when the payload is the source's
    before: int | None   #: the bytes the source stores it in (None: compressed as a new block is)


def moved_blocks(archive: Archive, base: int) -> Iterator[SourceBlock]:
    """The node blocks of ``archive`` in id order, every node id moved up by ``base``
    (`codec.moved_block`); when ``base`` is 0 with the archive's own frames (the blocks
    are copied as stored), else without (the writer compresses the moved payload again,
    on its threads, `compression.Recompressed`)."""
    for entry in sorted((e for e in archive.sections if e.kind in NODE_KINDS), key=lambda e: e.first):
        kind, raw = SectionKind(entry.kind), archive.payload(entry)
        if base:
            moved = moved_block(raw, base, child_ids=kind == SectionKind.NODES)
            yield SourceBlock(kind, moved, base + entry.first, entry.count, None, entry.length)
        else:
            yield SourceBlock(kind, raw, entry.first, entry.count, archive.stored_frame(entry), entry.length)


def read_moved(path: Path, blocks: Sequence[MovedBlock]) -> Iterator[tuple[MovedBlock, bytes, bytes]]:
    """Each of ``blocks`` of the file ``path`` with its payload and zstd frame (checked as
    a block read from an archive is: `blocks.unpack_payload`)."""
    offset = 0
    with open(path, "rb") as file:
        for block in blocks:
            frame = file.read(block.length)
            yield block, unpack_payload(BlockFlags.ZSTD, memoryview(frame), block.raw_length, str(path), offset), frame
            offset += block.length
