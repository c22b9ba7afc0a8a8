"""The bounds that cut a window into columns and locations into rows (dissertation 4.27):
the slices of the timeline, of the aggregation and metric tables and of the model."""

from __future__ import annotations

import numpy as np

__all__ = ["column_bounds", "row_bounds"]


def column_bounds(start: int, stop: int, width: int) -> np.ndarray:
    """The ``width + 1`` bounds ``start + i*(stop - start)//width`` (4.27), exactly."""
    span = stop - start
    if span * width < 1 << 63:
        return start + np.arange(width + 1, dtype=np.int64) * span // width
    return np.array([start + i * span // width for i in range(width + 1)], dtype=np.int64)


def row_bounds(locations: int, height: int) -> np.ndarray:
    """The ``rows + 1`` offsets of the rows by location: one location a row when they fit
    in ``height``, else ``height`` rows of the consecutive locations ``[r*L//height,
    (r+1)*L//height)`` (the split of the columns, 4.27, on the location axis)."""
    rows = min(locations, height)
    return np.arange(rows + 1, dtype=np.int64) * locations // max(rows, 1)
