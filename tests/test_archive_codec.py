"""The node block codec: streams, and the vectorised stack matching against the replay."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ccgformat.archive import codec


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50))
def test_streams_round_trip_at_the_narrowest_width(values):
    raw = codec.encode_stream(np.array(values, dtype=np.uint64))
    decoded, end = codec.decode_stream(raw, 0)
    assert end == len(raw) and decoded.tolist() == values
    width = raw[0]
    assert width == next(w for w in (1, 2, 4, 8) if max(values, default=0) < 1 << (8 * w) or w == 8)


@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=50))
def test_zigzag_round_trip(values):
    v = np.array(values, dtype=np.int64)
    assert codec.unzigzag(codec.zigzag(v)).tolist() == values


@st.composite
def stack_programs(draw, limit=codec.PENDING_LIMIT):
    """Random nodes whose children are popped from the pending stack or named explicitly,
    with the true child ids from a direct simulation of spec 5.3."""
    first = draw(st.integers(0, 50))
    pending = sorted(draw(st.sets(st.integers(0, max(first - 1, 0)), max_size=min(first, 6)))) if first else []
    stack = list(pending)
    counts, fresh, explicit, truth = [], [], [], []
    for i in range(draw(st.integers(1, 40))):
        node = first + i
        pops = draw(st.integers(0, min(len(stack), 4)))
        popped = [stack.pop() for _ in range(pops)][::-1]  # children in order, last popped first
        others = draw(st.lists(st.integers(0, node - 1), max_size=3)) if node else []
        order = draw(st.permutations([("f", c) for c in popped] + [("e", c) for c in others]))
        # fresh children must keep their order relative to each other
        fresh_children = iter(popped)
        row = [("f", next(fresh_children)) if kind == "f" else (kind, c) for kind, c in order]
        counts.append(len(row))
        fresh += [kind == "f" for kind, _ in row]
        explicit += [c for kind, c in row if kind == "e"]
        truth += [c for _, c in row]
        stack.append(node)
        if len(stack) > limit:
            del stack[0]
    return first, np.array(counts), np.array(fresh, dtype=bool), np.array(explicit, dtype=np.int64), pending, truth


@given(stack_programs())
def test_matching_equals_replay_and_the_rule(program):
    first, counts, fresh, explicit, pending, truth = program
    matched = codec.children_by_matching(first, counts, fresh, explicit, pending)
    replayed = codec.children_by_replay(first, counts, fresh, explicit, pending)
    assert matched is not None
    assert matched.tolist() == replayed.tolist() == truth


def test_a_stack_past_its_limit_is_left_to_the_replay():
    first = 10
    count = codec.PENDING_LIMIT + 5  # nothing is ever popped: the stack overflows its limit
    counts = np.zeros(count, dtype=np.int64)
    counts[-1] = 1
    fresh = np.array([True])
    assert codec.children_by_matching(first, counts, fresh, np.zeros(0, np.int64), []) is None
    # the last node pops the newest entry, which survives the trimming of the bottom
    replayed = codec.children_by_replay(first, counts, fresh, np.zeros(0, np.int64), [])
    assert replayed.tolist() == [first + count - 2]
