"""Exporters: the registry behind `Archive.export`, and atomic output for them.

An exporter writes an open `Archive` to another format. Format modules (which sit above
the archive layer) register theirs here with `register_exporter`; the archive only looks
them up, so imports keep flowing one way (formats -> archive).

``write(archive, target)`` must write ``target`` atomically (see `atomic_output`): on any
error nothing appears under the target's name.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from ..errors import FormatError

if TYPE_CHECKING:
    from .reader import Archive

__all__ = ["ExportFormat", "atomic_output", "exporter_for", "exporters", "register_exporter"]


@dataclass(frozen=True)
class ExportFormat:
    """A registered output format; ``suffixes`` pick it from a target name."""

    name: str
    description: str
    suffixes: tuple[str, ...]
    write: Callable[[Archive, Path], None]


_EXPORTERS: dict[str, ExportFormat] = {}


def register_exporter(name: str, description: str, suffixes: tuple[str, ...],
                      write: Callable[[Archive, Path], None]) -> ExportFormat:
    """Add an output format."""
    if name in _EXPORTERS:
        raise ValueError(f"exporter {name!r} is already registered")
    exporter = _EXPORTERS[name] = ExportFormat(name, description, suffixes, write)
    return exporter


def exporters() -> list[ExportFormat]:
    """The registered output formats, in registration order."""
    return list(_EXPORTERS.values())


def exporter_for(target: str | os.PathLike[str], to: str | None = None) -> ExportFormat:
    """The exporter named ``to``, or else the one whose suffix the target's name ends with."""
    known = ", ".join(_EXPORTERS) or "none"
    if to is not None:
        try:
            return _EXPORTERS[to]
        except KeyError:
            raise FormatError(f"unknown export format {to!r}; known: {known}") from None
    name = Path(target).name.lower()
    for exporter in _EXPORTERS.values():
        if any(name.endswith(suffix) for suffix in exporter.suffixes):
            return exporter
    raise FormatError(f"cannot tell the export format from the name; give it explicitly (known: {known})",
                      path=str(target))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(target: Path, *, folder: bool = False) -> Iterator[Path]:
    """A temporary path beside ``target`` (a file, or an empty folder when ``folder``) that
    replaces ``target`` when the block ends without an error and is removed otherwise.
    The result gets the permissions of a plainly created file or folder (umask applied),
    not the private ones of a temporary."""
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(2, "the target's folder does not exist", str(parent))
    if folder:
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    else:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
        os.close(descriptor)
        temporary = Path(name)
    try:
        os.chmod(temporary, (0o777 if folder else 0o666) & ~_umask())
        yield temporary
        if folder and target.is_dir():
            shutil.rmtree(target)
        os.replace(temporary, target)
    except BaseException:
        if temporary.is_dir():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)
        raise
