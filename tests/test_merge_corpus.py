"""`ccgformat.merge` on the corpus: every trace converted, cut into archives of disjoint
locations (each with the whole definitions, as MPI ranks write them) and into time
segments, and merged again, equals its conversion."""

from __future__ import annotations

import pytest

import ccgformat

from . import merge_support as support
from .query_support import CORPUS, converted


@pytest.mark.parametrize("cut", ["locations", "time"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_a_corpus_trace_cut_and_merged_equals_its_conversion(tmp_path_factory, tmp_path, name, cut):
    whole = converted(tmp_path_factory, name)
    trace = support.events_of(whole)
    if cut == "locations":
        locations = sorted(trace)
        parts = support.by_locations(tmp_path, whole.definitions, trace, [locations[0::2], locations[1::2]])
    else:
        parts = support.by_time(tmp_path, whole.definitions, trace, [0.3, 0.6])
    report = ccgformat.merge(parts, tmp_path / "merged.ccg")
    assert report.events == whole.stats.events and report.extensions_kept
    support.assert_same_trace(tmp_path / "merged.ccg", whole.path)
