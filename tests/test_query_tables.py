"""The query tables of an archive (`tables_for`, block by block into preallocated
columns) against the same pool read node by node through its column interface."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.query.tables import _from_columns, tables_for

from . import traces


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3, branching=3)]),
       st.integers(1, 9))
def test_block_tables_equal_the_node_by_node_reference(tmp_path_factory, trace, params, nodes_per_block):
    path = tmp_path_factory.mktemp("tables") / "t.ccg"
    ccgformat.write_trace(path, traces.definitions(), ((loc, traces.batches(e)) for loc, e in trace.items()),
                          params, nodes_per_block=nodes_per_block)
    with ccgformat.open(path) as archive:
        got, want = tables_for(archive.pool), _from_columns(archive.pool)
        for column in dataclasses.fields(want):
            assert np.array_equal(getattr(got, column.name), getattr(want, column.name)), column.name
            assert getattr(got, column.name).dtype == np.int64, column.name
