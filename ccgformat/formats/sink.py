"""Text and bytes to a binary stream: what the exporters write in Python (text, as UTF-8)
and what the native core writes for them (bytes), in order."""

from __future__ import annotations

from typing import BinaryIO, Iterable

__all__ = ["Utf8Sink"]


class Utf8Sink:
    """Gathers text in pieces of at least `PIECE_BYTES` before writing them (the bytes of a
    gzip stream do not depend on where its writes cut the text, only on its flushes)."""

    PIECE_BYTES = 1 << 16

    def __init__(self, out: BinaryIO):
        self.out = out
        self.pending: list[bytes] = []
        self.pending_bytes = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.pending.append(data)
        self.pending_bytes += len(data)
        if self.pending_bytes >= self.PIECE_BYTES:
            self.flush()

    def writelines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.write(text)

    def write_bytes(self, data: bytes | memoryview) -> None:
        """Bytes already encoded (written at once: ``data`` may be reused after)."""
        self.flush()
        self.out.write(data)

    def flush(self) -> None:
        """Hand what is gathered to the stream (without flushing the stream)."""
        if self.pending:
            self.out.write(b"".join(self.pending))
            self.pending.clear()
            self.pending_bytes = 0
