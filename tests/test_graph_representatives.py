"""Closing jittered S-lists (Params.representatives, docs/compression.md): with deviation
bounds, an S-list that holds R nodes and finds none for a new one is no longer searched,
in both builders alike; every event stays within the bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.graph import Builder
from ccgformat.graph.pool import NodeKind
from ccgformat.model import EventBatch
from ccgformat.params import Params

from .test_graph_leaf_window import BUILDERS, build, leaf_calls, rebuilt
from .test_graph_lossy import check_location
from .traces import definitions

#: far apart beyond any bound below: each needs its own representative
SPREAD = [100 * 2 ** k for k in range(12)]
LOSSY = {"abs_dev": 1 << 20, "rel_dev": 0.05, "branching": 1000}


def leaf_nodes(graph) -> int:
    pool = graph.pool
    return sum(1 for node in range(len(pool)) if pool.kind[node] == NodeKind.CALL and pool.key[node] == (1,))


@pytest.mark.parametrize("builder_class", BUILDERS)
@pytest.mark.parametrize("representatives,expected", [(0, 12), (4, 12 + 6), (12, 12), (13, 12)])
def test_an_s_list_that_needs_more_representatives_is_closed(builder_class, representatives, expected):
    # 12 durations that need 12 representatives, then the first six again: an S-list of
    # R < 12 closes at its (R+1)th miss and stores the six; R = 0 (never closed) or R >= 12
    # shares them
    durations = SPREAD + SPREAD[:6]
    events = leaf_calls(durations)
    params = Params(**LOSSY, representatives=representatives)
    graph = build(builder_class, params, {0: events})
    assert leaf_nodes(graph) == expected
    check_location(events, rebuilt(graph, 0), params)


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_an_s_list_whose_durations_repeat_stays_open(builder_class):
    durations = [100, 400, 101, 399] * 50
    graph = build(builder_class, Params(**LOSSY, representatives=2), {0: leaf_calls(durations)})
    assert leaf_nodes(graph) == 2


@pytest.mark.parametrize("builder_class", BUILDERS)
def test_representatives_leave_exact_time_alone(builder_class):
    events = leaf_calls(SPREAD + SPREAD)
    graphs = [build(builder_class, Params(branching=1000, leaf_window=0, representatives=r), {0: events})
              for r in (0, 1)]
    assert graphs[0].metrics == graphs[1].metrics and leaf_nodes(graphs[0]) == 12


def test_parameters_record_the_count_with_deviation_bounds_only(tmp_path):
    """Spec 4.2: written with deviation bounds (in a bundle too), left out with exact time;
    absent, a lossy file written before it reads as 0, an exact one as the default."""
    path = tmp_path / "calls.ccg"
    batch = EventBatch.from_events(leaf_calls(SPREAD))
    for params, recorded in ((Params(abs_dev=100, rel_dev=0.05, representatives=7), 7), (Params(), None)):
        ccg.write_trace(path, definitions(), [(0, [batch])], params)
        with ccg.open(path) as archive:
            assert archive.parameters.get("representatives") == recorded
            assert archive.params == params
    vectors = Path(__file__).resolve().parent.parent / "spec" / "vectors"
    for vector, read in ((vectors / "1.3" / "lossy.ccg", 0), (vectors / "1.4" / "bundle.ccg", Params.representatives)):
        with ccg.open(vector) as archive:
            assert "representatives" not in archive.parameters and archive.params.representatives == read
            assert archive.params.exact_time == (read != 0)


def test_the_reference_builder_closes_without_searching_again():
    """A closed S-list is not searched: a call that would match its first node is stored."""
    params = Params(**LOSSY, representatives=1)
    builder = Builder(params, definitions())
    builder.add(0, EventBatch.from_events(leaf_calls([100, 1000, 100, 100])))
    graph = builder.finish()
    assert leaf_nodes(graph) == 4
