"""The anchor file of an OTF2 archive: recognising it and finding it in a folder."""

from __future__ import annotations

from pathlib import Path

from ...errors import FormatError

__all__ = ["ANCHOR_MAGIC", "anchors", "find_anchor", "is_anchor"]

#: Bytes 2..6 of an anchor file (after the two-byte buffer header).
ANCHOR_MAGIC = b"OTF2\x00"


def is_anchor(path: Path) -> bool:
    """The file starts with a buffer header and ``OTF2\\0``."""
    try:
        with open(path, "rb") as handle:
            return handle.read(7)[2:] == ANCHOR_MAGIC
    except OSError:
        return False


def anchors(folder: Path) -> list[Path]:
    """The anchor files (``*.otf2``) directly in ``folder``, sorted."""
    try:
        return sorted(p for p in folder.glob("*.otf2") if p.is_file() and is_anchor(p))
    except OSError:
        return []


def find_anchor(path: Path) -> Path:
    """The anchor file ``path`` is, or the only one in the folder ``path``; `FormatError` otherwise."""
    if not path.is_dir():
        if not is_anchor(path):
            raise FormatError("not an OTF2 anchor file (no 'OTF2' after the buffer header)", path=str(path))
        return path
    found = anchors(path)
    if not found:
        raise FormatError("the folder holds no OTF2 anchor file (*.otf2)", path=str(path))
    if len(found) > 1:
        raise FormatError(f"the folder holds several OTF2 anchor files: {', '.join(p.name for p in found)}",
                          path=str(path))
    return found[0]
