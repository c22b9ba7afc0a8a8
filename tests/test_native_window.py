"""The C descent of a profile window and the C sums of what it found
(ccgformat/_native/window.c) against the numpy references `descend` and `window_sums`:
the same cut calls, sub-trees and sums, for random traces, windows and several windows
per location."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import Params
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Definitions, Event, EventKind, Location, Region
from ccgformat.query.profile_engine import engine_for
from ccgformat.query.profile_window import NO_START, NO_STOP, descend, native_window_sums, window_sums
from ccgformat.query.tables import tables_for

from . import query_oracle as oracle
from . import traces

try:
    from ccgformat._native.window import window_descend
except ImportError as error:  # pragma: no cover - only where the C core is not built
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)


def _sorted(rows: np.ndarray) -> list[list[int]]:
    return sorted(rows.tolist())


def _windows(trace, graph, data):
    """Random windows, several per location: (root, begin, start, stop) columns."""
    times = [e.time for events in trace.values() for e in events]
    event_time = st.sampled_from(times)  # bounds on node edges, and calls entered at the start
    bound = st.one_of(event_time, event_time, event_time, st.just(NO_START), st.just(NO_STOP),
                      st.integers(min(times) - 2, max(times) + 2))
    tags = data.draw(st.lists(st.tuples(st.sampled_from(sorted(trace)), bound, bound), min_size=1, max_size=6))
    locations = [location for location, _, _ in tags]
    root = np.array([graph.roots[location].root for location in locations], np.int64)
    begin = np.array([graph.roots[location].start for location in locations], np.int64)
    start = np.array([min(a, b) for _, a, b in tags], np.int64)
    stop = np.array([max(a, b) for _, a, b in tags], np.int64)
    return root, begin, start, stop


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3, branching=3)]), st.data())
def test_native_descent_equals_the_reference(trace, params, data):
    graph = oracle.build(trace, params)
    t = tables_for(graph.pool)
    root, begin, start, stop = _windows(trace, graph, data)
    want_cuts, want_seeds = descend(t, root, begin, start, stop)
    got_cuts, got_seeds = window_descend(t, root, begin, start, stop)
    assert _sorted(got_cuts) == _sorted(want_cuts)
    # the depth of a seed is the same in both; the order differs (depth first in C)
    assert _sorted(got_seeds) == _sorted(want_seeds)


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3, branching=3)]), st.data())
def test_native_sums_equal_the_reference(trace, params, data):
    graph = oracle.build(trace, params)
    engine = engine_for(graph)
    root, begin, start, stop = _windows(trace, graph, data)
    cuts, seeds = descend(engine.tables, root, begin, start, stop)
    if len(seeds):
        engine.memoize(seeds[:, 0], seeds[:, 2])
    keep_before = np.array(data.draw(st.lists(st.booleans(), min_size=len(root), max_size=len(root))))
    reach = int(stop.max())
    want = window_sums(engine, cuts, seeds, start, stop, keep_before, reach)
    got = native_window_sums(engine, cuts, seeds, start, stop, keep_before, reach)
    for name, a, b in zip(("sums", "low", "high", "early", "messages"), got, want):
        assert np.array_equal(a, b), name


def test_a_root_outside_the_tables_is_refused():
    graph = oracle.build({0: [Event(1, EventKind.ENTER, 0), Event(2, EventKind.LEAVE, 0)]})
    t = tables_for(graph.pool)
    with pytest.raises(CorruptArchiveError, match="not in the tables"):
        window_descend(t, np.array([len(t) + 5]), np.array([0]), np.array([NO_START]), np.array([NO_STOP]))


@pytest.mark.parametrize("column, damage", [("child_start", lambda a: a.__setitem__(-2, a[-1] + 3)),
                                             ("child_start", lambda a: a.__setitem__(-2, -1)),
                                             ("duration_start", lambda a: a.__setitem__(-2, a[-1]))])
def test_offsets_outside_the_tables_are_refused(column, damage):
    """The last node (the root) with its children or durations out of the tables."""
    one_location = Definitions(regions=[Region("a"), Region("b")], locations=[Location("rank 0")])
    graph = oracle.build_with(one_location, {0: [Event(1, EventKind.ENTER, 0), Event(2, EventKind.ENTER, 1),
                                                 Event(3, EventKind.LEAVE, 1), Event(4, EventKind.LEAVE, 0)]})
    t = tables_for(graph.pool)
    offsets = getattr(t, column).copy()
    damage(offsets)
    t = dataclasses.replace(t, **{column: offsets})
    root = len(t) - 1
    with pytest.raises(CorruptArchiveError, match="out of the tables"):
        window_descend(t, np.array([root]), np.array([0]), np.array([2]), np.array([3]))


def test_a_sub_tree_without_a_memo_row_is_refused():
    graph = oracle.build({0: [Event(1, EventKind.ENTER, 0), Event(2, EventKind.LEAVE, 0)]})
    engine = engine_for(graph)
    seeds = np.array([[graph.roots[0].root, 0, 0, -1]], np.int64)
    with pytest.raises(CorruptArchiveError, match="no memo row"):
        native_window_sums(engine, np.zeros((0, 5), np.int64), seeds, np.array([NO_START]), np.array([NO_STOP]),
                           np.array([True]), NO_STOP)
