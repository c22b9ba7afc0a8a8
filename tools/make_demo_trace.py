#!/usr/bin/env python3
"""Write the demo trace that ships with the package (``ccgformat/data/demo/``, read by
``ccg demo``): a small OTF2 archive of a made-up but plausible MPI program, written by the
project's own OTF2 exporter (`ccgformat.formats.otf2.write_events`). Deterministic: the
same files' content on every run (tests/test_demo.py regenerates it and compares).

The program is a stencil solver on 4 MPI ranks over 2 nodes. ``main`` calls ``MPI_Init``,
``read_input`` (rank 0, then ``MPI_Bcast`` from rank 0) and ``solve``, whose
`ITERATIONS` ``timestep`` calls each run ``compute`` (``stencil``, then ``boundary``, then
a sample of the counter ``PAPI_FP_OPS``), a halo exchange with both ring neighbours
(``MPI_Send`` to the right and ``MPI_Recv`` from the left, then the other way round),
every 10th step an ``MPI_Allreduce`` of the residual and every 50th ``write_checkpoint``;
then ``MPI_Finalize``. Work times vary by +-15% with rare spikes (system noise, drawn
from `random.Random` seeded with `SEED`, whose ``random()`` stream Python keeps stable),
and rank 3's stencil is 20% slower, so the other ranks wait in ``MPI_Recv`` and
``MPI_Allreduce``: a send is eager (it returns after a copy), a receive ends no earlier
than its message arrives (latency plus size over bandwidth), and a collective ends on
every rank after the last one has entered it.

Run: ``python tools/make_demo_trace.py [OUT]`` (default: the package's copy); needs the
``otf2`` extra.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Iterator, Sequence

try:
    from ccgformat.formats.otf2 import write_events
    from ccgformat.model import (Communicator, Definitions, EventBatch, EventKind as K, Location, Metric, Region,
                                 SystemTreeNode)
except ImportError:  # run as `python tools/make_demo_trace.py` from a source checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ccgformat.formats.otf2 import write_events
    from ccgformat.model import (Communicator, Definitions, EventBatch, EventKind as K, Location, Metric, Region,
                                 SystemTreeNode)

__all__ = ["DEFAULT_OUT", "SEED", "demo_trace", "main"]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "ccgformat" / "data" / "demo"
SEED = 2009
RANKS = 4
RANKS_PER_NODE = 2
ITERATIONS = 150
ALLREDUCE_EVERY, CHECKPOINT_EVERY = 10, 50
TIMER_RESOLUTION = 1_000_000_000   #: ticks per second (nanoseconds)
START = 1_000_000                  #: the first timestamp
SLOW_RANK, SLOW_FACTOR = 3, 1.2    #: the imbalance: this rank's stencil takes longer
HALO_BYTES = 4096                  #: one halo row: 512 doubles
LATENCY, BYTES_PER_TICK = 3_000, 5.0
#: OTF2 collective operations (OTF2_CollectiveOp): the COLL_END ``ref``
BCAST, ALLREDUCE = 1, 11
FLOPS_PER_STEP = 9_000_000

#: name, group and mean work in ticks of each region (the time it takes of its own)
REGIONS = (("main", "", 20_000), ("MPI_Init", "MPI", 900_000), ("read_input", "IO", 6_000_000),
           ("MPI_Bcast", "MPI", 40_000), ("solve", "", 2_000), ("timestep", "", 1_500),
           ("compute", "COMP", 3_000), ("stencil", "COMP", 180_000), ("boundary", "COMP", 22_000),
           ("MPI_Send", "MPI", 4_000), ("MPI_Recv", "MPI", 2_500), ("MPI_Allreduce", "MPI", 12_000),
           ("write_checkpoint", "IO", 1_500_000), ("MPI_Finalize", "MPI", 300_000))
REGION = {name: index for index, (name, _, _) in enumerate(REGIONS)}
WORK = {name: work for name, _, work in REGIONS}


class _Rank:
    """One rank's clock and events, in time order."""

    def __init__(self, rank: int, noise: random.Random):
        self.rank, self.noise, self.clock = rank, noise, START
        self.events: list[tuple[int, ...]] = []
        self.flops = 0

    def work(self, name: str, factor: float = 1.0) -> int:
        """A jittered duration of ``name``'s own work: +-15%, and 1 in 100 times a spike
        of system noise (up to 2x more)."""
        jitter = 0.85 + 0.3 * self.noise.random()
        if self.noise.random() < 0.01:
            jitter += 2.0 * self.noise.random()
        return max(1, int(WORK[name] * factor * jitter))

    def emit(self, kind: K, *fields: int) -> None:
        self.events.append((self.clock, int(kind), *fields))

    def enter(self, name: str) -> None:
        self.clock += 200  # call overhead
        self.emit(K.ENTER, REGION[name])

    def leave(self, name: str) -> None:
        self.clock += 150
        self.emit(K.LEAVE, REGION[name])

    def call(self, name: str, factor: float = 1.0) -> None:
        """A call of ``name`` that only works."""
        self.enter(name)
        self.clock += self.work(name, factor)
        self.leave(name)


def _collective(ranks: list[_Rank], name: str, operation: tuple[int, int, int] | None = None) -> None:
    """``name`` on every rank: it ends after the last rank has entered. ``operation``:
    the collective's (OTF2 operation, root or -1, bytes) recorded inside it; None for a
    call that only synchronises (MPI_Init, MPI_Finalize)."""
    for r in ranks:
        r.enter(name)
        if operation:
            r.emit(K.COLL_BEGIN)
    done = max(r.clock for r in ranks) + max(r.work(name) for r in ranks)
    for r in ranks:
        r.clock = done + r.work(name) // 10
        if operation:
            kind, root, size = operation
            r.emit(K.COLL_END, kind, 0, root, 0, size, size)
        r.leave(name)


def _exchange(ranks: list[_Rank], step: int, tag: int) -> None:
    """Every rank sends a halo row ``step`` ranks on (eager) and receives one from
    ``step`` ranks back (ending no earlier than it arrives)."""
    arrival = {}
    for r in ranks:
        peer = (r.rank + step) % len(ranks)
        r.enter("MPI_Send")
        r.clock += r.work("MPI_Send")
        r.emit(K.SEND, peer, 0, tag, 0, HALO_BYTES)
        arrival[peer] = r.clock + LATENCY + int(HALO_BYTES / BYTES_PER_TICK)
        r.leave("MPI_Send")
    for r in ranks:
        peer = (r.rank - step) % len(ranks)
        r.enter("MPI_Recv")
        r.clock = max(r.clock + r.work("MPI_Recv"), arrival[r.rank])
        r.emit(K.RECV, peer, 0, tag, 0, HALO_BYTES)
        r.leave("MPI_Recv")


def _timestep(ranks: list[_Rank], step: int) -> None:
    for r in ranks:
        r.enter("timestep")
        r.enter("compute")
        r.call("stencil", SLOW_FACTOR if r.rank == SLOW_RANK else 1.0)
        r.call("boundary")
        r.clock += r.work("compute")
        r.flops += int(FLOPS_PER_STEP * (0.99 + 0.02 * r.noise.random()))
        r.emit(K.METRIC, 0, 0, 0, 0, 0, 0, r.flops)
        r.leave("compute")
    _exchange(ranks, 1, 1)
    _exchange(ranks, -1, 2)
    if step % ALLREDUCE_EVERY == 0:
        _collective(ranks, "MPI_Allreduce", (ALLREDUCE, -1, 8))
    if step % CHECKPOINT_EVERY == 0:
        for r in ranks:
            r.call("write_checkpoint")
    for r in ranks:
        r.clock += r.work("timestep")
        r.leave("timestep")


def _run() -> list[_Rank]:
    """The whole program, every rank's events in time order."""
    noise = random.Random(SEED)
    ranks = [_Rank(rank, noise) for rank in range(RANKS)]
    for r in ranks:
        r.clock += r.work("main")  # the ranks start a little apart
        r.enter("main")
    _collective(ranks, "MPI_Init")
    ranks[0].call("read_input")
    _collective(ranks, "MPI_Bcast", (BCAST, 0, 65_536))
    for r in ranks:
        r.enter("solve")
    for step in range(1, ITERATIONS + 1):
        _timestep(ranks, step)
    for r in ranks:
        r.leave("solve")
    _collective(ranks, "MPI_Finalize")
    for r in ranks:
        r.clock += r.work("main")
        r.leave("main")
    return ranks


def _definitions() -> Definitions:
    nodes = RANKS // RANKS_PER_NODE
    return Definitions(
        regions=[Region(name, paradigm="mpi" if group == "MPI" else "user", group=group)
                 for name, group, _ in REGIONS],
        system_tree=[SystemTreeNode("demo cluster", "machine"),
                     *(SystemTreeNode(f"node{n + 1:02d}", "node", 0) for n in range(nodes))],
        locations=[Location(f"MPI rank {r}", "process", 1 + r // RANKS_PER_NODE) for r in range(RANKS)],
        communicators=[Communicator("MPI_COMM_WORLD", tuple(range(RANKS)))],
        metrics=[Metric("PAPI_FP_OPS", unit="flop", mode="accumulated", value_type="int64")],
        timer_resolution=TIMER_RESOLUTION)


def demo_trace() -> tuple[Definitions, list[EventBatch]]:
    """The demo program's definitions and each rank's events."""
    return _definitions(), [EventBatch.from_events(r.events) for r in _run()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make_demo_trace.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT),
                        help="the OTF2 folder to write, replaced atomically (default: %(default)s)")
    args = parser.parse_args(argv)
    definitions, events = demo_trace()

    def batches(location: int) -> Iterator[EventBatch]:
        yield events[location]

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_events(definitions, batches, args.out)
    size = sum(path.stat().st_size for path in Path(args.out).rglob("*") if path.is_file())
    print(f"make_demo_trace.py: wrote {args.out}: {len(events)} ranks, {sum(map(len, events)):,} events, "
          f"{size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
