"""What the `ccg` commands share: the usage error, argument types, location choice and
names, where an answer goes (standard output or ``--output FILE``), and a standard
output whose reader went away."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from ..archive import DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_LEVEL, GAP_CODINGS, Archive
from ..atomic import atomic_output

if TYPE_CHECKING:
    from ..parallel import World


class UsageError(Exception):
    """A command line that parses but asks for something impossible (exit status 2)."""


def bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argument type: an integer in ``low..high`` (or at least ``low``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{value} is outside {span}")
        return value
    parse.__name__ = "integer"
    return parse


def fraction(text: str) -> float:
    """An argument type: a number in 0..1e6."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1e6")
    return value


MPI_HELP = ("run on the ranks of 'mpirun -n P ccg ... --mpi' (the mpi extra: mpi4py), each answering for a share "
            "of the locations; rank 0 prints the answer")


def add_mpi(parser: argparse.ArgumentParser, help: str = MPI_HELP) -> None:
    """The ``--mpi`` option of a command that runs split across MPI ranks."""
    parser.add_argument("--mpi", action="store_true", help=help)


def add_output(parser: argparse.ArgumentParser) -> None:
    """The ``-o/--output`` option of a command that prints an answer (`answer_output`)."""
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the answer to FILE instead of standard output, atomically (complete or not at "
                             "all); under --mpi rank 0 writes it, not through mpirun's forwarding of the output")


@contextlib.contextmanager
def answer_output(args: argparse.Namespace) -> Iterator[TextIO]:
    """Where a command writes its answer: standard output, or the ``--output`` file
    (`add_output`), made beside its name and renamed over it once the answer is whole
    (`atomic.atomic_output`: a command that fails leaves no file) - or, when FILE is a
    device or a FIFO (``/dev/stdout``, ``/dev/null``), written into. Under ``--mpi`` rank
    0 alone opens it, after the ranks agreed on the answer: the file is written by the
    process, where standard output goes through mpirun's forwarding (14 MB of
    ``messages --json`` on 2 ranks: 0.45 s written, 0.52 s forwarded; docs/parallel.md).
    A file that is the archive the command reads is refused (inputs are never modified)."""
    target = getattr(args, "output", None)
    if target is None:
        yield sys.stdout
        return
    archive = getattr(args, "archive", None)
    if archive is not None and same_file(archive, target):
        raise UsageError(f"--output {target} is the archive the command reads; it is never modified")
    with atomic_output(target, streams=True) as path, open(path, "w", encoding="utf-8") as stream:
        yield stream


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether both paths exist and name the same file (an input a command would write over)."""
    return os.path.exists(first) and os.path.exists(second) and os.path.samefile(first, second)


def add_writes(parser: argparse.ArgumentParser) -> None:
    """How a command that writes an archive (``convert``, ``merge``) writes it: the zstd
    level, the node blocks' gap coding and the checkpoint interval (`writes`)."""
    parser.add_argument("--level", type=bounded_int(1, 22), default=None, metavar="Z",
                        help=f"zstd level 1..22 of every block (default: {DEFAULT_LEVEL}, the node blocks with a "
                             f"shorter search: within 2%% of plain {DEFAULT_LEVEL} everywhere, faster)")
    parser.add_argument("--gaps", choices=GAP_CODINGS, default="auto",
                        help="node block gaps: range-coded (format 1.6, smaller; a block decodes in 2-4 ms instead "
                             "of 0.5; varying metric increments and message sizes too where smaller, format 1.7), "
                             "in byte planes, or per block the smaller (default %(default)s)")
    parser.add_argument("--checkpoint-interval", type=bounded_int(1), default=DEFAULT_CHECKPOINT_INTERVAL,
                        metavar="K", help="snapshot/summary checkpoint every K events (default %(default)s)")


def writes(args: argparse.Namespace) -> dict[str, Any]:
    """The options of `add_writes` as `ccgformat.convert` and `ccgformat.merge` take them."""
    return {"level": args.level, "gaps": args.gaps, "checkpoint_interval": args.checkpoint_interval}


def mpi_world(args: argparse.Namespace) -> World | None:
    """The MPI world when the command runs with ``--mpi`` (mpi4py is imported only then)."""
    if not getattr(args, "mpi", False):
        return None
    from ..parallel import World
    return World()


def chosen_locations(archive: Archive, wanted: list[int] | None) -> list[int] | None:
    """The ``--location`` ids, sorted and checked against the archive (None: all)."""
    if not wanted:
        return None
    missing = sorted(set(wanted) - set(archive.locations))
    if missing:
        raise UsageError(f"no location {missing[0]} in {archive.path}")
    return sorted(set(wanted))


def location_name(archive: Archive, location: int) -> str:
    """The name of ``location`` in the archive's definitions, or ``location N``."""
    defined = archive.definitions.locations
    return defined[location].name if 0 <= location < len(defined) else f"location {location}"


def silence_stdout() -> None:
    """The reader of standard output went away (``| head``): send what is left, and the
    interpreter's last flush, to the null device, without a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
