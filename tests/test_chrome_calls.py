"""The first reading of a location's calls for the Chrome export (formats/chrome/calls.py):
its event-by-event rules decide complete X events exactly as `nesting.nest` - what the
importer does - reproducing the archive's order over the whole location (the check the
export made before, kept here as the oracle); the spooled ends are the calls' ends (the
native scan: tests/test_export_fast.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.errors import FormatError
from ccgformat.formats.chrome.calls import CallScan, EndSpool
from ccgformat.formats.chrome.nesting import ENTER, LEAVE, POINT, nest
from ccgformat.formats.chrome.tokens import Call, Instant, Leave
from ccgformat.model import EventBatch, EventKind



def sequences(max_leaves: int = 14) -> st.SearchStrategy:
    """Well-nested calls and instants: ("call", post, children) or ("instant",)."""
    return st.lists(st.recursive(st.just(("instant",)),
                                 lambda kids: st.tuples(st.just("call"), st.booleans(), st.lists(kids, max_size=4)),
                                 max_leaves=max_leaves), min_size=1, max_size=5)


def timed(trees: list, gaps: list[int]) -> list[tuple[int, Any]]:
    """The tokens of ``trees`` in order, times growing by ``gaps`` (cycled; many zeros make
    equal timestamps); a call with ``post`` carries fields at its end."""
    tokens: list[tuple[int, Any]] = []
    clock = itertools.cycle(gaps)
    time = 0

    def walk(tree):
        nonlocal time
        time += next(clock)
        if tree[0] == "instant":
            tokens.append((POINT, Instant(time, {"ph": "i"})))
            return
        tokens.append((ENTER, Call(0, time)))
        for child in tree[2]:
            walk(child)
        time += next(clock)
        tokens.append((LEAVE, Leave(0, time, {"args": {}} if tree[1] else None)))

    for tree in trees:
        walk(tree)
    return tokens


def complete_by_nest(tokens: list[tuple[int, Any]]) -> bool:
    """The whole-location check the export made before: X events re-import (`nest`) to
    exactly this order. Its tokens name each call by its begin."""
    leaves, stack = {}, []
    for token, item in tokens:
        if token == ENTER:
            stack.append(item)
        elif token == LEAVE:
            leaves[id(stack[-1])] = item
            stack.pop()
    entries, order = [], []
    for seq, (token, item) in enumerate(tokens):
        if token == ENTER:
            leave = leaves[id(item)]
            if leave.post:
                return False
            entries.append((item.start, leave.time, seq, item))
            stack.append(item)
        elif token == POINT:
            entries.append((item.time, None, seq, item))
        order.append((token, stack.pop() if token == LEAVE else item))
    lanes = nest(entries)
    return len(lanes) == 1 and len(lanes[0]) == len(order) and all(
        a[0] == b[0] and a[1] is b[1] for a, b in zip(lanes[0], order))


def scanned(tokens: list[tuple[int, Any]], cuts: list[int], spool: EndSpool, first: int = 0) -> CallScan:
    scan = CallScan(spool, first)
    edges = sorted({0, len(tokens), *(c % (len(tokens) + 1) for c in cuts)})
    for a, b in zip(edges, edges[1:]):
        scan.tokens(tokens[a:b])
    return scan


def call_ends(tokens: list[tuple[int, Any]]) -> list[int]:
    """Each call's end, in the order of the calls' begins."""
    ends: list[int] = []
    stack = []
    for token, item in tokens:
        if token == ENTER:
            stack.append(len(ends))
            ends.append(-1)
        elif token == LEAVE:
            ends[stack.pop()] = item.time
    return ends


@settings(max_examples=300, deadline=None)
@given(sequences(), st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=1, max_size=7),
       st.lists(st.integers(0, 200), max_size=4))
def test_local_rules_decide_as_nest(trees, gaps, cuts):
    tokens = timed(trees, gaps)
    spool = EndSpool()
    try:
        scan = scanned(tokens, cuts, spool, first=3)
        assert scan.complete == complete_by_nest(tokens)
        assert scan.stack == []
        assert spool.reader(3).take(scan.calls).tolist() == call_ends(tokens)
    finally:
        spool.close()


def as_batch(tokens: list[tuple[int, Any]]) -> EventBatch:
    """The tokens as events (instants as markers)."""
    kinds = {ENTER: EventKind.ENTER, LEAVE: EventKind.LEAVE, POINT: EventKind.MARKER}
    return EventBatch.from_events([(item.start if token == ENTER else item.time, kinds[token])
                                   for token, item in tokens])



def test_a_leave_without_a_call_is_a_format_error():
    spool = EndSpool()
    try:
        with pytest.raises(FormatError, match="LEAVE at 5 with no region open"):
            CallScan(spool, 0).tokens([(LEAVE, Leave(0, 5))])
    finally:
        spool.close()
