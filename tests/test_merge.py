"""`ccgformat.merge`: archives of disjoint locations or of consecutive time segments
joined equal the conversion of the whole trace; conflicting definitions are refused."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.model import EventBatch, Metric

from . import merge_support as support
from . import traces

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
