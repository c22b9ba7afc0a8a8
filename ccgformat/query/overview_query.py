"""The overview (issue 16; papers 000 and 002): the optimal spatiotemporal, spatial or
temporal aggregation of the microscopic model at a gain/loss ratio p, as data and as
pictures. `overview_of` works on an `AggregateModel`; `overview` (``Archive.overview``)
asks the archive for the model first.

``kind="spatial"`` aggregates the model over time first (paper 002, |T| = 1: each
resource's proportions over the whole window) and ``kind="temporal"`` over the resources
(|S| = 1: each slice's mean proportions over all resources), as paper 000 section III.D
does; the default ``"spatiotemporal"`` keeps both (section III.E). With ``p=None`` the
quality curve is explored and its default p (`overview_curve.default_p`) is used. With
``normalize`` gain and loss are divided by those of the whole trace, and the reported
gain, loss and pIC are the normalised ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..aggregate_model import AggregateModel, Hierarchy
from ..archive.queries import run_query
from ..errors import ParameterError
from .overview_curve import Curve, default_p, explore
from .overview_dp import Partition, partition
from .overview_measures import Measures, measures, proportions, triangle
from .overview_parts import cell_prefix, label_nodes, mode_of, part_sums, visual_aggregates

if TYPE_CHECKING:  # the figures are imported when a picture is drawn, not on every overview
    from ..figures.drawing import Drawing
    from ..figures.overview import OverviewFigure

__all__ = ["KINDS", "Overview", "overview", "overview_of"]

KINDS = ("spatiotemporal", "spatial", "temporal")
#: the most (hierarchy node, interval of slices) areas an overview's tables may hold, and
#: about what each costs at the peak (measures, DP and curve: 1.8 GB for the 93 M areas of
#: 100,000 locations and their 100,000 tree nodes x 30 slices)
MAX_AREAS = 1 << 28
BYTES_PER_AREA = 24
#: Parts thinner than this many pixels are drawn as visual aggregates (paper 000, section IV).
THRESHOLD_PIXELS = 3.0


@dataclass(eq=False)
class Overview:
    """An optimal partition of a model and what is needed to show it."""

    model: AggregateModel
    kind: str
    normalize: bool
    measures: Measures
    partition: Partition
    resolution: int = 1                      #: ticks per second, for the time axis
    curve: Curve | None = None
    _r: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    @property
    def p(self) -> float:
        return self.partition.p

    @property
    def hierarchy(self) -> Hierarchy:
        return self.model.hierarchy

    def _parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Parts as (node of the model's hierarchy, rows, stop rows, first, last)."""
        h, part = self.hierarchy, self.partition
        node = np.zeros(len(part), dtype=np.int64) if self.kind == "temporal" else part.node
        first = np.zeros(len(part), dtype=np.int64) if self.kind == "spatial" else part.first
        last = np.full(len(part), self.model.values.shape[1] - 1, dtype=np.int64) if self.kind == "spatial" \
            else part.last
        return node, first, last, h.first_leaf[node]

    def part_modes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each part's node, mode state and the mode's proportion ``V_mode / |A|``."""
        node, first, last, row = self._parts()
        sums = part_sums(cell_prefix(self._r), row, self.hierarchy.stop_leaf[node], first, last)
        mode, _ = mode_of(sums)
        cells = (self.hierarchy.stop_leaf[node] - row) * (last - first + 1)
        top = sums[np.arange(len(sums)), mode] if sums.shape[1] else np.zeros(len(sums))
        return node, mode, top / np.maximum(cells, 1)

    def to_json(self) -> dict[str, Any]:
        """The JSON of issue 16: p, pic, gain, loss, bounds, states and the parts."""
        h = self.hierarchy
        node, mode, proportion = self.part_modes()
        _, first, last, _ = self._parts()
        leaves = np.asarray(h.leaf_locations).tolist()
        low, high = np.asarray(h.first_leaf)[node].tolist(), np.asarray(h.stop_leaf)[node].tolist()
        paths = {n: h.path(n) for n in set(node.tolist())}
        states = [self.model.states[m] for m in mode.tolist()] if self.model.states else [None] * len(node)
        parts = [{"locations": leaves[a:b], "node": paths[n], "first": f, "last": l, "mode": m, "proportion": x}
                 for n, a, b, f, l, m, x in zip(node.tolist(), low, high, first.tolist(), last.tolist(), states,
                                                proportion.tolist())]
        return {"p": self.p, "pic": self.partition.pic, "gain": self.partition.gain, "loss": self.partition.loss,
                "kind": self.kind, "normalize": self.normalize, "bounds": np.asarray(self.model.bounds).tolist(),
                "states": list(self.model.states), "parts": parts}

    def quality_curve(self) -> Curve:
        """The distinct optima as p goes from 0 to 1 (explored once, then kept)."""
        if self.curve is None:
            self.curve = explore(self.measures)
        return self.curve

    # ------------------------------------------------------------------ pictures

    def figure(self, plot_height: int = 480, threshold: float = THRESHOLD_PIXELS) -> OverviewFigure:
        """The overview picture's content, with parts thinner than ``threshold`` pixels
        replaced by visual aggregates."""
        from ..figures import palette
        from ..figures.overview import OverviewFigure
        h, colours = self.hierarchy, palette(len(self.model.states))
        row_height = plot_height / max(h.leaves, 1)
        node, first, last, row = self._parts()
        height = (np.asarray(h.stop_leaf) - np.asarray(h.first_leaf)) * row_height
        thin = height[node] < threshold
        prefix = cell_prefix(self._r)
        kept = ~thin
        sums = part_sums(prefix, row[kept], h.stop_leaf[node[kept]], first[kept], last[kept])
        visual = visual_aggregates(h, prefix, node, first, last, thin, height >= threshold)
        all_sums = np.concatenate((sums, visual["sums"]))
        mode, share = mode_of(all_sums)
        labels = [(int(h.first_leaf[n]), int(h.stop_leaf[n]), h.label(n)) for n in label_nodes(h, row_height)]
        return OverviewFigure(
            title=f"{self.kind} overview, p = {self.p:.4g}: {_count_parts(len(self.partition))}, "
                  f"gain {self.partition.gain:.4g}, loss {self.partition.loss:.4g}",
            rows=h.leaves, bounds=np.asarray(self.model.bounds), resolution=self.resolution,
            row=np.concatenate((row[kept], visual["row"])),
            stop=np.concatenate((h.stop_leaf[node[kept]], visual["stop"])),
            first=np.concatenate((first[kept], visual["first"])), last=np.concatenate((last[kept], visual["last"])),
            mode=mode, alpha=share, mark=np.concatenate((np.zeros(kept.sum(), dtype=np.int64), visual["mark"])),
            states=list(self.model.states), colours=colours, labels=labels)

    def drawing(self, width: int = 1000, plot_height: int = 480) -> Drawing:
        """The overview picture (a treemap for ``kind="spatial"``)."""
        if self.kind == "spatial":
            return self.treemap(width, plot_height)
        from ..figures.overview import draw_overview
        return draw_overview(self.figure(plot_height), width, plot_height)

    def treemap(self, width: int = 1000, height: int = 600) -> Drawing:
        """The squarified treemap of the parts over the whole window (paper 002)."""
        from ..figures import palette
        from ..figures.treemap import TreemapFigure, draw_treemap
        h = self.hierarchy
        node, _, _, _ = self._parts()
        total = self._r.sum(axis=1)
        prefix = np.zeros((h.leaves + 1, total.shape[1]))
        np.cumsum(total, axis=0, out=prefix[1:])
        sums = prefix[h.stop_leaf] - prefix[h.first_leaf]
        mode, share = mode_of(sums)
        is_part = np.zeros(len(h), dtype=bool)
        is_part[node] = True
        from ..figures.axes import window_text
        bounds = np.asarray(self.model.bounds)
        window = window_text(int(bounds[0]), int(bounds[-1]), self.resolution)
        figure = TreemapFigure(f"spatial aggregation of {window}, p = {self.p:.4g}: "
                               f"{_count_parts(len(self.partition))}", h, is_part, mode, share,
                               list(self.model.states), palette(len(self.model.states)))
        return draw_treemap(figure, width, height)

    def curve_drawing(self, width: int = 800, height: int = 420) -> Drawing:
        """The quality curves: gain and loss of every optimum against p."""
        from ..figures.curve import CurveFigure, draw_curve
        curve = self.quality_curve()
        gain = np.array([o.gain for o in curve.optima])
        loss = np.array([o.loss for o in curve.optima])
        title = f"quality curves of the {self.kind} overview: {len(curve.optima)} distinct optima"
        return draw_curve(CurveFigure(title, np.array(curve.low), np.array(curve.high), gain, loss,
                                      np.array([len(o) for o in curve.optima]), self.p), width, height)

    def save(self, path: str | os.PathLike[str], what: str = "overview", format: str | None = None) -> Path:
        """Write the overview (or ``what="curve"``, ``"treemap"``) as SVG or PNG (``format``,
        by default by the suffix of ``path``: `ccgformat.figures.drawing.picture_format`)."""
        drawing = {"overview": self.drawing, "curve": self.curve_drawing, "treemap": self.treemap}[what]()
        return drawing.save(path, format)

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    def _repr_svg_(self) -> str:
        """The picture for Jupyter (`ccgformat.interop.pictures`)."""
        return run_query("overview_svg", self)


def _count_parts(count: int) -> str:
    return f"{count:,} part" + ("s" if count != 1 else "")


def _reduced(model: AggregateModel, r: np.ndarray, kind: str) -> tuple[Hierarchy, np.ndarray]:
    """The hierarchy and proportions the DP runs on for ``kind`` (``r``: the model's proportions)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "spatial":
        bounds = np.asarray(model.bounds)[[0, -1]]
        whole = AggregateModel(bounds, model.states, model.locations, model.values.sum(axis=1, keepdims=True),
                               model.hierarchy, model.resolution)
        return model.hierarchy, proportions(whole)
    if kind == "temporal":
        one = Hierarchy((model.hierarchy.names[0],), (model.hierarchy.kinds[0],), np.array([-1]), np.array([0]),
                        np.array([1]), np.array([0]))
        return one, r.mean(axis=0, keepdims=True)
    return model.hierarchy, r


def check_size(nodes: int, slices: int, kind: str) -> None:
    """Refuse, with `ParameterError`, an overview whose DP tables (`overview_dp`: about
    `BYTES_PER_AREA` bytes per hierarchy node and interval of slices) would hold more than
    `MAX_AREAS` areas, instead of running the machine out of memory; the spatial overview
    (paper 002, one slice) of a million locations fits."""
    areas = (1 if kind == "temporal" else nodes) * triangle(1 if kind == "spatial" else slices)
    if areas > MAX_AREAS:
        raise ParameterError(
            f"a {kind} overview of {nodes:,} hierarchy nodes x {slices} slices has {areas:,} (node, interval) "
            f"areas, about {areas * BYTES_PER_AREA / 2 ** 30:.0f} GiB of tables (at most {MAX_AREAS:,} areas): ask "
            f"for the spatial overview or fewer slices")


def overview_of(model: AggregateModel, p: float | None = None, normalize: bool = False,
                kind: str = "spatiotemporal", resolution: int = 1) -> Overview:
    """The optimal partition of ``model`` at ``p`` (the curve's default p when None)."""
    if model.values.shape[1] == 0:
        raise ValueError("the model has no time slices")
    check_size(len(model.hierarchy), model.values.shape[1], kind)
    r = proportions(model)
    hierarchy, reduced = _reduced(model, r, kind)
    found = measures(hierarchy, reduced)
    if normalize:
        found = found.normalized()
    if p is None:
        curve = explore(found)
        chosen = default_p(curve)
        optimum = next(o for o, low, high in zip(curve.optima, curve.low, curve.high) if low <= chosen <= high)
        best = Partition(chosen, chosen * optimum.gain - (1 - chosen) * optimum.loss, optimum.gain, optimum.loss,
                         optimum.node, optimum.first, optimum.last)
        return Overview(model, kind, normalize, found, best, resolution, curve, r)
    return Overview(model, kind, normalize, found, partition(found, p), resolution, None, r)


def overview(archive: Any, slices: int = 30, p: float | None = None, states: str = "region",
             start: int | None = None, stop: int | None = None, normalize: bool = False,
             kind: str = "spatiotemporal") -> Overview:
    """``Archive.overview``: the model of ``[start, stop)`` in ``slices`` slices
    (``Archive.aggregate``), aggregated optimally at ``p``."""
    if p is not None and not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], not {p}")
    check_size(len(archive.hierarchy), slices, kind)  # before the model, which alone may take gigabytes
    model = archive.aggregate(slices, start=start, stop=stop, states=states)
    return overview_of(model, p, normalize, kind, int(archive.timer_resolution or 1))
