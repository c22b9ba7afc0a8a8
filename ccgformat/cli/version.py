"""`ccg --version`: the package version and the .ccg format versions it reads and writes."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn, Sequence

from .._version import __version__
from ..archive.layout import FORMAT_VERSIONS


def version_text() -> str:
    """What ``ccg --version`` prints: the package version, then per format layout the
    versions this package reads and writes (a writer gives each file the lowest minor
    version its features need; a reader takes any minor version of a major one it knows,
    skipping the optional sections it does not know)."""
    lines = [f"ccg {__version__}"]
    for layout, (major, latest) in FORMAT_VERSIONS.items():
        known = f"{major}.0-{major}.{latest}"
        lines.append(f".ccg {layout} layout (major {major}): reads {known} (and later {major}.x, skipping their "
                     f"unknown optional sections), writes {known}")
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """``--version``: print `version_text` as it is (argparse's own action would re-wrap
    its lines) and exit with status 0."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str | None = None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> NoReturn:
        print(version_text(), file=sys.stdout)
        parser.exit(0)
