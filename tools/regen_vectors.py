#!/usr/bin/env python3
"""Regenerate the golden archives: spec/vectors/ and tests/data/bad/ (and spec text made from them).

This script is the only writer of those files (DESIGN.md, "Principles"): tests read
them and fail when one is missing, they never re-create them. Run it from a source
checkout after a deliberate change of the on-disk format::

    python tools/regen_vectors.py           # rewrite every golden file
    python tools/regen_vectors.py --check   # exit 1 if the files on disk differ

Output is deterministic: the events are hand-written (no random numbers), the writer is
deterministic for a given ccgformat and zstd version, and running the script twice gives
byte-identical files.

spec/vectors/NAME.ccg
    an archive, with NAME.events.txt: the events that were fed to the writer (never read
    back from the archive), one line per event, ``location time KIND field=value ...``
    naming only the kind's hard and soft columns (ccgformat.model.KIND_FIELDS), per
    location in time order, locations ascending. The first line is a comment
    ``# locations: 0 1 ...`` listing every location of the archive, including those
    without events. README.md describes each vector.
spec/vectors/<version>/ (1.2, 1.3, 1.4, 2.0)
    the vectors of earlier format versions, never rewritten; the files must match
    FROZEN_SHA256.
spec/format.md
    only the text between the markers GENERATED_START and GENERATED_END: sections 5.5
    and 5.6 show minimal.ccg's NODES block and sizes as this script writes them.
tests/data/bad/NAME.ccg
    damaged archives derived from the vectors (every_kind.ccg unless a row says), each with a row in
    tests/data/bad/README.md naming how it was made, the exception it must raise and the
    byte offset the error names.
"""

from __future__ import annotations

import os
import sys

if "PYTEST_CURRENT_TEST" in os.environ or "pytest" in sys.modules:
    raise RuntimeError("tools/regen_vectors.py writes golden files and must never run inside pytest")

import argparse
import hashlib
import json
import shutil
import struct
import tempfile
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import zstandard

# the package of this checkout, never an installed one (another checkout's editable install
# would write its own format into these files)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import ccgformat as ccg  # noqa: E402
from ccgformat.archive import gapcoder, primed_lzma
from ccgformat.archive.blocks import crc32c, frame_block, frame_compact
from ccgformat.archive.bundle import (bundle_dictionary, compress_with_dictionary, decode_bundle, encode_bundle,
                                      member_count)
from ccgformat.archive.codec import (BLOCK_START, SIGNED, STREAM_HEADER, STREAMS, decode_stream, encode_stream,
                                     stream_bytes, with_coded)
from ccgformat.archive.layout import (BLOCK_CRC, BLOCK_HEADER, BLOCK_OVERHEAD, COMPACT_MAJOR_VERSION, DIRECTORY_ENTRY,
                                      END_MAGIC, EXTENSIONS_MINOR_VERSION, FILE_HEADER, MAGIC, MAJOR_VERSION,
                                      PRIMED_LZMA_MINOR_VERSION, TRAILER, BlockFlags, SectionKind)
from ccgformat.archive.indexes import Checkpoint
from ccgformat.archive.jsontable import MAX_DEPTH, decode_json_table, encode_json_table
from ccgformat.archive.sections import DirectoryEntry, decode_directory, encode_directory, encode_json
from ccgformat.archive.tables import decode_checkpoint_table, encode_checkpoint_table
from ccgformat.archive.verify import verify
from ccgformat.model import (KIND_FIELDS, Communicator, Definitions, Event, EventBatch, EventKind, Location,
                             Metric, Region, SystemTreeNode)

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "spec" / "vectors"
BAD = ROOT / "tests" / "data" / "bad"

K = EventKind


# --------------------------------------------------------------------------- listings

def listing(locations: list[int], trace: dict[int, list[Event]]) -> str:
    """One line per event: ``location time KIND field=value ...`` (hard, then soft columns),
    after a comment naming every location of the archive."""
    lines = ["# locations: " + " ".join(str(location) for location in locations)]
    for location in locations:
        lines += [f"{location} {event.describe()}" for event in trace.get(location, [])]
    return "\n".join(lines) + "\n"


class Timeline:
    """Appends events with a running clock: ``at(gap, kind, ...)`` advances by ``gap``."""

    def __init__(self, start: int):
        self.time = start
        self.events: list[Event] = []

    def at(self, gap: int, kind: EventKind, **columns: int) -> None:
        self.time += gap
        self.events.append(Event(self.time, int(kind), **columns))


# --------------------------------------------------------------------------- vectors

def vector_params(**params: Any) -> ccg.Params:
    """The parameters of a vector: ``params``, and the search length L the vectors were
    first written with (1,000; the writer's default since became 16, which changes no
    vector's graph, only its PARAMETERS bytes)."""
    return ccg.Params(**{"search_length": 1000, **params})


@dataclass
class Vector:
    name: str
    summary: str                       # one paragraph for the README
    definitions: Definitions
    trace: dict[int, list[Event]]      # location -> events, the writer's input
    params: ccg.Params = field(default_factory=vector_params)
    level: int = 19
    checkpoint_interval: int = 65536
    nodes_per_block: int = 4096
    notes: list[str] = field(default_factory=list)
    #: (kind, flags) of a block of a kind no version assigns, inserted before the footer
    unknown_block: tuple[int, int] | None = None
    #: the exception a reader must refuse the file with (then the vector has no listing)
    refused: str | None = None
    #: the columnar tables of format 1.3 (the writer's default); False: the JSON-index layout
    tables: bool = True
    #: how node blocks store child references (writer.REFERENCE_CODINGS)
    references: str = "auto"
    #: the aggregation tables' share of the bytes before them (format 1.4, spec 4.10); None: none
    aggregation: float | None = ccg.archive.AGGREGATION_BUDGET
    #: the slice count of the AGGREGATE_SLICES level (format 1.8, spec 4.10.3): none but in
    #: `aggregate_slices`, so that the vectors made before it keep their bytes and version
    slices: int | None = None
    #: the writer's BUNDLE block (format 1.4) for the sections written last; off for the
    #: vectors that show each section in a block of its own
    bundle: bool = False
    #: with ``bundle``, a file the bundle holds whole in the compact layout (format 2.0,
    #: spec 2.7); off for `bundle`, which shows the DICTIONARY_BUNDLE block
    compact: bool = False
    #: how node blocks store their gaps (writer.GAP_CODINGS): plain but in `coded_gaps`, so
    #: that the vectors made before coded gaps keep their bytes and version
    gaps: str = "plain"
    #: the checkpoint index (writer.INDEX_CHOICES): "always", so that the vectors show it
    #: however small the graph (spec 4.8); "auto" leaves it out of a small file
    index: str = "always"
    #: a change of the written file's bytes, for what this writer does not write (an
    #: earlier version's file, a dictionary it would not choose, a member it never writes)
    surgery: Callable[[bytes], bytes] | None = None

    @property
    def locations(self) -> list[int]:
        """Every location of the archive: each defined one (spec 4.3), with or without events."""
        return sorted(set(self.trace) | set(range(len(self.definitions.locations))))

    def events(self, location: int) -> list[Event]:
        return self.trace.get(location, [])


def minimal() -> Vector:
    A, B, C = range(3)
    events = [Event(10, K.ENTER, A), Event(20, K.ENTER, B), Event(30, K.LEAVE, B), Event(50, K.ENTER, C),
              Event(60, K.SEND, ref=1, comm=0, tag=0, size=0), Event(70, K.LEAVE, C), Event(90, K.LEAVE, A)]
    definitions = Definitions(regions=[Region("A"), Region("B"), Region("C")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              communicators=[Communicator("WORLD", (0, 1))],
                              provenance={"source": "dissertation Fig. 4.1"})
    return Vector("minimal", "The construction example of the dissertation's Fig. 4.1 on one location: "
                  "enter A 10, enter B 20, leave B 30, enter C 50, send 60 (to location 1, which is "
                  "defined and has no events, so the archive lists it with an empty root, spec 4.3), "
                  "leave C 70, leave A 90. Six nodes (five for location 0, the empty root of "
                  "location 1), nothing repeats. Sections 5.5 and 5.6 of the spec are generated "
                  "from this file.", definitions, {0: events})


def double_bits(value: float) -> int:
    """The IEEE-754 bits of a double as a signed 64-bit integer (the value column of a
    ``double`` metric)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


EVERY_KIND_REGIONS = ["main", "compute", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
                      "MPI_Allreduce", "kernel"]
MAIN, COMPUTE, MPI_SEND, MPI_RECV, MPI_ISEND, MPI_IRECV, MPI_WAIT, MPI_ALLREDUCE, KERNEL = range(9)
FP_OPS, TEMPERATURE, BALANCE = range(3)
OP_ALLREDUCE = 3  # an operation code of COLL_END
GENERIC_RECORD = 5  # the source record kind of the generic events


def every_kind_definitions() -> Definitions:
    group = {"main": "USR", "compute": "USR", "kernel": "USR"}
    return Definitions(
        regions=[Region(name, "function", "user" if name in group else "mpi", group.get(name, "MPI"))
                 for name in EVERY_KIND_REGIONS],
        system_tree=[SystemTreeNode("cluster", "machine"), SystemTreeNode("node0", "node", 0),
                     SystemTreeNode("node1", "node", 0)],
        locations=[Location("rank 0", "process", 1), Location("rank 1", "process", 1),
                   Location("rank 2", "process", 2)],
        communicators=[Communicator("MPI_COMM_WORLD", (0, 1, 2)), Communicator("pair", (0, 1))],
        metrics=[Metric("PAPI_FP_OPS", "flop", "accumulated", "int64"),
                 Metric("temperature", "degC", "absolute", "double"),
                 Metric("balance", "units", "absolute", "int64")],
        strings=["phase start", "checkpoint written", "OTF2 attribute: colour=red"],
        timer_resolution=1_000_000, clock_offset=1_700_000_000,
        provenance={"source": "hand-written", "generator": "tools/regen_vectors.py"})


def every_kind_trace() -> dict[int, list[Event]]:
    """Three ranks of a ring: three iterations each using every event kind. The compute
    and allreduce sub-trees are identical across ranks (shared nodes); the message
    sub-trees differ by peer."""
    trace = {}
    temperatures = [21.5, 22.25, -3.0e-7]
    for rank in range(3):
        right, left = (rank + 1) % 3, (rank + 2) % 3
        t = Timeline(1000)
        t.at(0, K.ENTER, ref=MAIN)
        t.at(2, K.MARKER, ref=0, value=0)
        for i in range(3):
            t.at(5, K.ENTER, ref=COMPUTE)
            if rank == 2:  # one rank does a little more work
                t.at(1, K.ENTER, ref=KERNEL)
                t.at(7, K.LEAVE, ref=KERNEL)
            t.at(3, K.METRIC, ref=FP_OPS, value=1000 * (i + 1))
            t.at(0, K.METRIC, ref=TEMPERATURE, value=double_bits(temperatures[i]))
            t.at(0, K.METRIC, ref=BALANCE, value=-42 + 25 * (i % 2))
            t.at(20, K.LEAVE, ref=COMPUTE)
            t.at(1, K.ENTER, ref=MPI_SEND)
            t.at(1, K.SEND, ref=right, comm=0, tag=7, size=1024)
            t.at(2, K.LEAVE, ref=MPI_SEND)
            t.at(1, K.ENTER, ref=MPI_RECV)
            t.at(4, K.RECV, ref=left, comm=0, tag=7, size=1024)
            t.at(1, K.LEAVE, ref=MPI_RECV)
            t.at(1, K.ENTER, ref=MPI_IRECV)
            t.at(1, K.IRECV_REQUEST, request=100 + i)
            t.at(1, K.LEAVE, ref=MPI_IRECV)
            t.at(1, K.ENTER, ref=MPI_ISEND)
            t.at(1, K.ISEND, ref=right, comm=1 if rank < 2 else 0, tag=8, request=200 + i, size=1 << 40)
            t.at(1, K.LEAVE, ref=MPI_ISEND)
            t.at(1, K.ENTER, ref=MPI_WAIT)
            t.at(3, K.REQUEST_COMPLETE, request=200 + i)
            t.at(2, K.IRECV, ref=left, comm=1 if rank > 0 else 0, tag=8, request=100 + i, size=1 << 40)
            t.at(1, K.LEAVE, ref=MPI_WAIT)
            t.at(1, K.ENTER, ref=MPI_ALLREDUCE)
            t.at(1, K.COLL_BEGIN)
            t.at(6, K.COLL_END, ref=OP_ALLREDUCE, comm=0, tag=0, size=8, recv_size=24)
            t.at(1, K.LEAVE, ref=MPI_ALLREDUCE)
            t.at(2, K.GENERIC, ref=GENERIC_RECORD, value=2)
        t.at(3, K.MARKER, ref=1, value=1)
        t.at(4, K.LEAVE, ref=MAIN)
        trace[rank] = t.events
    return trace


def every_kind() -> Vector:
    return Vector(
        "every_kind", "Three ranks of a ring, three iterations each, using every event kind: ENTER, "
        "LEAVE, SEND, RECV, ISEND, IRECV, IRECV_REQUEST, REQUEST_COMPLETE, COLL_BEGIN, COLL_END, "
        "METRIC (an accumulated int64 counter, a double metric whose value column holds the "
        "IEEE-754 bits - including a negative double - and an int64 metric with negative values), "
        "MARKER and GENERIC (value = index into the strings table). Message sizes include 2**40. "
        "Definitions use every table: regions with groups, a three-level system tree, locations "
        "attached to it, two communicators, three metrics, strings, a timer resolution of 1 MHz, a "
        "clock offset and provenance. The compute and allreduce sub-trees repeat across ranks, "
        "so compression shares nodes between locations; four nodes per block give several NODES "
        "blocks (with import tables), and a checkpoint every 16 events several "
        "checkpoints per location.",
        every_kind_definitions(), every_kind_trace(), vector_params(branching=4),
        checkpoint_interval=16, nodes_per_block=4)


def wide_split() -> Vector:
    MAIN_, F0, F1, F2 = range(4)
    t = Timeline(0)
    t.at(0, K.ENTER, ref=MAIN_)
    for i in range(100):
        region = F0 + i % 3
        t.at(3, K.ENTER, ref=region)
        t.at(5 + i % 4, K.LEAVE, ref=region)
    t.at(3, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("f0"), Region("f1"), Region("f2")],
                              locations=[Location("rank 0")])
    return Vector("wide_split", "One flat location: main calls f0, f1, f2 in turn 100 times (durations "
                  "cycling 5..8 ticks, period 12 calls) at branching factor 3, so main's 100 "
                  "children are split into a tree of artificial nodes (dissertation 4.1.2), some "
                  "of them shared because the pattern repeats.", definitions, {0: t.events},
                  vector_params(branching=3), nodes_per_block=16)


def jitter(i: int, span: int) -> int:
    """A fixed, irregular pattern in ``[0, span)`` (no random generator: deterministic
    across numpy versions)."""
    return (i * 7919 + (i * i) % 13) % span


def lossy() -> Vector:
    MAIN_, LOOP, COMPUTE_, MPI_SEND_ = range(4)
    t = Timeline(5_000)
    t.at(0, K.ENTER, ref=MAIN_)
    for i in range(40):
        t.at(10, K.ENTER, ref=LOOP)
        t.at(2, K.ENTER, ref=COMPUTE_)
        t.at(1000 + jitter(i, 40), K.LEAVE, ref=COMPUTE_)
        t.at(3, K.ENTER, ref=MPI_SEND_)
        t.at(1, K.SEND, ref=1, comm=0, tag=1, size=4096 + jitter(i, 100))
        t.at(20 + jitter(i + 5, 4), K.LEAVE, ref=MPI_SEND_)
        t.at(2, K.LEAVE, ref=LOOP)
    t.at(10, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("loop"), Region("compute"),
                                       Region("MPI_Send", paradigm="mpi", group="MPI")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              communicators=[Communicator("MPI_COMM_WORLD", (0, 1))])
    params = vector_params(abs_dev=50, rel_dev=0.05, rel_size=0.05, branching=8)
    return Vector("lossy", "One location running a loop of 40 iterations whose compute durations "
                  "(1000..1039 ticks), send durations and message sizes (4096..4195 bytes) "
                  "jitter. Written with abs_dev=50, rel_dev=0.05, rel_size=0.05: the archive "
                  "holds fewer nodes than the input needs, and the events a reader gets back are "
                  "NOT equal to the listing. They must lie within the bounds instead: same count, "
                  "kinds and hard fields; every timestamp within abs_dev ticks of the listed one; "
                  "every duration between neighbouring events and every enter-to-leave duration "
                  "within rel_dev of the listed one; every size within rel_size.",
                  definitions, {0: t.events}, params, nodes_per_block=8,
                  notes=["Bounds are read from the archive (PARAMETERS section), not assumed."])


def empty_location() -> Vector:
    MAIN_, WORK = range(2)
    events = [Event(100, K.ENTER, MAIN_), Event(110, K.ENTER, WORK), Event(150, K.LEAVE, WORK),
              Event(151, K.MARKER, ref=4, value=0), Event(160, K.LEAVE, MAIN_)]
    definitions = Definitions(regions=[Region("main"), Region("work")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              strings=["done"],
                              extensions={"otf2": {"location_ids": [7, 1 << 40], "paradigms": {"mpi": 1}}})
    return Vector("empty_location", "Two locations: location 0 with five events, location 1 with none. "
                  "The archive lists location 1 with an empty root (0 events, an artificial node "
                  "without children); its listing has no event lines, only the header names it. "
                  "Its definitions carry format-specific `extensions` (otf2: location_ids [7, "
                  "1099511627776], paradigms {mpi: 1}), a feature of format 1.1; like every archive "
                  "whose definitions define a location its header says 1.3 (the roots list every "
                  "defined location), the highest minor version whose features it uses.",
                  definitions, {0: events, 1: []})


def pending_limit() -> Vector:
    """More pending nodes than the stack holds (spec 5.3, step 4)."""
    count = PENDING_LIMIT + 4
    events = [Event(10 * i, K.MARKER, ref=0, value=i) for i in range(count)]
    definitions = Definitions(locations=[Location("rank 0")], strings=["tick"])
    return Vector("pending_limit", f"One location of {count} MARKER events with distinct values, so "
                  f"that {count} distinct atomic nodes are made before their parent, the root "
                  f"(branching {count + 1}, so it is not split). The pending stack reaches its "
                  f"limit of {PENDING_LIMIT} ids: the bottom {count - PENDING_LIMIT} entries (nodes "
                  f"0 to {count - PENDING_LIMIT - 1}) are removed, and the root references them "
                  f"explicitly through `child_id` (and the import table, as they lie in the first "
                  f"block). With {PENDING_NODES_PER_BLOCK} nodes per block the last NODES block "
                  f"starts with a `pending` stream of {PENDING_LIMIT} ids.", definitions, {0: events},
                  vector_params(branching=count + 1), nodes_per_block=PENDING_NODES_PER_BLOCK)


def four_byte_widths() -> Vector:
    """Values between 2**16 and 2**32: streams of width 4 (spec 5.2)."""
    MAIN_, F = range(2)
    events = [Event(0, K.ENTER, MAIN_), Event(100_000, K.ENTER, F),
              Event(300_000, K.SEND, ref=1, comm=0, tag=70_000, size=3_000_000_000),
              Event(4_000_000_000, K.LEAVE, F), Event(4_000_100_000, K.LEAVE, MAIN_)]
    definitions = Definitions(regions=[Region("main"), Region("f")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              communicators=[Communicator("WORLD", (0, 1))])
    return Vector("four_byte_widths", "One location whose gaps (100,000 to 3,999,700,000 ticks), "
                  "message tag (70,000, zigzag 140,000) and size (3,000,000,000, zigzag "
                  "6,000,000,000 - 8 bytes) need more than two bytes: the `gaps` and `key` streams "
                  "have width 4, the `soft` stream width 8.", definitions, {0: events})


U64 = 1 << 64


def as_int64(value: int) -> int:
    """A uint64 sample in the signed value column (the same 64 bits)."""
    return value - U64 if value >= 1 << 63 else value


#: per step of uint64_metric, its two samples of the uint64 metric
UINT64_SAMPLES = [(1 << 62, (1 << 63) + (1 << 62)),   # the step's sum 2**63 + 2**62 wraps (negative)
                  (U64 - 1, (1 << 63) + (1 << 62)),    # two differences that cancel: sum 0
                  (7, U64 - 2),                        # 7 wraps past 2**64
                  (3, 3)]                              # a difference of 0


def uint64_metric() -> Vector:
    MAIN_, STEP = range(2)
    t = Timeline(0)
    t.at(0, K.ENTER, ref=MAIN_)
    for first, second in UINT64_SAMPLES:
        t.at(10, K.ENTER, ref=STEP)
        t.at(1, K.METRIC, ref=0, value=as_int64(first))
        t.at(1, K.METRIC, ref=0, value=as_int64(second))
        t.at(1, K.LEAVE, ref=STEP)
    t.at(10, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("step")], locations=[Location("rank 0")],
                              metrics=[Metric("cycles", "cycles", "absolute", "uint64")])
    samples = ", ".join(f"({a}, {b})" for a, b in UINT64_SAMPLES)
    return Vector("uint64_metric", f"A `uint64` metric sampled twice in each of four calls of "
                  f"`step`, with samples {samples}: values at and above 2**63 (listed as the "
                  f"signed 64-bit integer with the same bits, like the value column holds them), "
                  f"differences and sub-tree sums that wrap modulo 2**64, a call whose differences "
                  f"cancel (its metric sum is 0 and still listed in `metric_sums` and the import "
                  f"table, spec 5.4) and a difference of 0. Two nodes per block, so the calls and "
                  f"the root import their children with these sums; a checkpoint every 3 events "
                  f"puts values at and above 2**63 into the checkpoints' `metrics` (CHECKPOINT_TABLE).",
                  definitions, {0: t.events}, nodes_per_block=2, checkpoint_interval=3)


#: the block kind the vectors use for a kind no format version assigns (spec 2.4)
UNKNOWN_KIND = 65535


def unknown_optional() -> Vector:
    vector = minimal()
    return replace(vector, name="unknown_optional", unknown_block=(UNKNOWN_KIND, 0), summary=(
        f"`minimal.ccg` with one more block before the footer, of kind {UNKNOWN_KIND} (which no "
        f"version assigns) without flags (optional, uncompressed), listed in the footer. A "
        f"reader MUST skip it: the file reads as `minimal.ccg`."), notes=[])


def unknown_must_understand() -> Vector:
    vector = minimal()
    return replace(vector, name="unknown_must_understand",
                   unknown_block=(UNKNOWN_KIND, int(BlockFlags.MUST_UNDERSTAND)),
                   refused="UnsupportedVersionError", summary=(
        f"`minimal.ccg` with one more block before the footer, of kind {UNKNOWN_KIND} with the "
        f"MUST_UNDERSTAND flag (uncompressed), listed in the footer. A reader MUST refuse the "
        f"file with an unsupported-version error (this implementation: "
        f"`UnsupportedVersionError` on opening, naming the block's offset); it has no listing."),
        notes=[])


PENDING_LIMIT = 4096            # spec 5.3, step 4
PENDING_NODES_PER_BLOCK = 1024

def many_locations() -> Vector:
    MAIN_, COMPUTE_ = range(2)
    count, idle = 300, 150
    trace: dict[int, list[Event]] = {}
    for i in range(count):
        t = Timeline(1000 * i + jitter(i, 50))
        t.at(0, K.ENTER, ref=MAIN_)
        t.at(5, K.ENTER, ref=COMPUTE_)
        t.at(100 + jitter(i, 7), K.LEAVE, ref=COMPUTE_)
        t.at(2, K.SEND, ref=(i + 1) % count, comm=0, tag=0, size=64)
        t.at(3 + jitter(i, 5), K.RECV, ref=(i - 1) % count, comm=0, tag=0, size=64)
        t.at(1, K.LEAVE, ref=MAIN_)
        trace[i] = [] if i == idle else t.events
    definitions = Definitions(regions=[Region("main"), Region("compute")],
                              system_tree=[SystemTreeNode("cluster", "machine")]
                              + [SystemTreeNode(f"node {j}", "node", 0) for j in range(count // 4)],
                              locations=[Location(f"rank {i}", "process", 1 + i // 4) for i in range(count)],
                              communicators=[Communicator("MPI_COMM_WORLD", tuple(range(count))),
                                             Communicator("evens", tuple(range(0, count, 2)))])
    return Vector("many_locations", f"{count} locations `rank 0` .. `rank {count - 1}` on 75 system tree nodes "
                  f"`node 0` .. `node 74` (4 ranks each) under `cluster`, each calling main and compute "
                  f"and passing a 64-byte message round a ring, with jittered start times and "
                  f"durations; location {idle} has no events. Communicators MPI_COMM_WORLD (all) and "
                  f"`evens`. A checkpoint every 4 events gives every location two.",
                  definitions, trace, checkpoint_interval=4)


def many_locations_json() -> Vector:
    vector = many_locations()
    return replace(vector, name="many_locations_json", tables=False, summary=(
        "`many_locations.ccg` written with `tables=False`: the layout of format 1.3 without the "
        "columnar tables - ROOTS (every defined location), the JSON SNAPSHOTS and SUMMARY blocks "
        "and the whole DEFINITIONS in JSON, as in format 1.2."))


def predicted_references() -> Vector:
    """PREDICTED_NODES blocks (spec 5.7) with all three kinds of reference code."""
    MAIN_, LOOP, F, MPI_SEND_ = range(4)
    t = Timeline(1_000)
    t.at(0, K.ENTER, ref=MAIN_)
    for i in range(48):
        t.at(10, K.ENTER, ref=LOOP)
        for _ in range(2):
            t.at(5, K.ENTER, ref=F)
            t.at(100 + 10 * (i % 3), K.LEAVE, ref=F)
        t.at(3, K.ENTER, ref=MPI_SEND_)
        t.at(1, K.SEND, ref=1, comm=0, tag=i % 4, size=64)
        t.at(20, K.LEAVE, ref=MPI_SEND_)
        t.at(2, K.LEAVE, ref=LOOP)
    t.at(10, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("loop"), Region("f"),
                                       Region("MPI_Send", paradigm="mpi", group="MPI")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              communicators=[Communicator("MPI_COMM_WORLD", (0, 1))])
    return Vector("predicted_references", "One location running a loop of 48 iterations, each calling "
                  "f twice with the same duration (100, 110 or 120 ticks, cycling) and sending a "
                  "message with tag 0, 1, 2, 3 in turn. Its node blocks (12 nodes each, branching 8) "
                  "are PREDICTED_NODES blocks, a feature of format 1.4: the children that are not "
                  "fresh are stored as reference codes (spec 5.7) - move-to-front ranks for the "
                  "leaves met before in the same context, import table rows for the first "
                  "reference of a block to an earlier block's node, and distances below the parent "
                  "for the first f of an iteration whose second f made the node.",
                  definitions, {0: t.events}, vector_params(branching=8), nodes_per_block=12,
                  references="predicted")


def coded_gaps() -> Vector:
    """Coded gaps (spec 5.8): every bit length class, low bits, several rows."""
    MAIN_, LOOP, F, G = range(4)
    t = Timeline(1_000)
    t.at(0, K.ENTER, ref=MAIN_)
    for i in range(30):
        jitter = (i * 2654435761) % 97  # a fixed pseudo-random sequence
        t.at(i % 2, K.ENTER, ref=LOOP)
        t.at(5, K.ENTER, ref=F)
        t.at(1_000 + 7 * jitter, K.LEAVE, ref=F)
        t.at(2 + jitter % 5, K.ENTER, ref=G)
        t.at((1 << 40) + jitter if i == 17 else 60 + jitter, K.LEAVE, ref=G)
        t.at(3, K.LEAVE, ref=LOOP)
    t.at(0, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("loop"), Region("f"), Region("g")],
                              locations=[Location("rank 0")])
    return Vector("coded_gaps", "One location running a loop of 30 iterations that call f and g "
                  "with durations from a fixed pseudo-random sequence (one g lasting 2**40 ticks "
                  "more), entering the loop 0 or 1 tick after the previous iteration. Its node blocks "
                  "(16 nodes each) are CODED_NODES blocks: predicted references and coded gaps (spec 5.8, "
                  "format 1.6): gaps of 0, 1, small and large values, in rows of several node shapes.",
                  definitions, {0: t.events}, vector_params(branching=8), nodes_per_block=16,
                  references="predicted", gaps="coded")


def coded_soft() -> Vector:
    """Coded soft values (spec 5.9): a counter's increments, a signed metric, message sizes
    and a collective's two sizes, each context a row of its own."""
    MAIN_, STEP = range(2)
    t = Timeline(1_000)
    t.at(0, K.ENTER, ref=MAIN_)
    counter = 0
    for i in range(30):
        jitter = (i * 2654435761) % 97  # a fixed pseudo-random sequence
        counter += 1_000_003 * (50 + jitter) + (1 << 40 if i == 11 else 0)
        t.at(1, K.ENTER, ref=STEP)
        t.at(20, K.METRIC, ref=0, value=counter)
        t.at(0, K.METRIC, ref=1, value=jitter - 48)
        t.at(3, K.SEND, ref=1, comm=0, tag=i % 3, size=8 * (1 + jitter))
        t.at(5, K.COLL_END, ref=0, comm=0, tag=0, size=4 * jitter, recv_size=(1 << 20) - jitter)
        t.at(2, K.LEAVE, ref=STEP)
    t.at(0, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("step")],
                              locations=[Location("rank 0"), Location("rank 1")],
                              communicators=[Communicator("MPI_COMM_WORLD", (0, 1))],
                              metrics=[Metric("PAPI_FP_OPS", "flop", "accumulated", "int64"),
                                       Metric("balance", "units", "absolute", "int64")])
    return Vector("coded_soft", "One location running 30 steps, each sampling the counter PAPI_FP_OPS "
                  "(increments from a fixed pseudo-random sequence, one 2**40 larger) and the signed metric "
                  "`balance`, sending a message of varying size to rank 1 on one of three tags and ending "
                  "a collective with varying sizes. Its node blocks (16 nodes each) are CODED_SOFT_NODES "
                  "blocks: predicted references, coded gaps and coded soft values (spec 5.9, format 1.7), "
                  "in rows per metric, per peer (its three tags share one) and per collective size column.",
                  definitions, {0: t.events}, vector_params(branching=8), nodes_per_block=16,
                  references="predicted", gaps="coded")


def extension_records() -> Vector:
    vector = many_locations()
    count = len(vector.definitions.locations)
    records = [["String", [i, f"rank {i}"]] for i in range(count)] + \
        [["Location", [i, i, 1, len(vector.trace[i]), i // 4]] for i in range(count)]
    definitions = replace(vector.definitions, extensions={"demo": {"records": records, "version": 1,
                                                                   "ratio": 0.25, "ids": [-1, (1 << 64) - 1]}})
    return replace(vector, name="extension_records", definitions=definitions, summary=(
        "`many_locations.ccg` whose definitions carry `extensions.demo`: per location a "
        "`String` and a `Location` record, as the OTF2 importer keeps them, a float and the "
        "integers -1 and 2**64 - 1. The writer stores the extensions in an EXTENSION_TABLE "
        "(format 1.4), which is smaller than their JSON."))


def aggregation() -> Vector:
    """Four ranks on two nodes of one machine, each with calls of two regions, written with
    the aggregation pyramid up to level 3 (spec 4.10)."""
    trace: dict[int, list[Event]] = {}
    for i in range(4):
        t = Timeline(100 + 10 * i)
        t.at(0, K.ENTER, ref=0)
        for step in range(3):
            t.at(20 + 5 * i, K.ENTER, ref=1 + (i + step) % 2)
            t.at(60 + 10 * step, K.LEAVE, ref=1 + (i + step) % 2)
        t.at(15, K.LEAVE, ref=0)
        trace[i] = t.events
    definitions = Definitions(regions=[Region("main"), Region("solve"), Region("exchange", paradigm="mpi")],
                              system_tree=[SystemTreeNode("machine", "machine"), SystemTreeNode("node 0", "node", 0),
                                           SystemTreeNode("node 1", "node", 0)],
                              locations=[Location(f"rank {i}", "process", 1 + i // 2) for i in range(4)])
    return Vector("aggregation", "Four ranks, `rank 0` and `rank 1` on `node 0` and `rank 2` and `rank 3` on "
                  "`node 1` of `machine`, each in main calling solve and exchange three times in turn; "
                  "written with the aggregation tables allowed three times the bytes before them, which "
                  "gives levels 0 to 3 of the pyramid (spec 4.10) over the hierarchy machine, node 0, "
                  "rank 0, rank 1, node 1, rank 2, rank 3 (seven nodes in preorder).",
                  definitions, trace, aggregation=3.0)


def aggregate_slices() -> Vector:
    """Two ranks over 6,001 ticks, written with every aggregation level: the pyramid up to
    level 10 and the level of 3,000 slices (AGGREGATE_SLICES, spec 4.10.3)."""
    trace: dict[int, list[Event]] = {}
    for i in range(2):
        t = Timeline(0)
        t.at(0, K.ENTER, ref=0)
        for step in range(5):
            t.at(100 + 37 * i + 211 * step, K.ENTER, ref=1)
            t.at(450 + 90 * step, K.LEAVE, ref=1)
        t.at(6000 - t.time, K.LEAVE, ref=0)
        trace[i] = t.events
    definitions = Definitions(regions=[Region("main"), Region("solve")],
                              locations=[Location(f"rank {i}", "process") for i in range(2)])
    return Vector("aggregate_slices", "Two ranks in main, each calling solve five times, over the window "
                  "[0, 6001); written with the aggregation tables allowed a thousand times the bytes before "
                  "them, which gives levels 0 to 10 of the pyramid (spec 4.10) and the level of 3,000 slices "
                  "(AGGREGATE_SLICES, format 1.8, spec 4.10.3; bounds `floor(j * 6001 / 3000)`) over the "
                  "hierarchy trace, rank 0, rank 1 (three nodes in preorder).",
                  definitions, trace, aggregation=1000.0, slices=3000)


def bundle() -> Vector:
    vector = minimal()
    return replace(vector, name="bundle", bundle=True, notes=[], summary=(
        "`minimal.ccg` as the writer writes it by default: its NODES, CHECKPOINT_TABLE, "
        "DEFINITIONS, PARAMETERS and ROOT_TABLE sections are members of one DICTIONARY_BUNDLE "
        "block (format 1.5, spec 2.5 and 2.6), one zstd frame compressed with the bundle "
        "dictionary, and DEFINITIONS and PARAMETERS leave out their default values (spec 4.1, "
        "4.2). `1.4/bundle.ccg` is the same trace in a BUNDLE block, as the 1.4 writer wrote it."))


def compact() -> Vector:
    vector = minimal()
    return replace(vector, name="compact", bundle=True, compact=True, notes=[], summary=(
        "`minimal.ccg` as the writer writes it by default: the members of `bundle.ccg`'s "
        "DICTIONARY_BUNDLE block as the whole file, in the compact layout (format 2.1, spec "
        "2.7): the 16-byte header, whose last field is the CRC32C, then the number of the bundle "
        "dictionary (3, spec 2.8, whose body is the smallest here) and the bundle's primed LZMA2 body "
        "(spec 2.9); no block framing, footer or trailer. `2.0/compact.ccg` is the same trace as the "
        "2.0 writer wrote it, with a zstd frame of dictionary 1."))


def metric_integrals() -> Vector:
    """Two ranks in main sampling a gauge (absolute) and a counter (accumulated), written
    with the metric pyramid (spec 4.11)."""
    trace: dict[int, list[Event]] = {}
    for i in range(2):
        t = Timeline(100 + 10 * i)
        t.at(0, K.ENTER, ref=0)
        for step in range(4):
            t.at(0 if step == 0 else 30 + 5 * i, K.METRIC, ref=0, value=2 + 3 * step + i)
            t.at(0, K.METRIC, ref=1, value=1000 * i + 250 * step * step)
        t.at(20, K.LEAVE, ref=0)
        trace[i] = t.events
    definitions = Definitions(regions=[Region("main")], locations=[Location(f"rank {i}", "process") for i in range(2)],
                              metrics=[Metric("power", "W", "absolute", "int64"),
                                       Metric("PAPI_TOT_CYC", "", "accumulated", "int64")])
    return Vector("metric_integrals", "Two ranks in main, each sampling the absolute metric `power` and the "
                  "accumulated counter `PAPI_TOT_CYC` four times; written with the tables allowed eight times "
                  "the bytes before them, which gives several levels of the metric pyramid (METRIC_LEVEL, "
                  "spec 4.11): the step integral of `power` and the increase of the counter per slice.",
                  definitions, trace, aggregation=8.0)


def oldest_definitions(**extra: Any) -> Definitions:
    """Definitions without locations, as files of format 1.0-1.2 may have them (spec 4.3)."""
    return Definitions(regions=[Region("A"), Region("B"), Region("C")], strings=["marked"], **extra)


def oldest_trace() -> dict[int, list[Event]]:
    """minimal's location 0 with a MARKER for its SEND (no location is defined to send to),
    and a location 1 of one call."""
    A, B, C = range(3)
    return {0: [Event(10, K.ENTER, A), Event(20, K.ENTER, B), Event(30, K.LEAVE, B), Event(50, K.ENTER, C),
                Event(60, K.MARKER, ref=0, value=0), Event(70, K.LEAVE, C), Event(90, K.LEAVE, A)],
            1: [Event(15, K.ENTER, B), Event(25, K.LEAVE, B)]}


def format_1_0() -> Vector:
    return Vector("format_1_0", "The oldest layout (format 1.0, header minor version 0): the minimal trace with "
                  "a MARKER for its send, and a location 1 of one call of B, written without the tables "
                  "(`tables=False`) from definitions that define no location, so the roots (ROOTS) list the "
                  "locations the writer was given (spec 4.3); no SUMMARY, no DEFINITIONS `extensions`. It is "
                  "also the file without an index (spec 4.8: no CHECKPOINT_TABLE, SNAPSHOTS or SUMMARY block, "
                  "`index=\"auto\"` on a graph this small): a reader answers every query from the graph.",
                  oldest_definitions(), oldest_trace(), tables=False, index="auto")


#: the SUMMARY members that format 1.2 added (spec 4.5)
SUMMARY_1_2_MEMBERS = ("peers", "operations", "durations", "open")


def without_summary_1_2(data: bytes) -> bytes:
    """``data`` (a file without the tables) with the members of 1.2 taken out of every
    SUMMARY checkpoint and its header's minor version set to 1, as a 1.1 writer wrote it."""
    q = parse(data)
    for k, entry in enumerate(q.entries):
        if entry.kind == SectionKind.SUMMARY:
            document = json.loads(stored_raw(q, k))
            for location in document["locations"]:
                for point in location["checkpoints"]:
                    for member in SUMMARY_1_2_MEMBERS:
                        del point[member]
            raw = encode_json(document)
            q.stored[k], q.entries[k] = zstd_frame(raw), replace(entry, raw_length=len(raw))
    q.header = FILE_HEADER.pack(MAGIC, MAJOR_VERSION, EXTENSIONS_MINOR_VERSION, 0)
    return build(q)


def format_1_1() -> Vector:
    return Vector("format_1_1", "`format_1_0.ccg` with DEFINITIONS `extensions` (format 1.1, header minor "
                  "version 1) and the JSON index, SNAPSHOTS and SUMMARY, whose SUMMARY checkpoints lack the "
                  "members of 1.2 (`peers`, `operations`, `durations`, `open`; spec 4.5), as a 1.1 writer wrote "
                  "them: this script writes the file with the index and takes the members out (the writer of "
                  "1.2 and later writes them). A reader must not assume them.",
                  oldest_definitions(extensions={"otf2": {"location_ids": [3, 4]}}), oldest_trace(), tables=False,
                  surgery=without_summary_1_2)


def two_checkpoint_tables() -> Vector:
    MAIN_, STEP = range(2)
    trace = {}
    for location in range(3):
        t = Timeline(100 * location)
        t.at(0, K.ENTER, ref=MAIN_)
        for i in range(1100):
            t.at(3, K.ENTER, ref=STEP)
            t.at(5 + (i + location) % 3, K.LEAVE, ref=STEP)
        t.at(2, K.LEAVE, ref=MAIN_)
        trace[location] = t.events
    definitions = Definitions(regions=[Region("main"), Region("step")],
                              locations=[Location(f"rank {i}") for i in range(3)])
    return Vector("two_checkpoint_tables", "Three locations of 1,100 calls of `step` in `main` (2,202 events "
                  "each) with a checkpoint at every event: 2,202 checkpoints per location, so the writer, which "
                  "closes a CHECKPOINT_TABLE block once it holds 4,096 checkpoints or more (spec 4.8), writes "
                  "two: locations 0 and 1 (`first` 0, `count` 2), then location 2 (`first` 2, `count` 1), the "
                  "first of them before the node block. A reader looks a location up in the block whose "
                  "`first` is the highest not above it.", definitions, trace, checkpoint_interval=1,
                  aggregation=None)


def variant(make: Callable[[], Vector], name: str, summary: str, **changes: Any) -> Vector:
    """The vector ``make`` gives, named ``name``, described by ``summary``, with ``changes``."""
    return replace(make(), name=name, summary=summary, **changes)


def pending_limit_predicted() -> Vector:
    return variant(pending_limit, "pending_limit_predicted", references="predicted", summary=(
        "`pending_limit.ccg` with PREDICTED_NODES blocks (spec 5.7): the pending stack passes its limit "
        "of 4,096 ids in blocks whose explicit children are reference codes, so the root's codes for the "
        "nodes that fell off the stack's bottom are import table rows."))


def pending_limit_coded() -> Vector:
    return variant(pending_limit, "pending_limit_coded", references="predicted", gaps="coded", summary=(
        "`pending_limit.ccg` with CODED_NODES blocks (spec 5.8): the pending stack passes its limit of "
        "4,096 ids in blocks with reference codes and coded gaps."))


def pending_limit_soft() -> Vector:
    """The pending stack's limit (spec 5.3) in a CODED_SOFT_NODES block (5.9)."""
    count, value, events = PENDING_LIMIT + 4, 0, []
    for i in range(count):
        value += 1000 + (i * 2654435761) % 997 * 4096 + i  # increments from a fixed pseudo-random sequence
        events.append(Event(10 * i, K.METRIC, ref=0, value=value))
    definitions = Definitions(locations=[Location("rank 0")],
                              metrics=[Metric("PAPI_TOT_CYC", "", "accumulated", "int64")])
    return Vector("pending_limit_soft", f"`pending_limit.ccg` with {count} METRIC samples of a counter whose "
                  f"increments all differ, instead of the MARKER events: {count} distinct atomic nodes before "
                  f"the root, in blocks of {PENDING_NODES_PER_BLOCK} nodes with coded gaps, the last of them, "
                  f"which starts with the full pending stack of {PENDING_LIMIT} ids and holds the root, a "
                  f"CODED_SOFT_NODES block (spec 5.9), whose coded soft values are the increments.",
                  definitions, {0: events}, vector_params(branching=count + 1),
                  nodes_per_block=PENDING_NODES_PER_BLOCK, references="predicted", gaps="coded")


MOVE_TO_FRONT_LEAVES = 70  # more than the 64 entries a move-to-front list holds (spec 5.7)


def move_to_front_limit() -> Vector:
    MAIN_, F = range(2)
    t = Timeline(0)
    t.at(0, K.ENTER, ref=MAIN_)
    for i in range(3 * MOVE_TO_FRONT_LEAVES):
        t.at(1, K.ENTER, ref=F)
        t.at(2 + i, K.MARKER, ref=0, value=i % MOVE_TO_FRONT_LEAVES)
        t.at(3, K.LEAVE, ref=F)
    t.at(1, K.LEAVE, ref=MAIN_)
    definitions = Definitions(regions=[Region("main"), Region("f")], locations=[Location("rank 0")],
                              strings=["mark"])
    n = MOVE_TO_FRONT_LEAVES
    return Vector("move_to_front_limit", f"One location calling f {3 * n} times, each call lasting one tick "
                  f"more than the one before and holding a MARKER with the value i mod {n}, in one "
                  f"PREDICTED_NODES block (spec 5.7): the calls differ, their {n} MARKER leaves are shared, so "
                  f"from the second round on every call references its leaf explicitly in the context (CALL, f, "
                  f"1 child, position 0). Its move-to-front list fills to its 64 entries and then drops its last "
                  f"entry at every insertion; as the {n} leaves come round in turn, each of them has been dropped "
                  f"when it comes again, and is coded by its distance below the parent.",
                  definitions, {0: t.events}, vector_params(branching=4 * n), references="predicted")


def metric_types() -> Vector:
    """The metric tables (spec 4.11) of every value type and mode: a double `absolute`, a
    uint64 `accumulated` counter past 2**63, an int64 `relative` and a double `rate`."""
    trace: dict[int, list[Event]] = {}
    for location in range(2):
        t = Timeline(100 + 10 * location)
        t.at(0, K.ENTER, ref=0)
        for step in range(4):
            t.at(0 if step == 0 else 25 + 5 * location, K.METRIC, ref=0, value=double_bits(20.5 + step - location))
            t.at(0, K.METRIC, ref=1, value=as_int64((1 << 63) - 1000 + 700 * step * (location + 1)))
            t.at(0, K.METRIC, ref=2, value=3 * step - 4)
            t.at(1, K.METRIC, ref=3, value=double_bits(0.125 * (step + 1)))
        t.at(20, K.LEAVE, ref=0)
        trace[location] = t.events
    definitions = Definitions(regions=[Region("main")], locations=[Location(f"rank {i}") for i in range(2)],
                              metrics=[Metric("temperature", "degC", "absolute", "double"),
                                       Metric("cycles", "", "accumulated", "uint64"),
                                       Metric("delta", "", "relative", "int64"),
                                       Metric("load", "", "rate", "double")])
    return Vector("metric_types", "Two ranks in main sampling four metrics four times each: a `double` "
                  "`absolute` temperature, a `uint64` `accumulated` counter that passes 2**63, an `int64` "
                  "`relative` metric with negative values and a `double` `rate`; written with the tables "
                  "allowed eight times the bytes before them, so that METRIC_LEVEL blocks (spec 4.11) hold the "
                  "step integrals of the double metrics, the counter's increases and the relative sums.",
                  definitions, trace, aggregation=8.0)


def with_dictionary_2(data: bytes) -> bytes:
    """A compact file (spec 2.7) whose bundle is a zstd frame of bundle dictionary 2 (2.8),
    minor version 0, from one with an LZMA2 body."""
    frame = FILE_HEADER.size + 1
    raw = primed_lzma.decompress(data[frame:], "", frame)
    return frame_compact(2, compress_with_dictionary(raw, 19, 2))


def compact_dictionary_2() -> Vector:
    return variant(compact, "compact_dictionary_2", surgery=with_dictionary_2, summary=(
        "`compact.ccg` with its bundle compressed into a zstd frame of bundle dictionary 2 (spec 2.7, "
        "2.8; format 2.0, header minor version 0), which the writer picks for files where it is the "
        "smallest; this script recompresses the bundle of `compact.ccg`, where dictionary 3 is smaller."))


def with_optional_member(data: bytes) -> bytes:
    """``data`` (a file with a DICTIONARY_BUNDLE block) with one more member, of kind 65535
    without MUST_UNDERSTAND."""
    return rebundled(data, lambda members: members.append(
        (UNKNOWN_KIND, 0, 0, 0, b"a section of a kind no version assigns\n")))


def unknown_member() -> Vector:
    return variant(bundle, "unknown_member", surgery=with_optional_member, summary=(
        f"`bundle.ccg` with one more member in its DICTIONARY_BUNDLE block, last, of kind {UNKNOWN_KIND} "
        f"(which no version assigns) without MUST_UNDERSTAND: a reader MUST skip it (spec 2.5), and the "
        f"file reads as `bundle.ccg`."))


VECTOR_BUILDERS: list[Callable[[], Vector]] = [minimal, every_kind, wide_split, lossy, empty_location,
                                               pending_limit, four_byte_widths, uint64_metric,
                                               unknown_optional, unknown_must_understand, many_locations,
                                               many_locations_json, predicted_references, extension_records, aggregation,
                                               bundle, metric_integrals, coded_gaps, coded_soft, compact,
                                               format_1_0, format_1_1, two_checkpoint_tables, pending_limit_predicted,
                                               pending_limit_coded, pending_limit_soft, move_to_front_limit, metric_types,
                                               compact_dictionary_2, unknown_member, aggregate_slices]


def write_vector(vector: Vector, folder: Path) -> bytes:
    """Write the archive (the writer adds the defined locations the trace leaves out) and,
    unless a reader must refuse it, its listing."""
    path = folder / f"{vector.name}.ccg"
    ccg.write_trace(path, vector.definitions,
                    ((location, [EventBatch.from_events(events)] if events else [])
                     for location, events in sorted(vector.trace.items())),
                    vector.params, level=vector.level, checkpoint_interval=vector.checkpoint_interval,
                    nodes_per_block=vector.nodes_per_block, tables=vector.tables, references=vector.references,
                    aggregation=vector.aggregation, bundle=vector.bundle, compact=vector.compact, gaps=vector.gaps,
                    index=vector.index, slices=vector.slices)
    if vector.unknown_block is not None:
        kind, flags = vector.unknown_block
        parsed = parse(path.read_bytes())
        payload = b"a section of a kind no version assigns\n"
        parsed.entries.append(DirectoryEntry(kind, flags, 0, len(payload), len(payload), 0, 0))
        parsed.stored.append(payload)
        path.write_bytes(build(parsed))
    if vector.surgery is not None:
        path.write_bytes(vector.surgery(path.read_bytes()))
    if vector.refused is None:
        (folder / f"{vector.name}.events.txt").write_text(listing(vector.locations, vector.trace))
    return path.read_bytes()


def listing_fields() -> list[str]:
    """The README table of the fields each kind's listing line names (records.md's key
    then soft columns)."""
    rows = ["| KIND | fields, in this order |", "|---|---|"]
    for kind in EventKind:
        fields = KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft
        rows.append(f"| {kind.name} | {' '.join(f'`{name}`' for name in fields) or '(none)'} |")
    return rows


def version_of(data: bytes) -> str:
    """The format version a file's header names, ``major.minor``."""
    return "{1}.{2}".format(*FILE_HEADER.unpack_from(data, 0))


def enumeration(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``, each word in backquotes."""
    quoted = [f"`{word}`" for word in words]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def frozen_names(version: str) -> str:
    """The vectors kept in spec/vectors/<version>/, as the README names them."""
    return enumeration(sorted(name[:-len(".ccg")] for name in FROZEN_SHA256[version] if name.endswith(".ccg")))


def vectors_readme(vectors: list[Vector], blobs: dict[str, bytes]) -> str:
    frozen_folders = enumeration([f"{version}/" for version in FROZEN_SHA256])
    ordered = sorted({tuple(map(int, version_of(data).split("."))) for data in blobs.values()})
    versions = f"{ordered[0][0]}.{ordered[0][1]} to {ordered[-1][0]}.{ordered[-1][1]}"
    out = [
        "# Golden vectors",
        "",
        "Archives written by `tools/regen_vectors.py` (the only writer of these files; never edit",
        "or regenerate them by hand or from a test). `tests/test_vectors.py` reads every",
        f"`NAME.ccg` here and in {frozen_folders} and compares its events with `NAME.events.txt`",
        "(a vector a reader must refuse: that it is refused); it fails when a file is missing.",
        "Regenerate only after a deliberate format change, and say so in the change log of",
        "`spec/format.md`: a reader must keep reading the old files, which is why the vectors of",
        "earlier format versions stay in their folders (below), byte for byte.",
        "",
        "## Listing format (`NAME.events.txt`)",
        "",
        "UTF-8 text, lines ending in LF (the last one too), produced from the events the script",
        "*fed to the writer* (never read back from the archive). The first line is a comment,",
        "`# locations: 0 1 ...`, naming every location of the archive's ROOT_TABLE or ROOTS,",
        "ascending, separated by single spaces (since format 1.3 every defined location, also",
        "those without events). Then per location, locations ascending, one line per event in",
        "the location's order, words separated by single spaces:",
        "",
        "    location time KIND field=value ...",
        "",
        "`location` and `time` (ticks) are decimal integers. `KIND` is the event kind's name",
        "(records.md, \"Kinds\"). The `field=value` words name exactly the kind's key columns and",
        "then its soft columns, in the order of records.md, which is this table:",
        "",
        *listing_fields(),
        "",
        "A kind without fields (COLL_BEGIN) ends after its name. Every value is a decimal",
        "integer, `-` for negative values, no leading zeros, no `+`: the event column as a",
        "signed 64-bit integer. A METRIC `value` is the sample's 64 bits read as a signed",
        "64-bit integer: an `int64` sample as is; a `uint64` sample at or above 2^63 as the",
        "sample minus 2^64 (`uint64` 2^64 - 1 is listed as `-1`); a `double` sample as its",
        "IEEE-754 bits (21.5 is listed as `4626744929681408000`). Example:",
        "",
        "    0 60 SEND ref=1 comm=0 tag=0 size=0",
        "",
        "Lossless vectors must read back exactly as listed. For the lossy vector the reader's",
        "events lie within the bounds recorded in the archive's PARAMETERS section (see below).",
        "A vector a reader must refuse has no listing; its description names the error.",
        "",
        f"## Vectors (format {versions}: each file's header names its version)",
        "",
    ]
    for v in vectors:
        out += [f"### `{v.name}.ccg` ({len(blobs[v.name])} bytes, format {version_of(blobs[v.name])})", "",
                v.summary, ""]
        if v.refused is not None:
            out += [f"- refused: {v.refused}", ""]
            continue
        p = v.params
        events = sum(len(e) for e in v.trace.values())
        kinds = sorted({EventKind(e.kind).name for es in v.trace.values() for e in es})
        out += [f"- locations: {locations_line(v)}; {events} events in all",
                f"- event kinds: {', '.join(kinds)}",
                f"- parameters: abs_dev={p.abs_dev}, rel_dev={p.rel_dev}, rel_size={p.rel_size}, "
                f"rel_metric={p.rel_metric}, branching={p.branching}, search_length={p.search_length}",
                f"- writer: zstd level {v.level}, checkpoint_interval {v.checkpoint_interval}, "
                f"nodes_per_block {v.nodes_per_block}",
                f"- sections: {section_summary(blobs[v.name])}"]
        out += [f"- {note}" for note in v.notes]
        out.append("")
    out += ["Together the vectors hold every section kind (DEFINITIONS, PARAMETERS, NODES, ROOT_TABLE,",
            "LOCATION_TABLE, CHECKPOINT_TABLE, EXTENSION_TABLE, in `many_locations_json.ccg` ROOTS, SNAPSHOTS and",
            "SUMMARY, in `predicted_references.ccg` PREDICTED_NODES, in `coded_gaps.ccg`",
            "CODED_NODES, in `coded_soft.ccg` CODED_SOFT_NODES, in",
            "`bundle.ccg` DICTIONARY_BUNDLE, in `1.4/bundle.ccg` BUNDLE, and the FOOTER), the compact layout",
            "(`compact.ccg`, format 2.1, and `2.0/compact.ccg`) and every event kind; the test checks that too.",
            "",
            "## Format 1.2 (`1.2/`)",
            "",
            "`minimal`, `every_kind`, `wide_split`, `lossy` and `empty_location` as this script wrote",
            "them for format 1.2 (header minor version 2), kept byte for byte: the script never",
            "rewrites them, and `--check` fails when one differs from the SHA-256 it records. They",
            "follow the rule of 1.2, under which ROOTS lists the locations the writer was given:",
            "`minimal.ccg` and `lossy.ccg` define two locations but list only location 0, and their",
            "listings' first line names only it. A reader must read them as listed.", "",
            "## Format 1.3 (`1.3/`)",
            "",
            f"{frozen_names('1.3')} as this script wrote them for format 1.3 (header minor version 3),",
            "kept byte for byte under the same rule. A reader must read them as listed.", "",
            "## Format 1.4 (`1.4/`)",
            "",
            "`bundle` as this script wrote it for format 1.4 (header minor version 4), with a BUNDLE",
            "block (spec 2.5), kept byte for byte under the same rule. A reader must read it as listed.", "",
            "## Format 2.0 (`2.0/`)",
            "",
            "`compact` as this script wrote it for format 2.0 (header minor version 0), a zstd frame",
            "compressed with bundle dictionary 1 (spec 2.6, 2.7), kept byte for byte under the same",
            "rule. A reader must read it as listed.", ""]
    return "\n".join(out)


def locations_line(vector: Vector) -> str:
    """Each location with its event count, or for many, the locations per event count."""
    if len(vector.locations) <= 8:
        return ", ".join(f"{loc} ({len(vector.events(loc))} events)" for loc in vector.locations)
    counts: dict[int, list[int]] = {}
    for location in vector.locations:
        counts.setdefault(len(vector.events(location)), []).append(location)
    return ", ".join(f"{len(locs)} with {n} events" + (f" ({', '.join(map(str, locs))})" if len(locs) <= 4 else "")
                     for n, locs in sorted(counts.items()))


def kind_name(kind: int) -> str:
    """A section kind's name, or ``kind N`` for one no version assigns."""
    return SectionKind(kind).name if kind in set(SectionKind) else f"kind {kind}"


def section_summary(data: bytes) -> str:
    if FILE_HEADER.unpack_from(data, 0)[1] == COMPACT_MAJOR_VERSION:
        members = ", ".join(kind_name(member.kind) for member, _ in compact_members(data))
        codec = "primed LZMA2 body" if data[FILE_HEADER.size] == primed_lzma.DICTIONARY else "zstd frame"
        return f"compact layout: the header, then one DICTIONARY_BUNDLE as a {codec} ({members})"
    archive = parse(data)
    counts: dict[str, int] = {}
    for entry in archive.entries:
        name = kind_name(entry.kind)
        if entry.kind in (SectionKind.BUNDLE, SectionKind.DICTIONARY_BUNDLE):
            dictionary = bundle_dictionary() if entry.kind == SectionKind.DICTIONARY_BUNDLE else None
            raw = zstandard.ZstdDecompressor(dict_data=dictionary).decompress(
                archive.stored[archive.entries.index(entry)])
            name += " (" + ", ".join(kind_name(member.kind) for member, _ in decode_bundle(raw, entry, "")) + ")"
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items()) + ", FOOTER"


# --------------------------------------------------------------------------- spec text

SPEC = ROOT / "spec" / "format.md"
#: what the spec shows of minimal.ccg: generated here, between these markers, never by hand
GENERATED_START = "<!-- generated by tools/regen_vectors.py from vectors/minimal.ccg: {name} (do not edit) -->"
GENERATED_END = "<!-- end of generated text -->"
SPEC_WIDTH = 90  # the spec's line width


def stored_raw(parsed: Parsed, k: int) -> bytes:
    stored = parsed.stored[k]
    return zstandard.ZstdDecompressor().decompress(stored) if parsed.entries[k].flags & BlockFlags.ZSTD else stored


def example_block(data: bytes) -> str:
    """Spec 5.5: minimal.ccg's NODES block in hex, one line per stream, values decoded."""
    parsed = parse(data)
    raw = stored_raw(parsed, index_of(parsed, SectionKind.NODES))
    first, count = BLOCK_START.unpack_from(raw, 0)
    lines = [(f"{raw[:8].hex()} {raw[8:12].hex()}", f"first {first}, count {count}")]
    position = BLOCK_START.size
    for name in STREAMS:
        values, end = decode_stream(raw, position)
        width = raw[position]
        planes = raw[position + STREAM_HEADER.size:end]
        words = [planes[i:i + 1].hex() for i in range(len(planes))] if width == 1 else \
            [planes[i * len(values):(i + 1) * len(values)].hex() for i in range(width)]
        shown = [int(v) for v in values]
        if name in SIGNED:
            shown = [(v >> 1) ^ -(v & 1) for v in shown]
            name += " (zigzag-decoded)"
        text = " ".join(map(str, shown)) if shown else "none"
        lines.append((" ".join([raw[position:position + 1].hex(), raw[position + 1:position + 5].hex(), *words]),
                      f"{name}: {text}"))
        position = end
    column = max(len(hex_) for hex_, _ in lines) + 2
    intro = (f"Its NODES block payload is {len(raw)} bytes (hex; after the first id and the count, one "
             f"line per stream: width, value count, then the byte planes; the values decoded on the right):")
    return "\n".join([textwrap.fill(intro, SPEC_WIDTH, break_on_hyphens=False), "", "```",
                      *(f"{hex_:<{column}}{note}" for hex_, note in lines), "```"])


def worked_sizes(data: bytes) -> str:
    """Spec 5.6: the size of every part of minimal.ccg."""
    parsed = parse(data)
    parameters = json.loads(stored_raw(parsed, index_of(parsed, SectionKind.PARAMETERS)))
    parts = ["header 16"]
    for entry in parsed.entries:
        raw = f" ({entry.raw_length} raw)" if entry.flags & BlockFlags.ZSTD else ""
        parts.append(f"{SectionKind(entry.kind).name} 16 + {entry.length}{raw}")
    footer = BLOCK_OVERHEAD + len(parsed.entries) * DIRECTORY_ENTRY.size
    parts += [f"footer 16 + {len(parsed.entries)} x {DIRECTORY_ENTRY.size} = {footer}", "trailer 16"]
    return textwrap.fill(f"For this trace, with the definitions of `vectors/minimal.ccg` and zstd level "
                         f"{parameters['zstd_level']} (python-zstandard {zstandard.__version__}), the whole "
                         f"file is {len(data):,} bytes: {'; '.join(parts)}.", SPEC_WIDTH, break_on_hyphens=False)


def generated_spec(spec: str, minimal_ccg: bytes) -> str:
    """``spec`` with the text between each pair of markers replaced by what minimal.ccg gives."""
    for name, text in (("example block", example_block(minimal_ccg)), ("sizes", worked_sizes(minimal_ccg))):
        start = GENERATED_START.format(name=name)
        if spec.count(start) != 1 or spec.find(GENERATED_END, spec.find(start)) < 0:
            raise SystemExit(f"{SPEC.relative_to(ROOT)}: the marker {start!r} (then {GENERATED_END!r}) must "
                             f"appear once")
        head, rest = spec.split(start, 1)
        spec = f"{head}{start}\n{text}\n{GENERATED_END}{rest.split(GENERATED_END, 1)[1]}"
    return spec


# --------------------------------------------------------------------------- earlier formats' vectors

#: the files of spec/vectors/<version>/ and their SHA-256: written by this script for that
#: format version, never rewritten (old vectors stay as read tests)
FROZEN_SHA256 = {
    "1.2": {
        "empty_location.ccg": "8e5e1e9f4dcf54bcf278674a2d4e60ed53b7fb561984e57b6eda7712659fdefa",
        "empty_location.events.txt": "7161604c23b830f0fd6e09b560d4595f2359b5a446cf5c0a473c61384ea36ad4",
        "every_kind.ccg": "ff08add0546c69ced9bf4a99faedb56dde1a644338db5f7474570c07042eb983",
        "every_kind.events.txt": "3cc7c52e76b1b6a3151c5bd8bf142f650ff7c7af15e39f99cee944796541c5a1",
        "lossy.ccg": "141f01ab8b1eb6a3b9c21807e24bad63695ccbe59fb4b99a105fa88e003d6f56",
        "lossy.events.txt": "97560034ab315e41b586ee4bb740c1dfad785f0f0f6536e128d74068e0ad8bb9",
        "minimal.ccg": "bc57574f430c0ab4eaa086c325dd8841808e765e2f72c4bec8c68573c715017e",
        "minimal.events.txt": "e50d30dcbf5e6b15a854535594c7d0321a9c762210a782d519e5b8273103f412",
        "wide_split.ccg": "b32231c6ef57dddbf86b8606cadc6cc87753acbf47d97eb8a34b7f742661056b",
        "wide_split.events.txt": "b33d098631e03c9fec658a5618b848e57a5d2ed0313622f4f0c2bf02b41de081",
    },
    "1.3": {
        "empty_location.ccg": "e57c9d2cface5e6e191094c6e1e8e1e7f6220e60138ca1b4c02a10b925f33170",
        "empty_location.events.txt": "7161604c23b830f0fd6e09b560d4595f2359b5a446cf5c0a473c61384ea36ad4",
        "every_kind.ccg": "eb09b08b134fd7f9d59f6fd37061e8c222597208be55859e80df77e0506167d5",
        "every_kind.events.txt": "3cc7c52e76b1b6a3151c5bd8bf142f650ff7c7af15e39f99cee944796541c5a1",
        "four_byte_widths.ccg": "e18239934fd544ac260bdaa4e321222238d23dc3a38c1543ac46cb3cd72b5f0c",
        "four_byte_widths.events.txt": "7ce3899a912a055f625f80f3a64a504240f79f63653fc16252e48c6bf97d70b3",
        "lossy.ccg": "f7516546dc3663953e9b1846f747e163bd84479e9d79b3f38123d2c13a3af17d",
        "lossy.events.txt": "841aa9a4d7637544e2a0a72a99517c7cf9548556840c54575383e65eefa98b71",
        "many_locations.ccg": "46907892769a86779cd6afafcdfd2d6fd40838648ef939cbd0feee2f3725ec61",
        "many_locations.events.txt": "62102539e4c32f99b9af0969e4fe8bd36c93ac704270154efa474a7de29ea578",
        "many_locations_json.ccg": "a4641742be32d0669ca2bd7cb2a53eff1aba948b4e5e9e8fdfd15936078d4c5f",
        "many_locations_json.events.txt": "62102539e4c32f99b9af0969e4fe8bd36c93ac704270154efa474a7de29ea578",
        "minimal.ccg": "8fead01129be7fcbf024c4e1e71de4da87b55ca1f97d7889da671d07d2ad9780",
        "minimal.events.txt": "a591052f65a60e8903449a4e1eaa10dc2e4b8476172c66a8b37e0ca739345c80",
        "pending_limit.ccg": "af26a0ad86cf83f91c2de400bd1ee49dc63b55c3f058b354a6a838a207ec82e5",
        "pending_limit.events.txt": "163c47033e21c3a488a99ddf0de601ff24fb98afceef021799a1f46012ff49a0",
        "uint64_metric.ccg": "a97057c635753a716a5a1fe74d46011d2a30718985c354ffbe70d0f93e1985fb",
        "uint64_metric.events.txt": "e4bfd5da09352f7145b3b26e36dd36bbdb0f4d5485b8fa578c7f93789e22e62b",
        "unknown_optional.ccg": "09387f2873a37768a0940bf9d76689a79e80d1b1ba81d81f5ded253801f96c4c",
        "unknown_optional.events.txt": "a591052f65a60e8903449a4e1eaa10dc2e4b8476172c66a8b37e0ca739345c80",
        "wide_split.ccg": "029f11387fb8624d539688fb07f5e70b5559c60c3298b18470a35d3e7c275671",
        "wide_split.events.txt": "b33d098631e03c9fec658a5618b848e57a5d2ed0313622f4f0c2bf02b41de081",
    },
    "1.4": {
        "bundle.ccg": "58aa893de38b004dfed6c6247808974997cf6cd72aba2ce6198228f3b60e0488",
        "bundle.events.txt": "a591052f65a60e8903449a4e1eaa10dc2e4b8476172c66a8b37e0ca739345c80",
    },
    "2.0": {
        "compact.ccg": "64925f4c3598eb4edcc7f4cb54f279f7b357febe4d1822f1c8db002886c87e2b",
        "compact.events.txt": "a591052f65a60e8903449a4e1eaa10dc2e4b8476172c66a8b37e0ca739345c80",
    },
}


def frozen_differences() -> list[Path]:
    """The frozen vector files that are missing, changed or not recorded."""
    differences = []
    for version, recorded in FROZEN_SHA256.items():
        folder = VECTORS / version
        on_disk = {path.name for path in folder.glob("*")} if folder.is_dir() else set()
        differences += [folder / name for name in sorted(on_disk | set(recorded))
                        if name not in recorded or name not in on_disk
                        or hashlib.sha256((folder / name).read_bytes()).hexdigest() != recorded[name]]
    return differences


# --------------------------------------------------------------------------- archive surgery

@dataclass
class Parsed:
    """An archive cut into its parts: header bytes, directory, stored block payloads."""

    header: bytes
    entries: list[DirectoryEntry]
    stored: list[bytes]       # per entry, the stored payload (between block header and CRC)
    footer_offset: int


def compact_members(data: bytes) -> list[tuple[DirectoryEntry, bytes]]:
    """The bundle members of a file in the compact layout (spec 2.7)."""
    frame, number = FILE_HEADER.size + 1, data[FILE_HEADER.size]  # after the dictionary's number
    raw = primed_lzma.decompress(data[frame:], "", frame) if number == primed_lzma.DICTIONARY \
        else zstandard.ZstdDecompressor(dict_data=bundle_dictionary(number)).decompress(data[frame:])
    count = member_count(raw, "", frame)
    return decode_bundle(raw, DirectoryEntry(int(SectionKind.DICTIONARY_BUNDLE), 3, frame, len(data) - frame,
                                             len(raw), 0, count), "")


def parse(data: bytes) -> Parsed:
    footer_length, end_magic = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    assert end_magic == END_MAGIC
    footer_offset = len(data) - TRAILER.size - footer_length
    kind, _, length = BLOCK_HEADER.unpack_from(data, footer_offset)
    assert kind == SectionKind.FOOTER
    start = footer_offset + BLOCK_HEADER.size
    entries = decode_directory(data[start:start + length], "", footer_offset)
    stored = [data[e.offset + BLOCK_HEADER.size:e.offset + BLOCK_HEADER.size + e.length] for e in entries]
    return Parsed(data[:FILE_HEADER.size], entries, stored, footer_offset)


def build(parsed: Parsed, *, fix_offsets: bool = True) -> bytes:
    """Lay the blocks out again after the header (offsets recomputed unless told not to),
    then a fresh footer with a valid CRC and the trailer."""
    out = bytearray(parsed.header)
    entries = []
    for entry, stored in zip(parsed.entries, parsed.stored):
        if fix_offsets:
            entry = replace(entry, offset=len(out), length=len(stored))
        entries.append(entry)
        out += frame_block(entry.kind, entry.flags, stored)
    footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND), encode_directory(entries))
    out += footer + TRAILER.pack(len(footer), END_MAGIC)
    return bytes(out)


def index_of(parsed: Parsed, kind: SectionKind, nth: int = 0) -> int:
    return [i for i, e in enumerate(parsed.entries) if e.kind == kind][nth]


def zstd_frame(raw: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=19, write_content_size=True).compress(raw)


def node_stream_span(raw: bytes, name: str) -> tuple[int, int]:
    """Byte position of stream ``name``'s values in a raw node block, and its width."""
    position = BLOCK_START.size
    for stream in STREAMS:
        width, _ = STREAM_HEADER.unpack_from(raw, position)
        if stream == name:
            return position + STREAM_HEADER.size, width
        _, position = decode_stream(raw, position)
    raise KeyError(name)


@dataclass
class Bad:
    name: str
    how: str
    raises: str              # an exception class name of ccgformat.errors, "reads fine", "reads as ..." or VERIFIED
    offset: int | None       # the byte offset the error names, if meaningful
    data: bytes


def bad_archives(base: bytes) -> list[Bad]:
    """Damaged variants of ``base`` (every_kind.ccg), each with the error it must raise."""
    size = len(base)
    p = parse(base)
    bads: list[Bad] = []

    def add(name: str, how: str, raises: str, offset: int | None, data: bytes) -> None:
        bads.append(Bad(name, how, raises, offset, data))

    add("empty.ccg", "an empty file (0 bytes)", "TruncatedError", 0, b"")

    cut = p.footer_offset + BLOCK_HEADER.size + 10
    add("truncated_footer.ccg", f"every_kind.ccg cut to {cut} bytes, 10 bytes into the footer's "
        f"directory (the trailer with the end marker is gone); the error names the last 8 bytes",
        "TruncatedError", cut - 8, base[:cut])

    data = bytearray(base)
    data[1:4] = b"XYZ"
    add("bad_magic.ccg", "bytes 1-3 of the magic replaced by `XYZ`", "CorruptArchiveError", 0, bytes(data))

    data = bytearray(base)
    FILE_HEADER.pack_into(data, 0, *FILE_HEADER.unpack_from(base, 0)[:1], 3, 0, 0)
    add("unknown_major.ccg", "major version in the header set to 3 (minor 0)", "UnsupportedVersionError", 8,
        bytes(data))

    data = bytearray(base)
    struct.pack_into("<I", data, 12, 1)
    add("reserved_header.ccg", "the reserved u32 of the header (byte 12) set to 1", "CorruptArchiveError", 12,
        bytes(data))

    data = bytearray(base)
    struct.pack_into("<Q", data, size - TRAILER.size, 1 << 40)
    add("huge_footer_length.ccg", "the trailer's footer length set to 2**40 (1 TiB)", "CorruptArchiveError",
        size - TRAILER.size, bytes(data))

    k = index_of(p, SectionKind.NODES, 1)
    entry = p.entries[k]
    data = bytearray(base)
    struct.pack_into("<Q", data, entry.offset + 4, 8 << 30)
    add("huge_length.ccg", f"the payload length in the block header of the second NODES block (at byte "
        f"{entry.offset}) set to 8 GiB (CRC and footer left alone: the length is checked against the "
        f"file size first); opening works, reading location 0 fails", "TruncatedError", entry.offset,
        bytes(data))

    k = index_of(p, SectionKind.NODES, 2)
    entry = p.entries[k]
    data = bytearray(base)
    position = entry.offset + BLOCK_HEADER.size + entry.length // 2
    data[position] ^= 0x01
    add("crc_mismatch.ccg", f"one bit of a payload byte (byte {position}) of the third NODES block (at byte "
        f"{entry.offset}) flipped; opening works, reading fails", "ChecksumError", entry.offset, bytes(data))

    k = index_of(p, SectionKind.DEFINITIONS)
    q = parse(base)
    q.entries[k] = replace(q.entries[k], offset=size + 4096)
    add("offset_past_end.ccg", f"the DEFINITIONS entry of the directory points at byte {size + 4096}, past "
        f"the end; footer rewritten with a valid CRC, so the bounds check fires (the error names the "
        f"footer)", "CorruptArchiveError", p.footer_offset, build(q, fix_offsets=False))

    q = parse(base)
    q.entries[k] = replace(q.entries[k], raw_length=q.entries[k].raw_length + 1)
    add("raw_length_lie.ccg", "the DEFINITIONS entry's raw_length is one more than the zstd frame's "
        "content size; footer rewritten with a valid CRC; opening works, reading the definitions fails",
        "CorruptArchiveError", p.entries[k].offset, build(q, fix_offsets=False))

    # a zstd frame header declaring 1 TiB: magic, descriptor (8-byte content size, single
    # segment), the size, then one empty raw last block
    bomb = struct.pack("<IBQ", 0xFD2FB528, 0xE0, 1 << 40) + bytes([0x01, 0x00, 0x00])
    q = parse(base)
    q.stored[k] = bomb
    q.entries[k] = replace(q.entries[k], raw_length=1 << 40)
    bombed = build(q)
    add("zstd_bomb.ccg", "the DEFINITIONS block replaced by a 16-byte zstd frame whose header declares "
        "1 TiB of content, listed with raw_length 2**40; refused on opening, before any allocation",
        "CorruptArchiveError", parse(bombed).entries[k].offset, bombed)

    q = parse(base)
    raw = zstandard.ZstdDecompressor().decompress(q.stored[k])
    q.stored[k] = zstandard.ZstdCompressor(level=19, write_content_size=False).compress(raw)
    unsized = build(q)
    add("zstd_no_content_size.ccg", "the DEFINITIONS block recompressed without the frame content size "
        "(sizes and offsets in the footer updated); reading the definitions fails",
        "CorruptArchiveError", parse(unsized).entries[k].offset, unsized)

    q = parse(base)
    q.stored[k] = zstd_frame(b'{"regions": [')
    q.entries[k] = replace(q.entries[k], raw_length=13)
    broken = build(q)
    add("definitions_not_json.ccg", "the DEFINITIONS payload replaced by the unfinished JSON "
        "`{\"regions\": [` (valid zstd, CRC and footer); reading the definitions fails",
        "CorruptArchiveError", parse(broken).entries[k].offset, broken)

    def damage_first_node_block(stream: str, damage: Callable[[bytearray, int], bool]) -> tuple[Parsed, int, int]:
        """Apply ``damage`` to the one-byte ``stream`` of the first NODES block where it
        succeeds; returns the parsed file, the entry index and the block's ordinal."""
        q = parse(base)
        ordinal = 0
        for k, entry in enumerate(q.entries):
            if entry.kind != SectionKind.NODES:
                continue
            ordinal += 1
            raw = bytearray(zstandard.ZstdDecompressor().decompress(q.stored[k]))
            position, width = node_stream_span(bytes(raw), stream)
            if width == 1 and struct.unpack_from("<I", raw, position - 4)[0] and damage(raw, position):
                q.stored[k] = zstd_frame(bytes(raw))
                return q, k, ordinal
        raise AssertionError(f"no node block with a non-empty one-byte {stream} stream")

    def point_outside(raw: bytearray, position: int) -> bool:
        raw[position] = 0xFF  # the first explicit child id becomes 255
        return True

    q, k, ordinal = damage_first_node_block("child_id", point_outside)
    dangling = build(q)
    add("node_bad_reference.ccg", f"in NODES block {ordinal} (first node {q.entries[k].first}) the first "
        f"explicit child id set to 255, a node outside the block and its import table (recompressed; "
        f"valid CRC and footer); opening works, reading fails in the node decoder",
        "CorruptArchiveError", parse(dangling).entries[k].offset, dangling)

    def one_event_more(raw: bytearray, position: int) -> bool:
        if raw[position] == 255:
            return False
        raw[position] += 1  # the first imported node's event count, one too many
        return True

    q, k, ordinal = damage_first_node_block("import_events", one_event_more)
    lying = build(q)
    add("import_claim_lie.ccg", f"in NODES block {ordinal} (first node {q.entries[k].first}) the import "
        f"table's event count of the first node taken from an earlier block raised by one (recompressed; "
        f"valid CRC and footer): the block decodes, but the claim disagrees with the node's own block, "
        f"which the reader finds when it holds both (the offset depends on the order of reading)",
        "CorruptArchiveError", None, lying)

    for name, flags, raises in (("unknown_must_understand.ccg", BlockFlags.MUST_UNDERSTAND,
                                 "UnsupportedVersionError"),
                                ("unknown_optional.ccg", BlockFlags(0), "reads fine")):
        q = parse(base)
        payload = b"a section from a future version\n"
        q.entries.append(DirectoryEntry(200, int(flags), 0, len(payload), len(payload), 0, 0))
        q.stored.append(payload)
        extended = build(q)
        offset = parse(extended).entries[-1].offset
        flag_text = "the MUST_UNDERSTAND flag set" if flags else "no flags (optional, uncompressed)"
        add(name, f"an extra block of unknown kind 200 with {flag_text} inserted before the footer "
            f"(at byte {offset}) and listed in a rewritten footer", raises,
            offset if flags else None, extended)
    return bads


def table_changed(base: bytes, kind: SectionKind, change: Callable[[list[np.ndarray]], None],
                  nth: int = 0) -> tuple[bytes, int]:
    """``base`` with the streams of its ``nth`` table block of ``kind`` (4.6-4.11) changed
    in place by ``change`` (the fixed header and text list kept), the block recompressed,
    with a valid CRC and footer; and the block's offset."""
    q = parse(base)
    k = index_of(q, kind, nth)
    raw = zstandard.ZstdDecompressor().decompress(q.stored[k])
    start = {SectionKind.ROOT_TABLE: 0, SectionKind.CHECKPOINT_TABLE: 8, SectionKind.AGGREGATE_LEVEL: 32,
             SectionKind.METRIC_LEVEL: 32}.get(
        kind, 4 + struct.unpack_from("<I", raw)[0] if len(raw) >= 4 else 0)
    streams, position = [], start
    while position < len(raw):
        values, position = decode_stream(raw, position)
        streams.append(values)
    change(streams)
    q.stored[k] = zstd_frame(raw[:start] + b"".join(encode_stream(values) for values in streams))
    q.entries[k] = replace(q.entries[k], raw_length=len(zstandard.ZstdDecompressor().decompress(q.stored[k])))
    data = build(q)
    return data, parse(data).entries[k].offset


def table_bad_archives(blobs: dict[str, bytes]) -> list[Bad]:
    """Damaged 1.3 and 1.4 tables of the vectors: one stream of a table changed, the block
    recompressed with a valid CRC and footer."""
    damage = table_changed

    def shorten(streams: list[np.ndarray]) -> None:
        streams[3] = streams[3][:-1]  # the ends

    def end_before_start(streams: list[np.ndarray]) -> None:
        streams[3][0] = 1  # the first end step, zigzag-coded -1: the end -1, below its start

    def root_negative(streams: list[np.ndarray]) -> None:
        streams[1][0] = 1  # the first root step, zigzag-coded -1: root id -1

    def stream_after_the_last(streams: list[np.ndarray]) -> None:
        streams.append(np.zeros(1, np.uint64))

    def numbered_two(streams: list[np.ndarray]) -> None:
        streams[8][0] = 2  # the first location's `numbered`

    def no_checkpoints(streams: list[np.ndarray]) -> None:
        streams[1][0] = 0  # the first location's checkpoint count

    def value_zero(streams: list[np.ndarray]) -> None:
        streams[2][0] = 0  # the first stored value

    def hierarchy_node_missing(streams: list[np.ndarray]) -> None:
        streams[0] = streams[0][:-1]  # the cell counts of one cell fewer

    def text_past_the_list(streams: list[np.ndarray]) -> None:
        streams[6][0] = 999  # the first location's name prefix

    def rows_past_the_payload(streams: list[np.ndarray]) -> None:
        streams[4][0] = 1 << 40  # the first checkpoint's stack rows

    def leaf_time_changed(streams: list[np.ndarray]) -> None:
        streams[2][-1] += 1  # the last stored value: a leaf's (rank 3's) time in the last slice

    def region_past_the_states(streams: list[np.ndarray]) -> None:
        streams[1][0] = 3  # the first entry's region step: region 3 of 3

    def integral_changed(streams: list[np.ndarray]) -> None:
        streams[2][-1] ^= 1  # the last bit of the last stored float64 of level 0

    def metric_past_the_metrics(streams: list[np.ndarray]) -> None:
        streams[1][0] = 2  # the first entry's metric step: metric 2 of 2

    def unknown_value_kind(streams: list[np.ndarray]) -> None:
        streams[0][0] = 9  # the kind of the table's value

    def integers_short(streams: list[np.ndarray]) -> None:
        streams[3] = streams[3][:-1]

    def members_past_the_payload(streams: list[np.ndarray]) -> None:
        streams[1][0] = 1 << 40  # the member count of the table's value

    bads = []
    for name, source, kind, change, how in (
            ("extension_table_bad_kind.ccg", "extension_records", SectionKind.EXTENSION_TABLE, unknown_value_kind,
             "the EXTENSION_TABLE's first value kind set to 9, which is not defined"),
            ("extension_table_short.ccg", "extension_records", SectionKind.EXTENSION_TABLE, integers_short,
             "the EXTENSION_TABLE's integer stream one value short"),
            ("extension_table_members_claim.ccg", "extension_records", SectionKind.EXTENSION_TABLE,
             members_past_the_payload, "the EXTENSION_TABLE's member count of its value set to 2**40"),
            ("aggregate_leaf_changed.ccg", "aggregation", SectionKind.AGGREGATE_LEVEL, leaf_time_changed,
             "the last value of AGGREGATE_LEVEL 0 (rank 3's time in its last region) raised by one, so "
             "that node 1 no longer holds the sum of its children"),
            ("aggregate_region_past_states.ccg", "aggregation", SectionKind.AGGREGATE_LEVEL,
             region_past_the_states, "the first region step of AGGREGATE_LEVEL 0 set to 3, past its 3 states"),
            ("metric_level_changed.ccg", "metric_integrals", SectionKind.METRIC_LEVEL, integral_changed,
             "the last bit of the last value of METRIC_LEVEL 0 flipped, so that it is no longer the sum of "
             "level 1's pair"),
            ("metric_level_past_metrics.ccg", "metric_integrals", SectionKind.METRIC_LEVEL,
             metric_past_the_metrics, "the first metric step of METRIC_LEVEL 0 set to 2, past its 2 metrics"),
            ("root_table_short.ccg", "every_kind", SectionKind.ROOT_TABLE, shorten,
             "the ROOT_TABLE's end stream one value short"),
            ("location_table_bad_text.ccg", "many_locations", SectionKind.LOCATION_TABLE, text_past_the_list,
             "the LOCATION_TABLE's first location name prefix set to text 999, past the text list"),
            ("checkpoint_table_rows_claim.ccg", "every_kind", SectionKind.CHECKPOINT_TABLE,
             rows_past_the_payload,
             "the first CHECKPOINT_TABLE's stack row count of its first checkpoint set to 2**40"),
            ("root_table_end_before_start.ccg", "every_kind", SectionKind.ROOT_TABLE, end_before_start,
             "the ROOT_TABLE's first end step set to -1, so that location 0 ends before it starts (spec 4.6)"),
            ("root_table_negative_root.ccg", "every_kind", SectionKind.ROOT_TABLE, root_negative,
             "the ROOT_TABLE's first root step set to -1, a negative root id (spec 4.6)"),
            ("location_table_numbered_two.ccg", "many_locations", SectionKind.LOCATION_TABLE, numbered_two,
             "the LOCATION_TABLE's first location `numbered` value set to 2 (spec 4.7: 0 or 1)"),
            ("checkpoint_table_no_checkpoints.ccg", "every_kind", SectionKind.CHECKPOINT_TABLE, no_checkpoints,
             "the CHECKPOINT_TABLE's checkpoint count of its first location set to 0 (spec 4.8: at least 1; "
             "the `index` stream then holds more values than the counts)"),
            ("aggregate_count_short.ccg", "aggregation", SectionKind.AGGREGATE_LEVEL, hierarchy_node_missing,
             "the `count` stream of AGGREGATE_LEVEL 0 one cell short of N x 2^k (spec 4.10)")):
        data, offset = damage(blobs[source], kind, change)
        bads.append(Bad(name, f"{source}.ccg with {how} (recompressed; valid CRC and footer)",
                        "CorruptArchiveError", offset, data))
    # a rule several tables share: the payload ends with the last stream; the stored values
    # of the pyramids are never 0 (AGGREGATE_LEVEL) or +0.0 (METRIC_LEVEL)
    for source, kind, change, rule in (
            ("every_kind", SectionKind.ROOT_TABLE, stream_after_the_last, "4.6: bytes after the last stream"),
            ("every_kind", SectionKind.CHECKPOINT_TABLE, stream_after_the_last, "4.8: bytes after the last stream"),
            ("metric_integrals", SectionKind.METRIC_LEVEL, stream_after_the_last, "4.11: bytes after stream 3"),
            ("aggregation", SectionKind.AGGREGATE_LEVEL, value_zero, "4.10: a value of 0"),
            ("metric_integrals", SectionKind.METRIC_LEVEL, value_zero, "4.11: a stored +0.0")):
        data, offset = damage(blobs[source], kind, change)
        what = "trailing" if change is stream_after_the_last else "value_zero"
        how = f"one more stream after the last one of its first {kind.name} block" if change is stream_after_the_last \
            else f"the first stored value of its first {kind.name} block set to 0 (in METRIC_LEVEL the bits of +0.0)"
        bads.append(Bad(f"{kind.name.lower()}_{what}.ccg", f"{source}.ccg with {how} (recompressed; valid CRC and "
                        f"footer; spec {rule})", "CorruptArchiveError", offset, data))
    return bads


Members = list[tuple[int, int, int, int, bytes]]  # (kind, flags, first, count, raw payload)


def rebundled(base: bytes, change: Callable[[Members], bytes | None], count: Callable[[int], int] = lambda n: n,
              first: int = 0) -> bytes:
    """``base`` with the members of its DICTIONARY_BUNDLE block changed in place by ``change``
    (or the raw payload it returns), the block recompressed with the bundle dictionary, its
    entry's member count ``count(members)`` and ``first``, with a valid CRC and footer."""
    q = parse(base)
    k = index_of(q, SectionKind.DICTIONARY_BUNDLE)
    raw = zstandard.ZstdDecompressor(dict_data=bundle_dictionary()).decompress(q.stored[k])
    members = [(e.kind, e.flags, e.first, e.count, payload) for e, payload in decode_bundle(raw, q.entries[k], "")]
    raw = change(members) or encode_bundle(members)
    q.stored[k] = compress_with_dictionary(raw, 19)
    q.entries[k] = replace(q.entries[k], raw_length=len(raw), count=count(len(members)), first=first)
    return build(q)


def bundle_bad_archives(base: bytes) -> list[Bad]:
    """Damaged DICTIONARY_BUNDLE blocks of ``base`` (bundle.ccg): the bundle's raw payload
    or its directory entry changed, the block recompressed (with the bundle dictionary) with
    a valid CRC and footer."""
    def damage(change: Callable[[Members], bytes | None], count: Callable[[int], int] = lambda n: n) -> tuple[bytes, int]:
        data = rebundled(base, change, count)
        return data, parse(data).entries[index_of(parse(data), SectionKind.DICTIONARY_BUNDLE)].offset

    def nested(members: Members) -> None:
        members[0] = (int(SectionKind.BUNDLE), *members[0][1:])

    def unknown(members: Members) -> None:
        members.append((65535, int(BlockFlags.MUST_UNDERSTAND), 0, 0, b"a section of a kind no version assigns\n"))

    bads = []
    for name, how, change, count, raises in (
            ("bundle_short.ccg", "its raw payload one byte short, so that the last member runs past it",
             lambda members: encode_bundle(members)[:-1], lambda n: n, "CorruptArchiveError"),
            ("bundle_count.ccg", "the directory's member count one more than the bundle holds",
             lambda members: None, lambda n: n + 1, "CorruptArchiveError"),
            ("bundle_nested.ccg", "its first member's kind set to BUNDLE (11), which no bundle holds",
             nested, lambda n: n, "CorruptArchiveError"),
            ("bundle_unknown_member.ccg", "one more member, of kind 65535 (never assigned) with MUST_UNDERSTAND",
             unknown, lambda n: n, "UnsupportedVersionError")):
        data, offset = damage(change, count)
        bads.append(Bad(name, f"bundle.ccg with {how} (recompressed; valid CRC and footer)", raises, offset, data))
    return bads


def compact_bad_archives(base: bytes) -> list[Bad]:
    """Damaged files in the compact layout, from ``base`` (compact.ccg, a primed LZMA2
    body)."""
    body, number = FILE_HEADER.size, base[FILE_HEADER.size]
    assert number == primed_lzma.DICTIONARY
    members = [(e.kind, e.flags, e.first, e.count, payload) for e, payload in compact_members(base)]
    without_parameters = [m for m in members if m[0] != SectionKind.PARAMETERS]
    sizeless = zstandard.ZstdCompressor(level=19, dict_data=bundle_dictionary(2), write_content_size=False,
                                        write_dict_id=False).compress(encode_bundle(members))
    stream = base[body + 1:]
    assert stream.endswith(b"\0")  # the LZMA2 end byte
    flipped = bytearray(base)
    flipped[-1] ^= 0x40
    minor = PRIMED_LZMA_MINOR_VERSION
    return [
        Bad("compact_flipped.ccg", "compact.ccg with bit 6 of its last byte flipped", "ChecksumError",
            body - 4, bytes(flipped)),
        Bad("compact_cut.ccg", "compact.ccg without its last byte", "ChecksumError", body - 4, base[:-1]),
        Bad("compact_header_only.ccg", "the first 10 bytes of compact.ccg", "TruncatedError", 10, base[:10]),
        Bad("compact_no_body.ccg", "the 16-byte header of compact.ccg with the CRC of its first 12 bytes alone",
            "TruncatedError", body, base[:body - 4] + struct.pack("<I", crc32c(base[:body - 4]))),
        Bad("compact_unknown_dictionary.ccg", "compact.ccg naming bundle dictionary 255, which no version "
            "assigns (valid CRC)", "UnsupportedVersionError", body, frame_compact(255, stream, minor)),
        Bad("compact_sizeless.ccg", "compact.ccg with its bundle recompressed into a zstd frame of dictionary 2 "
            "that does not declare its size (valid CRC)", "CorruptArchiveError", body + 1,
            frame_compact(2, sizeless)),
        Bad("compact_no_parameters.ccg", "compact.ccg with its bundle recompressed without the PARAMETERS "
            "member (valid CRC)", "CorruptArchiveError", body + 1,
            frame_compact(number, primed_lzma.compress(encode_bundle(without_parameters)), minor)),
        Bad("compact_lzma2_bad_chunk.ccg", "compact.ccg with the first byte of its body, the control byte of the "
            "LZMA2 chunk after the stream prefix, set to 0x03, which LZMA2 does not assign (valid CRC)",
            "CorruptArchiveError", body + 1, frame_compact(number, b"\x03" + stream[1:], minor)),
        Bad("compact_lzma2_unended.ccg", "compact.ccg without the LZMA2 end byte of its body (valid CRC)",
            "CorruptArchiveError", body + 1, frame_compact(number, stream[:-1], minor)),
        Bad("compact_lzma2_trailing.ccg", "compact.ccg with a byte after the LZMA2 end byte of its body "
            "(valid CRC)", "CorruptArchiveError", body + 1, frame_compact(number, stream + b"\0", minor)),
        Bad("compact_lzma2_other_dictionary.ccg", "compact.ccg naming bundle dictionary 2 for its LZMA2 body, "
            "which is no zstd frame (valid CRC)", "CorruptArchiveError", body + 1, frame_compact(2, stream)),
        Bad("compact_lzma2_too_long.ccg", "a compact file whose primed LZMA2 body codes 2^20 + 1 zero bytes after "
            "dictionary 3, one more than a reader decodes (valid CRC; spec 2.9)", "CorruptArchiveError", body + 1,
            frame_compact(number, primed_lzma.compress(bytes((1 << 20) + 1)), minor)),
    ]


def node_block_streams(raw: bytes) -> list[np.ndarray]:
    """The 14 streams of a plain node block's raw payload (spec 5.2)."""
    streams, position = [], BLOCK_START.size
    for _ in STREAMS:
        values, position = decode_stream(raw, position)
        streams.append(values)
    return streams


def with_unreferenced_import(base: bytes) -> tuple[bytes, int, int]:
    """``base`` (every_kind.ccg) with one more row in the import table of the first NODES
    block that can take one: a node of an earlier block that the block does not reference,
    with the values another block's import table gives it (spec 5.4). Returns the file, the
    block's first node and the node added."""
    q = parse(base)
    blocks = [(k, node_block_streams(stored_raw(q, k))) for k, e in enumerate(q.entries) if e.kind == SectionKind.NODES]
    rows: dict[int, tuple[int, ...]] = {}  # node -> (total, events, metric ids..., sums...) of an import row
    for _, streams in blocks:
        ids = np.cumsum(streams[8].astype(np.int64)).tolist()
        pairs = np.concatenate(([0], np.cumsum(streams[11].astype(np.int64))))
        for row, node in enumerate(ids):
            a, b = int(pairs[row]), int(pairs[row + 1])
            rows[node] = (int(streams[9][row]), int(streams[10][row]), tuple(streams[12][a:b].tolist()),
                          tuple(streams[13][a:b].tolist()))
    for k, streams in blocks:
        first = q.entries[k].first
        ids = np.cumsum(streams[8].astype(np.int64)).tolist()
        extra = next((node for node in sorted(rows) if node < first and node not in ids), None)
        if extra is None or not ids:
            continue
        total, events, metric_ids, sums = rows[extra]
        row = sum(node < extra for node in ids)
        pairs = np.concatenate(([0], np.cumsum(streams[11].astype(np.int64))))
        ids.insert(row, extra)
        streams[8] = np.array([ids[0]] + [b - a for a, b in zip(ids, ids[1:])], np.uint64)
        streams[9] = np.insert(streams[9], row, total)
        streams[10] = np.insert(streams[10], row, events)
        streams[11] = np.insert(streams[11], row, len(metric_ids))
        at = int(pairs[row])
        streams[12] = np.insert(streams[12], at, np.array(metric_ids, np.uint64))
        streams[13] = np.insert(streams[13], at, np.array(sums, np.uint64))
        raw = stored_raw(q, k)[:BLOCK_START.size] + b"".join(encode_stream(values) for values in streams)
        q.stored[k], q.entries[k] = zstd_frame(raw), replace(q.entries[k], raw_length=len(raw))
        return build(q), first, extra
    raise AssertionError("no node block can take an unreferenced import row")


def block_changed(base: bytes, kind: SectionKind, change: Callable[[bytearray], None], nth: int | None = 0
                  ) -> tuple[bytes, int]:
    """``base`` with the raw payload of its ``nth`` block of ``kind`` (None: of every one)
    changed in place by ``change``, recompressed, with a valid CRC and footer; and the
    offset of the (first) block changed."""
    q = parse(base)
    changed = [k for k, e in enumerate(q.entries) if e.kind == kind] if nth is None else [index_of(q, kind, nth)]
    for k in changed:
        raw = bytearray(stored_raw(q, k))
        change(raw)
        q.stored[k], q.entries[k] = zstd_frame(bytes(raw)), replace(q.entries[k], raw_length=len(raw))
    data = build(q)
    return data, parse(data).entries[changed[0]].offset


def header_u32(offset: int, value: Callable[[bytearray], int]) -> Callable[[bytearray], None]:
    """Set the u32 at ``offset`` of a table's fixed header (4.10, 4.11) to ``value(raw)``."""
    return lambda raw: struct.pack_into("<I", raw, offset, value(raw))


def moved_q(offset: int, by: int) -> Callable[[bytearray], None]:
    """A change of a pyramid level's header (4.10, 4.11): the i64 at ``offset`` (`start` 0,
    `stop` 8) moved by ``by``."""
    def change(raw: bytearray) -> None:
        struct.pack_into("<q", raw, offset, struct.unpack_from("<q", raw, offset)[0] + by)
    return change


def stop_at_start(raw: bytearray) -> None:
    """A pyramid level's (4.10, 4.11) `stop` set to its `start`."""
    raw[8:16] = raw[0:8]


def node_rule_bad_archives(blobs: dict[str, bytes]) -> list[Bad]:
    """Damaged blocks for rules of spec 4.3, 4.10, 4.11, 5.7, 5.8 and 7 no other damaged
    file exercised (recompressed; valid CRC and footer)."""
    def huge_gaps(raw: bytearray) -> None:
        streams = node_block_streams(bytes(raw))
        streams[STREAMS.index("gaps")][3:6] = (1 << 62) - 1  # the three gaps of node 3, CALL A (spec 5.5)
        raw[BLOCK_START.size:] = b"".join(encode_stream(values) for values in streams)

    def code_past_first(raw: bytearray) -> None:
        position, width = node_stream_span(bytes(raw), "child_id")
        assert width == 1
        raw[position] = 255  # the first reference code: far below the block's first node

    def coded(change: Callable[[bytes], bytes]) -> Callable[[bytearray], None]:
        def apply(raw: bytearray) -> None:
            data = stream_bytes(bytes(raw), "gaps")[STREAM_HEADER.size + 4:]  # after the byte count B
            raw[:] = with_coded(bytes(raw), "gaps", change(data))
        return apply

    def one_event_more(raw: bytearray) -> None:
        struct.pack_into("<Q", raw, 32, struct.unpack_from("<Q", raw, 32)[0] + 1)  # the first entry's events

    bads = []
    for name, source, kind, change, how in (
            ("nodes_sum_overflow.ccg", "minimal", SectionKind.NODES, huge_gaps,
             "the three gaps of node 3 (CALL A, spec 5.5) set to 2^62 - 1 each, so that its total reaches 2^63 "
             "(spec 7)"),
            ("predicted_code_past_first.ccg", "predicted_references", SectionKind.PREDICTED_NODES, code_past_first,
             "the first reference code of its first PREDICTED_NODES block set to 255, a distance that "
             "reaches below the block's first node (spec 5.7)"),
            ("coded_gaps_first_byte.ccg", "coded_gaps", SectionKind.CODED_NODES,
             coded(lambda data: b"\x01" + data[1:]),
             "byte 0 of the coded gaps of its first CODED_NODES block set to 1 (spec 5.8: 0)"),
            ("coded_gaps_leftover.ccg", "coded_gaps", SectionKind.CODED_NODES, coded(lambda data: data + b"\x00"),
             "a byte after the coded gaps of its first CODED_NODES block, which decoding leaves over (spec 5.8)"),
            ("roots_events_claim.ccg", "many_locations_json", SectionKind.ROOTS, one_event_more,
             "the event count of the first ROOTS entry raised by one, so that it differs from its root's "
             "sub-tree (spec 4.3)"),
            ("aggregate_level_reserved.ccg", "aggregation", SectionKind.AGGREGATE_LEVEL, header_u32(28, lambda raw: 1),
             "the reserved u32 of its first AGGREGATE_LEVEL block set to 1 (spec 4.10)"),
            ("aggregate_level_stop_at_start.ccg", "aggregation", SectionKind.AGGREGATE_LEVEL, stop_at_start,
             "`stop` of its first AGGREGATE_LEVEL block set to its `start` (spec 4.10: stop above start)"),
            ("metric_level_above_finest.ccg", "metric_integrals", SectionKind.METRIC_LEVEL,
             header_u32(16, lambda raw: struct.unpack_from("<I", raw, 20)[0] + 1),
             "`level` of its first METRIC_LEVEL block set one above its `finest` (spec 4.11)"),
            ("metric_level_no_metrics.ccg", "metric_integrals", SectionKind.METRIC_LEVEL, header_u32(24, lambda raw: 0),
             "`metrics` (M) of its first METRIC_LEVEL block set to 0 (spec 4.11)")):
        data, offset = block_changed(blobs[source], kind, change)
        bads.append(Bad(name, f"{source}.ccg with {how} (recompressed; valid CRC and footer)",
                        "CorruptArchiveError", offset, data))
    return bads


def settled_bad_archives(blobs: dict[str, bytes]) -> list[Bad]:
    """Files that pin the rules a second implementer had to guess (issue 36, spec 2.3, 2.5,
    2.7, 3, 5.4, 7) - what is corruption and what is read - and rules of 2.4 and 5.2 no
    other damaged file exercised."""
    base = blobs["every_kind"]
    bads: list[Bad] = []

    q = parse(base)
    k = index_of(q, SectionKind.DEFINITIONS)
    q.entries[k] = replace(q.entries[k], first=5, count=7)
    bads.append(Bad("directory_first_ignored.ccg", "every_kind.ccg with the DEFINITIONS entry's `first` 5 and "
                    "`count` 7, which the table of spec 2.3 leaves 0 (footer rewritten with a valid CRC)",
                    "reads fine", None, build(q)))

    q = parse(base)
    entry, stored = q.entries[index_of(q, SectionKind.DEFINITIONS)], q.stored[index_of(q, SectionKind.DEFINITIONS)]
    data = bytearray(base)
    data[entry.offset:entry.offset + BLOCK_OVERHEAD + entry.length] = \
        frame_block(entry.kind, entry.flags ^ int(BlockFlags.MUST_UNDERSTAND), stored)
    bads.append(Bad("block_flags_differ.ccg", "every_kind.ccg with MUST_UNDERSTAND cleared in the DEFINITIONS "
                    "block's header (its CRC recomputed), so that it no longer repeats the flags of its directory "
                    "entry (spec 2.3, 7)", "CorruptArchiveError", entry.offset, bytes(data)))

    data = bytearray(base)
    FILE_HEADER.pack_into(data, 0, MAGIC, MAJOR_VERSION, 0, 0)
    bads.append(Bad("minor_version_zero.ccg", "every_kind.ccg with the header's minor version set to 0 (spec 3: no "
                    "CRC covers it, nothing a reader decodes depends on it)", "reads fine", None, bytes(data)))

    zeros = bytes(2 << 20)
    packed = zstd_frame(zeros)
    assert len(zeros) > max(1 << 20, 4096 * len(packed))
    q = parse(base)
    q.header = FILE_HEADER.pack(MAGIC, MAJOR_VERSION, 0, 0)
    q.entries.append(DirectoryEntry(200, int(BlockFlags.ZSTD), 0, len(packed), len(zeros), 0, 0))
    q.stored.append(packed)
    bads.append(Bad("minor_version_large_ratio.ccg", f"every_kind.ccg with the header's minor version set to 0 "
                    f"and an optional block of unknown kind 200 before the footer: a zstd frame of {len(packed)} "
                    f"bytes holding 2 MiB of zeros, more than 4,096 times its size (spec 7: the bound of "
                    f"65,536 times applies whatever the minor version)", "reads fine", None, build(q)))

    data, first, extra = with_unreferenced_import(base)
    bads.append(Bad("import_row_unreferenced.ccg", f"every_kind.ccg with one more import table row in the NODES "
                    f"block of first node {first}: node {extra}, which no node of the block references, with the "
                    f"values another block's import table gives it (recompressed; valid CRC and footer; spec 5.4)",
                    "reads fine", None, data))

    q = parse(base)
    k = index_of(q, SectionKind.NODES)
    raw = bytearray(stored_raw(q, k))
    position, _ = node_stream_span(bytes(raw), "gaps")
    raw[position - STREAM_HEADER.size] = 0  # the width: 0 marks a coded stream, which a NODES block has none of
    q.stored[k] = zstd_frame(bytes(raw))
    data = build(q)
    bads.append(Bad("nodes_gaps_width_zero.ccg", "every_kind.ccg with the width of the `gaps` stream of its first "
                    "NODES block set to 0, the mark of a coded stream, which only CODED_NODES and CODED_SOFT_NODES "
                    "blocks hold (recompressed; valid CRC and footer; spec 5.2, 5.8)", "CorruptArchiveError",
                    parse(data).entries[k].offset, data))

    def byte_after(raw: bytearray) -> None:
        raw.append(0)

    def kind_width_three(raw: bytearray) -> None:
        position, _ = node_stream_span(bytes(raw), "kind")
        raw[position - STREAM_HEADER.size] = 3

    for name, how, change in (
            ("nodes_trailing.ccg", "a byte after the last stream of its first NODES block (spec 5.2: the payload "
             "ends exactly after it)", byte_after),
            ("nodes_width_three.ccg", "the width of the `kind` stream of its first NODES block set to 3 (spec 5.2: "
             "1, 2, 4 or 8)", kind_width_three)):
        data, offset = block_changed(base, SectionKind.NODES, change)
        bads.append(Bad(name, f"every_kind.ccg with {how} (recompressed; valid CRC and footer)",
                        "CorruptArchiveError", offset, data))

    q = parse(base)
    k = index_of(q, SectionKind.NODES, 1)
    q.entries[k] = replace(q.entries[k], first=q.entries[k].first + 1)
    data = build(q)
    bads.append(Bad("node_blocks_gap.ccg", "every_kind.ccg with the directory's `first` of its second NODES block "
                    "one more than the node after the first block (spec 2.4: node blocks cover the ids without "
                    "gap; footer rewritten with a valid CRC)", "CorruptArchiveError", parse(data).entries[k].offset,
                    data))

    data = twice(base, SectionKind.DEFINITIONS)
    bads.append(Bad("two_definitions.ccg", "every_kind.ccg with its DEFINITIONS block twice, one after the other "
                    "(spec 2.4: exactly 1; footer rewritten with a valid CRC); the error names the footer",
                    "CorruptArchiveError", parse(data).footer_offset, data))

    bundled = blobs["bundle"]
    offset = parse(bundled).entries[0].offset

    def member_kind(kind: int) -> Callable[[Members], None]:
        def change(members: Members) -> None:
            members[0] = (kind, *members[0][1:])
        return change

    def flags_swapped(members: Members) -> None:
        for i, (kind, flags, *rest) in enumerate(members):
            if kind in (SectionKind.DEFINITIONS, SectionKind.CHECKPOINT_TABLE):
                members[i] = (kind, flags ^ int(BlockFlags.MUST_UNDERSTAND), *rest)

    bads += [
        Bad("bundle_first.ccg", "bundle.ccg with its DICTIONARY_BUNDLE block's directory entry `first` set to 1 "
            "(spec 2.5: 0; recompressed; valid CRC and footer)", "CorruptArchiveError", offset,
            rebundled(bundled, lambda members: None, first=1)),
        Bad("bundle_member_dictionary_bundle.ccg", "bundle.ccg with its first member's kind set to DICTIONARY_BUNDLE "
            "(13): bundles do not nest (spec 2.5; recompressed; valid CRC and footer)", "CorruptArchiveError",
            offset, rebundled(bundled, member_kind(int(SectionKind.DICTIONARY_BUNDLE)))),
        Bad("bundle_member_flags.ccg", "bundle.ccg with bit 0 (MUST_UNDERSTAND) of its DEFINITIONS member cleared and "
            "of its CHECKPOINT_TABLE member set, the opposite of what spec 2.4 lists for their kinds, which a "
            "reader that knows the kinds ignores (spec 2.5; recompressed; valid CRC and footer)",
            "reads as `bundle.ccg`", None, rebundled(bundled, flags_swapped)),
        Bad("bundle_long_varint.ccg", "bundle.ccg with its raw payload replaced by a member count written in 11 "
            "varint bytes (spec 2.5: at most 10; recompressed; valid CRC and footer)", "CorruptArchiveError",
            offset, rebundled(bundled, lambda members: b"\x81" + b"\x80" * 9 + b"\x00", lambda n: 1)),
    ]

    compact_ccg = blobs["compact"]
    body = FILE_HEADER.size
    stream = compact_ccg[body + 1:]
    bomb = struct.pack("<IBQ", 0xFD2FB528, 0xE0, 1 << 40) + bytes([0x01, 0x00, 0x00])
    unchecked = bytearray(compact_ccg)
    unchecked[body] = 255
    bads += [
        Bad("compact_minor_mismatch.ccg", "compact.ccg (bundle dictionary 3) with minor version 0 in its header "
            "(valid CRC): the dictionary number, not the minor version, names the codec (spec 2.7)",
            "reads as `compact.ccg`", None, frame_compact(primed_lzma.DICTIONARY, stream, 0)),
        Bad("compact_crc_before_dictionary.ccg", "compact.ccg naming bundle dictionary 255, its CRC not updated: the "
            "CRC is checked before the dictionary number (spec 2.7)", "ChecksumError", body - 4, bytes(unchecked)),
        Bad("compact_zstd_bomb.ccg", f"a compact file naming bundle dictionary 2 whose zstd frame ({len(bomb)} "
            f"bytes) declares 1 TiB of content, above max(2^20, 65536 x its length) (valid CRC; spec 2.7, 7)",
            "CorruptArchiveError", body + 1, frame_compact(2, bomb)),
    ]
    return bads


def twice(base: bytes, kind: SectionKind) -> bytes:
    """``base`` with its first block of ``kind`` twice, one after the other (footer
    rewritten with a valid CRC)."""
    q = parse(base)
    k = index_of(q, kind)
    q.entries.insert(k, q.entries[k])
    q.stored.insert(k, q.stored[k])
    return build(q)


def definitions_changed(change: Callable[[dict[str, Any]], None]) -> Callable[[bytearray], None]:
    """A change of a DEFINITIONS payload: its JSON document changed in place by ``change``."""
    def apply(raw: bytearray) -> None:
        document = json.loads(bytes(raw))
        change(document)
        raw[:] = encode_json(document)
    return apply


def level_streams_changed(change: Callable[[bytearray, list[np.ndarray]], None]) -> Callable[[bytearray], None]:
    """A change of a pyramid level's payload (4.10, 4.11): its 32-byte header and its three
    streams changed in place by ``change``."""
    def apply(raw: bytearray) -> None:
        streams, position = [], 32
        while position < len(raw):
            values, position = decode_stream(bytes(raw), position)
            streams.append(values)
        change(raw, streams)
        raw[32:] = b"".join(encode_stream(values) for values in streams)
    return apply


def one_more_row(field_offset: int) -> Callable[[bytearray], None]:
    """A change of a pyramid level: one more row of cells (hierarchy node, 4.10, or location,
    4.11), all empty, with the u32 at ``field_offset`` (N or L) counting it."""
    def change(raw: bytearray, streams: list[np.ndarray]) -> None:
        level, (rows,) = struct.unpack_from("<I", raw, 16)[0], struct.unpack_from("<I", raw, field_offset)
        struct.pack_into("<I", raw, field_offset, rows + 1)
        streams[0] = np.concatenate((streams[0], np.zeros(1 << level, streams[0].dtype)))
    return level_streams_changed(change)


#: A wrong type per member of DEFINITIONS and PARAMETERS whose type spec 4.1 and 4.2 state
#: and no other file exercises (`regions` and `branching` have theirs): the member, the
#: value it is set to in every_kind.ccg, and the type the spec states.
MEMBER_TYPES: list[tuple[SectionKind, str, Any, str]] = [
    *((SectionKind.DEFINITIONS, member, "x", "an array") for member in
      ("system_tree", "locations", "communicators", "metrics", "strings")),
    (SectionKind.DEFINITIONS, "strings", [1], "an array of strings"),
    (SectionKind.DEFINITIONS, "timer_resolution", "1", "an integer"),
    (SectionKind.DEFINITIONS, "clock_offset", "0", "an integer"),
    (SectionKind.DEFINITIONS, "provenance", "x", "an object of strings"),
    (SectionKind.DEFINITIONS, "provenance", {"source_format": 1}, "an object of strings"),
    (SectionKind.DEFINITIONS, "extensions", "x", "an object"),
    *((SectionKind.PARAMETERS, member, "0", "an integer") for member in
      ("abs_dev", "search_length", "leaf_window", "representatives", "zstd_level", "checkpoint_interval",
       "nodes_per_block")),
    *((SectionKind.PARAMETERS, member, "0", "a number") for member in ("rel_dev", "rel_size", "rel_metric")),
    (SectionKind.PARAMETERS, "converter", 5, "a string"),
    (SectionKind.PARAMETERS, "provenance", "x", "an object"),
    (SectionKind.PARAMETERS, "metrics", "x", "{N, n, M, m}"),
]

#: the last word of a MEMBER_TYPES file's name, by the type of the wrong value
WRONG_TYPE_NAMES = {str: "text", int: "number", list: "of_numbers", dict: "of_numbers"}


def spec_rule_bad_archives(blobs: dict[str, bytes]) -> list[Bad]:
    """A damaged file for each corruption rule of spec 2.2-2.5, 4.1, 4.2, 4.6, 4.7, 4.9,
    4.10, 4.10.1, 4.11, 5.2-5.4, 5.8 and 5.9 that no other damaged file exercised (issue
    36; the README lists the rules still without one, `WITHOUT_A_FILE`)."""
    bads: list[Bad] = []

    def add(name: str, source: str, how: str, made: tuple[bytes, int]) -> None:
        data, offset = made
        bads.append(Bad(name, f"{source}.ccg with {how}", "CorruptArchiveError", offset, data))

    def footer_of(data: bytes) -> tuple[bytes, int]:
        return data, parse(data).footer_offset

    def set_value(stream: int, index: int, value: int) -> Callable[[list[np.ndarray]], None]:
        def change(values: list[np.ndarray]) -> None:
            values[stream] = values[stream].astype(np.uint64)
            values[stream][index] = value
        return change

    def one_short(stream: int) -> Callable[[list[np.ndarray]], None]:
        def change(values: list[np.ndarray]) -> None:
            values[stream] = values[stream][:-1]
        return change

    def one_more(stream: int) -> Callable[[list[np.ndarray]], None]:
        def change(values: list[np.ndarray]) -> None:
            values[stream] = np.append(values[stream].astype(np.uint64), np.uint64(0))
        return change

    def stream_after_the_last(values: list[np.ndarray]) -> None:
        values.append(np.zeros(1, np.uint64))

    recompressed = "(recompressed; valid CRC and footer)"

    # 4.6 ROOT_TABLE
    every_kind = blobs["every_kind"]
    add("root_table_events_huge.ccg", "every_kind", f"the ROOT_TABLE's first event count (stream 5) set to 2^63 "
        f"(spec 4.6: at or above 2^63) {recompressed}",
        table_changed(every_kind, SectionKind.ROOT_TABLE, set_value(4, 0, 1 << 63)))
    add("root_table_location_huge.ccg", "every_kind", f"the ROOT_TABLE's first location (stream 1) set to 2^63 "
        f"(spec 4.6: a value of stream 1 at or above 2^63) {recompressed}",
        table_changed(every_kind, SectionKind.ROOT_TABLE, set_value(0, 0, 1 << 63)))

    # 4.7 LOCATION_TABLE, from many_locations.ccg (the location streams are 7-12, 0-based 6-11)
    located = blobs["many_locations"]
    table = SectionKind.LOCATION_TABLE
    add("location_table_count_short.ccg", "many_locations", f"the LOCATION_TABLE's location `suffix` stream "
        f"(8) one value short (spec 4.7: a stream count that does not match) {recompressed}",
        table_changed(located, table, one_short(7)))
    for stream, name in enumerate(("system_prefix", "system_suffix", "system_numbered", "system_number",
                                   "system_kind", "system_parent", "location_prefix", None, "location_numbered",
                                   "location_number", "location_kind", "location_parent", "member_count",
                                   "member")):
        if name is not None:
            add(f"location_table_{name}_short.ccg", "many_locations", f"the LOCATION_TABLE's stream {stream + 1} "
                f"(`{name.split('_', 1)[-1] if name.startswith(('system', 'location')) else name}` of the "
                f"{'communicators' if stream > 11 else name.split('_')[0] + ' entries'}) one value short "
                f"(spec 4.7: a stream count that does not match) {recompressed}",
                table_changed(located, table, one_short(stream)))
    add("location_table_negative_number.ccg", "many_locations", f"the LOCATION_TABLE's first location number step "
        f"(stream 10) set to -1, so that `rank 0` becomes number -1 (spec 4.7) {recompressed}",
        table_changed(located, table, set_value(9, 0, 1)))
    add("location_table_negative_parent.ccg", "many_locations", f"the LOCATION_TABLE's first location parent "
        f"step (stream 12) set to -1, so that p is -1 (spec 4.7) {recompressed}",
        table_changed(located, table, set_value(11, 0, 1)))
    add("location_table_negative_member.ccg", "many_locations", f"the LOCATION_TABLE's first member step "
        f"(stream 14) set to -1, so that the first communicator's first member is -1 (spec 4.7) {recompressed}",
        table_changed(located, table, set_value(13, 0, 1)))
    add("location_table_trailing.ccg", "many_locations", f"one more stream after stream 14 of its "
        f"LOCATION_TABLE (spec 4.7: bytes after stream 14) {recompressed}",
        table_changed(located, table, stream_after_the_last))

    def text_length_past_the_payload(raw: bytearray) -> None:
        struct.pack_into("<I", raw, 0, len(raw))

    def texts_not_strings(raw: bytearray) -> None:
        (length,) = struct.unpack_from("<I", raw)
        texts = [0, *json.loads(bytes(raw[4:4 + length]))[1:]]
        text = encode_json(texts)
        raw[:4 + length] = struct.pack("<I", len(text)) + text

    for kind, source, name, beside, beside_how in (
            (table, "many_locations", "location_table", lambda d: d["communicators"][0].update(members=[0]),
             "member 0 listed in the `members` of the DEFINITIONS' first communicator"),
            (SectionKind.EXTENSION_TABLE, "extension_records", "extension_table",
             lambda d: d.update(extensions={}), "an empty `extensions` member in its DEFINITIONS")):
        section = "4.7" if kind == table else "4.9"
        add(f"{name}_twice.ccg", source, f"its {kind.name} block twice, one after the other (spec {section}: at most "
            f"one; footer rewritten with a valid CRC); the error names the footer",
            footer_of(twice(blobs[source], kind)))
        add(f"{name}_beside_definitions.ccg", source, f"{beside_how} beside the {kind.name} (spec {section}) "
            f"{recompressed}", block_changed(blobs[source], SectionKind.DEFINITIONS, definitions_changed(beside)))
        add(f"{name}_text_length.ccg", source, f"the `text_length` of its {kind.name} set to the length of the "
            f"whole payload, so that the text list runs past it (spec {section}) {recompressed}",
            block_changed(blobs[source], kind, text_length_past_the_payload))
        add(f"{name}_texts_not_strings.ccg", source, f"the first text of its {kind.name}'s text list replaced by "
            f"the number 0 (spec {section}: an array of strings) {recompressed}",
            block_changed(blobs[source], kind, texts_not_strings))

    # 4.9 EXTENSION_TABLE, from extension_records.ccg: the value {"demo": {"ids": [int, kind 8], "ratio":
    # kind 7, "records": [...], "version": ...}}; streams 0-7: shape, length, key, integer, prefix,
    # suffix, numbered, number
    extended = blobs["extension_records"]
    table = SectionKind.EXTENSION_TABLE
    for name, change, how in (
            ("high_integer_low", set_value(3, 1, 0), "the integer step of its kind 8 value (the second element "
             "of `ids`) set to 0, so that the value is 0, below 2^63"),
            ("number_not_json", set_value(4, 0, 0), "the prefix of its kind 7 value (`ratio`, `0.50`) set to "
             "text 0 (`demo`), so that the string `demo50` is not a JSON number"),
            ("key_past_list", set_value(2, 0, 999), "its first key set to text 999, past the text list"),
            ("prefix_past_list", set_value(4, 0, 999), "the prefix of its kind 7 value (`ratio`) set to text "
             "999, past the text list"),
            ("suffix_past_list", set_value(5, 0, 999), "the suffix of its kind 7 value (`ratio`) set to text "
             "999, past the text list"),
            ("numbered_two", set_value(6, 0, 2), "its first `numbered` value set to 2 (0 or 1)"),
            ("negative_number", set_value(7, 0, 1), "its first number step set to -1, so that the number of "
             "`ratio` is -1"),
            ("repeated_key", set_value(2, 2, 1), "the second key of the object `demo` set to its first, `ids`"),
            ("leftover", one_more(2), "one more value in its `key` stream than the visit takes"),
            ("trailing", stream_after_the_last, "one more stream after stream 8")):
        add(f"extension_table_{name}.ccg", "extension_records", f"{how} (spec 4.9) {recompressed}",
            table_changed(extended, table, change))

    def replaced_by(document: Callable[[Any], Any]) -> Callable[[bytearray], None]:
        def apply(raw: bytearray) -> None:
            raw[:] = encode_json_table(document(decode_json_table(bytes(raw), "", 0)))
        return apply

    def nested(depth: int) -> Any:
        value: Any = []
        for _ in range(depth - 1):
            value = [value]
        return value

    for name, document, how in (
            ("not_object", lambda value: [value], "its value put in an array of one element, which is no object"),
            ("too_deep", lambda value: {"deep": nested(MAX_DEPTH)}, f"its value replaced by an object holding "
             f"{MAX_DEPTH} nested arrays, {MAX_DEPTH + 1} levels (256 at most)")):
        add(f"extension_table_{name}.ccg", "extension_records", f"{how} (spec 4.9) {recompressed}",
            block_changed(extended, table, replaced_by(document)))

    # 4.10 AGGREGATE_LEVEL and 4.10.1, from aggregation.ccg (levels 0-3, 7 hierarchy nodes, 3 regions)
    aggregated = blobs["aggregation"]
    level = SectionKind.AGGREGATE_LEVEL

    def first_values_raised(raw: bytearray, values: list[np.ndarray]) -> None:
        firsts = np.concatenate(([0], np.cumsum(values[0].astype(np.int64))))[:3]  # of cells 0-2: machine, node 0,
        assert not values[1][firsts].any()  # rank 0 (the leaf's ancestors), each region 0
        values[2][firsts] += 1

    def value_huge(raw: bytearray, values: list[np.ndarray]) -> None:
        values[2][0] = 1 << 63

    def cell_sum_huge(raw: bytearray, values: list[np.ndarray]) -> None:
        values[2][0] = (1 << 62) - 100  # cell 0's other values add more than 100

    def entry_changed(base: bytes, kind: SectionKind, nth: int, **changes: int) -> tuple[bytes, int]:
        q = parse(base)
        k = index_of(q, kind, nth)
        q.entries[k] = replace(q.entries[k], **changes)
        data = build(q)
        return data, parse(data).entries[k].offset

    def without_level_0(base: bytes, kind: SectionKind) -> tuple[bytes, int]:
        q = parse(base)
        k = index_of(q, kind)
        del q.entries[k], q.stored[k]
        data = build(q)
        return data, parse(data).entries[k].offset

    def naming_level_0(made: tuple[bytes, int], kind: SectionKind) -> tuple[bytes, int]:
        """A file whose levels differ: the reader names the first level's block."""
        data = made[0]
        return data, parse(data).entries[index_of(parse(data), kind)].offset

    for name, how, made in (
            ("level_21", "`level` of its first AGGREGATE_LEVEL block set to 21 (spec 4.10: at most 20)",
             block_changed(aggregated, level, header_u32(16, lambda raw: 21))),
            ("no_nodes", "`nodes` (N) of its first AGGREGATE_LEVEL block set to 0 (spec 4.10)",
             block_changed(aggregated, level, header_u32(24, lambda raw: 0))),
            ("value_huge", "the first value of its first AGGREGATE_LEVEL block set to 2^63 (spec 4.10)",
             block_changed(aggregated, level, level_streams_changed(value_huge))),
            ("cell_sum_huge", "the first value of its first AGGREGATE_LEVEL block set to 2^62 - 100, so that "
             "the values of cell 0 add up to more than 2^62 (spec 4.10)",
             block_changed(aggregated, level, level_streams_changed(cell_sum_huge))),
            ("states_differ", "`states` (R) of its AGGREGATE_LEVEL 1 set to 4, level 0's 3 (spec 4.10: blocks "
             "that differ in R); the error names level 0's block",
             naming_level_0(block_changed(aggregated, level, header_u32(20, lambda raw: 4), nth=1), level)),
            ("start_differs", "`start` of its AGGREGATE_LEVEL 1 lowered by one, level 0's minus one (spec 4.10: "
             "blocks that differ in `start`); the error names level 0's block",
             naming_level_0(block_changed(aggregated, level, moved_q(0, -1), nth=1), level)),
            ("stop_differs", "`stop` of its AGGREGATE_LEVEL 1 raised by one, level 0's plus one (spec 4.10: "
             "blocks that differ in `stop`); the error names level 0's block",
             naming_level_0(block_changed(aggregated, level, moved_q(8, 1), nth=1), level)),
            ("nodes_differ", "`nodes` (N) of its AGGREGATE_LEVEL 1 set to 8 with one more node's cells, all "
             "empty, level 0's 7 (spec 4.10: blocks that differ in N); the error names level 0's block",
             naming_level_0(block_changed(aggregated, level, one_more_row(24), nth=1), level)),
            ("states_all_four", "`states` (R) of every AGGREGATE_LEVEL block set to 4, one more than the "
             "regions defined and stored (spec 4.10)",
             block_changed(aggregated, level, header_u32(20, lambda raw: 4), nth=None)),
            ("nodes_all_eight", "`nodes` (N) of every AGGREGATE_LEVEL block set to 8 with one more node's "
             "cells, all empty: the hierarchy has 7 nodes (spec 4.10)",
             block_changed(aggregated, level, one_more_row(24), nth=None)),
            ("window_differs", "`start` of every AGGREGATE_LEVEL block set to 99, one before the roots' "
             "window (spec 4.10)", block_changed(aggregated, level, lambda raw: struct.pack_into("<q", raw, 0, 99),
                                                 nth=None)),
            ("pairs_differ", "the first value (region 0) of the cells of machine, node 0 and rank 0 of its "
             "AGGREGATE_LEVEL 0 raised by one: each node still holds the sum of its children, but level 0 no "
             "longer holds the sums of level 1's pairs of slices (spec 4.10)",
             block_changed(aggregated, level, level_streams_changed(first_values_raised))),
            ("directory_count", "the directory's `count` of its AGGREGATE_LEVEL 1 set to 3, not 2^1 (spec "
             "4.10; footer rewritten with a valid CRC)", entry_changed(aggregated, level, 1, count=3)),
            ("directory_first", "the directory's `first` of its AGGREGATE_LEVEL 1 set to 2, not its level 1 "
             "(spec 4.10; footer rewritten with a valid CRC)", entry_changed(aggregated, level, 1, first=2)),
            ("level_0_missing", "its AGGREGATE_LEVEL 0 block left out, so that the levels are 1-3, not 0..K "
             "(spec 4.10; footer rewritten with a valid CRC); the error names the first block left",
             without_level_0(aggregated, level))):
        add(f"aggregate_{name}.ccg", "aggregation", how + ("" if "footer" in how else f" {recompressed}"), made)
    add("aggregate_level_trailing.ccg", "aggregation", f"one more stream after stream 3 of its first "
        f"AGGREGATE_LEVEL block (spec 4.10: bytes after stream 3) {recompressed}",
        table_changed(aggregated, level, stream_after_the_last))

    # 4.10.3 AGGREGATE_SLICES, from aggregate_slices.ccg (levels 0-10 and 3,000 slices, 3 nodes, 2 regions)
    sliced_file = blobs["aggregate_slices"]
    sliced = SectionKind.AGGREGATE_SLICES

    def leaf_value_raised(raw: bytearray, values: list[np.ndarray]) -> None:
        values[2][-1] += 1  # rank 1's last value: its parent no longer holds the sum

    def first_cells_raised(raw: bytearray, values: list[np.ndarray]) -> None:
        firsts = np.concatenate(([0], np.cumsum(values[0].astype(np.int64))))[[0, 3000]]  # trace, rank 0
        values[2][firsts] += 1

    def without_pyramid(base: bytes) -> tuple[bytes, int]:
        q = parse(base)
        keep = [k for k, e in enumerate(q.entries) if e.kind != SectionKind.AGGREGATE_LEVEL]
        q.entries, q.stored = [q.entries[k] for k in keep], [q.stored[k] for k in keep]
        data = build(q)
        return data, parse(data).entries[index_of(parse(data), sliced)].offset

    def listed_twice(base: bytes) -> tuple[bytes, int]:
        q = parse(base)
        k = index_of(q, sliced)
        q.entries.insert(k + 1, q.entries[k])
        q.stored.insert(k + 1, q.stored[k])
        data = build(q)
        return naming_level_0((data, 0), level)

    for name, how, made in (
            ("zero", "`slices` (S) of its AGGREGATE_SLICES block set to 0 (spec 4.10.3: 1 to 2^20)",
             block_changed(sliced_file, sliced, header_u32(16, lambda raw: 0))),
            ("too_many", "`slices` (S) of its AGGREGATE_SLICES block set to 2^20 + 1 (spec 4.10.3: at most 2^20)",
             block_changed(sliced_file, sliced, header_u32(16, lambda raw: (1 << 20) + 1))),
            ("count_differs", "`slices` (S) of its AGGREGATE_SLICES block set to 2,999, so that its `count` "
             "stream holds 3 more values than N x S (spec 4.10.3, 4.10: a stream count that does not match)",
             block_changed(sliced_file, sliced, header_u32(16, lambda raw: 2999))),
            ("reserved", "the reserved u32 of its AGGREGATE_SLICES block set to 1 (spec 4.10.3)",
             block_changed(sliced_file, sliced, header_u32(28, lambda raw: 1))),
            ("states_differ", "`states` (R) of its AGGREGATE_SLICES block set to 3, the pyramid's 2 (spec "
             "4.10.3); the error names level 0's block",
             naming_level_0(block_changed(sliced_file, sliced, header_u32(20, lambda raw: 3)), level)),
            ("stop_differs", "`stop` of its AGGREGATE_SLICES block raised by one, the pyramid's plus one (spec "
             "4.10.3); the error names level 0's block",
             naming_level_0(block_changed(sliced_file, sliced, moved_q(8, 1)), level)),
            ("children_differ", "the last value (rank 1's last stored time) of its AGGREGATE_SLICES block "
             "raised by one: the root no longer holds the sum of its children (spec 4.10.3); the error names "
             "level 0's block",
             naming_level_0(block_changed(sliced_file, sliced, level_streams_changed(leaf_value_raised)), level)),
            ("total_differs", "the first value (region 0) of the first cells of `trace` and `rank 0` of its "
             "AGGREGATE_SLICES block raised by one: the root still holds the sum of its children, but their "
             "times no longer add up to their level 0 totals (spec 4.10.3); the error names level 0's block",
             naming_level_0(block_changed(sliced_file, sliced, level_streams_changed(first_cells_raised)), level)),
            ("directory_count", "the directory's `count` of its AGGREGATE_SLICES block set to 1,024, not S = "
             "3,000 (spec 4.10.3; footer rewritten with a valid CRC)", entry_changed(sliced_file, sliced, 0,
                                                                                     count=1024)),
            ("directory_first", "the directory's `first` of its AGGREGATE_SLICES block set to 1, not 0 (spec "
             "4.10.3; footer rewritten with a valid CRC)", entry_changed(sliced_file, sliced, 0, first=1)),
            ("alone", "its AGGREGATE_LEVEL blocks left out, so that the AGGREGATE_SLICES block stands without "
             "the pyramid (spec 4.10.3; footer rewritten with a valid CRC)", without_pyramid(sliced_file)),
            ("twice", "its AGGREGATE_SLICES block listed twice in the directory (spec 4.10.3: at most one; "
             "footer rewritten with a valid CRC); the error names level 0's block", listed_twice(sliced_file))):
        add(f"aggregate_slices_{name}.ccg", "aggregate_slices", how + ("" if "footer" in how else f" {recompressed}"),
            made)

    def tree_parent(entry: int, parent: int) -> Callable[[dict[str, Any]], None]:
        return lambda d: d["system_tree"][entry].update(parent=parent)

    for name, change, how in (
            ("tree_cycle", tree_parent(0, 2), "the parent of system tree entry 0 (`machine`) in its DEFINITIONS "
             "set to entry 2 (`node 1`), whose parent it is: its own ancestor"),
            ("tree_parent_out_of_range", tree_parent(1, 3), "the parent of system tree entry 1 (`node 0`) in its "
             "DEFINITIONS set to 3, past the 3 entries"),
            ("location_parent_out_of_range", lambda d: d["locations"][0].update(parent=3), "the parent of "
             "location 0 in its DEFINITIONS set to 3, past the 3 system tree entries")):
        add(f"aggregate_{name}.ccg", "aggregation", f"{how} (spec 4.10.1: corrupt for the "
            f"tables) {recompressed}", block_changed(aggregated, SectionKind.DEFINITIONS,
                                                      definitions_changed(change)))

    # 4.11 METRIC_LEVEL, from metric_integrals.ccg (levels 0 and 1, 2 metrics, 2 locations)
    integrals = blobs["metric_integrals"]
    level = SectionKind.METRIC_LEVEL
    for name, how, made in (
            ("finest_21", "`finest` of its first METRIC_LEVEL block set to 21 (spec 4.11: at most 20)",
             block_changed(integrals, level, header_u32(20, lambda raw: 21))),
            ("stop_at_start", "`stop` of its first METRIC_LEVEL block set to its `start` (spec 4.11: stop above "
             "start)", block_changed(integrals, level, stop_at_start)),
            ("no_locations", "`locations` (L) of its first METRIC_LEVEL block set to 0 (spec 4.11)",
             block_changed(integrals, level, header_u32(28, lambda raw: 0))),
            ("count_short", "the `count` stream of its first METRIC_LEVEL block one cell short of L x 2^k (spec "
             "4.11: a stream count that does not match)", table_changed(integrals, level, one_short(0))),
            ("minus_zero", "the first stored value of its first METRIC_LEVEL block set to the bits of -0.0 (spec "
             "4.11: a stored -0.0)", table_changed(integrals, level, set_value(2, 0, 1 << 63))),
            ("finest_differs", "`finest` of its METRIC_LEVEL 1 set one above level 0's (spec 4.11: blocks that "
             "differ in F); the error names level 0's block",
             naming_level_0(block_changed(integrals, level, header_u32(20, lambda raw: struct.unpack_from(
                 "<I", raw, 20)[0] + 1), nth=1), level)),
            ("start_differs", "`start` of its METRIC_LEVEL 1 lowered by one, level 0's minus one (spec 4.11: "
             "blocks that differ in `start`); the error names level 1's block, which is not the trace's "
             "window",
             block_changed(integrals, level, moved_q(0, -1), nth=1)),
            ("stop_differs", "`stop` of its METRIC_LEVEL 1 raised by one, level 0's plus one (spec 4.11: "
             "blocks that differ in `stop`); the error names level 1's block, which is not the trace's "
             "window",
             block_changed(integrals, level, moved_q(8, 1), nth=1)),
            ("metrics_differ", "`metrics` (M) of its METRIC_LEVEL 1 set to 3, level 0's 2 (spec 4.11: blocks "
             "that differ in M); the error names level 1's block, whose M is not the defined metrics'",
             block_changed(integrals, level, header_u32(24, lambda raw: 3), nth=1)),
            ("locations_differ", "`locations` (L) of its METRIC_LEVEL 1 raised by one with one more location's "
             "cells, all empty (spec 4.11: blocks that differ in L); the error names level 1's block, whose L is not "
             "the locations'", block_changed(integrals, level, one_more_row(28), nth=1)),
            ("directory_count", "the directory's `count` of its METRIC_LEVEL 1 set to 3, not 2^1 (spec 4.11; "
             "footer rewritten with a valid CRC)", entry_changed(integrals, level, 1, count=3)),
            ("directory_first", "the directory's `first` of its METRIC_LEVEL 1 set to 2, not its level 1 (spec "
             "4.11; footer rewritten with a valid CRC)", entry_changed(integrals, level, 1, first=2)),
            ("level_0_missing", "its METRIC_LEVEL 0 block left out, so that the levels are 1 only, not 0..K "
             "(spec 4.11; footer rewritten with a valid CRC); the error names the block left",
             without_level_0(integrals, level)),
            ("window_differs", "`start` of every METRIC_LEVEL block lowered by one, before the roots' window "
             "(spec 4.11)", block_changed(integrals, level, lambda raw: struct.pack_into(
                 "<q", raw, 0, struct.unpack_from("<q", raw)[0] - 1), nth=None)),
            ("metrics_all_three", "`metrics` (M) of every METRIC_LEVEL block set to 3, one more than the defined "
             "metrics (spec 4.11)", block_changed(integrals, level, header_u32(24, lambda raw: 3), nth=None)),
            ("locations_all_three", "`locations` (L) of every METRIC_LEVEL block raised by one with one more "
             "location's cells, all empty (spec 4.11: L different from 1 + the largest location index)",
             block_changed(integrals, level, one_more_row(28), nth=None))):
        add(f"metric_level_{name}.ccg", "metric_integrals", how + ("" if "footer" in how else f" {recompressed}"),
            made)

    # 5.3 the pending stack, from every_kind.ccg: the NODES block of first node 4 begins with a
    # CALL node whose 3 children are all popped from the 4 ids of its `pending`
    def node_streams(change: Callable[[list[np.ndarray]], None]) -> Callable[[bytearray], None]:
        def apply(raw: bytearray) -> None:
            values = node_block_streams(bytes(raw))
            change(values)
            raw[BLOCK_START.size:] = b"".join(encode_stream(stream) for stream in values)
        return apply

    nodes = SectionKind.NODES
    blocks = [node_block_streams(stored_raw(parse(every_kind), k)) for k, e in enumerate(parse(every_kind).entries)
              if e.kind == nodes]
    assert blocks[1][1][0] == 0 and blocks[1][2][0] == 3 and blocks[1][3][:3].all() and len(blocks[1][0]) == 4
    # the first block whose first node is a CALL or ARTIFICIAL node with child 0 from `child_id`
    nth = next(i for i, b in enumerate(blocks) if b[1][0] <= 1 and len(b[3]) and not b[3][0])
    first = parse(every_kind).entries[index_of(parse(every_kind), nodes, nth)].first

    def child_is_parent(values: list[np.ndarray]) -> None:
        values[4] = values[4].astype(np.uint64)
        values[4][0] = first

    add("nodes_pop_empty.ccg", "every_kind", f"the `pending` stream of its NODES block of first node 4 emptied, so "
        f"that its first node, a CALL of 3 fresh children, pops an empty stack (spec 5.3) {recompressed}",
        block_changed(every_kind, nodes, node_streams(lambda values: values.__setitem__(
            0, np.zeros(0, np.uint64))), nth=1))
    add("nodes_fresh_short.ccg", "every_kind", f"the `child_fresh` stream of its NODES block of first node 4 one "
        f"value short (spec 5.3: a stream count that does not match) {recompressed}",
        block_changed(every_kind, nodes, node_streams(one_short(3)), nth=1))
    add("nodes_child_not_below.ccg", "every_kind", f"the first `child_id` of its NODES block of first node {first} "
        f"set to {first}, the id of the node that references it: not below it (spec 5.3) {recompressed}",
        block_changed(every_kind, nodes, node_streams(child_is_parent), nth=nth))

    # 5.2 the import table, from every_kind.ccg: the NODES block of first node 8 imports nodes
    # 0, 4, 6 and 7, node 4 with the metric ids 0, 1, 2
    assert blocks[2][8].tolist() == [0, 4, 2, 1] and blocks[2][12].tolist() == [0, 1, 2]
    add("nodes_import_ids_repeat.ccg", "every_kind", f"the second `import_id` step of its NODES block of first node "
        f"8 set to 0, so that node 0 is listed twice (spec 5.2: ids increasing, every difference at least 1) "
        f"{recompressed}", block_changed(every_kind, nodes, node_streams(set_value(8, 1, 0)), nth=2))
    add("nodes_import_id_at_first.ccg", "every_kind", f"the last `import_id` step of its NODES block of first node 8 "
        f"set to 2, so that its last imported node is 8, the block's first, not an earlier block's (spec 5.2, 5.4: "
        f"ids below `first`) {recompressed}", block_changed(every_kind, nodes, node_streams(set_value(8, 3, 2)), nth=2))
    add("nodes_import_metric_ids_repeat.ccg", "every_kind", f"the third `import_metric_id` of its NODES block of "
        f"first node 8 set to 1, the second's (spec 5.2: strictly increasing per node) {recompressed}",
        block_changed(every_kind, nodes, node_streams(set_value(12, 2, 1)), nth=2))

    # 5.9 coded soft values
    def soft_width_zero(raw: bytearray) -> None:
        raw[:] = with_coded(bytes(raw), "soft", bytes(8))  # width 0, B = 8, eight zero bytes

    def soft_byte_after(raw: bytearray) -> None:
        data = stream_bytes(bytes(raw), "soft")[STREAM_HEADER.size + 4:]  # after the byte count B
        raw[:] = with_coded(bytes(raw), "soft", data + b"\x00")

    add("coded_nodes_soft_width_zero.ccg", "coded_gaps", f"the `soft` stream of its first CODED_NODES block "
        f"replaced by width 0 and 8 zero bytes, the mark and form of coded soft values, which only "
        f"CODED_SOFT_NODES blocks hold (spec 5.2, 5.9) {recompressed}",
        block_changed(blobs["coded_gaps"], SectionKind.CODED_NODES, soft_width_zero))
    def bit_length_63(raw: bytearray) -> None:
        coder = gapcoder._Encoder()  # the range coder of 5.8, made to code what no writer codes
        coder.tree(gapcoder._Model().lengths, gapcoder.LENGTH_BITS, 63)
        for _ in range(5):
            coder.shift_low()
        raw[:] = with_coded(bytes(raw), "gaps", bytes(coder.out))

    add("coded_gaps_bit_length_63.ccg", "coded_gaps", f"the coded gaps of its first CODED_NODES block replaced by "
        f"the range coder's bytes of one bit length 63, a value at or above 2^62 (spec 5.8: at most 62) "
        f"{recompressed}", block_changed(blobs["coded_gaps"], SectionKind.CODED_NODES, bit_length_63))
    add("coded_soft_leftover.ccg", "coded_soft", f"a byte after the coded soft values of its first "
        f"CODED_SOFT_NODES block, which decoding leaves over (spec 5.9: exactly B bytes) {recompressed}",
        block_changed(blobs["coded_soft"], SectionKind.CODED_SOFT_NODES, soft_byte_after))

    # 2.4 and 4.1, 4.2 (with 7: JSON sections against their types)
    q = parse(every_kind)
    k = index_of(q, SectionKind.DEFINITIONS)
    del q.entries[k], q.stored[k]
    add("definitions_missing.ccg", "every_kind", "its DEFINITIONS block left out (spec 2.4: exactly 1; footer "
        "rewritten with a valid CRC); the error names the footer", footer_of(build(q)))
    add("definitions_regions_not_list.ccg", "every_kind", f"the DEFINITIONS member `regions` set to the string "
        f"`main` (spec 4.1: an array of objects) {recompressed}",
        block_changed(every_kind, SectionKind.DEFINITIONS, definitions_changed(lambda d: d.update(regions="main"))))
    add("parameters_branching_text.ccg", "every_kind", f"the PARAMETERS member `branching` set to the string `4` "
        f"(spec 4.2: an integer) {recompressed}",
        block_changed(every_kind, SectionKind.PARAMETERS, definitions_changed(lambda d: d.update(branching="4"))))
    for kind, member, value, expected in MEMBER_TYPES:
        add(f"{kind.name.lower()}_{member}_{WRONG_TYPE_NAMES[type(value)]}.ccg", "every_kind",
            f"the {kind.name} member `{member}` set to {json.dumps(value)} "
            f"(spec {'4.1' if kind == SectionKind.DEFINITIONS else '4.2'}: {expected}) {recompressed}",
            block_changed(every_kind, kind, definitions_changed(lambda d, m=member, v=value: d.update({m: v}))))

    # 2.2, 2.3 and 2.5 flags and the directory
    def footer_changed(base: bytes, change: Callable[[bytearray, int], None]) -> tuple[bytes, int]:
        """``base`` with its footer block changed in place by ``change(data, footer offset)``
        and its CRC recomputed."""
        data, footer = bytearray(base), parse(base).footer_offset
        change(data, footer)
        end = len(data) - TRAILER.size - BLOCK_CRC.size
        BLOCK_CRC.pack_into(data, end, crc32c(bytes(data[footer:end])))
        return bytes(data), footer

    definitions = index_of(parse(every_kind), SectionKind.DEFINITIONS)
    add("directory_reserved.ccg", "every_kind", "the reserved u32 of the DEFINITIONS entry of its directory set to 1 "
        "(spec 1, 2.3; the footer's CRC recomputed); the error names the footer",
        footer_changed(every_kind, lambda data, footer: struct.pack_into(
            "<I", data, footer + BLOCK_HEADER.size + DIRECTORY_ENTRY.size * definitions + 4, 1)))
    add("footer_flags_zstd.ccg", "every_kind", "ZSTD set beside MUST_UNDERSTAND in the flags of its footer block, "
        "whose payload is raw (spec 2.3: MUST_UNDERSTAND only, never compressed; the footer's CRC recomputed)",
        footer_changed(every_kind, lambda data, footer: struct.pack_into(
            "<H", data, footer + 2, int(BlockFlags.MUST_UNDERSTAND | BlockFlags.ZSTD))))
    def flags_changed(base: bytes, kind: SectionKind, flags: Callable[[int], int]) -> tuple[bytes, int]:
        q = parse(base)
        k = index_of(q, kind)
        q.entries[k] = replace(q.entries[k], flags=flags(q.entries[k].flags))
        data = build(q)
        return data, parse(data).entries[k].offset

    add("block_flag_reserved.ccg", "every_kind", "bit 2 (reserved) set in the flags of its DEFINITIONS block's "
        "header and directory entry (spec 2.2; CRC and footer rewritten)",
        flags_changed(every_kind, SectionKind.DEFINITIONS, lambda flags: flags | 4))
    bundled = blobs["bundle"]
    add("bundle_not_must_understand.ccg", "bundle", "MUST_UNDERSTAND cleared in the flags of its DICTIONARY_BUNDLE "
        "block's header and directory entry (spec 2.5; CRC and footer rewritten)",
        flags_changed(bundled, SectionKind.DICTIONARY_BUNDLE, lambda flags: flags & ~int(BlockFlags.MUST_UNDERSTAND)))

    def member_zstd(members: Members) -> None:
        members[0] = (members[0][0], members[0][1] | int(BlockFlags.ZSTD), *members[0][2:])

    add("bundle_member_zstd.ccg", "bundle", f"bit 1 (ZSTD) set in the flags of its first member (spec 2.5: a "
        f"member is never compressed on its own) {recompressed}",
        (rebundled(bundled, member_zstd), parse(bundled).entries[index_of(parse(bundled),
                                                                          SectionKind.DICTIONARY_BUNDLE)].offset))
    return bads


#: what a damaged file whose damage the reader reads through, and `ccg verify` reports, raises
VERIFIED = "reads; `ccg verify` reports it"


def verify_bad_archives(blobs: dict[str, bytes]) -> list[Bad]:
    """Files that break a rule the reader reads through and `ccg verify` reports (spec 4.3,
    4.5), from many_locations_json.ccg (ROOTS, SNAPSHOTS and SUMMARY, 300 locations)."""
    base = blobs["many_locations_json"]
    roots = parse(base).entries[index_of(parse(base), SectionKind.ROOTS)].offset
    bads: list[Bad] = []

    q = parse(base)
    k = index_of(q, SectionKind.ROOTS)
    q.entries[k] = replace(q.entries[k], count=q.entries[k].count - 1)
    bads.append(Bad("roots_count_differs.ccg", "many_locations_json.ccg with the directory's `count` of its ROOTS "
                    "block one below its 300 entries and defined locations (spec 4.3; footer rewritten with a valid "
                    "CRC)", VERIFIED, roots, build(q)))

    q = parse(base)
    k = index_of(q, SectionKind.ROOTS)
    q.stored[k] = zstd_frame(stored_raw(q, k)[:-40])
    q.entries[k] = replace(q.entries[k], raw_length=q.entries[k].raw_length - 40, count=q.entries[k].count - 1)
    bads.append(Bad("roots_location_missing.ccg", "many_locations_json.ccg without the last ROOTS entry (location "
                    "299) and the directory's `count` one lower, so that a defined location has no root (spec 4.3: "
                    "since 1.3 the roots list every defined location; recompressed; valid CRC and footer)", VERIFIED,
                    roots, build(q)))

    summaries = [k for k, e in enumerate(parse(base).entries) if e.kind == SectionKind.SUMMARY]
    for name, how, change, count, named in (
            ("summary_location_missing.ccg", "without its last location (299) in its last SUMMARY block, which its "
             "SNAPSHOTS list (spec 4.5: every location in both indexes); `ccg verify` names the first SUMMARY block",
             lambda doc: doc.update(locations=doc["locations"][:-1]), -1, summaries[0]),
            ("summary_checkpoints_differ.ccg", "without the first checkpoint of its last location (299) in its last "
             "SUMMARY block, which its SNAPSHOTS list (spec 4.5: at the same checkpoints)",
             lambda doc: doc["locations"][-1].update(checkpoints=doc["locations"][-1]["checkpoints"][1:]), 0,
             summaries[-1])):
        data = index_changed(base, summaries[-1], change, count)
        bads.append(Bad(name, f"many_locations_json.ccg {how} (recompressed; valid CRC and footer)", VERIFIED,
                        parse(data).entries[named].offset, data))
    for name, kind, how, change in CHECKPOINT_CONTENTS:
        k = index_of(parse(base), kind)
        bads.append(Bad(name, f"many_locations_json.ccg with {how} of its first {kind.name} block (location 0, "
                              f"6 events, interval 4) (recompressed; valid CRC and footer)", VERIFIED,
                        parse(base).entries[k].offset, index_changed(base, k, change)))
    every_kind = blobs["every_kind"]
    for name, how, change in CHECKPOINT_TABLE_CONTENTS:
        data, offset = block_changed(every_kind, SectionKind.CHECKPOINT_TABLE, checkpoint_table_changed(change))
        bads.append(Bad(name, f"every_kind.ccg with {how} in its first CHECKPOINT_TABLE block (location 0, "
                              f"interval 16) (recompressed; valid CRC and footer)", VERIFIED, offset, data))
    return bads


def checkpoint_table_changed(change: Callable[[Checkpoint], None]) -> Callable[[bytearray], None]:
    """A change of a CHECKPOINT_TABLE payload (4.8): checkpoint 0 of its first location
    changed by ``change``, the table encoded again by the writer's encoder."""
    def apply(raw: bytearray) -> None:
        interval, table = decode_checkpoint_table(bytes(raw), "", 0)
        points = [(location, [Checkpoint(**{member: value.tolist() if isinstance(value, np.ndarray) else value
                                            for member, value in point.items()}) for point in listed])
                  for location, listed in table]
        change(points[0][1][0])
        raw[:] = encode_checkpoint_table(interval, points)
    return apply


#: The files of the content rules of checkpoints that a CHECKPOINT_TABLE holds (spec 4.8,
#: the members of 4.4 and 4.5), made in every_kind.ccg, whose location 0 has at checkpoint 0
#: (index 16, time 1044) stack [[0, 1000]], metrics [[0, 1000], [1, bits of 7.5], [2, -42]],
#: regions [[0, 1, 44, 11], ...], durations [[1, 23, 23], ...] and open [[0, 1000, 1195]].
CHECKPOINT_TABLE_CONTENTS: list[tuple[str, str, Callable[[Checkpoint], None]]] = [
    ("checkpoint_table_stack_changed.ccg", "the enter time of the `stack` row of checkpoint 0 raised by one "
     "(spec 4.4: the regions open before event k with their enter timestamps)",
     lambda point: point.stack[0].__setitem__(1, point.stack[0][1] + 1)),
    ("checkpoint_table_time_changed.ccg", "the `time` of checkpoint 0 lowered by one (spec 4.4: T = the timestamp "
     "of event k)", lambda point: setattr(point, "time", point.time - 1)),
    ("checkpoint_table_metric_value_changed.ccg", "the value of metric 2 in the `metrics` of checkpoint 0 set to "
     "-41, not its last sample's -42 (spec 4.4: the value of the last such sample)",
     lambda point: point.metrics[2].__setitem__(1, -41)),
    ("checkpoint_table_metrics_unsorted.ccg", "the `metrics` of checkpoint 0 in decreasing order of metric (spec "
     "4.4: sorted by metric, increasing metric index)", lambda point: point.metrics.reverse()),
    ("checkpoint_table_metric_repeated.ccg", "a second pair of metric 2 in the `metrics` of checkpoint 0 (spec "
     "4.4: one pair per metric)", lambda point: point.metrics.append([2, -42])),
    ("checkpoint_table_calls_changed.ccg", "`calls` of region 0 in checkpoint 0 raised by one (spec 4.5: `calls`)",
     lambda point: point.regions[0].__setitem__(1, point.regions[0][1] + 1)),
    ("checkpoint_table_durations_changed.ccg", "the longest call of region 1 in the `durations` of checkpoint 0 "
     "raised by one (spec 4.5: `durations`)",
     lambda point: point.durations[0].__setitem__(2, point.durations[0][2] + 1)),
    ("checkpoint_table_open_changed.ccg", "the leave time of the `open` call of checkpoint 0 raised by one (spec "
     "4.5: `open`, with the leave timestamps)", lambda point: point.open[0].__setitem__(2, point.open[0][2] + 1)),
]


def index_changed(base: bytes, k: int, change: Callable[[dict[str, Any]], None], count: int = 0) -> bytes:
    """``base`` with the JSON document of its block ``k`` (SNAPSHOTS or SUMMARY) changed in
    place by ``change`` and the directory's `count` moved by ``count`` (recompressed; valid
    CRC and footer)."""
    q = parse(base)
    document = json.loads(stored_raw(q, k))
    change(document)
    raw = encode_json(document)
    q.stored[k] = zstd_frame(raw)
    q.entries[k] = replace(q.entries[k], raw_length=len(raw), count=q.entries[k].count + count)
    return build(q)


def first_point(change: Callable[[dict[str, Any]], None], nth: int = 0) -> Callable[[dict[str, Any]], None]:
    """A change of an index block: checkpoint ``nth`` of its first location changed by ``change``."""
    return lambda document: change(document["locations"][0]["checkpoints"][nth])


def set_row(member: str, row: int, value: Any, nth: int = 0) -> Callable[[dict[str, Any]], None]:
    """A change of an index block: row ``row`` of ``member`` of checkpoint ``nth`` of its
    first location set to ``value`` (``row`` = its length: one row appended)."""
    def change(point: dict[str, Any]) -> None:
        rows = point[member]
        rows[row:row + 1] = [value]
    return first_point(change, nth)


#: The files of the content and member types of SNAPSHOTS and SUMMARY checkpoints (spec
#: 4.4, 4.5): what each is made with in many_locations_json.ccg, whose location 0 has
#: SNAPSHOTS checkpoints {index 4, time 110, stack [[0, 0]], metrics []} and {6, 111, [], []}
#: and SUMMARY checkpoint 0 with regions [[0, 1, 110, 10], [1, 1, 100, 100]], messages
#: [1, 64, 0, 0], collectives [0, 0, 0], peers [[1, 1, 64, 0, 0]], operations [],
#: durations [[1, 100, 100]] and open [[0, 0, 111]].
CHECKPOINT_CONTENTS: list[tuple[str, SectionKind, str, Callable[[dict[str, Any]], None]]] = [
    ("snapshots_stack_other_region.ccg", SectionKind.SNAPSHOTS, "the `stack` of checkpoint 0 naming region 1, "
     "not the open region 0 (spec 4.4: the regions open before event k)", set_row("stack", 0, [1, 0])),
    ("snapshots_stack_enter_changed.ccg", SectionKind.SNAPSHOTS, "the enter time of the `stack` row of checkpoint "
     "0 set to 5, not its ENTER's 0 (spec 4.4: with their enter timestamps)", set_row("stack", 0, [0, 5])),
    ("snapshots_stack_extra.ccg", SectionKind.SNAPSHOTS, "a row [1, 100] appended to the `stack` of checkpoint 0, "
     "a call already left (spec 4.4: the regions open before event k)", set_row("stack", 1, [1, 100])),
    ("snapshots_time_changed.ccg", SectionKind.SNAPSHOTS, "the `time` of checkpoint 0 set to 109, not 110, the "
     "timestamp of event 4 (spec 4.4: T = the timestamp of event k)", first_point(lambda p: p.update(time=109))),
    ("snapshots_final_time_changed.ccg", SectionKind.SNAPSHOTS, "the `time` of the final checkpoint set to 110, "
     "not the location's end 111 (spec 4.4: for the final checkpoint, the location's `end`)",
     first_point(lambda p: p.update(time=110), 1)),
    ("snapshots_time_decreasing.ccg", SectionKind.SNAPSHOTS, "the `time` of checkpoint 1 set to 100, before "
     "checkpoint 0's 110 (spec 4.4: the timestamps of later events)", first_point(lambda p: p.update(time=100), 1)),
    ("snapshots_index_off_interval.ccg", SectionKind.SNAPSHOTS, "the `index` of checkpoint 0 set to 3, not K = 4 "
     "(spec 4.4: k = K, 2K, ...)", first_point(lambda p: p.update(index=3))),
    ("snapshots_final_missing.ccg", SectionKind.SNAPSHOTS, "the final checkpoint (index 6) of location 0 left "
     "out (spec 4.4: a final one at k = count)",
     lambda doc: doc["locations"][0].update(checkpoints=doc["locations"][0]["checkpoints"][:1])),
    ("snapshots_interval_zero.ccg", SectionKind.SNAPSHOTS, "`interval` set to 0 (spec 4.4: K, a positive "
     "integer)", lambda doc: doc.update(interval=0)),
    ("snapshots_interval_text.ccg", SectionKind.SNAPSHOTS, "`interval` set to the string `4` (spec 4.4: an "
     "integer)", lambda doc: doc.update(interval="4")),
    ("snapshots_stack_three_columns.ccg", SectionKind.SNAPSHOTS, "the `stack` row of checkpoint 0 set to "
     "[0, 0, 0] (spec 4.4: rows [region, enter_time])", set_row("stack", 0, [0, 0, 0])),
    ("snapshots_stack_undefined_region.ccg", SectionKind.SNAPSHOTS, "the `stack` row of checkpoint 0 naming "
     "region 999, which the definitions do not define (spec 4.4, 4.1)", set_row("stack", 0, [999, 0])),
    ("snapshots_metrics_undefined.ccg", SectionKind.SNAPSHOTS, "a row [0, 5] in the `metrics` of checkpoint 0, "
     "metric 0 of a file that defines none (spec 4.4: per metric sampled before event k)",
     set_row("metrics", 0, [0, 5])),
    ("summary_calls_changed.ccg", SectionKind.SUMMARY, "`calls` of region 0 in checkpoint 0 set to 2, not its 1 "
     "ENTER (spec 4.5: `calls`)", set_row("regions", 0, [0, 2, 110, 10])),
    ("summary_inclusive_changed.ccg", SectionKind.SUMMARY, "`inclusive` of region 0 in checkpoint 0 set to 111, "
     "not 110 (spec 4.5: `inclusive`, an open call counting T - enter)", set_row("regions", 0, [0, 1, 111, 10])),
    ("summary_exclusive_changed.ccg", SectionKind.SUMMARY, "`exclusive` of region 0 in checkpoint 0 set to 11, "
     "not 10 (spec 4.5: `exclusive`)", set_row("regions", 0, [0, 1, 110, 11])),
    ("summary_regions_unsorted.ccg", SectionKind.SUMMARY, "the `regions` of checkpoint 0 in decreasing order of "
     "region (spec 4.5: sorted by region)", first_point(lambda p: p["regions"].reverse())),
    ("summary_messages_changed.ccg", SectionKind.SUMMARY, "the sends of `messages` in checkpoint 0 set to 2, not "
     "its 1 SEND (spec 4.5: `messages`)", first_point(lambda p: p.update(messages=[2, 64, 0, 0]))),
    ("summary_messages_five.ccg", SectionKind.SUMMARY, "a fifth value in the `messages` of checkpoint 0 (spec "
     "4.5: [sent, bytes_sent, received, bytes_received])",
     first_point(lambda p: p.update(messages=[1, 64, 0, 0, 0]))),
    ("summary_collectives_changed.ccg", SectionKind.SUMMARY, "the count of `collectives` in checkpoint 0 set to "
     "1, with no COLL_END before event 4 (spec 4.5: `collectives`)",
     first_point(lambda p: p.update(collectives=[1, 0, 0]))),
    ("summary_peers_changed.ccg", SectionKind.SUMMARY, "the sends to peer 1 in the `peers` of checkpoint 0 set "
     "to 2, not 1 (spec 4.5: `peers`)", set_row("peers", 0, [1, 2, 64, 0, 0])),
    ("summary_operations_changed.ccg", SectionKind.SUMMARY, "a row [0, 1, 0, 0] in the `operations` of "
     "checkpoint 0, an operation not seen before event 4 (spec 4.5: `operations`)",
     set_row("operations", 0, [0, 1, 0, 0])),
    ("summary_durations_changed.ccg", SectionKind.SUMMARY, "the shortest call of region 1 in the `durations` of "
     "checkpoint 0 set to 99, not 100 (spec 4.5: `durations`)", set_row("durations", 0, [1, 99, 100])),
    ("summary_open_changed.ccg", SectionKind.SUMMARY, "the leave time of the `open` call of checkpoint 0 set to "
     "112, not its LEAVE's 111 (spec 4.5: `open`, the stack with the leave timestamps)",
     set_row("open", 0, [0, 0, 112])),
    ("summary_open_at_final.ccg", SectionKind.SUMMARY, "a row [0, 0, 111] in the `open` of the final checkpoint "
     "(spec 4.5: the final checkpoint has none)", set_row("open", 0, [0, 0, 111], 1)),
    ("summary_open_missing.ccg", SectionKind.SUMMARY, "checkpoint 0 without its `open` member, which the other "
     "checkpoints have (spec 4.5: the four members of 1.2 in every SUMMARY checkpoint or in none)",
     first_point(lambda p: p.pop("open"))),
    ("summary_durations_two_columns.ccg", SectionKind.SUMMARY, "the `durations` row of checkpoint 0 set to "
     "[1, 100] (spec 4.5: rows [region, shortest, longest])", set_row("durations", 0, [1, 100])),
    ("summary_regions_undefined.ccg", SectionKind.SUMMARY, "a row [999, 1, 1, 1] appended to the `regions` of "
     "checkpoint 0, a region the definitions do not define (spec 4.5, 4.1)",
     set_row("regions", 2, [999, 1, 1, 1])),
]


def bad_readme(bads: list[Bad]) -> str:
    out = [
        "# Damaged archives",
        "",
        "Written by `tools/regen_vectors.py` from the vectors of `spec/vectors/` each row names",
        "(`every_kind.ccg` where it names none; the only writer of these files; never edit them",
        "by hand). `tests/test_bad_archives.py` parses the table below, so the two",
        "cannot drift: reading a file - opening it, the definitions, parameters and stats, every",
        "location's events in full, `event(i)`, `find`, the checkpoints and the model and the",
        "metric integrals at every level of the tables - must raise exactly the exception named",
        "(not a subclass), and when an",
        "offset is given the error's `offset` attribute and its message (`at byte N`) must name",
        "it. \"reads fine\" means reading succeeds and gives the events of `every_kind`, \"reads as",
        "`NAME.ccg`\" that it gives what the vector `NAME.ccg` gives, and \"reads; `ccg verify`",
        "reports it\" that reading succeeds (the reader reads through the damage, as the spec",
        "allows) and `ccg verify` (`ccgformat.archive.verify.verify`) reports a problem at the",
        "offset given. The files",
        "also seed the fuzz corpus. All exception classes live in `ccgformat.errors` and derive",
        "from `CcgError`.",
        "",
        "| file | how it was made | raises | offset |",
        "|---|---|---|---|",
    ]
    for bad in bads:
        raises = bad.raises if bad.raises.startswith("reads") else f"`{bad.raises}`"
        offset = "-" if bad.offset is None else str(bad.offset)
        out.append(f"| `{bad.name}` | {bad.how} | {raises} | {offset} |")
    out += ["", *WITHOUT_A_FILE, ""]
    return "\n".join(out)


#: the README's list of the corruption rules of spec/format.md no file above exercises, and why
WITHOUT_A_FILE = """## Rules without a damaged file

A review of every MUST, "is corrupt" and "a reader refuses" of spec/format.md (issue 36;
sections 2.2-2.5, 4.1-4.11, 5.2-5.4 and 5.9 statement by statement, the files of 2.6-2.9,
5.7 and 5.8 as earlier reviews left them) found a file above for each, except:

- 5.9: a coded soft value whose bit length exceeds 62, and byte 0 of the coded soft values
  not 0: the soft values are decoded by the decoder of 5.8's gaps (`coded_gaps_bit_length_63`,
  `coded_gaps_first_byte`; `coded_soft_leftover` shows the soft stream reaches it).
- 4.1: the types of the fields of the records inside the arrays (a region's `name`, a
  communicator's `members`, a metric's `value_type`, ...): one reader function checks
  every text and integer of DEFINITIONS, which `definitions_provenance_of_numbers` and
  `definitions_timer_resolution_text` exercise; a file per field is not made.
- 4.4, 4.5 members in a 1.0 or 1.1 SUMMARY (without the four members of 1.2) and the
  `metrics` of a JSON SNAPSHOTS checkpoint with samples: `ccg verify` compares every
  member of every checkpoint with the rebuilt events in one place, which the
  `snapshots_*`, `summary_*` and `checkpoint_table_*` files exercise (the metrics of a
  checkpoint through `checkpoint_table_metric_*`).
- 4.11: METRIC_LEVEL blocks that differ in `start`, `stop`, M or L cannot differ from
  each other alone: each is checked against the trace's window, its metrics and its
  locations first, and `metric_level_start_differs`, `metric_level_stop_differs`,
  `metric_level_metrics_differ` and `metric_level_locations_differ` show that this check
  names the block that differs.
- 7: the bounds a reader MAY apply (a gap, child id or imported total or event count at
  or above 2^62; the memory of a node block) are permissions, not rules; `nodes_sum_overflow`
  exercises the sum that MUST be refused.
""".splitlines()


# --------------------------------------------------------------------------- main

def generate(vectors_dir: Path, bad_dir: Path, spec: Path) -> None:
    """Write the vectors, the damaged archives and ``spec`` (format.md with the text made
    from minimal.ccg) into the given places."""
    vectors = [make() for make in VECTOR_BUILDERS]
    blobs = {v.name: write_vector(v, vectors_dir) for v in vectors}
    (vectors_dir / "README.md").write_text(vectors_readme(vectors, blobs))
    bads = bad_archives(blobs["every_kind"]) + table_bad_archives(blobs) + bundle_bad_archives(blobs["bundle"]) \
        + compact_bad_archives(blobs["compact"]) + settled_bad_archives(blobs) + node_rule_bad_archives(blobs) \
        + spec_rule_bad_archives(blobs) + verify_bad_archives(blobs)
    for bad in bads:
        (bad_dir / bad.name).write_bytes(bad.data)
        check_bad(bad_dir / bad.name, bad)
    (bad_dir / "README.md").write_text(bad_readme(bads))
    spec.write_text(generated_spec(SPEC.read_text(), blobs["minimal"]))


def read_all(path: Path) -> None:
    with ccg.open(path) as archive:
        archive.definitions.extensions, archive.params, archive.stats
        tables = archive.aggregation_tables
        for k in range(len(tables.levels)) if tables else ():
            archive.aggregate(1 << k)
        metric_tables = archive.metric_tables
        for k in range(len(metric_tables.levels)) if metric_tables else ():
            archive.metric_integrals(1 << k)
        for location in archive.locations:
            for _ in archive.location(location).events():
                pass
            archive.checkpoints(SectionKind.SNAPSHOTS, location)
            archive.checkpoints(SectionKind.SUMMARY, location)


def check_bad(path: Path, bad: Bad) -> None:
    """Refuse to write a README row the reader does not live up to (the damage may need
    adjusting after a change of the codec)."""
    try:
        read_all(path)
    except ccg.CcgError as error:
        got, offset = type(error).__name__, getattr(error, "offset", None)
        if got != bad.raises or (bad.offset is not None and offset != bad.offset):
            raise SystemExit(f"{bad.name}: expected {bad.raises} at {bad.offset}, the reader raises {got} at "
                             f"{offset}: {error}")
    else:
        if not bad.raises.startswith("reads"):
            raise SystemExit(f"{bad.name}: expected {bad.raises}, but it reads fine")
        if bad.raises == VERIFIED and bad.offset not in {problem.offset for problem in verify(path)}:
            raise SystemExit(f"{bad.name}: `ccg verify` reports no problem at byte {bad.offset}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the files on disk instead of writing; exit 1 on a difference")
    args = parser.parse_args(argv)
    status = 0
    for path in frozen_differences():
        print(f"differs from its recorded SHA-256 (or is missing or unrecorded): {path.relative_to(ROOT)}")
        status = 1
    with tempfile.TemporaryDirectory() as scratch:
        vectors_tmp, bad_tmp = Path(scratch, "vectors"), Path(scratch, "bad")
        vectors_tmp.mkdir()
        bad_tmp.mkdir()
        spec_tmp = Path(scratch, SPEC.name)
        generate(vectors_tmp, bad_tmp, spec_tmp)
        if spec_tmp.read_bytes() != SPEC.read_bytes():
            if args.check:
                print(f"differs: {SPEC.relative_to(ROOT)} (the text generated from minimal.ccg)")
                status = 1
            else:
                shutil.copyfile(spec_tmp, SPEC.with_name(f".{SPEC.name}.tmp"))
                os.replace(SPEC.with_name(f".{SPEC.name}.tmp"), SPEC)
                print(f"wrote {SPEC.relative_to(ROOT)}")
        for produced, target in ((vectors_tmp, VECTORS), (bad_tmp, BAD)):
            names = sorted(path.name for path in produced.iterdir())
            existing = sorted(path.name for path in target.glob("*") if path.is_file()) if target.is_dir() else []
            if args.check:
                for name in sorted(set(names) | set(existing)):
                    ours, theirs = produced / name, target / name
                    if not theirs.exists() or not ours.exists() or ours.read_bytes() != theirs.read_bytes():
                        print(f"differs: {target.relative_to(ROOT) / name}")
                        status = 1
                continue
            target.mkdir(parents=True, exist_ok=True)
            for name in existing:  # files this script no longer makes
                if name not in names and (name.endswith((".ccg", ".events.txt")) or name == "README.md"):
                    (target / name).unlink()
            for name in names:
                shutil.copyfile(produced / name, target / f".{name}.tmp")
                os.replace(target / f".{name}.tmp", target / name)
            print(f"wrote {len(names)} files to {target.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
