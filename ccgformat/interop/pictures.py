"""The pictures that results show inline in a notebook (``_repr_svg_``, ``_repr_png_``, and
inside their HTML summaries), drawn by the figure code: the one place notebooks call it,
so that a change of the figures touches this module alone."""

from __future__ import annotations

from base64 import b64encode

from ..errors import MissingExtraError
from ..query import Overview, Timeline

__all__ = ["NOTEBOOK_HEIGHT", "data_uri", "overview_svg", "timeline_png", "timeline_row_height"]

#: about how many pixels high a timeline is drawn in a notebook (rows of 1 to 16 pixels)
NOTEBOOK_HEIGHT = 480


def overview_svg(overview: Overview) -> str:
    """The overview picture (a treemap for the spatial kind) as SVG text."""
    return overview.drawing().svg()


def timeline_row_height(timeline: Timeline) -> int:
    """The pixels of a row in a notebook: 1 to 16, so that the rows stay near `NOTEBOOK_HEIGHT`."""
    return max(1, min(16, NOTEBOOK_HEIGHT // max(timeline.exclusive.shape[0], 1)))


def timeline_png(timeline: Timeline) -> bytes | None:
    """The timeline picture (`Timeline.drawing`: labels, axis, legend) as a PNG; None when
    it has no row or column, or without matplotlib (the ``plot`` extra)."""
    rows, width = timeline.exclusive.shape[:2]
    if rows == 0 or width == 0:
        return None
    try:
        return timeline.drawing(timeline_row_height(timeline)).png()
    except MissingExtraError:
        return None


def data_uri(result: Overview | Timeline) -> str | None:
    """The result's picture as a ``data:`` URI for an ``<img>`` (None: nothing to draw)."""
    if isinstance(result, Overview):
        mime, data = "image/svg+xml", overview_svg(result).encode()
    else:
        mime, png = "image/png", timeline_png(result)
        if png is None:
            return None
        data = png
    return f"data:{mime};base64,{b64encode(data).decode('ascii')}"
