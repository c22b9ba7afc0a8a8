"""A topology graph as Graphviz DOT, drawn as Viva draws it (paper 001, sections 3.1 and
4.1): a resource's shape and size from its capacity (hosts: squares sized by ``power``;
network links: diamonds sized by ``bandwidth``), its fill from its use (the share
``power_used / power`` filled from the bottom), each metric scaled on its own so that
the largest node of each kind has the same size; edge width from the bytes of the window
(or its messages when no message has bytes), dashed where the window has none. A title
and a legend sit above the graph.

Layout is Graphviz's (`graphviz.render`): this module only writes the graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:
    from .topology import Topology

__all__ = ["Mapping", "default_mappings", "drawn_by", "to_dot"]

#: The largest and smallest node side (inches); a node's area follows its capacity.
LARGEST, SMALLEST = 1.1, 0.22
#: The widest edge (points) and the thinnest; all edges are EVEN when their weights are equal.
WIDEST, THINNEST, EVEN = 6.0, 0.8, 1.5


@dataclass(frozen=True)
class Mapping:
    """Nodes carrying metric ``size`` are drawn as ``shape`` with an area proportional to
    it, filled in ``colour`` up to the share ``fill / size`` (no fill without ``fill``)."""

    size: str
    fill: str | None
    shape: str
    colour: str
    what: str


#: SimGrid's resources: (capacity, use, shape, colour, what is drawn so)
KNOWN = (Mapping("power", "power_used", "box", "#d62728", "hosts"),
         Mapping("speed", "speed_used", "box", "#d62728", "hosts"),
         Mapping("bandwidth", "bandwidth_used", "diamond", "#1f77b4", "links"))


def default_mappings(topology: Topology, size: str | None = None, fill: str | None = None) -> list[Mapping]:
    """The mappings for ``topology``: ``size`` (and ``fill``) when given, else the known
    SimGrid pairs among its metrics, else its first metric (no fill)."""
    if size is not None:
        missing = [name for name in (size, fill) if name is not None and name not in topology.metrics]
        if missing:
            raise ParameterError(f"no metric {missing[0]!r} in the topology (its metrics: "
                                 f"{', '.join(topology.metrics) or 'none'})")
        return [Mapping(size, fill, "box", "#d62728", "containers")]
    known = [m for m in KNOWN if m.size in topology.metrics]
    if known or not topology.metrics:
        return known
    return [Mapping(topology.metrics[0], None, "box", "#d62728", "containers")]


def _number(value: float) -> str:
    """A value with an SI prefix and three significant digits (``4.00G``)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    exponent = min(max(int(math.floor(math.log10(abs(value)) / 3)), -4), 6)
    scaled = value / 10 ** (3 * exponent)
    return f"{scaled:.3g}{'pnum kMGTPE'[exponent + 4].strip()}"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _filled(colour: str, share: float) -> str:
    """A fill of ``colour`` up to ``share`` (0..1) of the shape, the rest white (a
    degenerate gradient: Graphviz fills by the weights of a two-colour list)."""
    if share <= 0.0005:
        return "white"
    return colour if share >= 0.9995 else f"{colour};{share:.3f}:white"


def _capacity(row: np.ndarray, column: dict[str, int], m: Mapping) -> float:
    """A node's value of ``m``'s size metric (NaN when it carries none)."""
    return float(row[column[m.size]]) if m.size in column else math.nan


def _share(row: np.ndarray, column: dict[str, int], m: Mapping) -> float:
    """The share of ``m``'s fill metric in its size metric, within 0..1 (NaN without one)."""
    used = float(row[column[m.fill]]) if m.fill in column else math.nan
    return min(max(used / _capacity(row, column, m), 0.0), 1.0) if not math.isnan(used) else math.nan


def drawn_by(topology: Topology, mappings: list[Mapping]) -> np.ndarray:
    """Per node, the first mapping whose size metric it carries above 0 (-1: none)."""
    column = {name: k for k, name in enumerate(topology.metrics)}
    out = np.full(len(topology.names), -1, np.int64)
    for k, m in reversed(list(enumerate(mappings))):
        if m.size in column:
            out[topology.values[:, column[m.size]] > 0] = k  # NaN compares False
    return out


def _largest(topology: Topology, mappings: list[Mapping], drawn: np.ndarray) -> list[float]:
    """Per mapping, the largest size metric of the nodes it draws (0 without any)."""
    column = {name: k for k, name in enumerate(topology.metrics)}
    return [float(topology.values[drawn == k, column[m.size]].max(initial=0.0)) if m.size in column else 0.0
            for k, m in enumerate(mappings)]


def _node_styles(topology: Topology, mappings: list[Mapping], drawn: np.ndarray) -> list[dict[str, str]]:
    """Per node its DOT attributes: shape and area from the mapping that draws it (each
    mapping scaled to the largest node it draws), filled up to its use, labelled with its
    name and every mapped metric it carries; an ellipse of its name otherwise."""
    column = {name: k for k, name in enumerate(topology.metrics)}
    largest = _largest(topology, mappings, drawn)
    styles = []
    for node, name in enumerate(topology.names):
        k, row = int(drawn[node]), topology.values[node]
        if k < 0:
            styles.append({"label": name, "shape": "ellipse", "style": "solid", "fontsize": "10"})
            continue
        m = mappings[k]
        lines = [name]
        for other in [m] + [o for o in mappings if o is not m]:
            capacity, share = _capacity(row, column, other), _share(row, column, other)
            if capacity > 0:
                lines.append(f"{other.size} {_number(capacity)}" + ("" if math.isnan(share) else f" ({share:.0%} used)"))
        side = max(LARGEST * math.sqrt(_capacity(row, column, m) / largest[k]), SMALLEST)
        share = _share(row, column, m)
        styles.append({"shape": m.shape, "width": f"{side:.3f}", "height": f"{side:.3f}", "fixedsize": "true",
                       "label": "", "xlabel": "\n".join(lines), "fontsize": "10", "color": m.colour,
                       "style": "filled", "fillcolor": _filled(m.colour, 0.0 if math.isnan(share) else share),
                       "gradientangle": "90"})
    return styles


def _edge_widths(topology: Topology) -> tuple[np.ndarray, str]:
    """Per edge its pen width, and what it shows (bytes, or messages when none has bytes)."""
    e = topology.edges
    weight, what = (e.bytes, "bytes") if e.bytes.any() else (e.messages, "messages")
    largest = max(int(weight.max(initial=0)), 1)
    if (weight == largest).all():  # nothing to tell apart
        return np.full(len(weight), EVEN), what
    return THINNEST + (WIDEST - THINNEST) * np.sqrt(weight / largest), what


def _window(topology: Topology) -> str:
    """``window A s to B s (D s)``, A and B with the decimals that show D to four digits."""
    duration = (topology.stop - topology.start) / topology.resolution
    decimals = max(0, 3 - math.floor(math.log10(duration))) if duration > 0 else 0
    return (f"window {topology.start / topology.resolution:.{decimals}f} s to "
            f"{topology.stop / topology.resolution:.{decimals}f} s ({duration:.6g} s)")


def _legend(topology: Topology, mappings: list[Mapping], drawn: np.ndarray, title: str, edge_what: str) -> str:
    """The title and the legend as a Graphviz HTML-like table."""
    cut = "the leaf containers" if topology.depth is None else f"the containers of depth {topology.depth}"
    rows = [f'<TR><TD COLSPAN="2"><B>{escape(title)}</B></TD></TR>',
            f'<TR><TD COLSPAN="2">{_window(topology)}; {escape(cut)}, metrics: {topology.aggregate} '
            f'of the time-weighted means below</TD></TR>']
    symbols = {"box": "&#9632;", "diamond": "&#9670;"}
    for m, largest in zip(mappings, _largest(topology, mappings, drawn)):
        if largest <= 0:
            continue
        fill = f"; filled up to {escape(m.fill)} / {escape(m.size)}" if m.fill else ""
        rows.append(f'<TR><TD><FONT COLOR="{m.colour}" POINT-SIZE="16">{symbols.get(m.shape, "&#9679;")}</FONT></TD>'
                    f'<TD ALIGN="LEFT">{escape(m.what)}: area = {escape(m.size)} (largest {_number(largest)})'
                    f'{fill}</TD></TR>')
    largest_edge = int((topology.edges.bytes if edge_what == "bytes" else topology.edges.messages).max(initial=0))
    rows.append(f'<TR><TD><FONT POINT-SIZE="16">&#8212;</FONT></TD><TD ALIGN="LEFT">edge width = {edge_what} '
                f'exchanged in the window (largest {_number(largest_edge)}); dashed grey: none</TD></TR>')
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2">' + "".join(rows) + "</TABLE>>"


def to_dot(topology: Topology, title: str = "Topology", size: str | None = None, fill: str | None = None) -> str:
    """``topology`` as a DOT graph (undirected), mapped by `default_mappings` (``size``,
    ``fill``), with ``title`` and a legend."""
    mappings = default_mappings(topology, size, fill)
    drawn = drawn_by(topology, mappings)
    widths, edge_what = _edge_widths(topology)
    lines = ["graph topology {",
             f"  graph [label={_legend(topology, mappings, drawn, title, edge_what)}, labelloc=t, fontsize=11, "
             'fontname="Helvetica", overlap=false, splines=false, outputorder=edgesfirst, forcelabels=true, pad=0.3];',
             '  node [fontname="Helvetica"]; edge [color="#555555"];']
    for node, style in enumerate(_node_styles(topology, mappings, drawn)):
        attributes = ", ".join(f"{key}={_quoted(value)}" for key, value in style.items())
        lines.append(f"  n{node} [{attributes}, tooltip={_quoted(topology.paths[node])}];")
    e = topology.edges
    for a, b, n, width in zip(e.first.tolist(), e.second.tolist(), e.messages.tolist(), widths.tolist()):
        extra = "" if n else ', style=dashed, color="#bbbbbb"'
        lines.append(f"  n{a} -- n{b} [penwidth={width:.2f}{extra}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
