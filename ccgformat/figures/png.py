"""A minimal PNG writer: 8-bit RGB, no filtering, one zlib stream."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np

from ..atomic import atomic_output


def png_bytes(pixels: np.ndarray) -> bytes:
    """The PNG of a (height, width, 3) uint8 array."""
    height, width, _ = pixels.shape
    raw = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, 3 * width)], axis=1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
            + chunk(b"IEND", b""))


def write_png(path: str | os.PathLike[str], pixels: np.ndarray) -> Path:
    """Write ``pixels`` as a PNG file, atomically (`ccgformat.atomic`)."""
    path = Path(path)
    data = png_bytes(pixels)
    with atomic_output(path) as temporary:
        temporary.write_bytes(data)
    return path
