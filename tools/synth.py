#!/usr/bin/env python3
"""Deterministic synthetic traces for tests and benchmarks.

`synthesize` returns the definitions of a synthetic MPI-like trace and a function that
streams one location's events as `EventBatch` chunks. Three patterns exist:

``spmd``
    ``main`` holds repeated ``iteration`` regions; each runs a compute call tree of
    ``depth`` levels (``compute`` -> ``kernel_1`` -> ... -> ``kernel_{depth-1}``, every
    level but the deepest also calling the leaf ``axpy``), one sample of the accumulating
    counter ``PAPI_FP_OPS``, an ``MPI_Send`` to the next rank of a ring, an ``MPI_Recv``
    from the previous rank and an ``MPI_Allreduce``.
``single``
    ``main`` calls the one function ``compute`` over and over (dissertation 5.1.3).
``random``
    ``main`` calls functions chosen uniformly at random among ``f0`` .. ``f9``, all with
    the same timing (dissertation 5.1.4).
``ring``
    The independent family of issue 17: per iteration ``solve`` -> ``compute`` ->
    ``kernel_a`` (``kernel_b`` every third iteration), then ``MPI_Send`` to the next rank
    and ``MPI_Recv`` from the previous one, message tags cycling mod 64. With
    ``jitter`` > 0 every gap is an idle time drawn uniformly from 50..400 ticks plus the
    region's work, and the work of compute, send and receive is log-normal with sigma
    ``0.25 * jitter``, ``0.5 * jitter`` and ``0.8 * jitter`` (``jitter = 1`` is the issue's
    trace); with ``jitter == 0`` the idle time is 225 ticks and the trace is periodic
    with period lcm(3, 64) = 192 iterations.

Timestamps are integer nanosecond ticks. Every gap between two consecutive events has a
base value depending on the region and position; ``jitter`` > 0 multiplies each one by
``exp(N(0, jitter * sigma))``, sigma 1 but for the ring pattern. The random numbers come from ``numpy.random.default_rng`` seeded
with ``(seed, location, stream, block)`` for fixed-size blocks of the event (or
iteration) index, so a location's events do not depend on ``batch_size`` or on which
other locations are generated.

Run as a script it writes a ``.ccg`` archive, a ``.npz`` file or, with ``--otf2``, an OTF2
archive folder (see `main`); `load_npz` reads an npz file back.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

try:
    import ccgformat
    from ccgformat.atomic import atomic_output
    from ccgformat.model import (COLUMNS, Communicator, Definitions, EventBatch, EventKind, Location,
                                 Metric, Region, SystemTreeNode)
except ImportError:  # run as `python tools/synth.py` from a source checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import ccgformat
    from ccgformat.atomic import atomic_output
    from ccgformat.model import (COLUMNS, Communicator, Definitions, EventBatch, EventKind, Location,
                                 Metric, Region, SystemTreeNode)

__all__ = ["PATTERNS", "synthesize", "synthesize_table", "iteration_length", "event_count", "region_names",
           "load_npz", "write_npz", "main"]

PATTERNS: tuple[str, ...] = ("spmd", "single", "random", "ring")

#: Ticks per second (nanoseconds).
TIMER_RESOLUTION = 1_000_000_000
#: No jittered gap exceeds this many ticks (1 s), so timestamps cannot overflow.
MAX_GAP = 1_000_000_000
#: Random numbers are drawn in blocks of this many indices (event or iteration).
_BLOCK = 16384
#: Random streams: one standard normal per event (time jitter), one per iteration
#: (metric increment jitter), one integer in [0, 10) per iteration (random pattern), one
#: idle time per event (ring pattern).
_STREAM_GAP, _STREAM_METRIC, _STREAM_CHOICE, _STREAM_IDLE = 0, 1, 2, 3

#: Metric 0: floating-point operations, sampled once per spmd iteration.
METRIC_FP_OPS = 0
#: Base increment of PAPI_FP_OPS per iteration.
FP_OPS_PER_ITERATION = 2_000_000
MESSAGE_SIZE = 1024
ALLREDUCE_OP = 1
ALLREDUCE_SIZE = 8
RANDOM_FUNCTIONS = 10

# Base gaps in ticks: (before ENTER, before the matching LEAVE) per region.
_MAIN_GAPS = (0, 2000)
_ITERATION_GAPS = (50, 20)
_COMPUTE_GAPS = (30, 40)
_AXPY_GAPS = (25, 800)
_SEND_GAPS = (15, 300)
_RECV_GAPS = (15, 40)
_ALLREDUCE_GAPS = (15, 35)
_CALL_GAPS = (100, 1000)   # the single function and f0..f9
_GAP_METRIC = 5
_GAP_SEND = 60
_GAP_RECV = 1500
_GAP_COLL_BEGIN = 25
_GAP_COLL_END = 2500
# The ring pattern: idle ticks before every event (uniform when jittered, else the mean),
# the work of each step and the log-normal sigma (times jitter) of the jittered ones.
RING_IDLE = (50, 400)
RING_TAGS = 64
RING_ALTERNATE = 3             #: kernel_b runs in every third iteration
_RING_COMPUTE = (20_000, 0.25)
_RING_SEND = (1_500, 0.5)
_RING_RECV = (4_000, 0.8)
_RING_KERNEL_A, _RING_KERNEL_B = 5_000, 8_000


def _kernel_gaps(level: int) -> tuple[int, int]:
    """Base gaps of ``kernel_{level}``: deeper kernels do more work of their own."""
    return (20 + 10 * level, 400 + 300 * level)


# --------------------------------------------------------------------------- regions

def region_names(pattern: str = "spmd", depth: int = 3) -> list[str]:
    """The region names in id order (the region id is the list index)."""
    _check_pattern(pattern, depth)
    if pattern == "spmd":
        return (["main", "iteration", "compute", "axpy", "MPI_Send", "MPI_Recv", "MPI_Allreduce"]
                + [f"kernel_{level}" for level in range(1, depth)])
    if pattern == "ring":
        return ["main", "solve", "compute", "kernel_a", "kernel_b", "MPI_Send", "MPI_Recv"]
    if pattern == "single":
        return ["main", "compute"]
    return ["main"] + [f"f{k}" for k in range(RANDOM_FUNCTIONS)]


def _region(name: str) -> Region:
    if name.startswith("MPI_"):
        return Region(name, role="function", paradigm="mpi", group="MPI")
    if name == "main":
        return Region(name, role="function", paradigm="user", group="")
    if name == "iteration":
        return Region(name, role="loop", paradigm="user", group="")
    return Region(name, role="function", paradigm="user", group="COMP")


# --------------------------------------------------------------------------- templates

@dataclasses.dataclass(frozen=True)
class _Template:
    """One iteration (positions 0..T-1) plus main's ENTER (T) and LEAVE (T+1)."""

    kind: np.ndarray
    ref: np.ndarray
    comm: np.ndarray
    tag: np.ndarray
    size: np.ndarray
    recv_size: np.ndarray
    gap: np.ndarray        #: base gap before the event, float64
    sigma: np.ndarray      #: its log-normal sigma per unit of jitter, float64
    choice: np.ndarray     #: bool: ref gets the iteration's random choice added
    send: np.ndarray       #: bool: ref is the next rank
    recv: np.ndarray       #: bool: ref is the previous rank
    alt_ref: np.ndarray    #: bool: ref + 1 in every RING_ALTERNATE-th iteration
    alt_gap: np.ndarray    #: extra base gap in those iterations, float64
    cycled: np.ndarray     #: bool: tag is the iteration mod RING_TAGS
    idle: np.ndarray       #: bool: an idle time (RING_IDLE) precedes the event

    @property
    def length(self) -> int:
        return len(self.kind) - 2


def _build_template(pattern: str, depth: int) -> _Template:
    ids = {name: i for i, name in enumerate(region_names(pattern, depth))}
    rows: list[dict[str, int | float | bool]] = []

    def event(kind: EventKind, gap: float, **cols: int | float | bool) -> None:
        rows.append({"kind": int(kind), "gap": float(gap), "sigma": 1.0, **cols})

    def call(name: str, gaps: tuple[int, int], body: Callable[[], None] | None = None) -> None:
        event(EventKind.ENTER, gaps[0], ref=ids[name])
        if body is not None:
            body()
        event(EventKind.LEAVE, gaps[1], ref=ids[name])

    def compute_level(level: int) -> None:
        name = "compute" if level == 1 else f"kernel_{level - 1}"
        gaps = _COMPUTE_GAPS if level == 1 else _kernel_gaps(level - 1)

        def body() -> None:
            compute_level(level + 1)
            call("axpy", _AXPY_GAPS)

        call(name, gaps, body if level < depth else None)

    if pattern == "spmd":
        def iteration() -> None:
            compute_level(1)
            event(EventKind.METRIC, _GAP_METRIC, ref=METRIC_FP_OPS)
            call("MPI_Send", _SEND_GAPS,
                 lambda: event(EventKind.SEND, _GAP_SEND, send=True, size=MESSAGE_SIZE))
            call("MPI_Recv", _RECV_GAPS,
                 lambda: event(EventKind.RECV, _GAP_RECV, recv=True, size=MESSAGE_SIZE))

            def allreduce() -> None:
                event(EventKind.COLL_BEGIN, _GAP_COLL_BEGIN)
                event(EventKind.COLL_END, _GAP_COLL_END, ref=ALLREDUCE_OP, comm=0, tag=0,
                      size=ALLREDUCE_SIZE, recv_size=ALLREDUCE_SIZE)

            call("MPI_Allreduce", _ALLREDUCE_GAPS, allreduce)

        call("iteration", _ITERATION_GAPS, iteration)
    elif pattern == "ring":
        def ring_call(name: str, inner: Callable[[], None]) -> None:
            event(EventKind.ENTER, 0, ref=ids[name], idle=True)
            inner()
            event(EventKind.LEAVE, 0, ref=ids[name], idle=True)

        def kernel() -> None:
            event(EventKind.ENTER, _RING_COMPUTE[0], sigma=_RING_COMPUTE[1], ref=ids["kernel_a"],
                  alt_ref=True, idle=True)
            event(EventKind.LEAVE, _RING_KERNEL_A, sigma=0.0, ref=ids["kernel_a"], alt_ref=True,
                  alt_gap=float(_RING_KERNEL_B - _RING_KERNEL_A), idle=True)

        ring_call("solve", lambda: ring_call("compute", kernel))
        ring_call("MPI_Send", lambda: event(EventKind.SEND, _RING_SEND[0], sigma=_RING_SEND[1], send=True,
                                            cycled=True, size=MESSAGE_SIZE, idle=True))
        ring_call("MPI_Recv", lambda: event(EventKind.RECV, _RING_RECV[0], sigma=_RING_RECV[1], recv=True,
                                            cycled=True, size=MESSAGE_SIZE, idle=True))
    elif pattern == "single":
        call("compute", _CALL_GAPS)
    else:
        event(EventKind.ENTER, _CALL_GAPS[0], ref=ids["f0"], choice=True)
        event(EventKind.LEAVE, _CALL_GAPS[1], ref=ids["f0"], choice=True)
    event(EventKind.ENTER, _MAIN_GAPS[0], ref=ids["main"])
    event(EventKind.LEAVE, _MAIN_GAPS[1], ref=ids["main"], idle=pattern == "ring")

    def column(name: str, dtype: type) -> np.ndarray:
        return np.array([row.get(name, 0) for row in rows], dtype=dtype)

    return _Template(kind=column("kind", np.uint8), ref=column("ref", np.int64),
                     comm=column("comm", np.int64), tag=column("tag", np.int64),
                     size=column("size", np.int64), recv_size=column("recv_size", np.int64),
                     gap=column("gap", np.float64), sigma=column("sigma", np.float64),
                     choice=column("choice", bool), send=column("send", bool), recv=column("recv", bool),
                     alt_ref=column("alt_ref", bool), alt_gap=column("alt_gap", np.float64),
                     cycled=column("cycled", bool),
                     idle=column("idle", bool))


def iteration_length(pattern: str = "spmd", depth: int = 3) -> int:
    """Events per iteration: ``4 * depth + 11`` for spmd, 12 for ring, 2 for single and random."""
    _check_pattern(pattern, depth)
    return {"spmd": 4 * depth + 11, "ring": 12}.get(pattern, 2)


def event_count(events_per_location: int, pattern: str = "spmd", depth: int = 3) -> int:
    """The number of events each location actually gets.

    ``main``'s ENTER and LEAVE take 2 events and every iteration takes
    ``T = iteration_length(pattern, depth)``; iterations are started only while a whole
    one still fits, then ``main`` is closed. So a request of M events yields
    ``2 + T * ((M - 2) // T)`` events for M >= 2 and 0 events for M < 2 (the count
    never exceeds M, and equals M exactly when ``(M - 2) % T == 0``).
    """
    if events_per_location < 0:
        raise ValueError(f"events_per_location must be >= 0, got {events_per_location}")
    if events_per_location < 2:
        return 0
    t = iteration_length(pattern, depth)
    return 2 + t * ((events_per_location - 2) // t)


def _check_pattern(pattern: str, depth: int) -> None:
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}, got {pattern!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")


# --------------------------------------------------------------------------- randomness

class _BlockStream:
    """Random values by index, drawn in fixed blocks: independent of how they are asked for."""

    def __init__(self, seed: int, location: int, stream: int,
                 draw: Callable[[np.random.Generator, int], np.ndarray]):
        self._key = (seed, location, stream)
        self._draw = draw
        self._index = -1
        self._values = np.zeros(0)

    def _block(self, b: int) -> np.ndarray:
        if b != self._index:
            rng = np.random.default_rng([*self._key, b])
            self._values = self._draw(rng, _BLOCK)
            self._index = b
        return self._values

    def take(self, lo: int, hi: int) -> np.ndarray:
        """The values for indices ``lo`` .. ``hi - 1``."""
        if hi <= lo:
            return self._block(max(lo, 0) // _BLOCK)[:0]
        parts = []
        b = lo // _BLOCK
        while b * _BLOCK < hi:
            start = b * _BLOCK
            parts.append(self._block(b)[max(lo, start) - start:min(hi, start + _BLOCK) - start])
            b += 1
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _normals(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal(n)


def _choices(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, RANDOM_FUNCTIONS, size=n, dtype=np.int64)


def _idles(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(RING_IDLE[0], RING_IDLE[1] + 1, size=n, dtype=np.int64)


def _lognormal_factor(z: np.ndarray, jitter: float) -> np.ndarray:
    # The exponent is capped so exp() cannot overflow; MAX_GAP bounds the result anyway.
    return np.exp(np.minimum(jitter * z, 50.0))


# --------------------------------------------------------------------------- generation

def _positions(t_len: int, a: int, b: int, total: int) -> tuple[np.ndarray, np.ndarray]:
    """For events a..b-1 of a location with ``total`` events: the iteration of each (-1
    for main's ENTER) and its row in the template (main's ENTER and LEAVE are the last two)."""
    idx = np.arange(a, b, dtype=np.int64)
    it = (idx - 1) // t_len
    pos = idx - 1 - it * t_len
    pos[idx == 0] = t_len
    pos[idx == total - 1] = t_len + 1
    return it, pos


def base_gaps(events_per_location: int, pattern: str = "spmd", depth: int = 3) -> np.ndarray:
    """The gap before each event of a location without jitter (every location has the
    same); with jitter each is multiplied by its own ``exp(N(0, jitter))`` draw. Not for
    the ring pattern, whose gaps also depend on the iteration and on idle draws."""
    _check_pattern(pattern, depth)
    if pattern == "ring":
        raise ValueError("base_gaps does not describe the ring pattern")
    template = _build_template(pattern, depth)
    total = event_count(events_per_location, pattern, depth)
    return template.gap[_positions(template.length, 0, total, total)[1]]


def _location_events(template: _Template, location: int, locations: int, total: int,
                     jitter: float, seed: int, batch_size: int) -> Iterator[EventBatch]:
    t_len = template.length
    ref_t = template.ref.copy()
    ref_t[template.send] = (location + 1) % locations
    ref_t[template.recv] = (location - 1) % locations
    gaps = _BlockStream(seed, location, _STREAM_GAP, _normals) if jitter > 0 else None
    metric_z = _BlockStream(seed, location, _STREAM_METRIC, _normals) if jitter > 0 else None
    choices = _BlockStream(seed, location, _STREAM_CHOICE, _choices) if template.choice.any() else None
    idles = _BlockStream(seed, location, _STREAM_IDLE, _idles) if jitter > 0 and template.idle.any() else None
    idle_mean = (RING_IDLE[0] + RING_IDLE[1]) // 2
    time = 1_000_000 * location + 1000       # main's ENTER, whose gap is 0
    counter = 0
    for a in range(0, total, batch_size):
        b = min(total, a + batch_size)
        it, pos = _positions(t_len, a, b, total)
        kind = template.kind[pos]
        ref = ref_t[pos]
        gap = template.gap[pos]
        alternating = template.alt_ref[pos] & (it % RING_ALTERNATE == RING_ALTERNATE - 1)
        if alternating.any():
            ref = ref.copy()
            ref[alternating] += 1
            gap = gap + np.where(alternating, template.alt_gap[pos], 0.0)
        if gaps is not None:
            gap = gap * _lognormal_factor(gaps.take(a, b) * template.sigma[pos], jitter)
        gap_ticks = np.minimum(np.rint(gap), MAX_GAP).astype(np.int64)
        idle = template.idle[pos]
        if idle.any():
            gap_ticks += np.where(idle, idles.take(a, b) if idles is not None else idle_mean, 0)
        times = time + np.cumsum(gap_ticks)
        time = int(times[-1])
        it_lo = max(0, int(it[0]))
        if choices is not None:
            chosen = template.choice[pos]
            if chosen.any():
                ref = ref.copy()
                ref[chosen] += choices.take(it_lo, int(it[chosen][-1]) + 1)[it[chosen] - it_lo]
        value = np.zeros(b - a, dtype=np.int64)
        sampled = kind == EventKind.METRIC
        if sampled.any():
            its = it[sampled]
            if metric_z is None:
                increments = np.full(len(its), FP_OPS_PER_ITERATION, dtype=np.int64)
            else:
                z = metric_z.take(it_lo, int(its[-1]) + 1)[its - it_lo]
                increments = np.maximum(
                    np.rint(FP_OPS_PER_ITERATION * _lognormal_factor(z, jitter)), 1).astype(np.int64)
            value[sampled] = counter + np.cumsum(increments)
            counter = int(value[sampled][-1])
        tag = np.where(template.cycled[pos], it % RING_TAGS, template.tag[pos])
        yield EventBatch(time=times, kind=kind, ref=ref, comm=template.comm[pos], tag=tag, request=np.zeros(b - a, dtype=np.int64),
                         size=template.size[pos], recv_size=template.recv_size[pos], value=value)


def _regular(template: _Template, jitter: float) -> bool:
    """Whether every location has location 0's events but for time shift and peers."""
    return jitter == 0 and not template.choice.any()


def _regular_chunks(template: _Template, locations: int, total: int, batch_size: int
                    ) -> list[tuple[EventBatch, np.ndarray, np.ndarray]]:
    """Location 0's batches of a trace without randomness (no jitter, no random choice),
    read-only, with the positions of its sends and receives: every other location has the
    same events, shifted in time and with its own ring neighbours as peers."""
    chunks = []
    for a, batch in zip(range(0, total, batch_size),
                        _location_events(template, 0, locations, total, 0.0, 0, batch_size)):
        for name in ("time", "kind") + COLUMNS:
            getattr(batch, name).setflags(write=False)
        pos = _positions(template.length, a, a + len(batch), total)[1]
        chunks.append((batch, np.flatnonzero(template.send[pos]), np.flatnonzero(template.recv[pos])))
    return chunks


def _regular_events(chunks: list[tuple[EventBatch, np.ndarray, np.ndarray]], location: int,
                    locations: int) -> Iterator[EventBatch]:
    """The batches of ``location`` made from location 0's (`_regular_chunks`): a new time
    and ref column each, the other columns shared (read-only)."""
    shift = 1_000_000 * location
    for batch, sends, recvs in chunks:
        ref = batch.ref.copy()
        ref[sends] = (location + 1) % locations
        ref[recvs] = (location - 1) % locations
        yield dataclasses.replace(batch, time=batch.time + shift, ref=ref)


def _definitions(locations: int, events_per_location: int, jitter: float, seed: int,
                 pattern: str, depth: int) -> Definitions:
    machine = SystemTreeNode("synthetic cluster", "machine", None)
    nodes = [SystemTreeNode(f"node {r}", "node", 0) for r in range(locations)]
    return Definitions(
        regions=[_region(name) for name in region_names(pattern, depth)],
        system_tree=[machine, *nodes],
        locations=[Location(f"rank {r}", "process", 1 + r) for r in range(locations)],
        communicators=[Communicator("MPI_COMM_WORLD", tuple(range(locations)))],
        metrics=[Metric("PAPI_FP_OPS", unit="flop", mode="accumulated", value_type="int64")],
        strings=[],
        timer_resolution=TIMER_RESOLUTION,
        clock_offset=0,
        provenance={
            "source_format": "synthetic",
            "generator": "tools/synth.py",
            "pattern": pattern,
            "locations": str(locations),
            "events_per_location": str(events_per_location),
            "jitter": repr(float(jitter)),
            "seed": str(seed),
            "depth": str(depth),
        },
    )


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def synthesize(locations: int, events_per_location: int, *, jitter: float = 0.0, seed: int = 0,
               pattern: str = "spmd", depth: int = 3, batch_size: int = 65536
               ) -> tuple[Definitions, Callable[[int], Iterator[EventBatch]]]:
    """Definitions and a per-location event stream of a synthetic trace.

    The returned function maps a location index to an iterator of `EventBatch` chunks of
    at most ``batch_size`` events, generated lazily. Each location gets exactly
    ``event_count(events_per_location, pattern, depth)`` events: ``main`` is entered
    first and left last, iterations are started only while a whole one still fits
    before main's LEAVE (so the count is exact when ``(M - 2)`` is a multiple of the
    iteration length, else rounded down to one; M < 2 gives no events at all).
    Location r starts at tick ``1_000_000 * r + 1000``; with ``jitter == 0`` all
    iterations and all locations have identical timing. Same arguments, same events.
    Without randomness (``jitter == 0``, pattern not ``random``) a location's batches
    are made from location 0's, sharing its read-only kind and value columns.
    """
    _check_int("locations", locations, 1)
    _check_int("events_per_location", events_per_location, 0)
    _check_int("seed", seed, 0)
    _check_int("batch_size", batch_size, 1)
    _check_pattern(pattern, depth)
    jitter = float(jitter)
    if not math.isfinite(jitter) or jitter < 0:
        raise ValueError(f"jitter must be a finite number >= 0, got {jitter!r}")
    locations, events_per_location, seed = int(locations), int(events_per_location), int(seed)
    definitions = _definitions(locations, events_per_location, jitter, seed, pattern, depth)
    template = _build_template(pattern, depth)
    assert template.length == iteration_length(pattern, depth)
    total = event_count(events_per_location, pattern, depth)
    regular = (_regular_chunks(template, locations, total, int(batch_size))
               if _regular(template, jitter) else None)

    def events(location: int) -> Iterator[EventBatch]:
        """The events of ``location`` (0 .. locations-1) as batches."""
        _check_int("location", location, 0)
        if location >= locations:
            raise ValueError(f"location {location} out of range (0..{locations - 1})")
        if regular is not None:
            return _regular_events(regular, int(location), locations)
        return _location_events(template, int(location), locations, total, jitter, seed,
                                int(batch_size))

    return definitions, events


def synthesize_table(locations: int, events_per_location: int, *, jitter: float = 0.0, seed: int = 0,
                     pattern: str = "spmd", depth: int = 3) -> tuple[Definitions, EventBatch, np.ndarray]:
    """The whole trace of `synthesize` (same arguments) as one batch, location after
    location, and the offsets of the locations in it (``offsets[i]:offsets[i + 1]`` are
    location i's events). Without randomness it is built at once with numpy, whatever the
    number of locations (10^6 locations of 10 events: about a second)."""
    definitions, events = synthesize(locations, events_per_location, jitter=jitter, seed=seed,
                                     pattern=pattern, depth=depth)
    first = EventBatch.concat(list(events(0)))
    n = len(first)
    offsets = n * np.arange(locations + 1, dtype=np.int64)
    template = _build_template(pattern, depth)
    if not _regular(template, float(jitter)):
        return definitions, EventBatch.concat([EventBatch.concat(list(events(i))) for i in range(locations)]), offsets
    pos = _positions(template.length, 0, n, n)[1]
    rank = np.arange(locations, dtype=np.int64)[:, None]
    ref = np.tile(first.ref, (locations, 1))
    ref[:, template.send[pos]] = (rank + 1) % locations
    ref[:, template.recv[pos]] = (rank - 1) % locations
    columns = {name: np.tile(getattr(first, name), locations) for name in ("kind",) + COLUMNS if name != "ref"}
    return definitions, EventBatch(time=(first.time + 1_000_000 * rank).ravel(), ref=ref.ravel(), **columns), offsets


# --------------------------------------------------------------------------- npz files

def write_npz(path: str | os.PathLike[str], definitions: Definitions,
              events: Callable[[int], Iterator[EventBatch]]) -> int:
    """Write every location's concatenated columns to ``path`` atomically; returns the event count."""
    arrays: dict[str, np.ndarray] = {"definitions_json": np.array(json.dumps(definitions.to_dict()))}
    count = 0
    for i in range(len(definitions.locations)):
        batch = EventBatch.concat(list(events(i)))
        count += len(batch)
        for name in ("time", "kind") + COLUMNS:
            arrays[f"loc{i}_{name}"] = getattr(batch, name)
    with atomic_output(path) as temporary, open(temporary, "wb") as f:
        np.savez_compressed(f, **arrays)
    return count


def load_npz(path: str | os.PathLike[str]) -> tuple[dict, dict[int, EventBatch]]:
    """Read a file written by `write_npz`: the definitions as a dict and each location's events."""
    with np.load(path, allow_pickle=False) as data:
        definitions = json.loads(str(data["definitions_json"]))
        batches = {}
        for i in range(len(definitions["locations"])):
            batches[i] = EventBatch(**{name: data[f"loc{i}_{name}"] for name in ("time", "kind") + COLUMNS})
    return definitions, batches


# --------------------------------------------------------------------------- command line

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synth.py",
        description="Write a deterministic synthetic trace: OUT.ccg as a ccgformat archive (lossless "
                    "unless --abs/--rel are given), with --otf2 OUT as an OTF2 archive folder, any other "
                    "name as a .npz file (per location i the columns loc{i}_{column}, plus "
                    "definitions_json).")
    parser.add_argument("out", metavar="OUT", help="output file or, with --otf2, folder (replaced atomically)")
    parser.add_argument("--otf2", action="store_true",
                        help="write OUT as an OTF2 archive folder (traces.otf2, traces.def, traces/)")
    parser.add_argument("--locations", type=int, required=True, help="number of locations (ranks), >= 1")
    parser.add_argument("--events-per-location", type=int, required=True,
                        help="requested events per location (rounded down to whole iterations)")
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="sigma of the log-normal factor on every gap; 0 = perfectly regular (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="random seed, >= 0 (default 0)")
    parser.add_argument("--pattern", choices=PATTERNS, default="spmd", help="trace pattern (default spmd)")
    parser.add_argument("--depth", type=int, default=3, help="compute call depth for spmd, >= 1 (default 3)")
    parser.add_argument("--abs", type=int, default=0, dest="abs_dev",
                        help="archive only: absolute timestamp bound in ticks (default 0)")
    parser.add_argument("--rel", type=float, default=0.0, dest="rel_dev",
                        help="archive only: relative duration bound (default 0)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status (argparse exits with 2 on usage errors)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        definitions, events = synthesize(args.locations, args.events_per_location, jitter=args.jitter,
                                         seed=args.seed, pattern=args.pattern, depth=args.depth)
    except ValueError as e:
        parser.error(str(e))
    if args.otf2:
        from ccgformat.formats.otf2.export import write_events

        write_events(definitions, events, args.out)
        count = event_count(args.events_per_location, args.pattern, args.depth) * args.locations
    elif str(args.out).endswith(".ccg"):
        params = ccgformat.Params(abs_dev=args.abs_dev, rel_dev=args.rel_dev)
        graph = ccgformat.write_trace(args.out, definitions,
                                      ((loc, events(loc)) for loc in range(args.locations)), params)
        count = graph.event_count
    else:
        count = write_npz(args.out, definitions, events)
    size = (sum(p.stat().st_size for p in Path(args.out).rglob("*") if p.is_file()) if args.otf2
            else os.path.getsize(args.out))
    print(f"synth.py: wrote {args.out}: {args.locations} locations, {count} events "
          f"({count // args.locations} per location), {size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
