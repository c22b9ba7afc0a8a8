"""A figure laid out once: shapes in named layers on a white page, rendered as SVG by
our own writer (`svg`) or as PNG through matplotlib (`matplotlib_png`), so that the two
pictures show the same content."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_output
from ..errors import ParameterError
from .matplotlib_png import png_bytes
from .shapes import Shape
from .svg import svg_document

__all__ = ["FORMATS", "Drawing", "picture_format"]

#: the picture formats a drawing is saved as
FORMATS = ("svg", "png")


def picture_format(path: str | os.PathLike[str]) -> str:
    """The format a picture at ``path`` is written in: SVG for a ``.svg`` name, else PNG."""
    return "svg" if Path(path).suffix.lower() == ".svg" else "png"


@dataclass
class Drawing:
    """A ``width`` x ``height`` pixel page. ``layers`` maps a role (``title``, ``plot``,
    ``x-axis``, ``row-labels``, ``legend``, ...) to its shapes; layers are painted in
    the order they were first added to, each in the order of its shapes."""

    width: int
    height: int
    layers: dict[str, list[Shape]] = field(default_factory=dict)

    def add(self, role: str, *shapes: Shape) -> None:
        self.layers.setdefault(role, []).extend(shapes)

    @property
    def shapes(self) -> list[Shape]:
        """Every shape in painting order."""
        return [shape for layer in self.layers.values() for shape in layer]

    def svg(self) -> str:
        """The picture as an SVG document."""
        return svg_document(self.width, self.height, self.layers)

    def png(self) -> bytes:
        """The picture as PNG (needs matplotlib: the ``plot`` extra)."""
        return png_bytes(self.width, self.height, self.layers)

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> Path:
        """Write the picture atomically as ``format`` (``"svg"`` or ``"png"``; by default
        `picture_format` of ``path``)."""
        path = Path(path)
        format = picture_format(path) if format is None else format
        if format not in FORMATS:
            raise ParameterError(f"a picture is written as {' or '.join(FORMATS)}, not {format!r}")
        data = self.svg().encode() if format == "svg" else self.png()
        with atomic_output(path) as temporary:
            temporary.write_bytes(data)
        return path
