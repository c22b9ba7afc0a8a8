"""The C timeline by location (ccgformat/_native/timeline.c) against the numpy reference
`_walk`: the same image, bit for bit, for random traces, windows, widths and locations."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import Params, backends
from ccgformat.errors import CorruptArchiveError
from ccgformat.model import Event, EventKind
from ccgformat.query import timeline
from ccgformat.query.groups import region_groups
from ccgformat.query.tables import tables_for

from . import query_oracle as oracle
from . import traces

try:
    from ccgformat._native.timeline import paint  # noqa: F401
except ImportError as error:  # pragma: no cover - only where the C core is not built
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

module = importlib.import_module("ccgformat.query.timeline_walk")


def image(graph, start, stop, width, locations, backend):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backends, "ACTIVE", backend)
        return timeline(graph, start, stop, width, locations).exclusive


@settings(max_examples=150, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3, branching=3)]),
       st.sampled_from([1, module.INDEXED_CHILDREN]), st.data())
def test_native_timeline_equals_the_reference(trace, params, least, data):
    """Running sums over the children of every node with children (``least`` 1) or only of
    those with many; bounds on event times (node edges), around and far outside the trace,
    and so wide that the column formula would overflow."""
    graph = oracle.build(trace, params)
    times = [e.time for events in trace.values() for e in events]
    bound = st.one_of(st.sampled_from(times), st.integers(min(times) - 3, max(times) + 3),
                      st.sampled_from([min(times) - 10**6, max(times) + 10**6, -(1 << 61), 1 << 61]))
    a, b = sorted(data.draw(st.tuples(bound, bound)))
    width = data.draw(st.integers(1, 50))
    locations = data.draw(st.lists(st.sampled_from(sorted(trace)), min_size=1, unique=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "INDEXED_CHILDREN", least)
        want = image(graph, a, max(b, a + 1), width, locations, "python")
        got = image(graph, a, max(b, a + 1), width, locations, "native")
    assert np.array_equal(got, want)


def _corrupt_walk(replace_children, root_shift=0):
    """`native_walk` on a call A > B whose tables were changed."""
    trace = {0: [Event(0, EventKind.ENTER, 0), Event(10, EventKind.ENTER, 1), Event(20, EventKind.LEAVE, 1),
                 Event(30, EventKind.LEAVE, 0)]}
    graph = oracle.build(trace)
    t = tables_for(graph.pool)
    t = dataclasses.replace(t, children=replace_children(t))
    names, group_of = region_groups(graph.definitions, max(len(graph.definitions.regions), t.regions))
    root = graph.roots[0]
    module.native_walk(t, group_of, np.arange(0, 31, 10), len(names), np.array([root.root + root_shift]),
                       np.array([root.start]), np.zeros(1, np.int64), 1)


def test_a_child_that_is_not_an_earlier_node_is_refused():
    def own_id(t):  # the call with a child points to itself
        children = t.children.copy()
        parent = int(np.flatnonzero((t.child_count > 0) & (t.kind == 0))[0])
        children[t.child_start[parent]] = parent
        return children
    with pytest.raises(CorruptArchiveError, match="not an earlier node"):
        _corrupt_walk(own_id)


def test_a_root_outside_the_tables_is_refused():
    with pytest.raises(CorruptArchiveError, match="not in the tables"):
        _corrupt_walk(lambda t: t.children, root_shift=100)


@settings(max_examples=100, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3, branching=3)]), st.data())
def test_native_group_times_equal_the_reference(trace, params, data):
    """The memoized sub-tree times per group in C equal numpy's bit for bit, for random
    groupings of the regions."""
    t = tables_for(oracle.build(trace, params).pool)
    regions = max(t.regions, 1)
    group_of = np.array(data.draw(st.lists(st.integers(0, 3), min_size=regions, max_size=regions)), np.int64)
    found = {}
    for backend in ("python", "native"):
        fresh = dataclasses.replace(t)  # no memo of the other backend
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(backends, "ACTIVE", backend)
            found[backend] = module.group_exclusive(fresh, group_of)
    assert np.array_equal(found["native"], found["python"])


def test_group_times_refuse_a_child_that_is_not_an_earlier_node():
    from ccgformat._native.timeline import group_exclusive
    trace = {0: [Event(0, EventKind.ENTER, 0), Event(10, EventKind.ENTER, 1), Event(20, EventKind.LEAVE, 1),
                 Event(30, EventKind.LEAVE, 0)]}
    t = tables_for(oracle.build(trace).pool)
    children = t.children.copy()
    parent = int(np.flatnonzero(t.child_count > 0)[0])
    children[t.child_start[parent]] = parent
    with pytest.raises(CorruptArchiveError, match="not an earlier node"):
        group_exclusive(dataclasses.replace(t, children=children), np.arange(2), 2)
