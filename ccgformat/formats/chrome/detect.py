"""Detecting Chrome Trace Event JSON from a file's first bytes (the package's `sniff`),
without the reader's imports."""

from __future__ import annotations

import zlib
from pathlib import Path

__all__ = ["GZIP_MAGIC", "sniff"]

GZIP_MAGIC = b"\x1f\x8b"


def sniff(path: Path, head: bytes) -> bool:
    """JSON (optionally gzip) starting with an array holding ``"ph"`` or an object holding
    ``"traceEvents"`` or ``"ph"``."""
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1 << 16)
        except zlib.error:
            return False
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    if text.startswith("["):
        return '"ph"' in text
    return text.startswith("{") and ('"traceEvents"' in text or '"ph"' in text)
