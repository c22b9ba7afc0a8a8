"""What `verify` reports: a violated invariant, where it was found and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ArchiveError, CcgError
from .layout import RESERVED_AGGREGATION, SectionKind

__all__ = ["Problem", "kind_name", "problem_of"]


@dataclass(frozen=True)
class Problem:
    """One violated invariant: where (byte offset and block kind) and why.

    ``kind`` is the section kind of the block the problem was found in, or None for
    the file's own framing (header, trailer, footer location, unlisted bytes).
    """

    offset: int
    kind: int | None
    reason: str

    @property
    def kind_name(self) -> str:
        return kind_name(self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {"offset": self.offset, "kind": self.kind_name, "reason": self.reason}

    def __str__(self) -> str:
        if self.kind is None:
            return f"byte {self.offset}: {self.reason}"
        return f"{self.kind_name} block at byte {self.offset}: {self.reason}"


def kind_name(kind: int | None) -> str:
    """The name of a section kind (``"file"`` for None, ``"kind 42"`` for unknown ones)."""
    if kind is None:
        return "file"
    try:
        return SectionKind(kind).name
    except ValueError:
        return f"AGGREGATION_{kind}" if kind in RESERVED_AGGREGATION else f"kind {kind}"


def problem_of(error: CcgError, kind: int | None, offset: int) -> Problem:
    """The problem an error reading a block of ``kind`` at ``offset`` is."""
    if isinstance(error, ArchiveError):
        return Problem(error.offset if error.offset is not None else offset, kind, error.reason)
    return Problem(offset, kind, str(error))
