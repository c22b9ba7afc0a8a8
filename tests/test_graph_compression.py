"""Lossless compression against a brute-force oracle: n counts distinct sub-trees."""

from __future__ import annotations

from hypothesis import given

from ccgformat import Builder, Params
from ccgformat.graph.pool import wrap64
from ccgformat.model import KIND_FIELDS, EventKind

from .traces import batches, traces


def subtree_signatures(events) -> list:
    """Every sub-tree of the uncompressed CCG (no splitting) as a canonical signature:
    kind, hard properties, durations and the children's signatures (3.2, 3.3)."""
    found = []
    previous: dict[int, int] = {}

    def atomic(event):
        fields = KIND_FIELDS[EventKind(event.kind)]
        soft = tuple(getattr(event, name) for name in fields.soft)
        if event.kind == EventKind.METRIC:
            soft = (wrap64(event.value - previous.get(event.ref, 0)),)
            previous[event.ref] = event.value
        return (event.kind, tuple(getattr(event, name) for name in fields.hard), soft)

    def node(kind, key, start, end, children):
        durations, time = [], start
        for child_start, child_end, _ in children:
            durations += [child_start - time, child_end - child_start]
            time = child_end
        durations.append(end - time)
        signature = (kind, key, tuple(durations), tuple(sig for _, _, sig in children))
        found.append(signature)
        return (start, end, signature)

    stack = [(events[0].time if events else 0, [])]
    for event in events:
        if event.kind == EventKind.ENTER:
            stack.append((event.time, []))
        elif event.kind == EventKind.LEAVE:
            start, children = stack.pop()
            stack[-1][1].append(node("call", event.ref, start, event.time, children))
        else:
            signature = atomic(event)
            found.append(signature)
            stack[-1][1].append((event.time, event.time, signature))
    start, children = stack.pop()
    node("root", None, start, events[-1].time if events else 0, children)
    return found


@given(traces())
def test_node_counts_match_the_distinct_subtrees(trace):
    # every equal sub-tree shared: an unbounded cache area, and leaf calls shared at any age
    builder = Builder(Params(branching=1000, search_length=10**6, leaf_window=0))
    signatures = []
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
        signatures += subtree_signatures(events)
    metrics = builder.finish().metrics
    assert metrics.N == len(signatures)
    assert metrics.n == len(set(signatures))
    assert metrics.M >= metrics.m > 0
