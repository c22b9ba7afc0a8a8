"""Byte layout of a .ccg file: magics, versions, header, block framing, section kinds.

spec/format.md is the normative description; the names here follow its tables.
"""

from __future__ import annotations

import struct
from enum import IntEnum, IntFlag

MAGIC = b"\x89CCG\r\n\x1a\n"        #: first 8 bytes of every archive
END_MAGIC = b"\x89CCGEND\n"          #: last 8 bytes of every complete archive
MAJOR_VERSION = 1
#: the major version of the compact layout (spec 2.7): the header, then one bundle frame
COMPACT_MAJOR_VERSION = 2
#: the minor version that introduced DEFINITIONS `extensions`; files without them stay 1.0
EXTENSIONS_MINOR_VERSION = 1
#: the minor version that introduced the SUMMARY members peers, operations, durations, open
SUMMARY_MINOR_VERSION = 2
#: the minor version since which ROOTS lists every location the definitions define
ROOTS_COMPLETE_MINOR_VERSION = 3
#: the minor version that introduced ROOT_TABLE, LOCATION_TABLE and CHECKPOINT_TABLE
TABLES_MINOR_VERSION = 3
#: the minor version that introduced PREDICTED_NODES blocks
PREDICTED_NODES_MINOR_VERSION = 4
#: the minor version that introduced EXTENSION_TABLE
EXTENSION_TABLE_MINOR_VERSION = 4
#: the minor version that introduced the AGGREGATE_LEVEL and METRIC_LEVEL tables
AGGREGATION_MINOR_VERSION = 4
#: the minor version that introduced DICTIONARY_BUNDLE blocks
DICTIONARY_BUNDLE_MINOR_VERSION = 5
#: the minor version that introduced CODED_NODES blocks (range-coded gaps)
CODED_GAPS_MINOR_VERSION = 6
#: the minor version that introduced CODED_SOFT_NODES blocks (range-coded soft values)
CODED_SOFT_MINOR_VERSION = 7
#: the minor version that introduced AGGREGATE_SLICES, a level of any slice count (spec 4.10.3)
SLICES_MINOR_VERSION = 8
#: the compact layout's minor version that introduced the primed LZMA2 body (spec 2.9)
PRIMED_LZMA_MINOR_VERSION = 1
#: the compact layout's minor version that introduced AGGREGATE_SLICES (spec 4.10.3)
COMPACT_SLICES_MINOR_VERSION = 2
#: per layout, its major version and the latest minor version this package reads and writes
FORMAT_VERSIONS: dict[str, tuple[int, int]] = {
    "block": (MAJOR_VERSION, SLICES_MINOR_VERSION),
    "compact": (COMPACT_MAJOR_VERSION, COMPACT_SLICES_MINOR_VERSION),
}

#: magic, major u16, minor u16, reserved u32 (must be zero); in the compact layout
#: (major 2) the last field is the CRC32C of the header's first 12 bytes and the body
FILE_HEADER = struct.Struct("<8sHHI")
#: kind u16, flags u16, payload length u64; the payload follows, then its CRC32C
BLOCK_HEADER = struct.Struct("<HHQ")
BLOCK_CRC = struct.Struct("<I")
#: footer block length u64, END_MAGIC
TRAILER = struct.Struct("<Q8s")
#: kind u16, flags u16, reserved u32, offset u64, payload length u64, raw length u64,
#: first u64, count u64
DIRECTORY_ENTRY = struct.Struct("<HHIQQQQQ")
#: location u64, root node u64, start i64, end i64, events u64
ROOT_ENTRY = struct.Struct("<QQqqQ")

BLOCK_OVERHEAD = BLOCK_HEADER.size + BLOCK_CRC.size


def largest_raw_length(stored_length: int, minor: int) -> int:
    """The most a compressed payload may expand to: 1 MiB, or 4096 times its stored size
    (65536 times from format 1.3 on, above the ~32768 a zstd frame can reach, which the
    tables of regular locations come close to). Writers store a payload that compresses
    better than that uncompressed; readers refuse a directory entry that claims more, so
    a damaged file cannot demand a huge allocation."""
    return max(1 << 20, (65536 if minor >= TABLES_MINOR_VERSION else 4096) * stored_length)


def readable_raw_length(stored_length: int) -> int:
    """The most a reader lets a compressed payload expand to, whatever the header's minor
    version (spec 7 and 3: no CRC covers the minor version of the block layout, so no
    bound may depend on it): the larger bound of `largest_raw_length`."""
    return largest_raw_length(stored_length, TABLES_MINOR_VERSION)


class SectionKind(IntEnum):
    """What a block holds. Kinds 16-31 are reserved for the aggregation tables."""

    FOOTER = 0
    DEFINITIONS = 1
    PARAMETERS = 2
    NODES = 3
    ROOTS = 4
    SNAPSHOTS = 5
    SUMMARY = 6
    ROOT_TABLE = 7        #: since 1.3, instead of ROOTS
    LOCATION_TABLE = 8    #: since 1.3, the DEFINITIONS lists that grow with the locations
    CHECKPOINT_TABLE = 9  #: since 1.3, instead of SNAPSHOTS and SUMMARY
    EXTENSION_TABLE = 10  #: since 1.4, the DEFINITIONS member `extensions` as columns
    BUNDLE = 11           #: since 1.4, several small sections in one zstd frame
    PREDICTED_NODES = 12  #: since 1.4, a NODES block whose child references are predicted
    DICTIONARY_BUNDLE = 13  #: since 1.5, a BUNDLE compressed with the bundle dictionary
    CODED_NODES = 14      #: since 1.6, a PREDICTED_NODES block whose gaps are range-coded
    CODED_SOFT_NODES = 15  #: since 1.7, a CODED_NODES block whose soft values are range-coded too
    AGGREGATE_LEVEL = 16  #: since 1.4, one level of the aggregation pyramid
    METRIC_LEVEL = 17     #: since 1.4, one level of the metric-integral pyramid
    AGGREGATE_SLICES = 18  #: since 1.8 (2.2), an aggregation level of any slice count


#: The section kinds that hold node blocks.
NODE_KINDS = frozenset({SectionKind.NODES, SectionKind.PREDICTED_NODES, SectionKind.CODED_NODES,
                        SectionKind.CODED_SOFT_NODES})
#: The blocks of the aggregation tables, each a level of its directory `count` slices: the
#: pyramid's and the level of any slice count (spec 4.10, 4.10.3).
AGGREGATION_KINDS = (SectionKind.AGGREGATE_LEVEL, SectionKind.AGGREGATE_SLICES)
#: The node block kinds whose child references are predicted (spec 5.7).
PREDICTED_KINDS = frozenset({SectionKind.PREDICTED_NODES, SectionKind.CODED_NODES, SectionKind.CODED_SOFT_NODES})


def block_coding(kind: int) -> dict[str, bool]:
    """How a node block of ``kind`` stores its streams, as the keyword arguments of the
    node block decoders: predicted child references (5.7), coded gaps (5.8), coded soft
    values (5.9)."""
    return {"predicted": kind in PREDICTED_KINDS,
            "coded": kind in (SectionKind.CODED_NODES, SectionKind.CODED_SOFT_NODES),
            "coded_soft": kind == SectionKind.CODED_SOFT_NODES}


RESERVED_AGGREGATION = range(16, 32)


class BlockFlags(IntFlag):
    MUST_UNDERSTAND = 1  #: a reader that does not know the kind must refuse the file
    ZSTD = 2             #: the payload is one zstd frame

    @classmethod
    def known(cls) -> int:
        return int(cls.MUST_UNDERSTAND | cls.ZSTD)
