"""The two graph computations logical time rests on (paper 003 section 3.1): longest
paths over a directed acyclic graph - a Lamport clock is the longest chain of
happened-before edges ending at an event, and Ravel's strides, steps and phase offsets
are longest paths too - and the strongly connected components that merge communication
groups into phases. The native core runs both in C (`ccgformat._native.logical`); the
functions here with ``_reference`` are the pure-Python reference it is tested against.

A graph is ``count`` nodes ``0 .. count - 1`` and the edges ``src[k] -> dst[k]``.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import backends
from ..errors import TraceError

__all__ = ["UNREACHED", "components", "components_reference", "longest_paths", "longest_paths_reference",
           "require_acyclic"]

#: The value of a node that lies on a cycle or behind one: no longest path reaches it.
UNREACHED = np.iinfo(np.int64).min


def longest_paths(count: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``value[v] = max(base[v], max over the edges u -> v of value[u] + weight)``, per
    node; `UNREACHED` for the nodes on or behind a cycle."""
    if backends.native():
        from .._native.logical import longest_paths as native
        return native(count, src, dst, weight, base)
    return longest_paths_reference(count, src, dst, weight, base)


def components(count: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The strongly connected component of every node, numbered ``0, 1, ...`` in the
    order of their smallest nodes (so the numbers do not depend on the algorithm)."""
    if backends.native():
        from .._native.logical import components as native
        raw = native(count, src, dst)
    else:
        raw = components_reference(count, src, dst)
    if not count:
        return raw
    first = np.full(int(raw.max()) + 1, count, np.int64)
    np.minimum.at(first, raw, np.arange(count, dtype=np.int64))
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first), dtype=np.int64)
    return rank[raw]


def _successors(count: int, src: np.ndarray, dst: np.ndarray) -> list[list[int]]:
    """Per node the positions of its edges, in input order."""
    out: list[list[int]] = [[] for _ in range(count)]
    for k, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if not (0 <= u < count and 0 <= v < count):
            raise ValueError("the graph's edges name a node that does not exist")
        out[u].append(k)
    return out


def longest_paths_reference(count: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
                            base: np.ndarray) -> np.ndarray:
    """`longest_paths` in Python: Kahn's order, a node final once its last source is."""
    out = _successors(count, src, dst)
    targets, weights = dst.tolist(), weight.tolist()
    value = [int(b) for b in base.tolist()]
    waiting = [0] * count
    for v in targets:
        waiting[v] += 1
    queue = deque(v for v in range(count) if not waiting[v])
    while queue:
        u = queue.popleft()
        for k in out[u]:
            v = targets[k]
            value[v] = max(value[v], value[u] + weights[k])
            waiting[v] -= 1
            if not waiting[v]:
                queue.append(v)
    result = np.array(value, np.int64)
    result[np.array(waiting, np.int64) > 0] = UNREACHED
    return result


def components_reference(count: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Strongly connected components in Python (Tarjan's algorithm without recursion)."""
    out = _successors(count, src, dst)
    targets = dst.tolist()
    index, low = [-1] * count, [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    component = np.empty(count, np.int64)
    counter = found = 0
    for root in range(count):
        if index[root] >= 0:
            continue
        calls = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while calls:
            u, position = calls[-1]
            if position < len(out[u]):
                calls[-1] = (u, position + 1)
                v = targets[out[u][position]]
                if index[v] < 0:
                    index[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    on_stack[v] = True
                    calls.append((v, 0))
                elif on_stack[v]:
                    low[u] = min(low[u], index[v])
                continue
            calls.pop()
            if calls:
                parent = calls[-1][0]
                low[parent] = min(low[parent], low[u])
            if low[u] == index[u]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component[w] = found
                    if w == u:
                        break
                found += 1
    return component


def require_acyclic(values: np.ndarray, location: np.ndarray, index: np.ndarray, time: np.ndarray) -> None:
    """Raise `TraceError` naming the first event (by location and index) that no longest
    path reached: its messages and its location's order contradict each other (a receive
    its own send depends on), so no logical clock can order it."""
    stuck = np.flatnonzero(values == UNREACHED)
    if len(stuck):
        first = int(stuck[np.lexsort((index[stuck], location[stuck]))[0]])
        raise TraceError("this communication event lies on a cycle of messages and event order (a message "
                         "received before it was sent, by the matching): logical time cannot order it",
                         location=int(location[first]), index=int(index[first]), time=int(time[first]))
