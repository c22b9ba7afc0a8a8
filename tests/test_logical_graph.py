"""The graph kernels of logical time: longest paths and strongly connected components, the
C core and the Python reference against brute force on random graphs (acyclic ones, and
ones with cycles)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat import backends
from ccgformat.query.logical_graph import (UNREACHED, components, components_reference, longest_paths,
                                           longest_paths_reference)

IMPLEMENTATIONS = [longest_paths_reference]
COMPONENTS = [components_reference]
if backends.native():
    from ccgformat._native import logical as native

    IMPLEMENTATIONS.append(native.longest_paths)
    COMPONENTS.append(native.components)


@st.composite
def graphs(draw: st.DrawFn, acyclic: bool) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    count = draw(st.integers(0, 12))
    pairs = st.tuples(st.integers(0, max(count - 1, 0)), st.integers(0, max(count - 1, 0)))
    edges = draw(st.lists(pairs, max_size=30)) if count else []
    if acyclic:  # only edges from a smaller to a larger node, in a shuffled numbering
        order = draw(st.permutations(range(count)))
        edges = [(order[min(u, v)], order[max(u, v)]) for u, v in edges if u != v]
    weights = draw(st.lists(st.integers(0, 5), min_size=len(edges), max_size=len(edges)))
    base = draw(st.lists(st.integers(-3, 3), min_size=count, max_size=count))
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    return count, src, dst, np.array(weights, np.int64), np.array(base, np.int64)


def reachable(count: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """``reach[u, v]``: a path of zero or more edges leads from u to v."""
    reach = np.eye(count, dtype=bool)
    reach[src, dst] = True
    for k in range(count):
        reach |= reach[:, k:k + 1] & reach[k:k + 1, :]
    return reach


def brute_longest(count, src, dst, weight, base) -> list[int | None]:
    """Relax every edge count + 1 times; a value still growing lies behind a cycle (None)."""
    value = base.astype(object).tolist()
    for _ in range(count + 1):
        for u, v, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
            value[v] = max(value[v], value[u] + w)
    reach = reachable(count, src, dst)
    on_cycle = [any(u == node and reach[v, node] for u, v in zip(src.tolist(), dst.tolist()))
                for node in range(count)]  # a path of one edge or more back to itself
    behind = [any(on_cycle[c] and reach[c, node] for c in range(count)) for node in range(count)]
    return [None if behind[node] else value[node] for node in range(count)]


@settings(max_examples=150, deadline=None)
@given(graphs(acyclic=True))
def test_longest_paths_of_acyclic_graphs(graph):
    want = brute_longest(*graph)
    assert None not in want
    for implementation in IMPLEMENTATIONS:
        assert implementation(*graph).tolist() == want
    assert longest_paths(*graph).tolist() == want


@settings(max_examples=150, deadline=None)
@given(graphs(acyclic=False))
def test_nodes_on_or_behind_a_cycle_are_unreached(graph):
    want = [UNREACHED if value is None else value for value in brute_longest(*graph)]
    for implementation in IMPLEMENTATIONS:
        assert implementation(*graph).tolist() == want


@settings(max_examples=150, deadline=None)
@given(graphs(acyclic=False))
def test_strongly_connected_components(graph):
    count, src, dst = graph[:3]
    reach = reachable(count, src, dst)
    together = reach & reach.T  # u and v reach each other
    for implementation in COMPONENTS:
        raw = implementation(count, src, dst)
        assert (raw[:, None] == raw[None, :]).tolist() == together.tolist()
    canonical = components(count, src, dst)
    assert (canonical[:, None] == canonical[None, :]).tolist() == together.tolist()
    firsts = [int(np.flatnonzero(canonical == c)[0]) for c in range(int(canonical.max(initial=-1)) + 1)]
    assert firsts == sorted(firsts), "components are numbered in the order of their smallest nodes"


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_an_edge_outside_the_graph_is_refused(implementation):
    with pytest.raises(ValueError, match="name a node that does not exist"):
        implementation(2, np.array([0]), np.array([2]), np.array([1]), np.zeros(2, np.int64))


def test_a_long_chain_takes_no_recursion():
    """Tarjan and Kahn without recursion: a chain of 200,000 nodes and its closing edge."""
    count = 200_000
    src = np.arange(count, dtype=np.int64)
    dst = (src + 1) % count
    assert components(count, src, dst).max() == 0
    value = longest_paths(count, src[:-1], dst[:-1], np.ones(count - 1, np.int64), np.zeros(count, np.int64))
    assert value[-1] == count - 1
