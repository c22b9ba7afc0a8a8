"""Minimum-depth splitting of wide nodes, early and late stage (4.1.2, Figs. 4.2/4.3)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from ccgformat import Builder, EventBatch, Params
from ccgformat.graph import Builder as ReferenceBuilder, NodeKind
from ccgformat.model import EventKind as K


def wide_call(children: int, distinct: bool = True) -> list:
    """main with ``children`` calls; distinct regions keep compression out of the way."""
    rows = [(0, K.ENTER, 0)]
    for i in range(children):
        region = 1 + i if distinct else 1
        rows += [(10 * i + 1, K.ENTER, region), (10 * i + 5, K.LEAVE, region)]
    rows.append((10 * children + 1, K.LEAVE, 0))
    return rows


def main_node(children: int, branching: int, distinct: bool = True):
    builder = Builder(Params(branching=branching))
    builder.add(0, EventBatch.from_events(wide_call(children, distinct)))
    graph = builder.finish()
    pool = graph.pool
    (main,) = pool.children[graph.roots[0].root]
    return pool, main


def shape(pool, node):
    """The artificial tree below a node: a leaf call becomes its region number."""
    if pool.kind[node] == NodeKind.CALL and not pool.children[node]:
        return pool.key[node][0]
    return [shape(pool, child) for child in pool.children[node]]


def test_fig_4_2_fifteen_children_with_b_3():
    pool, main = main_node(15, 3)
    # early stage: X1(1-3), X2(4-6), X3(7-9) -> Y1; X(10-12) waits on level 1; late stage
    # groups 13-15 into X4 on level 1 and level 1 into Y2 on level 2 (Fig. 4.2 (f))
    assert shape(pool, main) == [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[10, 11, 12], [13, 14, 15]]]


def test_late_stage_wraps_a_lone_pending_entry():
    pool, main = main_node(40, 3)
    # levels before finalization: Z(1-27) | Y(28-36) | X(37-39) | 40 -> four entries > b,
    # so late stage: X'(40) joins X(37-39) in Y', and Y' joins Y(28-36) in Z'
    first, second = shape(pool, main)
    assert second == [[[28, 29, 30], [31, 32, 33], [34, 35, 36]], [[37, 38, 39], [40]]]
    assert len(first) == 3


def test_few_pending_entries_stay_unsplit():
    pool, main = main_node(10, 3)
    # Y(1-9) and child 10: two entries <= b, so no late stage is needed
    assert shape(pool, main) == [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], 10]


def test_narrow_nodes_are_not_split():
    pool, main = main_node(3, 3)
    assert shape(pool, main) == [1, 2, 3]


def leaf_depths(pool, node, depth=0):
    if pool.kind[node] == NodeKind.CALL and not pool.children[node]:
        yield depth
        return
    for child in pool.children[node]:
        yield from leaf_depths(pool, child, depth + 1)


@given(st.integers(1, 400), st.integers(2, 12), st.booleans())
def test_bounded_branching_and_minimum_depth(children, branching, distinct):
    pool, main = main_node(children, branching, distinct)
    assert all(len(c) <= branching for c in pool.children)
    # the artificial tree has the minimum depth ceil(log_b n) (Fig. 4.3)
    expected = 1 if children <= branching else math.ceil(math.log(children, branching) - 1e-9)
    assert max(leaf_depths(pool, main)) == expected


@given(st.integers(1, 3000), st.integers(2, 8))
def test_open_node_holds_at_most_b_entries_per_level(children, branching):
    """Early stage: a growing node keeps O(b log n) entries, never all n (4.1.2)."""
    rows = wide_call(children, distinct=False)
    builder = ReferenceBuilder(Params(branching=branching))  # its construction stack is visible
    most = 0
    for start in range(0, len(rows), 7):
        builder.add(0, EventBatch.from_events(rows[start:start + 7]))
        state = builder._locations[0]
        for node in state.stack:
            most = max(most, len(node.entries))
            assert all(count <= branching for count in node.level_counts)
    levels = max(1, math.ceil(math.log(children + 1, branching)) + 1)
    assert most <= branching * levels
    builder.finish()
