"""The topology graph of paper 001 (Schnorr, Legrand, Vincent, INRIA RR-8085): the
platform's containers (hosts, links, clusters, sites; MPI ranks and nodes) as nodes
carrying the time-weighted means of their metrics over a window (section 3.2.1,
`metric_means`), aggregated over the resource hierarchy when it is cut at a depth (3.2.2,
`topology_tree`), and joined by the links and messages of the trace (3.1.1,
`topology_edges`). `Archive.topology` answers it; `topology_dot` draws it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..errors import ParameterError
from .graphviz import layout_program, render
from .metric_means import location_means, whole_window
from .topology_edges import Edges, merged_edges, paired_edges
from .topology_dot import to_dot
from .topology_tree import AGGREGATES, aggregate_runs, cut_hierarchy
from .topology_walk import walk_topology

__all__ = ["Topology", "topology"]


@dataclass(frozen=True, eq=False)
class Topology:
    """A topology graph over the window ``[start, stop)`` (ticks; ``resolution`` ticks per
    second). Node ``i``: ``names[i]``, ``paths[i]`` (unique, "/"-joined from the root),
    ``kinds[i]`` (the container type), ``depths[i]``, and ``values[i, k]``, the
    ``aggregate`` of metric ``metrics[k]`` over its sub-tree (NaN where no leaf below it
    carries the metric). ``edges`` join nodes by index."""

    start: int
    stop: int
    resolution: int
    depth: int | None
    aggregate: str
    names: tuple[str, ...]
    paths: tuple[str, ...]
    kinds: tuple[str, ...]
    depths: np.ndarray
    metrics: tuple[str, ...]
    values: np.ndarray
    edges: Edges

    def node_metrics(self, node: int) -> dict[str, float]:
        """The metrics node ``node`` carries: name -> value."""
        return {name: float(value) for name, value in zip(self.metrics, self.values[node].tolist())
                if not math.isnan(value)}

    def to_json(self) -> dict[str, Any]:
        """``{"start", "stop", "nodes": [{"name", "path", "depth", "metrics"}], "edges":
        [{"from", "to", "metrics": {"messages", "bytes"}}]}``, edges naming node paths."""
        e = self.edges
        return {"start": self.start, "stop": self.stop,
                "nodes": [{"name": name, "path": path, "depth": depth, "metrics": self.node_metrics(i)}
                          for i, (name, path, depth) in enumerate(zip(self.names, self.paths, self.depths.tolist()))],
                "edges": [{"from": self.paths[a], "to": self.paths[b], "metrics": {"messages": n, "bytes": size}}
                          for a, b, n, size in zip(e.first.tolist(), e.second.tolist(), e.messages.tolist(),
                                                   e.bytes.tolist())]}

    def write_json(self, out: TextIO) -> None:
        """``json.dump(self.to_json(), out)`` and a newline."""
        json.dump(self.to_json(), out)
        out.write("\n")

    def to_dot(self, title: str = "Topology", size: str | None = None, fill: str | None = None) -> str:
        """The graph as Graphviz DOT with a title and a legend: node area from the metric
        ``size``, filled up to the share ``fill / size`` (default: SimGrid's power and
        bandwidth with their use; `topology_dot`)."""
        return to_dot(self, title, size, fill)

    def save_svg(self, path: str | os.PathLike[str], title: str = "Topology", size: str | None = None,
                 fill: str | None = None, program: str | None = None) -> Path:
        """Draw `to_dot` laid out by Graphviz (``program``; default by the graph's shape,
        `graphviz.layout_program`) as SVG at ``path`` (atomically)."""
        chosen = program or layout_program(len(self.names), len(self.edges.first))
        return render(self.to_dot(title, size, fill), path, chosen)


def _unique_paths(paths: list[str], nodes: np.ndarray) -> tuple[str, ...]:
    """``paths``, a repeated one (siblings of equal names) followed by ``#`` and its
    hierarchy node id."""
    seen: dict[str, int] = {}
    for path in paths:
        seen[path] = seen.get(path, 0) + 1
    return tuple(f"{path}#{node}" if seen[path] > 1 else path for path, node in zip(paths, nodes.tolist()))


def _within(paths: list[str], path: str | None) -> int:
    """The hierarchy node whose path (of ``paths``) is ``path`` (None: the root)."""
    if path is None:
        return 0
    try:
        return paths.index(path)
    except ValueError:
        raise ParameterError(f"no container {path!r} in the hierarchy (paths start at {paths[0]!r})") from None


def topology(archive: Any, start: int | None = None, stop: int | None = None, depth: int | None = None,
             aggregate: str = "sum", within: str | None = None) -> Topology:
    """The topology graph of ``archive`` over ``[start, stop)`` (default: the whole trace,
    `metric_means.whole_window`): the containers of depth ``depth`` (None: every leaf
    container) in the sub-tree ``within`` (a container path; default the root), each with
    the ``aggregate`` ("sum", "mean" or "max") of its leaves' time-weighted means."""
    if aggregate not in AGGREGATES:
        raise ParameterError(f"aggregate must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0):
        raise ParameterError(f"depth must be an integer >= 0 or None, not {depth!r}")
    if start is None or stop is None:  # (a Paje archive's window reads its containers' lifetimes)
        first, last = whole_window(archive)
        start, stop = first if start is None else start, last if stop is None else stop
    start, stop = int(start), int(stop)
    if stop <= start:
        raise ParameterError(f"the window {start}..{stop} is empty")
    hierarchy = archive.hierarchy
    paths = hierarchy.paths()
    cut = cut_hierarchy(hierarchy, depth, _within(paths, within))
    walked = walk_topology(archive, start, stop)
    means = location_means(archive, start, stop, walked)
    values = aggregate_runs(*means.by_leaf(hierarchy), cut, aggregate)
    covered = np.asarray(hierarchy.leaf_locations)[cut.first_leaf[:1].sum():cut.stop_leaf[-1:].sum()]
    node_of_location = np.full(int(hierarchy.leaf_locations.max(initial=-1)) + 1, -1, np.int64)
    node_of_location[covered] = np.repeat(np.arange(len(cut.nodes)), cut.stop_leaf - cut.first_leaf)
    nodes = cut.nodes.tolist()
    return Topology(start, stop, archive.timer_resolution, depth, aggregate,
                    tuple(hierarchy.names[n] for n in nodes),
                    _unique_paths([paths[n] for n in nodes], cut.nodes),
                    tuple(hierarchy.kinds[n] for n in nodes), cut.depths, means.names, values,
                    merged_edges(archive, node_of_location, start, stop) if walked is None or walked.ends is None
                    else paired_edges(walked.ends, node_of_location, start, stop))
