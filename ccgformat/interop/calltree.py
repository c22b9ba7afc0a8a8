"""Call-path profiles for the Python data ecosystem: `CallTree.to_pandas` (a row per call
path and location, or per call path) and `CallTree.to_hatchet`, an ``llnl-hatchet``
GraphFrame - the form Hatchet and Thicket read their profiles into (Hatchet's
``GraphFrame(graph, dataframe, exc_metrics, inc_metrics)``: a `hatchet.node.Node` per
call path, a DataFrame indexed by ``node``, and by ``rank`` for per-process data).
Registered in `ccgformat.interop`, as the other result tables are."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..query.calltree_result import CallTree
from ..extras import require

if TYPE_CHECKING:
    import hatchet
    import pandas as pd

__all__ = ["calltree_frame", "calltree_graphframe"]

#: the GraphFrame's metric columns: exclusive seconds, calls and inclusive seconds
EXCLUSIVE_METRICS = ["time", "calls"]
INCLUSIVE_METRICS = ["time (inc)"]


def _columns(tree: CallTree, per_location: bool) -> dict[str, np.ndarray]:
    """Per row: the path's index, and the location (per location only), calls,
    inclusive and exclusive ticks."""
    if per_location:
        return {"path_id": tree.path, "location": tree.location, "calls": tree.calls, "inclusive": tree.inclusive,
                "exclusive": tree.exclusive}
    calls, inclusive, exclusive = tree.totals()
    return {"path_id": np.arange(len(tree), dtype=np.int64), "calls": calls, "inclusive": inclusive,
            "exclusive": exclusive}


def calltree_frame(tree: CallTree, per_location: bool = True) -> pd.DataFrame:
    """A row per call path and location (``per_location``) or per call path: ``path_id``
    (the path's index), ``parent`` (its parent's, -1 at the top), ``depth``, ``region``
    (name), ``region_id``, ``path`` (the tuple of region names), ``location`` (per
    location only), ``calls``, ``inclusive`` and ``exclusive`` (ticks). The window and the
    timer resolution are in ``DataFrame.attrs``."""
    pd = require("pandas", "CallTree.to_pandas")
    columns = _columns(tree, per_location)
    path = columns["path_id"]
    data = {"path_id": path, "parent": tree.parent[path], "depth": tree.depth[path],
            "region": [tree.region_names[r] for r in tree.region[path].tolist()], "region_id": tree.region[path],
            "path": [tree.names(p) for p in path.tolist()]}
    data.update((name, values) for name, values in columns.items() if name != "path_id")
    frame = pd.DataFrame(data)
    frame.attrs.update(start=tree.start, stop=tree.stop, timer_resolution=tree.timer_resolution)
    return frame


def calltree_graphframe(tree: CallTree, per_location: bool = True) -> hatchet.GraphFrame:
    """The call tree as a Hatchet GraphFrame: a node per call path (frame ``name``: the
    region, ``type``: ``function``); columns ``name``, ``time`` and ``time (inc)``
    (exclusive and inclusive seconds) and ``calls``, indexed by ``node`` and, per location,
    ``rank`` (the location id; every node has a row for every location, 0 where it has no
    time there). The window, the locations and the timer resolution are its metadata."""
    require("hatchet", "CallTree.to_hatchet")
    pd = require("pandas", "CallTree.to_hatchet")
    from hatchet import GraphFrame
    from hatchet.frame import Frame
    from hatchet.graph import Graph
    from hatchet.node import Node

    nodes: list[Node] = []
    for parent, region in zip(tree.parent.tolist(), tree.region.tolist()):
        node = Node(Frame({"name": tree.region_names[region], "type": "function"}),
                    nodes[parent] if parent >= 0 else None)
        if parent >= 0:
            nodes[parent].add_child(node)
        nodes.append(node)
    graph = Graph([node for node, parent in zip(nodes, tree.parent.tolist()) if parent < 0])
    graph.enumerate_traverse()
    columns = _columns(tree, per_location)
    path = columns["path_id"]
    seconds = 1.0 / tree.timer_resolution
    frame = pd.DataFrame({"node": [nodes[p] for p in path.tolist()],
                          "name": [tree.region_names[r] for r in tree.region[path].tolist()],
                          "time": columns["exclusive"] * seconds, "calls": columns["calls"],
                          "time (inc)": columns["inclusive"] * seconds})
    if per_location:  # every (node, rank), as Hatchet's readers give them
        frame["rank"] = columns["location"]
        full = pd.MultiIndex.from_product([nodes, tree.locations], names=["node", "rank"])
        frame = frame.set_index(["node", "rank"]).reindex(full)
        frame["name"] = [tree.region_names[r] for r in np.repeat(tree.region, len(tree.locations)).tolist()]
        frame = frame.fillna({"time": 0.0, "time (inc)": 0.0, "calls": 0}).astype({"calls": np.int64})
    else:
        frame = frame.set_index("node")
    metadata = {"start": tree.start, "stop": tree.stop, "locations": tree.locations,
                "timer_resolution": tree.timer_resolution}
    return GraphFrame(graph, frame.sort_index(), exc_metrics=EXCLUSIVE_METRICS, inc_metrics=INCLUSIVE_METRICS,
                      default_metric="time (inc)", metadata=metadata)
