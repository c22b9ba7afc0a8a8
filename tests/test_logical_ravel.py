"""Ravel's scheme on small hand-made exchanges, each step derived in the comments from
paper 003 section 3.1 and the rules of docs/logical.md: phases (message groups merged
where they follow each other both ways), strides of the sends, receives in front of the
stride that follows them, sends of a stride on one step, phases one after another,
communication events on odd steps with the aggregate event below; lateness (section
3.2). Clusters: test_logical_clusters.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.errors import ParameterError
from ccgformat.model import Event, EventKind as K
from ccgformat.query import logical_ravel
from ccgformat.query.logical_query import logical

from .logical_support import build, calls, plans


def steps_by_location(result) -> dict[int, list[int]]:
    return {location: result.step[result.rows_of(location)].tolist() for location in range(len(result.names))}


def test_an_exchange_is_one_phase_with_its_sends_on_one_step():
    """Four ranks send right, then receive from the left. Each message is a group; on rank
    i the group of its send comes before that of its receive (sent by rank i - 1), so the
    groups form one cycle: one phase. No stride event follows a send in the phase: every
    send has stride 0 and local step 0; each receive comes after its location's send and
    its own send, both stride 0 (a tie keeps the location's own): 1 + max(0, 0) = 1.
    Steps 2 * local + 1: sends 1, receives 3. Lamport gives 0 and 1."""
    trace = {rank: calls([(K.SEND, (rank + 1) % 4, 0), (K.RECV, (rank - 1) % 4, 0)]) for rank in range(4)}
    result = logical(build(trace), "ravel")
    assert steps_by_location(result) == {rank: [1, 3] for rank in range(4)}
    assert result.phase.tolist() == [0] * 8
    assert (result.first_step.tolist(), result.last_step.tolist()) == ([1], [3])
    assert steps_by_location(logical(build(trace), "lamport")) == {rank: [0, 1] for rank in range(4)}


def test_a_pipeline_is_a_phase_per_message():
    """0 -> 1 -> 2 -> 3, each rank receiving before it sends on. The groups m01, m12, m23
    follow each other (rank 1: m01 then m12, rank 2: m12 then m23) and never back: three
    phases, each a send at local step 0 and its receive at 1 (span 1). Offsets: m01 0;
    m12 0 + 1 + 1 = 2; m23 4. Steps 2 (offset + local) + 1: m01 1, 3; m12 5, 7; m23 9, 11."""
    trace = {0: calls([(K.SEND, 1, 0)]), 1: calls([(K.RECV, 0, 0), (K.SEND, 2, 0)]),
             2: calls([(K.RECV, 1, 0), (K.SEND, 3, 0)]), 3: calls([(K.RECV, 2, 0)])}
    result = logical(build(trace))
    assert steps_by_location(result) == {0: [1], 1: [3, 5], 2: [7, 9], 3: [11]}
    assert steps_by_location(result) == {location: [2 * s + 1 for s in steps] for location, steps in
                                         steps_by_location(logical(build(trace), "lamport")).items()}
    assert result.phase.tolist() == [0, 0, 1, 1, 2, 2]
    assert (result.first_step.tolist(), result.last_step.tolist()) == ([1, 5, 9], [3, 7, 11])


def test_sends_of_one_exchange_are_aligned():
    """rank 0: SEND a to 1, RECV e from 1. rank 1: RECV a, SEND b to 2, SEND e to 0,
    RECV c from 2. rank 2: SEND c to 1, RECV b.
    Groups a, b, c, e. Along rank 1: a -> b -> e -> c; rank 2: c -> b; rank 0: a -> e. b,
    e, c form a cycle (b -> e -> c -> b): phase P1; a, before all of them, is P0.
    P0: send a local 0, its receive 1; span 1. P1 starts at offset 2.
    P1 strides: send b's next stride event on rank 1 is send e (b -> e); b's receive is
    rank 2's last event, e's and c's receives are followed by no stride event: b 0, c 0,
    e 1. Stride 0 (no receive waits before b or c): b, c at local 0. Stride 1: e at
    1 + 0 = 1. Then the receives: rank 0's e: 1 + its send e (1) = 2; rank 1's c: after
    e (1), its send c has stride 0 < e's 1, so 1 + max(1, 1) = 2; rank 2's b: after c
    (0), send b stride 0 ties with c: 1 + max(0, 0) = 1.
    Steps 2 (2 + local) + 1: b 5, c 5, e 7, rank 0's e 9, rank 1's c 9, rank 2's b 7.
    Lamport puts c at 0 and b at 2: Ravel aligns the two sends on one step."""
    trace = {0: calls([(K.SEND, 1, 0), (K.RECV, 1, 1)]),
             1: calls([(K.RECV, 0, 0), (K.SEND, 2, 2), (K.SEND, 0, 1), (K.RECV, 2, 3)]),
             2: calls([(K.SEND, 1, 3), (K.RECV, 1, 2)])}
    result = logical(build(trace))
    assert steps_by_location(result) == {0: [1, 9], 1: [3, 5, 7, 9], 2: [5, 7]}
    assert result.phase.tolist() == [0, 1, 0, 1, 1, 1, 1, 1]
    lamport = steps_by_location(logical(build(trace), "lamport"))
    assert lamport == {0: [0, 4], 1: [1, 2, 3, 4], 2: [0, 3]}


def test_a_send_after_a_receive_takes_a_later_stride():
    """rank 0: SEND x to 2, SEND a to 1. rank 1: RECV a, SEND b to 2. rank 2: RECV b, RECV x.
    Groups: rank 0 x -> a, rank 1 a -> b, rank 2 b -> x: one cycle, one phase.
    Strides: x -> a (rank 0's next stride event); a's receive is followed on rank 1 by
    send b: a -> b. x 0, a 1, b 2. Stride 0: x at 0. Stride 1: a at 1. Stride 2: rank 1's
    receive a waits in front of b: 1 + a (1) = 2; then b at 1 + 2 = 3. Then rank 2: b's
    receive 1 + 3 = 4, x's receive 1 + max(4, x's 0) = 5. Steps 2 local + 1: 1, 3; 5, 7;
    9, 11 - the relay is a chain, as under Lamport (0 .. 5)."""
    trace = {0: calls([(K.SEND, 2, 0), (K.SEND, 1, 1)]), 1: calls([(K.RECV, 0, 1), (K.SEND, 2, 2)]),
             2: calls([(K.RECV, 1, 2), (K.RECV, 0, 0)])}
    result = logical(build(trace))
    assert steps_by_location(result) == {0: [1, 3], 1: [5, 7], 2: [9, 11]}
    assert result.phase.tolist() == [0] * 6
    assert steps_by_location(logical(build(trace), "lamport")) == {0: [0, 1], 1: [2, 3], 2: [4, 5]}


def test_a_collective_takes_one_step_for_all_its_members():
    """Rank 0 sends to rank 1; then all three ranks reduce. Groups: the message m and the
    collective C (all members); m comes before C on ranks 0 and 1: phases m (span 1) and
    C. C's members are one stride event, stride 0, local step 0, at offset 0 + 1 + 1 = 2:
    step 5 on every rank; m's send 1, receive 3."""
    trace = {0: calls([(K.SEND, 1, 0), (K.COLL_END,)]), 1: calls([(K.RECV, 0, 0), (K.COLL_END,)]),
             2: calls([(K.COLL_END,)])}
    result = logical(build(trace))
    assert steps_by_location(result) == {0: [1, 5], 1: [3, 5], 2: [5]}
    assert result.phase.tolist() == [0, 1, 0, 1, 1]


def test_lateness_and_the_aggregate_events():
    """The exchange of two ranks (send, then receive): phase 0, sends at step 1, receives
    at 3. Rank 0's calls: MPI_Send 10-12, MPI_Recv 22-24; rank 1's start 5 ticks later and
    its MPI_Recv lasts 9: MPI_Send 15-17, MPI_Recv 27-36.
    Lateness (exit minus the least exit at the phase and step): step 1: 12 - 12 = 0 and
    17 - 12 = 5; step 3: 24 - 24 = 0, 36 - 24 = 12. The aggregate event below each (its
    exit is the call's enter): step 0: 10 - 10 = 0, 15 - 10 = 5; step 2: 22 - 22 = 0,
    27 - 22 = 5."""
    trace = {0: calls([(K.SEND, 1, 0), (K.RECV, 1, 0)]),
             1: calls([(K.SEND, 0, 0), (K.RECV, 0, 0, 0, 9)], start=5)}
    result = logical(build(trace))
    assert result.step.tolist() == [1, 3, 1, 3]
    assert result.lateness.tolist() == [0, 0, 5, 12]
    assert result.aggregate_lateness.tolist() == [0, 0, 5, 5]


def test_unknown_schemes_and_cluster_counts_are_refused():
    graph = build({0: calls([(K.SEND, 1, 0)]), 1: calls([(K.RECV, 0, 0)])})
    with pytest.raises(ParameterError, match="lamport"):
        logical(graph, "vector")
    with pytest.raises(ParameterError, match="at least 1"):
        logical(graph, "ravel", 0)


def test_a_trace_without_messages():
    """No communication event: an empty answer, no phase."""
    result = logical(build({0: [Event(0, K.ENTER, 0), Event(5, K.LEAVE, 0)]}))
    assert len(result) == 0 and result.phases == 0 and result.steps == 0


@settings(max_examples=120, deadline=None)
@given(plans())
def test_ravel_steps_keep_happened_before(example):
    """On generated exchanges (blocking, non-blocking with reordered completions,
    collectives): a receive's step exceeds its send's, a location's steps rise, a
    collective's members share a step, every event takes an odd step inside its phase's
    steps, and a location's events of one phase are consecutive, the later phase
    starting after the earlier one ends."""
    trace, _ = example
    result = logical(build(trace))
    receives = np.flatnonzero(np.isin(result.kind, (K.RECV, K.IRECV)) & (result.partner >= 0))
    assert np.all(result.step[receives] > result.step[result.partner[receives]])
    same = result.location[1:] == result.location[:-1]
    assert np.all(result.step[1:][same] > result.step[:-1][same])
    assert np.all(result.step % 2 == 1)
    assert np.all((result.first_step[result.phase] <= result.step) & (result.step <= result.last_step[result.phase]))
    moved = same & (result.phase[1:] != result.phase[:-1])
    assert np.all(result.first_step[result.phase[1:][moved]] > result.last_step[result.phase[:-1][moved]])
    for location in range(len(result.names)):
        phases = result.phase[result.rows_of(location)].tolist()
        assert len(set(phases)) == len([p for k, p in enumerate(phases) if k == 0 or phases[k - 1] != p])
    # every location takes part in every collective operation: the k-th of each share a step
    per_location = [result.step[result.rows_of(location)][result.kind[result.rows_of(location)] == K.COLL_END]
                    .tolist() for location in range(len(result.names))]
    assert all(steps == per_location[0] for steps in per_location)


@settings(max_examples=60, deadline=None)
@given(plans(), st.sampled_from([1, 2, 5]))
def test_steps_computed_a_batch_of_phases_at_a_time(example, batch):
    """The steps of batches of whole phases (a phase per batch up) are those computed at once."""
    trace, _ = example
    graph = build(trace)
    whole = logical(graph, "ravel")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logical_ravel, "STEP_EVENTS", batch)
        batched = logical(graph, "ravel")
    for name in ("step", "phase", "lateness", "aggregate_lateness", "cluster", "first_step", "last_step"):
        assert getattr(batched, name).tolist() == getattr(whole, name).tolist()
