"""Drawing only: colours, the figures' layouts and their two renderings, SVG (our own
writer) and PNG (through matplotlib, the ``plot`` extra). Used by the query and
command-line layers; imports nothing of ccgformat above the model (DESIGN.md, package
layout)."""

from .colours import BACKGROUND, PALETTE, blend, palette
from .drawing import FORMATS, Drawing, picture_format

__all__ = ["BACKGROUND", "FORMATS", "PALETTE", "Drawing", "blend", "palette", "picture_format"]
