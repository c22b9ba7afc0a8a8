"""The aggregation and metric tables of a merge put together from its parts' rows
(`archive.merge.tables`, as an MPI conversion's ranks hand them over, or as the blocks way
walks them in each source while it copies the blocks) equal the tables walked from the
merged events: level by level, and byte for byte in the file."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import backends
from ccgformat.archive import open_archive, queries
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.merge import plan as plan_module
from ccgformat.archive.merge.plan import plan
from ccgformat.archive.merge.tables import TableRows, joined_rows, plan_rows
from ccgformat.model import EventBatch
from ccgformat.query.aggregate_tables import SLICES, levels, trace_window
from ccgformat.query.metric_integrals import metric_levels
from ccgformat.query.table_rows import table_rows

from . import merge_support as support
from . import traces
from .query_support import small_walks, synth

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _window(paths: list[Path]) -> tuple[int, int]:
    """The merged window: the parts' first start and last stop (spec 4.10)."""
    spans = []
    for path in paths:
        with open_archive(path) as archive:
            if archive.stats.events:
                spans.append(trace_window(archive))
    return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else (0, 1)


def _rows(paths: list[Path], window: tuple[int, int], walk: bool | None = None) -> list[TableRows]:
    rows = []
    for path in paths:
        with open_archive(path) as archive:
            rows.append(table_rows(archive, *window, walk))
    return rows


@SETTINGS
@given(traces.traces(max_locations=4), st.data())
def test_levels_from_the_parts_rows_equal_the_walked_levels(tmp_path_factory, events, data):
    folder = tmp_path_factory.mktemp("tables")
    trace = {location: EventBatch.from_events(rows) for location, rows in events.items()}
    owner = data.draw(st.lists(st.integers(0, 2), min_size=len(trace), max_size=len(trace)))
    groups = [[location for location, part in zip(trace, owner) if part == i] for i in sorted(set(owner))]
    parts = support.by_locations(folder, traces.definitions(), trace, groups)
    # the rows walked from the events or read from the node tables (`table_rows` walk): the same
    rows = _rows(parts, _window(parts), data.draw(st.sampled_from([None, True, False]), label="walk"))
    ccgformat.merge(parts, folder / "merged.ccg")
    joined = plan(parts, folder / "merged.ccg")
    try:
        known = plan_rows(joined, rows)
    finally:
        joined.close()
    with open_archive(folder / "merged.ccg") as archive:
        walked, summed = list(levels(archive, None, SLICES)), list(levels(archive, None, SLICES, rows=known))
        assert len(summed) == len(walked) >= 1
        for (k, start, stop, values), (k2, start2, stop2, values2) in zip(walked, summed):
            assert (k, start, stop) == (k2, start2, stop2)
            assert np.array_equal(values, values2)
        walked_metrics, summed_metrics = list(metric_levels(archive)), list(metric_levels(archive, rows=known))
        assert len(walked_metrics) == len(summed_metrics) == 11  # 3 metrics defined: levels 0..10
        for want, got in zip(walked_metrics, summed_metrics):
            assert (want.level, want.finest, want.start, want.stop, want.metrics, want.locations) == \
                (got.level, got.finest, got.start, got.stop, got.metrics, got.locations)
            assert np.array_equal(want.cell, got.cell) and np.array_equal(want.metric, got.metric)
            assert np.array_equal(want.value.view(np.uint64), got.value.view(np.uint64))  # bit for bit


def test_a_merge_with_the_parts_rows_writes_the_same_file(tmp_path):
    """Parts of a jittered ring trace large enough for the file to keep aggregation levels:
    the merge given the rows writes the bytes of the merge that walks the events."""
    definitions, stream = synth.synthesize(6, 10_000, jitter=0.2, seed=3, pattern="ring")
    parts = []
    for i, locations in enumerate((range(0, 3), range(3, 6))):
        parts.append(tmp_path / f"part{i}.ccg")
        ccgformat.write_trace(parts[-1], definitions, ((location, stream(location)) for location in locations))
    rows = _rows(parts, _window(parts))
    ccgformat.merge(parts, tmp_path / "walked.ccg")
    ccgformat.merge(parts, tmp_path / "joined.ccg", rows=rows)
    with open_archive(tmp_path / "joined.ccg") as archive:
        assert sum(entry.kind == SectionKind.AGGREGATE_LEVEL for entry in archive.sections) >= 2
    assert filecmp.cmp(tmp_path / "walked.ccg", tmp_path / "joined.ccg", shallow=False)


def _rows_of(start: int, locations: list[int]) -> TableRows:
    empty = np.zeros(0, np.int64)
    return TableRows(start, 100, 1, np.array(locations, np.int64), np.ones((len(locations), 2, 1), np.int64), 1,
                     empty, empty, empty, np.zeros(0))


def test_rows_of_different_windows_are_refused():
    moved = [np.arange(2, dtype=np.int64)] * 2
    with pytest.raises(ValueError, match="different windows"):
        joined_rows([_rows_of(0, [0]), _rows_of(5, [1])], moved, np.arange(2))


def test_rows_side_by_side_in_the_hierarchy_order():
    """Leaf order 1, 0, 2 (a hierarchy that reorders locations): each part's row lands at
    its location's leaf, renumbered by its map, and a leaf no part holds stays zero."""
    first, second = _rows_of(0, [0]), _rows_of(0, [0])
    second = TableRows(**{**vars(second), "cells": 2 * second.cells})
    joined = joined_rows([first, second], [np.array([1, 0, 2]), np.array([2, 1, 0])], np.array([1, 0, 2]))
    assert joined.cells[:, :, 0].tolist() == [[1, 1], [0, 0], [2, 2]]


def test_rows_over_another_window_than_the_trace_are_refused(tmp_path):
    definitions, stream = synth.synthesize(2, 200, jitter=0.2, seed=1, pattern="ring")
    path = tmp_path / "t.ccg"
    ccgformat.write_trace(path, definitions, ((location, stream(location)) for location in range(2)))
    with open_archive(path) as archive:
        start, stop = trace_window(archive)
        rows = table_rows(archive, start, stop + 1)
        with pytest.raises(ValueError, match="not the trace's window"):
            list(levels(archive, rows=rows))
        with pytest.raises(ValueError, match="not the trace's window"):
            list(metric_levels(archive, rows=rows))


def _rows_walked(monkeypatch) -> list[str]:
    """The blocks way for any graph, every graph's tables walked (`small_walks`); returns
    the paths of the sources whose rows the merge walked (`query.table_rows`)."""
    small_walks(monkeypatch)
    monkeypatch.setattr(plan_module, "COPY_NODES", 0)
    walked: list[str] = []
    rows = queries._lookup("table_rows")  # the function, imported now

    def counted(archive, start, stop, walk=None):
        walked.append(archive.path)
        return rows(archive, start, stop, walk)

    monkeypatch.setitem(queries._QUERIES, "table_rows", counted)
    return walked


def _merge_walking_the_merged_events(monkeypatch, parts: list[Path], target: Path) -> None:
    """The reference: the writer's tables walk the merged graph's events (no rows)."""
    with monkeypatch.context() as patch:
        patch.setitem(queries._QUERIES, "walked_window", lambda source, slices: None)
        ccgformat.merge(parts, target)


@SETTINGS
@given(traces.traces(max_locations=3), st.data())
def test_blocks_way_rows_walked_per_source_write_the_file_of_the_merged_walk(tmp_path_factory, monkeypatch,
                                                                             events, data):
    walked = _rows_walked(monkeypatch)
    folder = tmp_path_factory.mktemp("rows")
    trace = {location: EventBatch.from_events(rows) for location, rows in events.items()}
    owner = data.draw(st.lists(st.integers(0, 2), min_size=len(trace), max_size=len(trace)))
    groups = [[location for location, part in zip(trace, owner) if part == i] for i in sorted(set(owner))]
    parts = support.by_locations(folder, traces.definitions(), trace, groups)
    walked.clear()
    assert ccgformat.merge(parts, folder / "rows.ccg").way == "blocks"
    assert sorted(walked) == sorted(map(str, parts))
    _merge_walking_the_merged_events(monkeypatch, parts, folder / "walked.ccg")
    assert filecmp.cmp(folder / "walked.ccg", folder / "rows.ccg", shallow=False)


def test_blocks_way_rows_of_sources_of_other_windows_under_both_backends(tmp_path, monkeypatch):
    """Parts of a jittered trace with metric samples, each of its own window: the merge
    that walks each part's rows over the merged window writes the bytes of the merge
    that walks the merged events, under both backends, with aggregation and metric levels."""
    pytest.importorskip("ccgformat._native._ccg", reason="the native extension is not built")
    walked = _rows_walked(monkeypatch)
    definitions, stream = synth.synthesize(5, 20_000, jitter=0.3, seed=7, pattern="spmd")
    trace = {location: EventBatch.concat(list(stream(location))) for location in range(5)}
    parts = support.by_locations(tmp_path, definitions, trace, [[0, 1], [2], [3, 4]])
    windows = []
    for part in parts:
        with open_archive(part) as archive:
            windows.append(trace_window(archive))
    assert len(set(windows)) == len(parts)
    _merge_walking_the_merged_events(monkeypatch, parts, tmp_path / "walked.ccg")
    with open_archive(tmp_path / "walked.ccg") as archive:
        kinds = [entry.kind for entry in archive.sections]
        assert kinds.count(SectionKind.AGGREGATE_LEVEL) >= 2 and kinds.count(SectionKind.METRIC_LEVEL) >= 2
    for name in ("native", "python"):
        monkeypatch.setattr(backends, "ACTIVE", name)
        walked.clear()
        ccgformat.merge(parts, tmp_path / f"{name}.ccg")
        assert len(walked) == len(parts)
        assert filecmp.cmp(tmp_path / "walked.ccg", tmp_path / f"{name}.ccg", shallow=False), name
