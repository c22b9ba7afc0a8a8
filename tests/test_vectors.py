"""Golden vectors: every archive in spec/vectors reads back as its listing says.

The files are written only by tools/regen_vectors.py; a missing file is a failure here,
never a reason to skip or to regenerate (DESIGN.md, "Principles").
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive.codec import BLOCK_START, STREAMS, decode_stream
from ccgformat.archive.sections import DirectoryEntry, decode_directory
from ccgformat.archive.layout import (BLOCK_HEADER, COMPACT_MAJOR_VERSION, FILE_HEADER, NODE_KINDS, TRAILER, BlockFlags,
                                      SectionKind)
from ccgformat.errors import UnsupportedVersionError
from ccgformat.model import KIND_FIELDS, Event, EventKind

from .test_graph_lossy import check_location

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
#: The vectors of format 1.3 tools/regen_vectors.py writes; each must exist with its listing.
EXPECTED = ("minimal", "every_kind", "wide_split", "lossy", "empty_location", "pending_limit",
            "four_byte_widths", "uint64_metric", "unknown_optional", "many_locations", "many_locations_json")
#: Vectors a reader must refuse (no listing): the error and the block its offset names.
REFUSED = {"unknown_must_understand": UnsupportedVersionError}
#: The vectors of format 1.2, kept byte for byte in spec/vectors/1.2.
FORMAT_1_2 = tuple(f"1.2/{name}" for name in ("minimal", "every_kind", "wide_split", "lossy", "empty_location"))
#: The vectors of format 1.3, kept byte for byte in spec/vectors/1.3.
FORMAT_1_3 = tuple(f"1.3/{name}" for name in EXPECTED)
#: The vectors of format 1.4 kept byte for byte in spec/vectors/1.4 (the BUNDLE block).
FORMAT_1_4 = ("1.4/bundle",)
#: The vectors of format 2.0 kept byte for byte in spec/vectors/2.0 (a zstd compact body).
FORMAT_2_0 = ("2.0/compact",)
UNKNOWN_KIND = 65535  # the kind no version assigns (spec 2.4)
#: the sections of the checkpoint index (spec 4.4, 4.5, 4.8)
INDEX_KINDS = {SectionKind.SNAPSHOTS, SectionKind.SUMMARY, SectionKind.CHECKPOINT_TABLE}


def vector_names() -> list[str]:
    """Every listed vector, as a path below spec/vectors without the suffix."""
    found = sorted(path.stem for path in VECTORS.glob("*.ccg")) if VECTORS.is_dir() else []
    return (sorted((set(found) | set(EXPECTED)) - set(REFUSED)) + list(FORMAT_1_2) + list(FORMAT_1_3)
            + list(FORMAT_1_4) + list(FORMAT_2_0))


def describe(location: int, event: Event) -> str:
    fields = KIND_FIELDS[EventKind(event.kind)]
    parts = [str(location), str(event.time), EventKind(event.kind).name]
    parts += [f"{name}={getattr(event, name)}" for name in fields.hard + fields.soft]
    return " ".join(parts)


def parse_listing(name: str) -> tuple[list[int], dict[int, list[Event]], list[str]]:
    """Locations, events per location and the event lines of NAME.events.txt."""
    path = VECTORS / f"{name}.events.txt"
    assert path.is_file(), f"{path} is missing: run `python tools/regen_vectors.py`"
    lines = path.read_text().splitlines()
    assert lines and lines[0].startswith("# locations:"), f"{path}: the first line must name the locations"
    locations = [int(word) for word in lines[0].split(":", 1)[1].split()]
    events: dict[int, list[Event]] = {location: [] for location in locations}
    for line in lines[1:]:
        location, time, kind, *fields = line.split()
        columns = {key: int(value) for key, value in (field.split("=") for field in fields)}
        kind_ = EventKind[kind]
        assert set(columns) == set(KIND_FIELDS[kind_].hard + KIND_FIELDS[kind_].soft), line
        events[int(location)].append(Event(int(time), int(kind_), **columns))
    return locations, events, lines[1:]


def read_events(archive: ccg.Archive) -> dict[int, list[Event]]:
    return {location: [e for batch in archive.location(location).events() for e in batch.rows()]
            for location in archive.locations}


def section_kinds(path: Path, archive: ccg.Archive) -> set[int]:
    """The kinds the directory lists, plus the footer's own kind (read from the trailer);
    of a file in the compact layout (spec 2.7), which has no footer, its bundle's."""
    if archive.version[0] == COMPACT_MAJOR_VERSION:
        return {entry.kind for entry in archive.directory}
    data = path.read_bytes()
    footer_length, _ = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    footer_kind, _, _ = BLOCK_HEADER.unpack_from(data, len(data) - TRAILER.size - footer_length)
    return {entry.kind for entry in archive._directory} | {footer_kind}


def test_the_vector_folder_is_complete():
    assert VECTORS.is_dir(), f"{VECTORS} is missing: run `python tools/regen_vectors.py`"
    for name in vector_names():
        for suffix in (".ccg", ".events.txt"):
            assert (VECTORS / f"{name}{suffix}").is_file(), \
                f"{name}{suffix} is missing from spec/vectors: run `python tools/regen_vectors.py`"
    for name in REFUSED:
        assert (VECTORS / f"{name}.ccg").is_file() and not (VECTORS / f"{name}.events.txt").exists()
    assert (VECTORS / "README.md").is_file()
    readme = (VECTORS / "README.md").read_text()
    for name in [*vector_names(), *REFUSED]:
        assert f"`{name.rsplit('/', 1)[-1]}.ccg`" in readme, f"spec/vectors/README.md does not describe {name}.ccg"


@pytest.mark.parametrize("name", vector_names())
def test_vector_reads_back_as_listed(name):
    path = VECTORS / f"{name}.ccg"
    assert path.is_file(), f"{path} is missing: run `python tools/regen_vectors.py`"
    locations, expected, lines = parse_listing(name)
    with ccg.open(path) as archive:
        assert archive.locations == locations
        if archive.version >= (1, 3):  # the roots list every defined location (spec 4.3)
            assert locations == list(range(len(archive.definitions.locations)))
        assert archive.stats.events == len(lines)
        got = read_events(archive)
        if archive.params.lossless:
            assert [describe(loc, e) for loc in locations for e in got[loc]] == lines
        else:
            for location in locations:
                check_location(expected[location], got[location], archive.params)
        for location in locations:
            walker = archive.location(location)
            events = got[location]
            assert len(walker) == len(events) == archive.roots[location].events
            assert [e for b in walker.events(reverse=True, batch_size=7) for e in b.rows()][::-1] == events
            assert [walker.event(i) for i in range(len(events))] == events
            for i, event in enumerate(events):
                first = next(j for j, e in enumerate(events) if e.time == event.time)
                assert walker.find(event.time) == first
            summary = archive.checkpoints(SectionKind.SUMMARY, location)
            snapshots = archive.checkpoints(SectionKind.SNAPSHOTS, location)
            if not INDEX_KINDS & {entry.kind for entry in archive._sections}:  # a file without an index (4.8)
                assert summary == snapshots == []
                continue
            assert summary and [c["index"] for c in summary] == [c["index"] for c in snapshots]
            assert summary[-1]["index"] == len(events)


def test_the_lossy_vector_is_lossy():
    """Otherwise its bounds test would prove nothing."""
    _, expected, _ = parse_listing("lossy")
    with ccg.open(VECTORS / "lossy.ccg") as archive:
        assert not archive.params.lossless
        assert archive.params.abs_dev > 0 and archive.params.rel_dev > 0 and archive.params.rel_size > 0
        assert read_events(archive) != expected
        assert archive.stats.n < archive.stats.N


def test_vectors_cover_every_section_and_event_kind():
    sections: set[int] = set()
    kinds: set[int] = set()
    for name in vector_names():
        path = VECTORS / f"{name}.ccg"
        with ccg.open(path) as archive:
            sections |= section_kinds(path, archive)
        _, events, _ = parse_listing(name)
        kinds |= {event.kind for location in events.values() for event in location}
    assert {SectionKind(kind).name for kind in sections - {UNKNOWN_KIND}} >= {kind.name for kind in SectionKind}
    assert {EventKind(kind).name for kind in kinds} == {kind.name for kind in EventKind}


def test_every_kind_uses_several_blocks_and_checkpoints():
    with ccg.open(VECTORS / "every_kind.ccg") as archive:
        nodes = [e for e in archive._directory if e.kind == SectionKind.NODES]
        assert len(nodes) > 3
        assert archive.stats.n < archive.stats.N  # sub-trees are shared
        for location in archive.locations:
            assert len(archive.checkpoints(SectionKind.SNAPSHOTS, location)) > 2
        definitions = archive.definitions
        assert definitions.regions and definitions.system_tree and definitions.communicators
        assert definitions.metrics and definitions.strings and definitions.provenance
        assert {m.value_type for m in definitions.metrics} >= {"int64", "double"}


def test_the_header_names_the_lowest_minor_version_the_features_need(tmp_path):
    """Archives written with the tables (the default) are 1.5 when they hold a dictionary
    bundle, 1.4 when they hold a 1.4 section (aggregation levels, which small files have
    none of within the 2% budget, predicted nodes, an extension table) and 1.3 otherwise;
    without the tables, those whose definitions define a location are 1.3, the others need
    1.1 for DEFINITIONS extensions and 1.0 without them. The format 1.2, 1.3, 1.4 and 2.0 vectors
    keep their header."""
    with ccg.open(VECTORS / "empty_location.ccg") as archive:
        assert archive.version == (1, 3)
        assert archive.definitions.extensions == {"otf2": {"location_ids": [7, 1 << 40], "paradigms": {"mpi": 1}}}
    for name in ("minimal", "every_kind", "wide_split", "lossy"):
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 3) and archive.definitions.extensions == {}
    since_1_4 = {SectionKind.AGGREGATE_LEVEL, SectionKind.METRIC_LEVEL, SectionKind.PREDICTED_NODES,
                 SectionKind.EXTENSION_TABLE}
    for name in ("aggregation", "metric_integrals", "predicted_references", "extension_records"):
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 4) and since_1_4 & {entry.kind for entry in archive.directory}
    with ccg.open(VECTORS / "bundle.ccg") as archive:
        assert archive.version == (1, 5) and [e.kind for e in archive.directory] == [SectionKind.DICTIONARY_BUNDLE]
    for name, version, dictionary in (("compact", (2, 1), 3), ("2.0/compact", (2, 0), 1)):
        # the same bundle as the whole file (spec 2.7), an LZMA2 body (2.9) or a zstd frame
        with ccg.open(VECTORS / f"{name}.ccg") as compact, ccg.open(VECTORS / "bundle.ccg") as bundle:
            assert compact.version == version
            assert [e.kind for e in compact.directory] == [SectionKind.DICTIONARY_BUNDLE]
            assert compact.payload(compact.directory[0]) == bundle.payload(bundle.directory[0])
        assert (VECTORS / f"{name}.ccg").read_bytes()[16] == dictionary
    for name in FORMAT_1_4:
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 4) and [e.kind for e in archive.directory] == [SectionKind.BUNDLE]
    with ccg.open(VECTORS / "many_locations_json.ccg") as archive:  # without tables
        assert archive.version == (1, 3) and archive.definitions.extensions == {}
    for name in FORMAT_1_2:
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 2)
    for name in FORMAT_1_3:
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert archive.version == (1, 3)
    for extensions, minor in (({}, 0), ({"otf2": {"x": 1}}, 1)):
        path = tmp_path / f"{minor}.ccg"
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params(), tables=False)
        with ccg.open(path) as archive:
            assert archive.version == (1, minor)
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params(), aggregation=None,
                        bundle=False)
        with ccg.open(path) as archive:
            assert archive.version == (1, 3)
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params(), compact=False)
        with ccg.open(path) as archive:  # the small sections in a dictionary bundle; no level fits the budget
            assert archive.version == (1, 5)
            assert [e.kind for e in archive.directory] == [SectionKind.DICTIONARY_BUNDLE]
            assert archive.aggregation_tables is None
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params())
        with ccg.open(path) as archive:  # that bundle as the whole file: the compact layout, LZMA2
            assert archive.version == (2, 1)
            assert [e.kind for e in archive.directory] == [SectionKind.DICTIONARY_BUNDLE]
        ccg.write_trace(path, ccg.Definitions(extensions=extensions), [], ccg.Params(), aggregation=100.0)
        with ccg.open(path) as archive:  # a budget beyond the file: level 0 too
            assert archive.aggregation_tables is not None


def test_roots_list_every_defined_location_since_1_3():
    """minimal.ccg and lossy.ccg define a location that has no events: format 1.3 lists it
    with an empty root and its checkpoint at event 0; their 1.2 files list only location 0."""
    for name in ("minimal", "lossy"):
        with ccg.open(VECTORS / f"{name}.ccg") as archive:
            assert len(archive.definitions.locations) == 2 and archive.locations == [0, 1]
            assert archive.roots[1].events == 0 and (archive.roots[1].start, archive.roots[1].end) == (0, 0)
            for kind in (SectionKind.SNAPSHOTS, SectionKind.SUMMARY):
                assert [c["index"] for c in archive.checkpoints(kind, 1)] == [0]
        with ccg.open(VECTORS / "1.2" / f"{name}.ccg") as archive:
            assert len(archive.definitions.locations) == 2 and archive.locations == [0]


def test_a_vector_with_an_unknown_must_understand_block_is_refused():
    path = VECTORS / "unknown_must_understand.ccg"
    with pytest.raises(UnsupportedVersionError) as caught:
        ccg.open(path)  # refused on opening, before any block is read
    block = next(entry for entry in directory(path) if entry.kind == UNKNOWN_KIND)
    assert block.flags & BlockFlags.MUST_UNDERSTAND
    assert caught.value.offset == block.offset and f"at byte {block.offset}" in str(caught.value)


def test_a_vector_with_an_unknown_optional_block_reads_as_without_it():
    assert parse_listing("unknown_optional")[2] == parse_listing("minimal")[2]
    with ccg.open(VECTORS / "unknown_optional.ccg") as archive:
        unknown = [entry for entry in archive.directory if entry.kind == UNKNOWN_KIND]
        assert len(unknown) == 1 and not unknown[0].flags & BlockFlags.MUST_UNDERSTAND
        with ccg.open(VECTORS / "minimal.ccg") as minimal:
            assert read_events(archive) == read_events(minimal)
            for kind in (SectionKind.SNAPSHOTS, SectionKind.SUMMARY):
                assert archive.checkpoints(kind, 0) == minimal.checkpoints(kind, 0)


def directory(path: Path) -> list[DirectoryEntry]:
    """The footer's directory, read without opening the archive."""
    data = path.read_bytes()
    footer_length, _ = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    start = len(data) - TRAILER.size - footer_length
    _, _, length = BLOCK_HEADER.unpack_from(data, start)
    return decode_directory(data[start + BLOCK_HEADER.size:start + BLOCK_HEADER.size + length], str(path), start)


def node_streams(archive: ccg.Archive) -> list[dict[str, tuple[int, list[int]]]]:
    """Per NODES block, in id order: stream name -> (width, values), decoded as spec 5.2 says."""
    blocks = []
    for entry in sorted((e for e in archive.directory if e.kind == SectionKind.NODES), key=lambda e: e.first):
        raw = archive.payload(entry)
        position = BLOCK_START.size
        streams = {}
        for name in STREAMS:
            width = raw[position]
            values, position = decode_stream(raw, position)
            streams[name] = (width, [int(v) for v in values])
        assert position == len(raw)
        blocks.append(streams)
    return blocks


def signed(z: int) -> int:
    return (z >> 1) ^ -(z & 1)


def test_the_pending_stack_limit_vector_reaches_the_limit():
    """More pending nodes than 4,096: the last block starts with a full stack, and the
    root names the nodes that fell off its bottom explicitly (spec 5.3, step 4)."""
    with ccg.open(VECTORS / "pending_limit.ccg") as archive:
        blocks = node_streams(archive)
        events = archive.roots[0].events
    assert events > 4096
    pending = [len(block["pending"][1]) for block in blocks]
    assert max(pending) == pending[-1] == 4096
    last = blocks[-1]
    fresh = last["child_fresh"][1]
    dropped = events - 4096
    # the root's children 0 .. dropped-1 are no longer on the stack: explicit, from the first block
    assert fresh == [0] * dropped + [1] * (events - dropped)
    assert last["child_id"][1] == list(range(dropped))
    # the import table lists every child of an earlier block, those popped fresh too
    ids = list(itertools.accumulate(last["import_id"][1]))
    assert ids == list(range(ids[-1] + 1)) and ids[-1] + 1 == events - len(last["kind"][1]) + 1


def test_the_four_byte_vector_has_streams_of_width_4():
    with ccg.open(VECTORS / "four_byte_widths.ccg") as archive:
        (block,) = node_streams(archive)
    assert block["gaps"][0] == block["key"][0] == 4 and block["soft"][0] == 8
    assert 1 << 16 <= max(block["gaps"][1]) < 1 << 32


def test_the_uint64_vector_wraps_its_sums_and_keeps_zero_sums():
    _, listed, _ = parse_listing("uint64_metric")
    samples = [e.value for e in listed[0] if e.kind == EventKind.METRIC]
    assert min(samples) < 0  # uint64 samples at or above 2**63, listed with their signed bits
    with ccg.open(VECTORS / "uint64_metric.ccg") as archive:
        assert [m.value_type for m in archive.definitions.metrics] == ["uint64"]
        blocks = node_streams(archive)
        snapshots = archive.checkpoints(SectionKind.SNAPSHOTS, 0)
    sums = [signed(z) for block in blocks for z in block["import_metric_sum"][1]]
    # a call whose two differences cancel is imported with its sum 0, not without the metric
    assert 0 in sums
    counts = [c for block in blocks for c in block["import_metric_count"][1]]
    assert sum(counts) == len(sums)
    # sums of calls as the samples give them, modulo 2**64 (1 << 62 then 3 << 62: 3 << 62 wraps)
    assert -(1 << 62) in sums
    # SNAPSHOTS hold the last sample before each checkpoint, as the signed 64-bit value
    for point in snapshots:
        before = [e.value for e in listed[0][:point["index"]] if e.kind == EventKind.METRIC]
        assert point["metrics"] == ([[0, before[-1]]] if before else [])
    assert any(value < 0 for point in snapshots for _, value in point["metrics"])


def test_the_indexes_of_a_lossy_file_describe_the_rebuilt_events():
    """Spec 4.4/4.5: checkpoint times and sums are those of the events a reader gets back,
    not of the input (which the listing holds)."""
    _, listed, _ = parse_listing("lossy")
    with ccg.open(VECTORS / "lossy.ccg") as archive:
        rebuilt = read_events(archive)[0]
        (final,) = archive.checkpoints(SectionKind.SUMMARY, 0)
    assert final["time"] == rebuilt[-1].time != listed[0][-1].time
    def inclusive(events: list[Event]) -> dict[int, int]:
        totals: dict[int, int] = {}
        stack: list[Event] = []
        for event in events:
            if event.kind == EventKind.ENTER:
                stack.append(event)
            elif event.kind == EventKind.LEAVE:
                enter = stack.pop()
                totals[enter.ref] = totals.get(enter.ref, 0) + event.time - enter.time
        return totals
    indexed = {region: total for region, _, total, _ in final["regions"]}
    assert indexed == inclusive(rebuilt) != inclusive(listed[0])


def test_the_oldest_vectors_are_1_0_and_1_1():
    """Files of 1.0 and 1.1 (spec 2.1): no location defined, so the roots list the locations
    the writer was given (4.3); 1.0 has no index (4.8), 1.1 a SUMMARY without the members of
    1.2 (4.5), which a reader does not make up."""
    with ccg.open(VECTORS / "format_1_0.ccg") as archive:
        assert archive.version == (1, 0) and not archive.definitions.locations and archive.locations == [0, 1]
        assert not INDEX_KINDS & {entry.kind for entry in archive.directory}
        assert archive.definitions.extensions == {}
    with ccg.open(VECTORS / "format_1_1.ccg") as archive:
        assert archive.version == (1, 1) and archive.definitions.extensions
        kinds = [entry.kind for entry in archive.directory]
        assert SectionKind.SUMMARY in kinds and SectionKind.CHECKPOINT_TABLE not in kinds
        for location in archive.locations:
            summary = archive.checkpoints(SectionKind.SUMMARY, location)
            assert summary and all(not {"peers", "operations", "durations", "open"} & set(point) for point in summary)


def test_a_vector_with_two_checkpoint_tables():
    """Spec 4.8: a location's checkpoints are in the block whose `first` is the highest not
    above it; every location has one checkpoint per event (interval 1)."""
    _, listed, _ = parse_listing("two_checkpoint_tables")
    with ccg.open(VECTORS / "two_checkpoint_tables.ccg") as archive:
        tables = [(e.first, e.count) for e in archive.directory if e.kind == SectionKind.CHECKPOINT_TABLE]
        assert len(tables) == 2 and tables[0][0] == 0 and tables[1][0] == sum(tables[0])
        assert sum(count for _, count in tables) == len(archive.locations) == 3
        for location in archive.locations:
            for kind in (SectionKind.SNAPSHOTS, SectionKind.SUMMARY):
                points = archive.checkpoints(kind, location)
                assert [point["index"] for point in points] == list(range(1, len(listed[location]) + 1))
                assert [point["time"] for point in points[:-1]] == [e.time for e in listed[location][1:]]


@pytest.mark.parametrize("name, kind", [("pending_limit_predicted", SectionKind.PREDICTED_NODES),
                                        ("pending_limit_coded", SectionKind.CODED_NODES),
                                        ("pending_limit_soft", SectionKind.CODED_SOFT_NODES)])
def test_the_pending_stack_passes_its_limit_in_predicted_and_coded_blocks(name, kind):
    with ccg.open(VECTORS / f"{name}.ccg") as archive:
        blocks = sorted((e for e in archive.directory if e.kind in NODE_KINDS), key=lambda e: e.first)
        assert blocks[-1].kind == kind and {block.kind for block in blocks} <= {kind, SectionKind.CODED_NODES}
        # stream 1, `pending`, is a plain stream in every node block kind (5.2, 5.7, 5.8)
        pending = [len(decode_stream(archive.payload(block), BLOCK_START.size)[0]) for block in blocks]
        assert max(pending) == pending[-1] == 4096 and archive.roots[0].events > 4096


def test_the_move_to_front_vector_references_more_leaves_than_a_list_holds():
    _, listed, _ = parse_listing("move_to_front_limit")
    values = {e.value for e in listed[0] if e.kind == EventKind.MARKER}
    assert len(values) > 64  # spec 5.7: a list holds 64
    with ccg.open(VECTORS / "move_to_front_limit.ccg") as archive:
        assert [e.kind for e in archive.directory if e.kind in NODE_KINDS] == [SectionKind.PREDICTED_NODES]


def test_the_metric_tables_of_every_value_type_and_mode():
    """Spec 4.11 by brute force from the rebuilt events, at every level the file holds."""
    from .test_metric_integrals import check
    with ccg.open(VECTORS / "metric_types.ccg") as archive:
        metrics = archive.definitions.metrics
        assert {m.value_type for m in metrics} == {"double", "uint64", "int64"}
        assert {m.mode for m in metrics} == {"absolute", "accumulated", "relative", "rate"}
        levels = archive.metric_tables.levels
        assert len(levels) > 1
        for k in range(len(levels)):
            check(archive, archive.metric_integrals(1 << k))


def test_a_compact_vector_of_dictionary_2_and_a_bundle_with_an_unknown_member():
    """Spec 2.7/2.8: dictionary 2's zstd frame holds the bundle of `compact.ccg`; 2.5: an
    optional member of unknown kind is skipped."""
    with ccg.open(VECTORS / "compact_dictionary_2.ccg") as compact, ccg.open(VECTORS / "compact.ccg") as lzma2:
        assert compact.version == (2, 0) and (VECTORS / "compact_dictionary_2.ccg").read_bytes()[16] == 2
        assert compact.payload(compact.directory[0]) == lzma2.payload(lzma2.directory[0])
    with ccg.open(VECTORS / "unknown_member.ccg") as archive, ccg.open(VECTORS / "bundle.ccg") as bundle:
        assert [e.kind for e in archive._sections][-1] == UNKNOWN_KIND
        assert not archive._sections[-1].flags & BlockFlags.MUST_UNDERSTAND
        assert read_events(archive) == read_events(bundle)
        assert archive.definitions == bundle.definitions and archive.params == bundle.params


def calls_of(events: list[Event]) -> list[tuple[int, int, int, int, int]]:
    """Every call of a location's listing: (region, enter index, enter time, leave index,
    leave time), ENTER and LEAVE matched by nesting."""
    calls, stack = [], []
    for index, event in enumerate(events):
        if event.kind == EventKind.ENTER:
            stack.append((event.ref, index, event.time))
        elif event.kind == EventKind.LEAVE:
            calls.append((*stack.pop(), index, event.time))
    return calls


@pytest.mark.parametrize("name", [name for name in vector_names() if "/" not in name])
def test_summary_counts_calls_by_event_index(name):
    """Spec 4.5, by brute force from the listing: `calls` and `inclusive` over the calls
    entered before event k, a call not left before it counting up to T; `durations` of the
    calls whose ENTER is at or after the previous checkpoint's index and whose LEAVE is
    before k; `open` those entered before k and not left before it."""
    _, listed, _ = parse_listing(name)
    with ccg.open(VECTORS / f"{name}.ccg") as archive:
        if not archive.params.lossless:
            return
        for location, events in listed.items():
            calls, previous = calls_of(events), 0
            for point in archive.checkpoints(SectionKind.SUMMARY, location):
                k, T = point["index"], point["time"]
                entered = [c for c in calls if c[1] < k]
                regions = {}
                for region, _, enter, leave_index, leave in entered:
                    row = regions.setdefault(region, [0, 0])
                    row[0] += 1
                    row[1] += (leave if leave_index < k else T) - enter
                assert {row[0]: row[1:3] for row in point["regions"]} == regions
                if "durations" not in point:  # a SUMMARY of 1.0 or 1.1 (format_1_1)
                    continue
                inside: dict[int, list[int]] = {}
                for region, enter_index, enter, leave_index, leave in calls:
                    if previous <= enter_index and leave_index < k:
                        inside.setdefault(region, []).append(leave - enter)
                assert point["durations"] == [[r, min(d), max(d)] for r, d in sorted(inside.items())]
                still_open = sorted((c for c in entered if c[3] >= k), key=lambda c: c[1])  # outermost first
                assert point["open"] == [[region, enter, leave] for region, _, enter, _, leave in still_open]
                previous = k


def test_a_location_only_the_roots_list_hangs_under_the_synthetic_root():
    """Spec 4.10.1: format_1_0 defines no location; its two locations are leaves of `trace`."""
    with ccg.open(VECTORS / "format_1_0.ccg") as archive:
        hierarchy = archive.hierarchy
    assert hierarchy.names == ("trace", "location 0", "location 1")
    assert hierarchy.parents.tolist() == [-1, 0, 0] and hierarchy.leaf_locations.tolist() == [0, 1]


def test_representatives_absent_with_exact_time_reads_as_16():
    """Spec 4.2: the writer leaves the value 16 out when time is exact."""
    with ccg.open(VECTORS / "minimal.ccg") as archive:
        assert archive.params.exact_time and "representatives" not in archive.parameters
        assert archive.params.representatives == 16


def test_the_readme_gives_each_vectors_size_and_version():
    """README headings `### \\`NAME.ccg\\` (N bytes, format X.Y)` against the files."""
    headings = re.findall(r"^### `(\w+)\.ccg` \((\d+) bytes, format (\d+)\.(\d+)\)$",
                          (VECTORS / "README.md").read_text(), re.M)
    assert {name for name, *_ in headings} == {path.stem for path in VECTORS.glob("*.ccg")}
    for name, size, major, minor in headings:
        data = (VECTORS / f"{name}.ccg").read_bytes()
        assert (len(data), FILE_HEADER.unpack_from(data, 0)[1:3]) == (int(size), (int(major), int(minor)))
