"""The query tables of an archive (`tables_for`, block by block into preallocated
columns) against the same pool read node by node through its column interface, and the
import claims the scan checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.errors import CorruptArchiveError
from ccgformat.query.tables import _from_columns, tables_for

from . import traces


@settings(max_examples=40, deadline=None)
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


def test_a_scan_checks_every_import_claim():
    """`import_claim_lie.ccg` (tests/data/bad) has a block whose import table misstates an
    earlier node: building the tables scans every block, so it finds the lie at once
    (a claim about a block the scan has passed used to wait for that block to be decoded
    again)."""
    path = Path(__file__).parent / "data" / "bad" / "import_claim_lie.ccg"
    with ccgformat.open(path) as archive:
        with pytest.raises(CorruptArchiveError, match="says node"):
            tables_for(archive.pool)
