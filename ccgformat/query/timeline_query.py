"""Timeline rendering (dissertation 3.4.4, 4.5.4): per pixel column and row, the
exclusive time of each region group, and an RGB image blending the groups' colours.

Columns split ``[start, stop)`` into ``width`` integer intervals
``S_i = [start + i*span//width, start + (i+1)*span//width)`` (4.27). Rows are locations
(``by="location"``) or call-stack levels summed over the chosen locations
(``by="depth"``, level 0 = outermost calls). A display has a few thousand pixel rows at
most (3.4.4, 4.5.4: the resolution is "in the order of 10^3 to 10^4 in the vertical and
horizontal dimensions"), so with more chosen locations than ``height`` the location axis
is split like the time axis: row ``r`` holds the chosen locations
``[r*L//height, (r+1)*L//height)`` (L of them, in the order given), their times summed as
a depth row sums its locations, and blended into one pixel row (`row_starts`). ``exclusive[row, i, g]`` is formula 4.28: the
time inside ``S_i`` during which the innermost open call is of group ``g`` (and, by
depth, is at that level). Time outside every call belongs to no group. The walk that
computes it on the compressed graph is `ccgformat.query.timeline_walk`; by location, a
large graph (`streaming.streams`) answers like the microscopic model of the same
columns (`aggregate`: the aggregation tables and windows walked where the columns cut
their cells), without columns over every node.

Colour classes are region groups (`ccgformat.query.groups`), or with
``color_by="region"`` the regions with the most exclusive time, one class each, and the
other regions together (`region_classes`: a trace whose regions all share one group
would otherwise be one colour). Colours (`ccgformat.figures`):
``share = exclusive / max(|S_i| * k, sum over groups)`` with k the locations a
depth row sums over (1 by location), which keeps the shares of a lossy archive, whose
column sums may exceed ``|S_i|`` (4.30), at most 1; a pixel's colour is
``sum_g share_g * colour_g + (1 - sum_g share_g) * background`` (linear blending, 4.31).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ..archive.queries import run_query
from ..figures import blend, palette
from ..graph.graph import chosen_roots
from .aggregate_query import aggregate
from .aggregate_tables import source_hierarchy
from .bounds import column_bounds, row_bounds
from .groups import region_groups
from .profile_query import profile
from .streaming import streams
from .tables import tables_for
from .timeline_walk import exclusive_times

if TYPE_CHECKING:  # the figures are imported when a picture is drawn
    from ..figures.drawing import Drawing
    from ..figures.timeline import TimelineFigure


@dataclass
class Timeline:
    start: int
    stop: int
    by: str
    rows: list[int]               #: location ids (the first of each row), or call levels 0, 1, ...
    groups: list[str]             #: the colour classes: region groups, or regions (``color_by``)
    boundaries: np.ndarray        #: width + 1 column bounds
    exclusive: np.ndarray         #: (rows, width, groups) ticks, formula 4.28
    normaliser: np.ndarray        #: (rows, width) the denominator of the shares
    #: by location, rows + 1 offsets: row i sums ``locations[row_starts[i]:row_starts[i + 1]]``
    row_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    locations: list[int] = field(default_factory=list)  #: the chosen locations, in row order
    resolution: int = 1                                  #: ticks per second, for the time axis
    row_names: list[str] = field(default_factory=list)  #: each row's label in pictures

    def row_locations(self, row: int) -> list[int]:
        """The locations row ``row`` sums (by location)."""
        return self.locations[int(self.row_starts[row]):int(self.row_starts[row + 1])]

    @property
    def width(self) -> int:
        return len(self.boundaries) - 1

    @property
    def shares(self) -> np.ndarray:
        """(rows, width, groups) fractions of each column, summing to at most 1."""
        with np.errstate(invalid="ignore", divide="ignore"):
            out = self.exclusive / self.normaliser[..., None]
        return np.nan_to_num(out)

    @property
    def colors(self) -> np.ndarray:
        """(groups, 3) RGB of each group (`palette`)."""
        return palette(len(self.groups))

    def rgb(self) -> np.ndarray:
        """(rows, width, 3) uint8 pixels (4.31)."""
        return blend(self.shares, self.colors)

    def figure(self) -> TimelineFigure:
        """The picture's content: the cells, row names and the colour classes shown."""
        from ..figures.timeline import TimelineFigure
        shown = np.flatnonzero(self.exclusive.any(axis=(0, 1))) if self.exclusive.size else np.zeros(0, np.int64)
        located = f"timeline of {len(self.locations):,} locations"
        if self.by == "depth":
            located += f" by call depth ({len(self.rows)} levels)"
        elif len(self.rows) < len(self.locations):
            located += f" in {len(self.rows):,} rows"
        return TimelineFigure(
            located, self.start, self.stop, self.resolution,
            self.row_names or [str(row) for row in self.rows], self.rgb(), [self.groups[g] for g in shown.tolist()],
            self.colors[shown])

    def drawing(self, row_height: int | None = None) -> Drawing:
        """The picture: one pixel per column, rows ``row_height`` pixels high (by default
        16, fewer when the rows would be taller than 800 pixels:
        `ccgformat.figures.timeline.draw_timeline`)."""
        from ..figures.timeline import draw_timeline
        return draw_timeline(self.figure(), row_height)

    def save(self, path: str | Path, row_height: int | None = None, format: str | None = None) -> Path:
        """Write the picture atomically as SVG or PNG (``format``, by default by the
        suffix of ``path``: `ccgformat.figures.drawing.picture_format`)."""
        return self.drawing(row_height).save(path, format)

    def save_png(self, path: str | Path, row_height: int | None = None) -> Path:
        """Write the picture as a PNG file (atomically; needs the ``plot`` extra)."""
        return self.save(path, row_height, "png")

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    def _repr_png_(self) -> bytes | None:
        """The picture for Jupyter (`ccgformat.interop.pictures`)."""
        return run_query("timeline_png", self)

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "stop": self.stop, "width": self.width, "by": self.by, "rows": self.rows,
                "groups": self.groups, "boundaries": self.boundaries.tolist(),
                "exclusive": self.exclusive.tolist(), "row_starts": self.row_starts.tolist(),
                "locations": self.locations}


#: Coloured by region, the regions with the most exclusive time over the whole trace get
#: a class (and a colour) each; beyond this many colours are hard to tell apart.
REGION_CLASSES = 20


def region_classes(source: Any, regions: int) -> tuple[list[str], np.ndarray]:
    """The colour classes of ``color_by="region"``: the `REGION_CLASSES` regions with the
    most exclusive time in the whole trace's profile (ties by id), in that order, then
    ``"other regions"`` for the rest when there are any; and per region id
    ``0..regions-1`` its class (the shape of `region_groups`)."""
    ranked = sorted((row for row in profile(source).regions if row.region < regions),
                    key=lambda row: (-row.exclusive, row.region))[:REGION_CLASSES]
    group_of = np.full(regions, len(ranked), dtype=np.int64)
    group_of[[row.region for row in ranked]] = np.arange(len(ranked))
    names = [row.name for row in ranked]
    if (group_of == len(ranked)).any():
        names.append("other regions")
    return names, group_of


#: The most rows by location unless asked otherwise: more locations share rows.
HEIGHT = 1000


def _region_times(source: Any, start: int, stop: int, width: int, chosen: list[int]) -> np.ndarray:
    """``[len(chosen), width, regions]``: the region times of the columns of each chosen
    location, in their order, as the microscopic model gives them (`aggregate`)."""
    model = aggregate(source, width, start, stop, "region", chosen)
    return model.values[np.searchsorted(model.locations, np.asarray(chosen, np.int64))]


def timeline(source: Any, start: int, stop: int, width: int, locations: Iterable[int] | None = None,
             by: str = "location", color_by: str = "group", height: int | None = None) -> Timeline:
    """The timeline of ``[start, stop)`` at ``width`` columns of a `Graph` or `Archive`,
    rows by location or call level (``by``), colour classes by region group or region
    (``color_by``); by location at most ``height`` rows (default `HEIGHT`, `row_bounds`)."""
    height = HEIGHT if height is None else height
    if by not in ("location", "depth"):
        raise ValueError(f"by must be 'location' or 'depth', not {by!r}")
    if color_by not in ("group", "region"):
        raise ValueError(f"color_by must be 'group' or 'region', not {color_by!r}")
    if width < 1 or stop <= start:
        raise ValueError("a timeline needs width >= 1 and start < stop")
    if height < 1:
        raise ValueError(f"a timeline needs height >= 1, not {height}")
    definitions = source.definitions
    chosen, roots, begins, _, _ = chosen_roots(source, locations)
    modelled = _region_times(source, int(start), int(stop), width, chosen) if by == "location" and streams(source) \
        else None
    regions = modelled.shape[2] if modelled is not None else max(len(definitions.regions), tables_for(source.pool).regions)
    names, group_of = (region_groups(definitions, regions) if color_by == "group"
                       else region_classes(source, regions))
    boundaries = column_bounds(int(start), int(stop), width)
    starts = row_bounds(len(chosen), height)
    per_row = np.diff(starts)  # locations a row sums over
    if by == "depth":
        per_row = np.full(1, max(len(chosen), 1), np.int64)
    if not names:  # no regions, so no calls: nothing to paint
        exclusive = np.zeros((len(per_row) if by == "location" else 1, width, 0), np.int64)
    elif modelled is not None:
        onehot = np.zeros((regions, len(names)), np.int64)
        onehot[np.arange(regions), group_of] = 1
        exclusive = np.add.reduceat(modelled @ onehot, starts[:-1], axis=0) if len(chosen) \
            else np.zeros((0, width, len(names)), np.int64)
    else:
        row = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
        exclusive = exclusive_times(tables_for(source.pool), group_of, boundaries, len(names), roots, begins,
                                    by == "depth", row)
    normaliser = np.maximum(np.diff(boundaries)[None, :] * per_row[:, None], exclusive.sum(axis=2))
    rows = [chosen[i] for i in starts[:-1].tolist()] if by == "location" else list(range(len(exclusive)))
    labels = _location_rows(source, chosen, starts) if by == "location" else [f"level {row}" for row in rows]
    return Timeline(int(start), int(stop), by, rows, names, boundaries, exclusive, normaliser, starts, chosen,
                    int(definitions.timer_resolution or 1), labels)


def _location_rows(source: Any, chosen: list[int], starts: np.ndarray) -> list[str]:
    """The label of each row by location: its first location's (`location_labels`), and
    how many more locations the row sums."""
    firsts = [chosen[i] for i in starts[:-1].tolist()]
    return [name if count == 1 else f"{name} (+{count - 1})"
            for name, count in zip(location_labels(source, firsts), np.diff(starts).tolist())]


def location_labels(source: Any, locations: list[int]) -> list[str]:
    """The label of each of ``locations``: its leaf's in the resource hierarchy
    (`Hierarchy.label`: the location's name after its system tree parent's), or
    ``location N`` for a location the hierarchy does not hold."""
    hierarchy = source_hierarchy(source)
    held = np.asarray(hierarchy.leaf_locations, np.int64)
    order = np.argsort(held, kind="stable")
    wanted = np.asarray(locations, np.int64)
    at = order[np.minimum(np.searchsorted(held[order], wanted), len(held) - 1)] if len(held) else wanted
    nodes = hierarchy.leaf_nodes() if len(held) else held  # (a tree without leaves has no leaf node)
    out = []
    for location, position in zip(wanted.tolist(), at.tolist()):
        found = len(held) > 0 and held[position] == location
        out.append(hierarchy.label(int(nodes[position])) if found else f"location {location}")
    return out
