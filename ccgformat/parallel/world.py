"""The MPI world of a parallel run (mpi4py, imported here and only here): ranks, the
split of locations, and errors agreed on by every rank.

Every step that may fail on some ranks ends in `World.agree`: an allgather of each
rank's outcome, after which every rank raises when any failed (its own error, or
`ParallelError` naming the first failed rank). No rank waits for a failed one, so a
failure ends the whole run with a non-zero status and no hang, without `MPI_Abort`.
The ranks that reach that allgather first wait for the others asleep (`World.arrive`).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from typing import Any, Callable, Iterator, Mapping, MutableMapping, TypeVar

import numpy as np

from ..errors import ParallelError
from ..extras import require

__all__ = ["World", "finalize", "no_delay", "split"]

T = TypeVar("T")

#: seconds between two looks of a waiting rank at whether every rank arrived: the first
#: after FIRST_POLL, each later one twice as long after, up to ARRIVAL_POLL (a short wait
#: ends within tens of microseconds of the last rank's arrival, a long one costs a
#: thousand wake-ups a second)
FIRST_POLL = 0.00005
ARRIVAL_POLL = 0.001


class World:
    """MPI_COMM_WORLD: this rank, the number of ranks, and the collective steps."""

    def __init__(self) -> None:
        mpi = _mpi()
        no_delay(_open_descriptors())
        self.comm = mpi.COMM_WORLD
        self.rank: int = self.comm.Get_rank()
        self.size: int = self.comm.Get_size()

    def agree(self, step: Callable[[], T]) -> T:
        """Run ``step`` on every rank; when it failed on any, raise on every rank."""
        try:
            result, failure = step(), None
        except Exception as error:  # any failure, so that no rank waits for this one
            result, failure = None, error
        self.arrive()
        outcomes = self.comm.allgather(None if failure is None else _describe(failure))
        if failure is not None:
            raise failure
        for rank, outcome in enumerate(outcomes):
            if outcome is not None:
                raise ParallelError(rank, outcome)
        return result  # type: ignore[return-value]

    def arrive(self) -> None:
        """Return once every rank called this, waiting asleep (a non-blocking barrier
        looked at as `_pauses` says): in a blocking collective Open MPI's ranks
        poll without a pause, so a rank waiting for rank 0's merge took a core from it and
        from everything else on the machine."""
        _asleep_until(self.comm.Ibarrier().Test)

    def gather(self, value: Any) -> list[Any] | None:
        """Every rank's ``value`` on rank 0 (in rank order), None elsewhere."""
        return self.comm.gather(value, root=0)

    def allgather(self, value: Any) -> list[Any]:
        """Every rank's ``value`` on every rank (in rank order)."""
        return self.comm.allgather(value)

    def broadcast(self, value: T) -> T:
        """Rank 0's ``value`` on every rank."""
        return self.comm.bcast(value, root=0)

    def wait(self, request: Any) -> None:
        """Return once the MPI ``request`` completed, waiting asleep (as `arrive` says)."""
        _asleep_until(request.Test)

    def send(self, value: Any, rank: int) -> None:
        """``value`` to ``rank`` (which takes it with `receive`), waiting asleep until it
        went (a large message waits for the receiver: a blocking send polled, as
        `arrive` says)."""
        _asleep_until(self.comm.isend(value, dest=rank).Test)

    def receive(self, rank: int) -> Any:
        """The value ``rank`` sends this rank (`send`), waiting asleep until it comes."""
        _asleep_until(lambda: self.comm.iprobe(source=rank))
        return self.comm.recv(source=rank)


def _asleep_until(ready: Callable[[], bool]) -> None:
    """Return once ``ready()`` (an MPI request's test, a probe), looking as `_pauses` says."""
    pauses = _pauses()
    while not ready():
        time.sleep(next(pauses))


def _pauses() -> Iterator[float]:
    """The pauses of a waiting rank between two looks: FIRST_POLL seconds, then each twice
    the one before, up to ARRIVAL_POLL."""
    pause = FIRST_POLL
    while True:
        yield pause
        pause = min(2 * pause, ARRIVAL_POLL)


def finalize() -> None:
    """Finalize MPI when this process initialised it and has not finalized it: what
    mpi4py does from the interpreter's teardown (``Py_AtExit``), for a process that ends
    without it (`ccgformat.cli.main`)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()


def _mpi() -> Any:
    """mpi4py's MPI module (importing it initialises MPI); `MissingExtraError` without mpi4py."""
    require("mpi4py", "--mpi")
    one_node_transport(os.environ)
    return importlib.import_module("mpi4py.MPI")


def one_node_transport(environment: MutableMapping[str, str]) -> None:
    """Open MPI's point-to-point layer for ranks that all run on one node: ``ob1`` (its
    shared-memory transport between the ranks) unless the user chose one (``mpirun --mca
    pml X`` or ``OMPI_MCA_pml``). By default MPI_Init also opens the network layers (the
    PSM, PSM2 and OFI MTLs) to probe for fabrics, 0.2 s per rank here (docs/parallel.md),
    which ranks of one node do not use. Other MPI libraries ignore the variable."""
    if "OMPI_MCA_pml" not in environment and _one_node(environment):
        environment["OMPI_MCA_pml"] = "ob1"


def _one_node(environment: Mapping[str, str]) -> bool:
    """Whether Open MPI's mpirun started every rank on this node."""
    size, local = environment.get("OMPI_COMM_WORLD_SIZE"), environment.get("OMPI_COMM_WORLD_LOCAL_SIZE")
    return size is not None and size == local


def no_delay(descriptors: list[int]) -> int:
    """Set TCP_NODELAY on those of ``descriptors`` that are TCP sockets (the others are left
    alone; none is closed); returns how many. Called on every descriptor once MPI is
    initialised, which leaves the runtime's connections open - among them Open MPI's PMIx
    client connection to mpirun: MPI_Finalize sends its fence there in several small
    writes, and without TCP_NODELAY Nagle's algorithm held the later ones until mpirun's
    delayed ACK, 40 ms. MPI_Finalize took 0.044 s per run, 0.003 s so (docs/parallel.md)."""
    done = 0
    for descriptor in descriptors:
        try:
            connection = socket.socket(fileno=descriptor)
        except OSError:  # not a socket
            continue
        try:
            if connection.family in (socket.AF_INET, socket.AF_INET6) and connection.type == socket.SOCK_STREAM:
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                done += 1
        except OSError:
            pass
        finally:
            connection.detach()  # the descriptor stays MPI's
    return done


def _open_descriptors() -> list[int]:
    """This process's open file descriptors (Linux's /proc; none known elsewhere)."""
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


def split(weights: np.ndarray, parts: int, first: float = 1.0) -> list[tuple[int, int]]:
    """``parts`` consecutive ranges of the items whose costs are ``weights``, each holding
    about an equal share of the total - the first ``first`` times the others' (by the
    prefix sum; a range may be empty)."""
    count = len(weights)
    if count == 0:
        return [(0, 0)] * parts
    ends = np.cumsum(np.maximum(np.asarray(weights, np.float64), 0) + 1e-9)
    shares = np.cumsum([first] + [1.0] * (parts - 1))
    cuts = np.searchsorted(ends, ends[-1] * shares[:-1] / shares[-1], side="left") + 1
    bounds = [0, *np.minimum(cuts, count).tolist(), count]
    return [(bounds[k], bounds[k + 1]) for k in range(parts)]
