"""The `ccg` command line. Thin over the public API; subcommands arrive with the
archive format."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ._version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccg", description="Archive parallel-program traces as compressed Complete Call Graphs.")
    parser.add_argument("--version", action="version", version=f"ccg {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
