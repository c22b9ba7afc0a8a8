"""The `ccg` command line. Thin over the public API; one module per group of commands
(`convert`, `merge`, `info`, `cat`, `queries`, `logical`, `overview`, `topology`, `demo`),
with an ``add_<command>(parser)`` per command that adds its options. A command's module is
imported when that command is parsed (`COMMANDS`), so that ``ccg X`` loads what X uses and
``ccg --help`` none of them.

Exit status: 0 on success, 1 on a corrupt or invalid input (any `CcgError`, printed as
``ccg: <message>`` without a traceback, or an unreadable file), 2 on a usage error. A
command whose standard output is closed early (``| head``) ends quietly with status 0.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from typing import Any, Sequence

from ..errors import CcgError
from .common import UsageError, silence_stdout
from .version import VersionAction

__all__ = ["COMMANDS", "build_parser", "main"]

#: The commands in the order of ``ccg --help``: name, the module of this package whose
#: ``add_<name>`` adds its options, and its line in ``ccg --help``.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("convert", "convert", "convert a trace to a .ccg archive"),
    ("merge", "merge", "merge archives of disjoint locations or of consecutive time segments"),
    ("info", "info", "describe an archive"),
    ("verify", "info", "check an archive's integrity"),
    ("cat", "cat", "print events"),
    ("export", "convert", "write an archive's trace in another format"),
    ("profile", "queries", "per-region summary of a time window"),
    ("messages", "queries", "matched point-to-point messages and collectives"),
    ("timeline", "queries", "render a timeline of region groups (or regions)"),
    ("aggregate", "queries", "the microscopic model: time per location, slice and state"),
    ("calltree", "queries", "calls and times per call path"),
    ("logical", "logical", "communication events in logical steps, their lateness and clusters"),
    ("overview", "overview", "optimal spatiotemporal aggregation of a window (Ocelotl's overview)"),
    ("topology", "topology", "containers with their metrics' means over a window, and their links (a graph)"),
    ("demo", "demo", "convert the demo trace that ships with ccgformat and show what an archive answers"),
)


class _Command(argparse.ArgumentParser):
    """A command's parser, whose options its module adds (`add_options`) at the latest when
    the command is parsed."""

    def __init__(self, *args: Any, command: str, module: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._adds: tuple[str, str] | None = (command, module)

    def add_options(self) -> None:
        """Import the command's module and add its options (once)."""
        if self._adds is not None:
            command, module = self._adds
            self._adds = None
            getattr(importlib.import_module(f".{module}", __name__), f"add_{command}")(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        self.add_options()
        return super().parse_known_args(args, namespace)


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The ``ccg`` parser, its commands in the order of ``ccg --help``. ``lazy``: a command's
    options are added when it is parsed (as `main` does), else all of them now."""
    parser = argparse.ArgumentParser(
        prog="ccg", description="Archive parallel-program traces as compressed Complete Call Graphs.",
        epilog="Exit status: 0 success, 1 corrupt or invalid input, 2 usage error. "
               "Run 'ccg COMMAND --help' for a command's options.")
    parser.add_argument("--version", action=VersionAction,
                        help="show the package version and the format versions read and written, and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Command)
    for name, module, line in COMMANDS:
        command = commands.add_parser(name, help=line, command=name, module=module)
        if not lazy:
            command.add_options()
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ccg`` with ``argv`` (default: the process's arguments); returns the exit status.

    Without ``argv`` this is the process's command, which ends the process once the
    command is done (`_end_process`)."""
    try:
        status = _run(argv)
        sys.stdout.flush()  # here, so that a closed pipe is seen before the process ends
    except BrokenPipeError:  # the reader went away (`| head`): not an error of the command
        silence_stdout()
        status = 0
    if argv is None:
        _end_process(status)
    return status


def _end_process(status: int) -> None:
    """End this process with ``status`` without the interpreter's teardown: its exit
    handlers run (`atexit`), MPI is finalized when this process initialised it (which
    mpi4py does from that teardown), the standard streams are flushed, and the operating
    system frees the rest. The teardown took 0.01-0.04 s of every command (the modules'
    objects destroyed one by one; 0.12 s more after converting 20,000 OTF2 locations,
    the collector's last pass over what the command left alive). With another thread
    alive the interpreter ends the process (it waits for the thread), without that last
    pass (`gc.freeze`)."""
    if threading.active_count() > 1:
        gc.freeze()
        return
    atexit._run_exitfuncs()  # what `sys.exit` runs, in the same order
    if "mpi4py.MPI" in sys.modules:
        from ..parallel.world import finalize
        finalize()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader went away
            pass
    os._exit(status)


def _run(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run its command; returns the exit status."""
    parser = build_parser(lazy=True)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version (0) or a usage error (2)
        return exit.code if isinstance(exit.code, int) else 2
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("ccg: error: a command is required (convert, merge, info, verify, cat, export, profile, messages, timeline, logical, "
              "overview, topology, demo)",
              file=sys.stderr)
        return 2
    try:
        status: int = args.run(args)
        return status
    except UsageError as error:
        print(f"ccg {args.command}: error: {error}", file=sys.stderr)
        return 2
    except CcgError as error:
        print(f"ccg: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # `main` ends quietly
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"ccg: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ccg: interrupted", file=sys.stderr)
        return 130
