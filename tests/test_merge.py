"""`ccgformat.merge`: archives of disjoint locations or of consecutive time segments
joined equal the conversion of the whole trace; conflicting definitions are refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import backends
from ccgformat.archive.layout import NODE_KINDS, SectionKind
from ccgformat.archive.merge import blocks, plan as plan_module
from ccgformat.archive.merge.plan import plan as make_plan
from ccgformat.archive.verify import verify
from ccgformat.archive.writer import extension_table, nodes_level
from ccgformat.cli import main
from ccgformat.model import EventBatch, Metric, Region

from . import merge_support as support
from . import traces
from .query_support import synth

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _trace(events: dict) -> support.Trace:
    return {location: EventBatch.from_events(rows) for location, rows in events.items()}


@SETTINGS
@given(traces.traces(max_locations=3), st.data())
def test_merge_of_location_groups_equals_the_union(tmp_path_factory, events, data):
    folder = tmp_path_factory.mktemp("merge")
    trace, definitions = _trace(events), traces.definitions()
    owner = data.draw(st.lists(st.integers(0, 2), min_size=len(trace), max_size=len(trace)))
    groups = [[location for location, part in zip(trace, owner) if part == i] for i in sorted(set(owner))]
    parts = support.by_locations(folder, definitions, trace, groups)
    whole = support.write(folder / "whole.ccg", definitions, trace)
    report = ccgformat.merge(parts, folder / "merged.ccg")
    support.assert_same_trace(folder / "merged.ccg", whole)
    assert report.events == sum(map(len, trace.values())) and not report.segmented
    with ccgformat.open(folder / "merged.ccg") as merged, ccgformat.open(whole) as expected:
        # each part held a root for every location without events there: counted once (4.2.5)
        assert (merged.stats.N, merged.parameters["metrics"]["M"]) == \
            (expected.stats.N, expected.parameters["metrics"]["M"])


@SETTINGS
@given(traces.traces(max_locations=3), st.lists(st.floats(0.1, 0.9), min_size=1, max_size=3))
def test_merge_of_time_segments_equals_the_concatenation(tmp_path_factory, events, fractions):
    folder = tmp_path_factory.mktemp("merge")
    trace, definitions = _trace(events), traces.definitions()
    segments = support.by_time(folder, definitions, trace, sorted(fractions))
    whole = support.write(folder / "whole.ccg", definitions, trace)
    ccgformat.merge(segments[::-1], folder / "merged.ccg")  # in any order: pieces go by time
    support.assert_same_trace(folder / "merged.ccg", whole)


def _two_parts(folder, first=None, second=None):
    """Archives of location 0 and of location 1 of one small trace, with the definitions
    changed by ``first`` and ``second``."""
    definitions = traces.definitions()
    events = {0: [(10, 0, 1), (20, 10, 0, 0, 0, 0, 0, 0, 5), (30, 1, 1)], 1: [(15, 0, 2), (40, 1, 2)]}
    trace = _trace(events)
    paths = []
    for i, change in enumerate((first, second)):
        paths.append(support.write(folder / f"p{i}.ccg", change(definitions) if change else definitions,
                                   {i: trace[i]}))
    return paths


@pytest.mark.parametrize("change, what", [
    (lambda d: dataclasses.replace(d, timer_resolution=10**6), "timer resolution"),
    (lambda d: dataclasses.replace(d, clock_offset=5), "clock offset"),
    (lambda d: dataclasses.replace(d, metrics=[Metric("m0", unit="J"), *d.metrics[1:]]), "metric 'm0'"),
    (lambda d: dataclasses.replace(d, regions=[dataclasses.replace(d.regions[0], paradigm="mpi"), *d.regions[1:]]),
     "region 'r0'"),
    (lambda d: dataclasses.replace(d, locations=[dataclasses.replace(d.locations[0], kind="thread"),
                                                 *d.locations[1:]]), "location 'rank 0'"),
])
def test_conflicting_definitions_are_refused_and_nothing_is_written(tmp_path, change, what):
    paths = _two_parts(tmp_path, second=change)
    with pytest.raises(ccgformat.MergeConflictError) as raised:
        ccgformat.merge(paths, tmp_path / "merged.ccg")
    message = str(raised.value)
    assert what in message and str(paths[0]) in message and str(paths[1]) in message
    assert not (tmp_path / "merged.ccg").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p0.ccg", "p1.ccg"]


def test_overlapping_events_of_one_location_are_refused(tmp_path):
    paths = _two_parts(tmp_path)
    with pytest.raises(ccgformat.MergeConflictError, match="location 0: events over .* overlap"):
        ccgformat.merge([paths[0], paths[0]], tmp_path / "merged.ccg")
    assert not (tmp_path / "merged.ccg").exists()


def _paths(monkeypatch, path: str) -> None:
    """Force one of the merge's ways for archives of disjoint locations: "blocks" copies the
    node blocks whatever the graph's size, "nodes" hash conses whatever its size."""
    monkeypatch.setattr(plan_module, "COPY_NODES", 0 if path == "blocks" else 1 << 62)


@pytest.mark.parametrize("path", ["blocks", "nodes"])
@SETTINGS
@given(traces.traces(max_locations=3), st.data())
def test_each_way_of_joining_disjoint_locations_equals_the_union(tmp_path_factory, monkeypatch, path, events, data):
    """Both ways give the whole trace's events, profile and messages, and a file that
    `verify` passes (every node, index and table checked against the graph)."""
    _paths(monkeypatch, path)
    folder = tmp_path_factory.mktemp("merge")
    trace, definitions = _trace(events), traces.definitions()
    owner = data.draw(st.lists(st.integers(0, 2), min_size=len(trace), max_size=len(trace)))
    parts = support.by_locations(folder, definitions, trace, [[loc for loc, o in zip(trace, owner) if o == i]
                                                              for i in sorted(set(owner))])
    whole = support.write(folder / "whole.ccg", definitions, trace)
    assert ccgformat.merge(parts, folder / "merged.ccg").way == path
    support.assert_same_trace(folder / "merged.ccg", whole)
    assert verify(folder / "merged.ccg") == []


def test_the_same_definitions_bytes_are_kept_from_a_bundle_only_in_a_large_graph(tmp_path, monkeypatch):
    """Archives that store their definitions in the same bytes (the parts of one
    conversion): bundled with their small sections, the merge encodes them anew for a
    small graph (whose file they would grow by a few per cent) and keeps the first's for a
    graph it copies block by block; either way the merged file is the whole trace."""
    definitions, events = synth.synthesize(4, 3000, jitter=0.3, seed=5, pattern="spmd")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(4)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0, 1], [2, 3]])
    whole = support.write(tmp_path / "whole.ccg", definitions, trace)
    with ccgformat.open(parts[0]) as first:
        defining = [entry for entry in first.sections if entry.kind == SectionKind.DEFINITIONS]
        assert defining and all(first.bundled(entry) for entry in defining)
        payloads = [(SectionKind(entry.kind), first.payload(entry)) for entry in first.sections
                    if entry.kind in (SectionKind.DEFINITIONS, SectionKind.LOCATION_TABLE,
                                      SectionKind.EXTENSION_TABLE)]
    for large in (False, True):
        monkeypatch.setattr(plan_module, "COPY_NODES", 0 if large else 1 << 62)
        joined = make_plan(parts, tmp_path / "merged.ccg")
        try:
            assert joined.stored_definitions == (payloads if large else None)
        finally:
            joined.close()
        merged = tmp_path / f"merged-{large}.ccg"
        assert ccgformat.merge(parts, merged).way == ("blocks" if large else "nodes")
        support.assert_same_trace(merged, whole)
        assert verify(merged) == []


@pytest.mark.parametrize("path", ["blocks", "nodes"])
def test_a_merge_is_the_same_file_under_both_backends(tmp_path, monkeypatch, path):
    """The C hash consing against its Python reference, and the moved blocks: the same
    bytes (a jittered trace, whose leaf calls are not all shared, and a regular one)."""
    pytest.importorskip("ccgformat._native._ccg", reason="the native extension is not built")
    _paths(monkeypatch, path)
    for jitter in (0.3, 0.0):
        definitions, events = synth.synthesize(4, 3000, jitter=jitter, seed=3, pattern="spmd")
        trace = {location: EventBatch.concat(list(events(location))) for location in range(4)}
        parts = support.by_locations(tmp_path, definitions, trace, [[0, 2], [1], [3]])
        files = []
        for name in ("native", "python"):
            monkeypatch.setattr(backends, "ACTIVE", name)
            files.append(tmp_path / f"{name}-{jitter}.ccg")
            ccgformat.merge(parts, files[-1])
        assert files[0].read_bytes() == files[1].read_bytes()


@pytest.mark.parametrize("path", ["blocks", "nodes"])
def test_sub_trees_shared_across_archives_are_stored_once_or_near(tmp_path, monkeypatch, path):
    """A regular trace: hash consing stores what the union's conversion stores; copied
    blocks keep each archive's few nodes (at most the archives' sum)."""
    _paths(monkeypatch, path)
    definitions, events = synth.synthesize(8, 20_000, pattern="ring")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(8)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0, 1, 2, 3], [4, 5, 6, 7]])
    whole = support.write(tmp_path / "whole.ccg", definitions, trace)
    report = ccgformat.merge(parts, tmp_path / "merged.ccg")
    with ccgformat.open(whole) as union:
        stored, size = union.stats.n, union.file_bytes
    if path == "nodes":
        assert report.nodes <= stored and report.file_bytes <= 1.05 * size
    else:
        assert report.nodes <= sum(ccgformat.open(part).stats.n for part in parts)
    support.assert_same_trace(tmp_path / "merged.ccg", whole)


def test_renumbered_definitions_are_matched_by_name(tmp_path):
    """An archive whose regions, metrics and locations come in another order (and that
    defines a region the other does not) gives its events renumbered: the merge equals
    the conversion of the union."""
    definitions = traces.definitions()
    trace = _trace({0: [(10, 0, 3), (12, 10, 1, 0, 0, 0, 0, 0, 7), (20, 1, 3)],
                    1: [(15, 0, 1), (16, 2, 0, 0, 4, 0, 8), (18, 10, 2, 0, 0, 0, 0, 0, -3), (40, 1, 1)]})
    support.write(tmp_path / "p0.ccg", definitions, {0: trace[0]})
    order = [3, 1, 0, 2]  # part 1's region i is region order[i]
    moved = dataclasses.replace(definitions, regions=[definitions.regions[i] for i in order] + [Region("extra")],
                                metrics=definitions.metrics[::-1], locations=definitions.locations[::-1])
    batch = trace[1]
    region = {old: new for new, old in enumerate(order)}
    calls = batch.kind <= 1
    local = dataclasses.replace(batch, ref=np.where(calls, [region[r] for r in batch.ref.tolist()],
                                                    np.where(batch.kind == 10, 2 - batch.ref, 2 - batch.ref)))
    support.write(tmp_path / "p1.ccg", moved, {1: local})
    merged = ccgformat.merge([tmp_path / "p0.ccg", tmp_path / "p1.ccg"], tmp_path / "merged.ccg")
    assert not merged.extensions_kept or not definitions.extensions
    whole = support.write(tmp_path / "whole.ccg", dataclasses.replace(definitions, regions=[
        *definitions.regions, Region("extra")]), trace)
    support.assert_same_trace(tmp_path / "merged.ccg", whole)


@pytest.mark.parametrize("bounds", [dict(abs_dev=50, rel_dev=0.1), dict(rel_size=0.5)])
def test_lossy_archives_keep_their_events_and_record_the_loosest_bounds(tmp_path, bounds):
    definitions, events = synth.synthesize(2, 2000, jitter=0.3, seed=1, pattern="spmd")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(2)}
    lossy = ccgformat.Params(**bounds)
    parts = [support.write(tmp_path / "p0.ccg", definitions, {0: trace[0]}, lossy),
             support.write(tmp_path / "p1.ccg", definitions, {1: trace[1]})]
    ccgformat.merge(parts, tmp_path / "merged.ccg")
    with ccgformat.open(tmp_path / "merged.ccg") as merged:
        assert merged.params == dataclasses.replace(ccgformat.Params(), **bounds)
        got = support.events_of(merged)
        for location, part in enumerate(parts):
            with ccgformat.open(part) as archive:
                assert got[location].equals(support.events_of(archive)[location])


VECTORS = sorted(path for path in (Path(__file__).resolve().parent.parent / "spec" / "vectors").rglob("*.ccg")
                 if path.with_suffix(".events.txt").exists())


@pytest.mark.parametrize("path", ["blocks", "nodes"])
@pytest.mark.parametrize("vector", VECTORS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_golden_vector_merges_after_another_archive(tmp_path, monkeypatch, path, vector):
    """Every format version and node block kind: a vector merged after an archive of its
    definitions without events (so its node ids move up, by one node) keeps its events,
    and `verify` passes the result."""
    _paths(monkeypatch, path)
    with ccgformat.open(vector) as archive:
        first = tmp_path / "no-events.ccg"
        ccgformat.write_trace(first, archive.definitions, [])
        ccgformat.merge([first, vector], tmp_path / "merged.ccg")
        with ccgformat.open(tmp_path / "merged.ccg") as merged:
            mine, theirs = merged.definitions.to_dict(), archive.definitions.to_dict()
            assert mine["locations"][:len(theirs["locations"])] == theirs["locations"]  # 1.0-1.2: more are defined
            assert all(mine[name] == theirs[name] for name in ("regions", "system_tree", "communicators", "metrics",
                                                                "strings", "timer_resolution"))
            got, want = support.events_of(merged), support.events_of(archive)
            assert sorted(got) == sorted(want)
            for location, batch in want.items():
                assert got[location].equals(batch)
    assert verify(tmp_path / "merged.ccg") == []


def test_bad_requests_are_refused_before_any_work(tmp_path):
    paths = _two_parts(tmp_path)
    with pytest.raises(ccgformat.ParameterError, match="at least one archive"):
        ccgformat.merge([], tmp_path / "merged.ccg")
    with pytest.raises(ccgformat.ParameterError, match="one of the archives merged"):
        ccgformat.merge(paths, paths[1])
    with pytest.raises(ccgformat.CorruptArchiveError):
        (tmp_path / "bad.ccg").write_bytes(b"not an archive at all, but long enough to be read")
        ccgformat.merge([paths[0], tmp_path / "bad.ccg"], tmp_path / "merged.ccg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ccg", "p0.ccg", "p1.ccg"]
    assert ccgformat.open(paths[1]).stats.events == 2  # untouched


@pytest.mark.parametrize("path", ["blocks", "nodes", "events"])
def test_progress_reaches_every_event(tmp_path, monkeypatch, path):
    _paths(monkeypatch, path)
    paths = _two_parts(tmp_path)
    if path == "events":  # location 1's events in a second segment after the first's
        later = _trace({1: [(50, 0, 2), (60, 1, 2)]})
        paths.append(support.write(tmp_path / "p2.ccg", traces.definitions(), later))
    seen = []
    report = ccgformat.merge(paths, tmp_path / "merged.ccg", progress=seen.append)
    assert seen and seen[-1].events == seen[-1].total == report.events == 5 + 2 * (path == "events")
    assert [p.events for p in seen] == sorted(p.events for p in seen)
    assert report.segmented == (path == "events") and report.way == path


def test_ccg_merge_reports_a_conflict_with_status_1(tmp_path, capsys):
    from ccgformat.cli import main
    paths = _two_parts(tmp_path, second=lambda d: dataclasses.replace(d, timer_resolution=1000))
    assert main(["merge", *map(str, paths), "-o", str(tmp_path / "merged.ccg")]) == 1
    assert "timer resolution" in capsys.readouterr().err and not (tmp_path / "merged.ccg").exists()
    paths = _two_parts(tmp_path)
    assert main(["merge", *map(str, paths), "-o", str(tmp_path / "merged.ccg"), "--json"]) == 0
    assert '"events": 5' in capsys.readouterr().out


def test_copied_blocks_larger_than_the_default_are_bounded_in_the_parameters(tmp_path, monkeypatch):
    from ccgformat.archive.layout import NODE_KINDS
    _paths(monkeypatch, "blocks")
    definitions, events = synth.synthesize(2, 25_000, jitter=0.3, seed=2, pattern="spmd")
    parts = []
    for location in range(2):
        parts.append(tmp_path / f"p{location}.ccg")
        ccgformat.write_trace(parts[-1], definitions, [(location, events(location))], nodes_per_block=1 << 14)
    ccgformat.merge(parts, tmp_path / "merged.ccg")
    with ccgformat.open(tmp_path / "merged.ccg") as merged:
        largest = max(entry.count for entry in merged.sections if entry.kind in NODE_KINDS)
        assert largest > 8192 and merged.parameters["nodes_per_block"] >= largest
    assert verify(tmp_path / "merged.ccg") == []


def test_parts_of_the_same_definitions_bytes_keep_their_blocks(tmp_path):
    """The parts of one conversion store the same definitions bytes: the merge takes them
    without unifying their records, and the merged file stores the first part's blocks.
    Not from bundle members, whose DEFINITIONS leave out their defaults (spec 2.5): the
    parts are written without bundles, as large definitions are."""
    definitions, stream = synth.synthesize(40, 30, jitter=0.2, seed=4, pattern="ring")
    trace = {location: EventBatch.concat(list(stream(location))) for location in range(40)}
    parts = [tmp_path / f"part{i}.ccg" for i in range(2)]
    for path, group in zip(parts, (range(0, 25), range(25, 40))):
        ccgformat.write_trace(path, definitions, ((location, [trace[location]]) for location in group), bundle=False)
    (tmp_path / "bundled").mkdir()
    bundled = support.by_locations(tmp_path / "bundled", definitions, trace, [list(range(0, 25)), list(range(25, 40))])
    joined = make_plan(bundled, tmp_path / "bundled.ccg")
    try:
        assert joined.stored_definitions is None  # their members are not blocks of their own
    finally:
        joined.close()
    whole = support.write(tmp_path / "whole.ccg", definitions, trace)
    report = ccgformat.merge(parts, tmp_path / "merged.ccg")
    support.assert_same_trace(tmp_path / "merged.ccg", whole)
    assert report.extensions_kept
    kinds = (SectionKind.DEFINITIONS, SectionKind.LOCATION_TABLE, SectionKind.EXTENSION_TABLE)
    stored = []
    for path in (parts[0], tmp_path / "merged.ccg"):
        with ccgformat.open(path) as archive:
            stored.append(([entry.kind for entry in archive.sections if entry.kind in kinds], archive.definitions))
    assert stored[1] == stored[0] and len(stored[0][0]) >= 1  # the merged file bundles them, defaults left out
    for changed, kept in ((None, True), (dataclasses.replace(definitions, provenance={"run": "2"}), False)):
        if changed is not None:  # other bytes: unified record by record
            parts[1] = support.write(tmp_path / "other.ccg", changed, {39: trace[39]})
        joined = make_plan(parts, tmp_path / "again.ccg")
        try:
            assert (joined.stored_definitions is not None) == kept
        finally:
            joined.close()


@pytest.mark.parametrize("layout", ["locations, same bytes", "locations, bundled", "time segments, same bytes"])
def test_extensions_the_sources_leave_out_are_given_to_the_merge(tmp_path, layout):
    """The parts of an MPI conversion leave the definitions' format extensions out, and a
    rank encodes them meanwhile (`writer.extension_table`): the merge asks for them once -
    when it stores the first source's definitions blocks (the same bytes in every source),
    before it matches the definitions (other bytes), or before it rebuilds time segments -
    and writes the file the merge of sources that keep them writes, extensions included."""
    by_time = layout.startswith("time")
    if by_time:  # two calls after one another on each location: cut between them
        definitions = traces.definitions()
        trace = _trace({location: [(10, 0, 1), (20, 1, 1), (30, 0, 2), (40 + location, 1, 2)] for location in range(3)})
    else:
        definitions, stream = synth.synthesize(6, 400, jitter=0.2, seed=3, pattern="ring")
        trace = {location: EventBatch.concat(list(stream(location))) for location in range(6)}
    extensions = {"otf2": {"version": 2, "calls": [["Location", [i, 10 + i, 1, 400, 0]] for i in range(6)]},
                  "viewer": {"colours": ["#ff0000", None], "scale": 2.5}}
    options = {} if layout.endswith("bundled") else {"bundle": False}  # a bundle's members are not blocks of their own

    def sources(name: str, kept: dict) -> list[Path]:
        folder = tmp_path / name
        folder.mkdir()
        defined = dataclasses.replace(definitions, extensions=kept)
        return support.by_time(folder, defined, trace, [0.5], **options) if by_time else \
            support.by_locations(folder, defined, trace, [[0, 1, 2], [3, 4, 5]], **options)

    bare, full = sources("bare", {}), sources("full", extensions)
    joined = make_plan(bare, tmp_path / "probe.ccg")
    try:
        assert (joined.stored_definitions is not None) == ("bundle" in options)
    finally:
        joined.close()
    asked = []

    def given():
        asked.append(1)
        return extension_table(extensions)

    report = ccgformat.merge(bare, tmp_path / "given.ccg", extensions=given)
    assert report.way == ("events" if by_time else "nodes") and len(asked) == 1
    ccgformat.merge(full, tmp_path / "kept.ccg")
    support.assert_same_trace(tmp_path / "given.ccg", tmp_path / "kept.ccg")
    with ccgformat.open(tmp_path / "given.ccg") as merged:
        assert merged.definitions.extensions == extensions
    assert verify(tmp_path / "given.ccg") == []


def test_blocks_moved_before_the_merge_give_the_same_file(tmp_path, monkeypatch):
    """The node blocks each part moves and compresses itself (`write_moved`, as the ranks
    of an MPI conversion do at once) give the bytes of the merge that moves them: parts
    written at the default level, whose first part's frames the merge copies as stored.
    A list that does not hold a part's nodes is refused and leaves no file."""
    from ccgformat.archive.merge import write_moved
    _paths(monkeypatch, "blocks")
    definitions, events = synth.synthesize(4, 3000, jitter=0.3, seed=5, pattern="spmd")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(4)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0], [1, 2], [3]])
    ccgformat.merge(parts, tmp_path / "expected.ccg")
    moved, base = [], 0
    for i, part in enumerate(parts):
        with ccgformat.open(part) as archive:
            moved.append((tmp_path / f"moved{i}", write_moved(archive, base, tmp_path / f"moved{i}")))
            base += len(archive.pool)
    assert moved[1][1][0].first == len(ccgformat.open(parts[0]).pool)
    for chosen in ([None, *moved[1:]], moved):
        ccgformat.merge(parts, tmp_path / "merged.ccg", moved=chosen)
        assert (tmp_path / "merged.ccg").read_bytes() == (tmp_path / "expected.ccg").read_bytes()
    with pytest.raises(ValueError, match="do not hold its"):
        ccgformat.merge(parts, tmp_path / "bad.ccg", moved=[moved[0], (moved[1][0], moved[1][1][:-1]), None])
    damaged = moved[2][0].read_bytes()
    moved[2][0].write_bytes(damaged[:len(damaged) // 2])  # the moved frames are what is stored
    with pytest.raises(ccgformat.CorruptArchiveError):
        ccgformat.merge(parts, tmp_path / "bad.ccg", moved=moved)
    assert not (tmp_path / "bad.ccg").exists()


@pytest.mark.parametrize("interval", [None, 7])
def test_a_blocks_merge_keeps_every_location_s_checkpoints(tmp_path, monkeypatch, interval):
    """The blocks way takes each location's checkpoints from the CHECKPOINT_TABLE columns
    of the archive holding its events, and walks those of an archive indexed at another
    interval: the merged index equals the whole conversion's, location by location."""
    _paths(monkeypatch, "blocks")
    definitions, events = synth.synthesize(6, 3000, jitter=0.3, seed=5, pattern="spmd")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(6)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0, 3], [1, 2], [4, 5]])
    if interval is not None:  # the second part indexed every 7 events
        ccgformat.write_trace(parts[1], definitions, ((location, [trace[location]]) for location in (1, 2)),
                              checkpoint_interval=interval)
    whole = support.write(tmp_path / "whole.ccg", definitions, trace)
    assert ccgformat.merge(parts, tmp_path / "merged.ccg").way == "blocks"
    with ccgformat.open(tmp_path / "merged.ccg") as merged, ccgformat.open(whole) as expected:
        for location in range(6):
            points = expected.checkpoints(SectionKind.CHECKPOINT_TABLE, location)
            assert points and merged.checkpoints(SectionKind.CHECKPOINT_TABLE, location) == points
    assert verify(tmp_path / "merged.ccg") == []


@pytest.mark.parametrize("path", ["blocks", "nodes", "events"])
def test_a_merge_writes_as_asked(tmp_path, monkeypatch, path):
    """The writer's options hold in each way: every node block at the zstd level asked for
    (the blocks way compresses the blocks it copies again), the checkpoints at the
    interval asked for (walked: the parts hold the default's), no aggregation tables when
    none are asked for, and the whole trace's events and checkpoints."""
    _paths(monkeypatch, "nodes" if path == "nodes" else "blocks")
    definitions, events = synth.synthesize(4, 3000, jitter=0.3, seed=5, pattern="spmd")
    run = {location: EventBatch.concat(list(events(location))) for location in range(4)}
    end = max(int(batch.time[-1]) for batch in run.values()) + 1
    trace = {location: EventBatch.concat([batch, dataclasses.replace(batch, time=batch.time + end)])
             for location, batch in run.items()}  # the program twice: a cut between the runs for the segments
    parts = support.by_time(tmp_path, definitions, trace, [0.5]) if path == "events" else \
        support.by_locations(tmp_path, definitions, trace, [[0, 2], [1], [3]])
    whole = support.write(tmp_path / "whole.ccg", definitions, trace, level=3, checkpoint_interval=500,
                          aggregation=None)
    report = ccgformat.merge(parts, tmp_path / "merged.ccg", level=3, checkpoint_interval=500, aggregation=False)
    assert report.way == path
    support.assert_same_trace(tmp_path / "merged.ccg", whole)
    level = nodes_level(3)
    with ccgformat.open(tmp_path / "merged.ccg") as merged, ccgformat.open(whole) as expected:
        assert (merged.parameters["zstd_level"], merged.parameters["checkpoint_interval"]) == (3, 500)
        framed = [entry for entry in merged.sections if entry.kind in NODE_KINDS and entry.member < 0]
        assert all(merged.stored_frame(entry) == level.compress(merged.payload(entry)) for entry in framed)
        assert framed or path != "blocks"  # (a small graph's other ways bundle its blocks)
        assert not [entry for entry in merged.sections if entry.kind == SectionKind.AGGREGATE_LEVEL]
        for location in range(4):
            points = expected.checkpoints(SectionKind.CHECKPOINT_TABLE, location)
            assert len(points) > 1 and merged.checkpoints(SectionKind.CHECKPOINT_TABLE, location) == points
    assert verify(tmp_path / "merged.ccg") == []


def test_ccg_merge_takes_the_writer_s_options(tmp_path):
    """`ccg merge --level --checkpoint-interval --gaps` as `ccg convert` takes them."""
    definitions, events = synth.synthesize(4, 2000, jitter=0.3, seed=2, pattern="ring")
    trace = {location: EventBatch.concat(list(events(location))) for location in range(4)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0, 1], [2, 3]])
    whole = support.write(tmp_path / "whole.ccg", definitions, trace, level=5, checkpoint_interval=300,
                          gaps="plain")
    assert main(["merge", *map(str, parts), "-o", str(tmp_path / "merged.ccg"), "-q", "--level", "5",
                 "--checkpoint-interval", "300", "--gaps", "plain"]) == 0
    support.assert_same_trace(tmp_path / "merged.ccg", whole)
    with ccgformat.open(tmp_path / "merged.ccg") as merged:
        assert (merged.parameters["zstd_level"], merged.parameters["checkpoint_interval"]) == (5, 300)
        kinds = {SectionKind(entry.kind) for entry in merged.sections if entry.kind in NODE_KINDS}
        assert SectionKind.CODED_NODES not in kinds  # plain gaps (the default codes this trace's)


@given(st.lists(st.integers(0, 40)), st.lists(st.integers(0, 40)))
def test_the_unreached_empty_roots_are_counted_as_setdiff1d_counts_them(values, among):
    """`blocks._count_missing`, sorted search for the build metrics' unreached empty roots,
    against numpy's set difference."""
    values, among = np.array(values, np.int64), np.array(among, np.int64)
    assert blocks._count_missing(values, among) == len(np.setdiff1d(values, among))
