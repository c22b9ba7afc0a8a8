"""Drawing only: colours and image files. Used by the query and command-line layers;
imports nothing of ccgformat above the model (DESIGN.md, package layout)."""

from .colours import BACKGROUND, PALETTE, blend, palette
from .png import png_bytes, write_png

__all__ = ["BACKGROUND", "PALETTE", "blend", "palette", "png_bytes", "write_png"]
