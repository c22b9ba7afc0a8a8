"""Tests of the synthetic trace generator tools/synth.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402
from ccgformat.errors import TraceError  # noqa: E402
from ccgformat.model import Definitions, EventBatch, EventKind  # noqa: E402

from .corpus import require_module  # noqa: E402
from .traces import validate  # noqa: E402

SYNTH = ROOT / "tools" / "synth.py"


def whole(events, location: int) -> EventBatch:
    return EventBatch.concat(list(events(location)))


def start(location: int) -> int:
    return 1_000_000 * location + 1000


def region_id(definitions, name: str) -> int:
    return [r.name for r in definitions.regions].index(name)


def durations(batch: EventBatch, region: int) -> np.ndarray:
    """Durations of the (non-recursive) calls of ``region``."""
    enters = batch.time[(batch.kind == EventKind.ENTER) & (batch.ref == region)]
    leaves = batch.time[(batch.kind == EventKind.LEAVE) & (batch.ref == region)]
    assert len(enters) == len(leaves)
    return leaves - enters


# --------------------------------------------------------------------------- determinism

@pytest.mark.parametrize("pattern", synth.PATTERNS)
def test_same_arguments_same_events(pattern):
    args = dict(jitter=0.4, seed=7, pattern=pattern, batch_size=500)
    d1, ev1 = synth.synthesize(3, 3000, **args)
    d2, ev2 = synth.synthesize(3, 3000, **args)
    assert d1 == d2
    for loc in (2, 0, 1):  # order of generation must not matter
        b1, b2 = list(ev1(loc)), list(ev2(loc))
        assert len(b1) == len(b2) == 6
        assert all(x.equals(y) for x, y in zip(b1, b2))
    # a second iterator of the same location from the same function repeats the first
    assert whole(ev1, 1).equals(EventBatch.concat(list(ev2(1))))
    first, second = ev1(0), ev1(0)
    assert EventBatch.concat(list(first)).equals(EventBatch.concat(list(second)))


@pytest.mark.parametrize("pattern", ["spmd", "random"])
def test_seed_and_location_change_the_random_parts(pattern):
    _, ev_a = synth.synthesize(2, 2000, jitter=0.3, seed=1, pattern=pattern)
    _, ev_b = synth.synthesize(2, 2000, jitter=0.3, seed=2, pattern=pattern)
    a0, b0, a1 = whole(ev_a, 0), whole(ev_b, 0), whole(ev_a, 1)
    assert not np.array_equal(a0.time, b0.time)
    assert not np.array_equal(a0.time - a0.time[0], a1.time - a1.time[0])
    if pattern == "random":
        assert not np.array_equal(a0.ref, b0.ref)
        assert not np.array_equal(a0.ref, a1.ref)


# --------------------------------------------------------------------------- counts

def test_iteration_lengths():
    assert [synth.iteration_length("spmd", d) for d in (1, 2, 3, 6)] == [15, 19, 23, 35]
    assert synth.iteration_length("single") == synth.iteration_length("random") == 2


@pytest.mark.parametrize("pattern,depth", [("spmd", 1), ("spmd", 3), ("spmd", 5), ("single", 3), ("random", 3)])
@pytest.mark.parametrize("iterations", [0, 1, 2, 17, 3001])
def test_exact_count_when_iterations_fit(pattern, depth, iterations):
    m = 2 + iterations * synth.iteration_length(pattern, depth)
    defs, ev = synth.synthesize(2, m, pattern=pattern, depth=depth, batch_size=1000)
    for loc in range(2):
        assert sum(len(b) for b in ev(loc)) == m
    batch = whole(ev, 1)
    main = region_id(defs, "main")
    assert (batch.kind[0], batch.ref[0]) == (EventKind.ENTER, main)
    assert (batch.kind[-1], batch.ref[-1]) == (EventKind.LEAVE, main)
    assert np.count_nonzero((batch.kind == EventKind.ENTER) & (batch.ref == main)) == 1


@pytest.mark.parametrize("m", [125_000, 100_000, 1_000_001, 2, 3, 1001])
def test_large_even_counts_are_exact_for_single_and_random(m):
    expected = m if m % 2 == 0 else m - 1
    for pattern in ("single", "random"):
        assert synth.event_count(m, pattern) == expected
    _, ev = synth.synthesize(1, 125_000, pattern="random")
    assert sum(len(b) for b in ev(0)) == 125_000


@pytest.mark.parametrize("pattern,depth", [("spmd", 3), ("spmd", 2), ("single", 1), ("random", 1)])
@pytest.mark.parametrize("m", [0, 1, 2, 3, 24, 25, 26, 47, 48, 49, 1000, 125_000])
def test_count_rule(pattern, depth, m):
    t = synth.iteration_length(pattern, depth)
    _, ev = synth.synthesize(1, m, pattern=pattern, depth=depth)
    n = sum(len(b) for b in ev(0))
    assert n == synth.event_count(m, pattern, depth)
    if m < 2:
        assert n == 0
    else:
        assert n <= m and m - n < t and (n - 2) % t == 0


# --------------------------------------------------------------------------- validity

@settings(max_examples=60, deadline=None)
@given(locations=st.integers(1, 5), m=st.integers(0, 400),
       jitter=st.one_of(st.just(0.0), st.floats(0.0, 4.0)), seed=st.integers(0, 2**63 - 1),
       pattern=st.sampled_from(synth.PATTERNS), depth=st.integers(1, 6), batch_size=st.integers(1, 70))
def test_every_location_is_valid(locations, m, jitter, seed, pattern, depth, batch_size):
    defs, ev = synth.synthesize(locations, m, jitter=jitter, seed=seed, pattern=pattern, depth=depth,
                                batch_size=batch_size)
    expected = synth.event_count(m, pattern, depth)
    for loc in range(locations):
        batches = list(ev(loc))
        assert all(0 < len(b) <= batch_size for b in batches)
        assert sum(len(b) for b in batches) == expected
        assert validate(loc, batches, defs) == []
        if batches:
            assert batches[0].time[0] == start(loc)
            batch = EventBatch.concat(batches)
            sends = batch.ref[batch.kind == EventKind.SEND]
            recvs = batch.ref[batch.kind == EventKind.RECV]
            assert np.all(sends == (loc + 1) % locations)
            assert np.all(recvs == (loc - 1) % locations)
            samples = batch.value[batch.kind == EventKind.METRIC]
            assert np.all(np.diff(samples) > 0) and np.all(samples > 0)


def test_validator_would_catch_a_broken_stream():
    """Guard against a vacuous validity test: validate really rejects a damaged stream."""
    defs, ev = synth.synthesize(2, 200, jitter=0.5, seed=3)
    batch = whole(ev, 0)
    with pytest.raises(TraceError):
        validate(0, [batch[:-1]], defs)
    swapped = EventBatch.concat([batch[:5], batch[6:7], batch[5:6], batch[7:]])
    with pytest.raises(TraceError):
        validate(0, [swapped], defs)


def test_spmd_structure():
    defs, ev = synth.synthesize(4, 2 + 5 * 23, depth=3)
    batch = whole(ev, 2)
    names = [r.name for r in defs.regions]
    per_iteration = {name: np.count_nonzero((batch.kind == EventKind.ENTER) & (batch.ref == i)) / 5
                     for i, name in enumerate(names)}
    assert per_iteration == {"main": 0.2, "iteration": 1, "compute": 1, "axpy": 2, "MPI_Send": 1,
                             "MPI_Recv": 1, "MPI_Allreduce": 1, "kernel_1": 1, "kernel_2": 1}
    for kind in (EventKind.SEND, EventKind.RECV, EventKind.COLL_BEGIN, EventKind.COLL_END, EventKind.METRIC):
        assert np.count_nonzero(batch.kind == kind) == 5
    coll = batch.kind == EventKind.COLL_END
    assert np.all(batch.ref[coll] == 1) and np.all(batch.size[coll] == 8) and np.all(batch.recv_size[coll] == 8)
    assert np.all(batch.size[batch.kind == EventKind.SEND] == 1024)
    # maximum nesting: main, iteration, compute, kernel_1, kernel_2
    depth = np.cumsum(np.where(batch.kind == EventKind.ENTER, 1, np.where(batch.kind == EventKind.LEAVE, -1, 0)))
    assert depth.max() == 5 and depth[-1] == 0
    # a single location sends to and receives from itself
    _, ev1 = synth.synthesize(1, 100)
    one = whole(ev1, 0)
    assert np.all(one.ref[np.isin(one.kind, (EventKind.SEND, EventKind.RECV))] == 0)


def test_random_pattern_is_uniform_over_ten_functions():
    defs, ev = synth.synthesize(1, 2 + 2 * 20_000, pattern="random", seed=5)
    batch = whole(ev, 0)
    assert [r.name for r in defs.regions] == ["main"] + [f"f{k}" for k in range(10)]
    calls = batch.ref[batch.kind == EventKind.ENTER][1:]
    counts = np.bincount(calls, minlength=11)
    assert counts[0] == 0 and np.all((counts[1:] > 1700) & (counts[1:] < 2300))
    # regular timing: every call lasts the same whatever function it is
    assert len(np.unique(np.concatenate([durations(batch, r) for r in range(1, 11)]))) == 1


def test_definitions():
    defs, _ = synth.synthesize(3, 100, jitter=0.25, seed=9, depth=4)
    groups = {r.name: (r.group, r.paradigm) for r in defs.regions}
    assert groups["MPI_Send"] == groups["MPI_Recv"] == groups["MPI_Allreduce"] == ("MPI", "mpi")
    assert groups["compute"] == groups["kernel_3"] == groups["axpy"] == ("COMP", "user")
    assert groups["main"] == groups["iteration"] == ("", "user")
    assert [loc.name for loc in defs.locations] == ["rank 0", "rank 1", "rank 2"]
    for loc in defs.locations:
        assert loc.parent is not None and defs.system_tree[loc.parent].kind == "node"
    assert sum(node.parent is None for node in defs.system_tree) == 1
    assert [(c.name, c.members) for c in defs.communicators] == [("MPI_COMM_WORLD", (0, 1, 2))]
    assert [(m.name, m.value_type) for m in defs.metrics] == [("PAPI_FP_OPS", "int64")]
    assert defs.timer_resolution == 1_000_000_000
    assert defs.provenance["source_format"] == "synthetic"
    assert defs.provenance["generator"] == "tools/synth.py"
    assert (defs.provenance["jitter"], defs.provenance["seed"], defs.provenance["depth"]) == ("0.25", "9", "4")


@pytest.mark.parametrize("kwargs", [dict(locations=0), dict(events_per_location=-1), dict(jitter=-0.1),
                                    dict(jitter=float("nan")), dict(seed=-1), dict(pattern="chain"),
                                    dict(depth=0), dict(batch_size=0)])
def test_bad_arguments(kwargs):
    args = dict(locations=2, events_per_location=10) | kwargs
    with pytest.raises(ValueError):
        synth.synthesize(args.pop("locations"), args.pop("events_per_location"), **args)


def test_location_out_of_range():
    _, ev = synth.synthesize(2, 10)
    with pytest.raises(ValueError):
        ev(2)


# --------------------------------------------------------------------------- timing

@pytest.mark.parametrize("pattern,depth", [("spmd", 1), ("spmd", 3), ("single", 3), ("random", 3)])
def test_zero_jitter_is_perfectly_regular(pattern, depth):
    t = synth.iteration_length(pattern, depth)
    iterations = 400
    defs, ev = synth.synthesize(4, 2 + iterations * t, pattern=pattern, depth=depth, batch_size=777)
    first = whole(ev, 0)
    gaps = np.diff(first.time[1:-1]).tolist() + [0]
    rows = np.array(gaps).reshape(iterations, t)[:-1]  # the gap after the last iteration is main's
    assert np.all(rows == rows[0]) and rows[0].sum() > 0
    for region in range(1, len(defs.regions)):
        d = durations(first, region)
        if len(d):
            assert np.all(d == d[0]) and d[0] > 0
    for loc in range(1, 4):
        other = whole(ev, loc)
        assert np.array_equal(other.time - start(loc), first.time - start(0))
        assert np.array_equal(other.kind, first.kind)
    if pattern == "spmd":
        samples = first.value[first.kind == EventKind.METRIC]
        assert len(np.unique(np.diff(samples))) == 1


@pytest.mark.parametrize("pattern", synth.PATTERNS)
def test_jitter_changes_durations(pattern):
    m = 2 + 300 * synth.iteration_length(pattern)
    defs, regular = synth.synthesize(2, m, pattern=pattern, seed=4)
    _, jittered = synth.synthesize(2, m, pattern=pattern, seed=4, jitter=0.2)
    reg, jit = whole(regular, 0), whole(jittered, 0)
    assert np.array_equal(reg.kind, jit.kind)
    assert np.array_equal(reg.ref, jit.ref)  # same seed: same structure, only timing moves
    region = region_id(defs, "iteration" if pattern == "spmd" else ("compute" if pattern == "single" else "main"))
    if pattern == "random":
        d_reg = np.concatenate([durations(reg, r) for r in range(1, 11)])
        d_jit = np.concatenate([durations(jit, r) for r in range(1, 11)])
    else:
        d_reg, d_jit = durations(reg, region), durations(jit, region)
    assert len(np.unique(d_reg)) == 1
    assert len(np.unique(d_jit)) > len(d_jit) // 2
    # log-normal with sigma 0.2 around the base: the median stays near the base duration
    assert 0.8 < np.median(d_jit) / d_reg[0] < 1.25
    other = whole(jittered, 1)
    assert not np.array_equal(other.time - start(1), jit.time - start(0))
    if pattern == "spmd":
        increments = np.diff(jit.value[jit.kind == EventKind.METRIC])
        assert len(np.unique(increments)) > 1 and np.all(increments > 0)


# --------------------------------------------------------------------------- chunking

@pytest.mark.parametrize("pattern", synth.PATTERNS)
def test_batch_size_does_not_change_the_stream(pattern):
    m = 40_000  # crosses the 16384-index blocks of the random streams
    reference = None
    for batch_size in (65536, 1, 7, 23, 999, 16384, 40_000):
        if batch_size == 1 and pattern == "spmd":
            m_used = 3000
        else:
            m_used = m
        _, ev = synth.synthesize(3, m_used, jitter=0.7, seed=11, pattern=pattern, batch_size=batch_size)
        batches = list(ev(2))
        assert max(len(b) for b in batches) <= batch_size
        batch = EventBatch.concat(batches)
        if m_used == m:
            if reference is None:
                reference = batch
            assert batch.equals(reference)
        else:
            _, ev_big = synth.synthesize(3, m_used, jitter=0.7, seed=11, pattern=pattern)
            assert batch.equals(whole(ev_big, 2))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 600), batch_size=st.integers(1, 100), seed=st.integers(0, 1000),
       pattern=st.sampled_from(synth.PATTERNS), jitter=st.floats(0.0, 2.0))
def test_chunking_is_invisible(m, batch_size, seed, pattern, jitter):
    _, ev_small = synth.synthesize(2, m, jitter=jitter, seed=seed, pattern=pattern, batch_size=batch_size)
    _, ev_big = synth.synthesize(2, m, jitter=jitter, seed=seed, pattern=pattern)
    assert whole(ev_small, 1).equals(whole(ev_big, 1))


# --------------------------------------------------------------------------- many locations

def generic(locations: int, m: int, location: int, pattern: str = "spmd", depth: int = 3,
            batch_size: int = 65536) -> EventBatch:
    """A location's events as the general generator makes them (random streams and all),
    whatever shortcut `synthesize` takes for traces without randomness."""
    template = synth._build_template(pattern, depth)
    total = synth.event_count(m, pattern, depth)
    return EventBatch.concat(list(synth._location_events(template, location, locations, total, 0.0, 0,
                                                         batch_size)))


@settings(max_examples=40, deadline=None)
@given(locations=st.integers(1, 9), m=st.integers(0, 400), batch_size=st.integers(1, 500),
       pattern=st.sampled_from(["spmd", "single"]), depth=st.integers(1, 4), data=st.data())
def test_regular_locations_are_the_generic_ones(locations, m, batch_size, pattern, depth, data):
    _, events = synth.synthesize(locations, m, pattern=pattern, depth=depth, batch_size=batch_size)
    location = data.draw(st.integers(0, locations - 1))
    batches = list(events(location))
    assert all(0 < len(b) <= batch_size for b in batches)
    got = EventBatch.concat(batches)
    assert got.equals(generic(locations, m, location, pattern, depth, batch_size))
    # the shared columns cannot be changed through one location's batches
    if batches:
        with pytest.raises(ValueError):
            batches[0].kind[0] = 0
        batches[0].ref[0] = 99  # the copied ones can, without touching the next location's
        assert EventBatch.concat(list(events(location))).equals(got)


@settings(max_examples=30, deadline=None)
@example(locations=4, m=100, pattern="spmd", jitter=0.0, seed=0)
@given(locations=st.integers(1, 7), m=st.integers(0, 200), pattern=st.sampled_from(synth.PATTERNS),
       jitter=st.sampled_from([0.0, 0.3]), seed=st.integers(0, 5))
def test_table_is_every_location_in_order(locations, m, pattern, jitter, seed):
    definitions, table, offsets = synth.synthesize_table(locations, m, pattern=pattern, jitter=jitter, seed=seed)
    same, events = synth.synthesize(locations, m, pattern=pattern, jitter=jitter, seed=seed)
    assert definitions == same
    assert offsets.tolist() == [i * synth.event_count(m, pattern) for i in range(locations + 1)]
    assert table.equals(EventBatch.concat([whole(events, i) for i in range(locations)]))


def test_a_million_locations_are_generated_in_seconds():
    """10^6 x 10 events, the scale benchmark's largest shape (about 5 s on a loaded machine;
    a generator walking the locations in Python takes a minute)."""
    _, table, offsets = synth.synthesize_table(1_000_000, 10, pattern="single")
    assert len(table) == 10_000_000 and offsets[-1] == len(table)
    last = table[int(offsets[-2]):]
    assert last.time[0] == start(999_999) and last.equals(generic(1_000_000, 10, 999_999, "single"))
    ring = synth.synthesize_table(1000, 50)[1]
    sends = ring.ref[ring.kind == EventKind.SEND].reshape(1000, -1)
    receives = ring.ref[ring.kind == EventKind.RECV].reshape(1000, -1)
    assert sends[:, 0].tolist() == [(i + 1) % 1000 for i in range(1000)]
    assert receives[:, -1].tolist() == [(i - 1) % 1000 for i in range(1000)]


# --------------------------------------------------------------------------- command line

def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SYNTH), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("pattern", synth.PATTERNS)
def test_cli_round_trip(tmp_path, pattern):
    out = tmp_path / "trace.npz"
    args = ["--locations", "3", "--events-per-location", "5000", "--jitter", "0.3", "--seed", "12",
            "--pattern", pattern, "--depth", "4"]
    proc = run_cli(str(out), *args)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind
    expected_events = 3 * synth.event_count(5000, pattern, 4)
    assert f"{expected_events} events" in proc.stderr and f"{out.stat().st_size} bytes" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    definitions, batches = synth.load_npz(out)
    defs, ev = synth.synthesize(3, 5000, jitter=0.3, seed=12, pattern=pattern, depth=4)
    assert definitions == json.loads(json.dumps(defs.to_dict()))
    assert Definitions.from_dict(definitions) == defs
    assert sorted(batches) == [0, 1, 2]
    for loc in range(3):
        assert batches[loc].kind.dtype == np.uint8 and batches[loc].time.dtype == np.int64
        assert batches[loc].equals(whole(ev, loc))
    # running again replaces the file with identical content
    first = out.read_bytes()
    assert run_cli(str(out), *args).returncode == 0
    _, again = synth.load_npz(out)
    assert all(again[i].equals(batches[i]) for i in range(3))
    assert len(first) == out.stat().st_size


def test_cli_writes_exactly_out_even_without_npz_suffix(tmp_path):
    out = tmp_path / "trace.data"
    proc = run_cli(str(out), "--locations", "1", "--events-per-location", "0")
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["trace.data"]
    _, batches = synth.load_npz(out)
    assert len(batches[0]) == 0


def test_cli_help_and_usage_errors(tmp_path):
    helped = run_cli("--help")
    assert helped.returncode == 0 and "--events-per-location" in helped.stdout
    out = str(tmp_path / "x.npz")
    for bad in ([out, "--events-per-location", "10"],                      # --locations missing
                [out, "--locations", "2", "--events-per-location", "10", "--pattern", "chain"],
                [out, "--locations", "0", "--events-per-location", "10"],
                [out, "--locations", "2", "--events-per-location", "10", "--jitter", "-1"]):
        proc = run_cli(*bad)
        assert proc.returncode == 2, (bad, proc.stderr)
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_an_archive_for_a_ccg_name(tmp_path):
    import ccgformat

    out = tmp_path / "trace.ccg"
    result = run_cli(str(out), "--locations", "2", "--events-per-location", "500", "--jitter", "0.2",
                     "--seed", "4")
    assert result.returncode == 0, result.stderr
    _, events = synth.synthesize(2, 500, jitter=0.2, seed=4)
    with ccgformat.open(out) as archive:
        assert archive.params.lossless
        for loc in range(2):
            assert whole(events, loc).equals(EventBatch.concat(list(archive.location(loc).events())))


# --------------------------------------------------------------------------- ring family (issue 17)

RING_ITERATIONS = 10_416          # 8 x 125,000 events in the issue: 2 + 12 * 10,416 per rank


def ring_rows(batch: EventBatch) -> np.ndarray:
    """The gaps before each event of every whole iteration, one row per iteration."""
    gaps = np.diff(batch.time[:-1])
    return gaps.reshape(-1, 12)


def test_ring_shape_is_the_issue_trace():
    assert synth.event_count(125_000, "ring") == 2 + 12 * RING_ITERATIONS
    defs, ev = synth.synthesize(8, 125_000, pattern="ring", jitter=1.0, seed=2)
    names = [r.name for r in defs.regions]
    batch = whole(ev, 5)
    assert len(batch) == 2 + 12 * RING_ITERATIONS and validate(5, [batch], defs) == []
    calls = [names[r] for r in batch.ref[batch.kind == EventKind.ENTER][1:]]
    kernels = calls[2::5]
    assert calls[0::5] == ["solve"] * RING_ITERATIONS and calls[1::5] == ["compute"] * RING_ITERATIONS
    assert calls[3::5] == ["MPI_Send"] * RING_ITERATIONS and calls[4::5] == ["MPI_Recv"] * RING_ITERATIONS
    assert [i for i, k in enumerate(kernels) if k == "kernel_b"] == list(range(2, RING_ITERATIONS, 3))
    # nesting: main > solve > compute > kernel; the messages sit in MPI_Send / MPI_Recv
    depth = np.cumsum(np.where(batch.kind == EventKind.ENTER, 1, np.where(batch.kind == EventKind.LEAVE, -1, 0)))
    assert depth.max() == 4 and depth[-1] == 0
    for kind, peer, region in ((EventKind.SEND, 6, "MPI_Send"), (EventKind.RECV, 4, "MPI_Recv")):
        at = np.flatnonzero(batch.kind == kind)
        assert len(at) == RING_ITERATIONS
        assert np.all(batch.ref[at] == peer) and np.all(batch.size[at] == 1024)
        assert batch.tag[at].tolist() == [i % 64 for i in range(RING_ITERATIONS)]
        assert np.all(batch.ref[at - 1] == names.index(region)) and np.all(batch.kind[at - 1] == EventKind.ENTER)
    assert defs.timer_resolution == 1_000_000_000


def test_ring_regular_variant_has_period_192():
    _, ev = synth.synthesize(3, 2 + 12 * 800, pattern="ring")
    first = whole(ev, 0)
    rows = ring_rows(first)
    assert np.array_equal(rows[:-192], rows[192:])
    tags = first.tag[first.kind == EventKind.SEND]
    kernels = first.ref[(first.kind == EventKind.ENTER)][1:][2::5]
    signature = list(zip(tags.tolist(), kernels.tolist()))
    assert min(p for p in range(1, 400) if signature[p:] == signature[:-p]) == 192
    assert np.all(np.isin(rows[:, 0], [225]))  # the idle time alone before solve
    for location in (1, 2):
        assert np.array_equal(whole(ev, location).time - start(location), first.time - start(0))


def test_ring_jitter_is_uniform_idle_plus_log_normal_work():
    _, ev = synth.synthesize(1, 125_000, pattern="ring", jitter=1.0, seed=8)
    rows = ring_rows(whole(ev, 0))
    idle = rows[:, [0, 1, 4, 5, 6, 8, 9, 11]].ravel()     # gaps with no work of their own
    assert idle.min() == 50 and idle.max() == 400
    counts = np.bincount(idle - 50, minlength=351)
    assert counts.min() > 0.6 * counts.mean() and abs(idle.mean() - 225) < 2
    kernel = rows[:, 3] - np.where(np.arange(len(rows)) % 3 == 2, 8000, 5000)
    assert kernel.min() >= 50 and kernel.max() <= 400   # kernels are not jittered
    for column, base, sigma in ((2, 20_000, 0.25), (7, 1_500, 0.5), (10, 4_000, 0.8)):
        work = np.log(np.maximum(rows[:, column] - 225, 1))
        spread = (np.percentile(work, 75) - np.percentile(work, 25)) / 1.349
        assert abs(spread - sigma) < 0.1 * sigma + 0.02, (column, spread)
        assert abs(np.median(work) - np.log(base)) < 0.05


def test_ring_otf2_round_trip(tmp_path):
    require_module("otf2", "the otf2 package is not installed")
    from ccgformat.formats import otf2

    out = tmp_path / "ring.otf2"
    proc = run_cli(str(out), "--otf2", "--locations", "3", "--events-per-location", "2000",
                   "--pattern", "ring", "--jitter", "1", "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    definitions, streams = otf2.read(out)
    _, ev = synth.synthesize(3, 2000, pattern="ring", jitter=1.0, seed=5)
    assert [r.name for r in definitions.regions] == synth.region_names("ring")
    read = {loc: EventBatch.concat(list(batches)) for loc, batches in streams}
    assert sorted(read) == [0, 1, 2]
    for loc in range(3):
        assert read[loc].equals(whole(ev, loc))
