"""Exporters: the registry behind `Archive.export`.

An exporter writes an open `Archive` to another format. Format modules (which sit above
the archive layer) register theirs here with `register_exporter`; the archive only looks
them up, so imports keep flowing one way (formats -> archive).

``write(archive, target, progress)`` must write ``target`` atomically
(`ccgformat.atomic.atomic_output`): on any error nothing appears under the target's name.
``progress``, when not None, is called with the number of events just written, as the
export goes (`ExportProgress`). An exporter that takes keyword options names them in
``options`` (the OTF2 exporter: ``logical``, the logical time its events carry).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import FormatError

if TYPE_CHECKING:
    from .reader import Archive

__all__ = ["ExportFormat", "ExportProgress", "exporter_for", "exporters", "register_exporter"]

#: called by an exporter with the number of events it has just written
ExportProgress = Callable[[int], None]


@dataclass(frozen=True)
class ExportFormat:
    """A registered output format; ``suffixes`` pick it from a target name."""

    name: str
    description: str
    suffixes: tuple[str, ...]
    write: Callable[..., None]  #: (archive, target, progress, **options)
    options: tuple[str, ...] = ()

    def run(self, archive: Archive, target: Path, progress: ExportProgress | None, **options: Any) -> None:
        """Write ``archive`` to ``target`` with the ``options`` given (not None); one the
        format does not take is a `FormatError`."""
        given = {name: value for name, value in options.items() if value is not None}
        refused = sorted(set(given) - set(self.options))
        if refused:
            raise FormatError(f"the {self.name} export does not take {', '.join(refused)}", path=str(target))
        self.write(archive, target, progress, **given)


_EXPORTERS: dict[str, ExportFormat] = {}


def register_exporter(name: str, description: str, suffixes: tuple[str, ...], write: Callable[..., None],
                      options: tuple[str, ...] = ()) -> ExportFormat:
    """Add an output format whose ``write`` takes the keyword ``options``."""
    if name in _EXPORTERS:
        raise ValueError(f"exporter {name!r} is already registered")
    exporter = _EXPORTERS[name] = ExportFormat(name, description, suffixes, write, options)
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
