"""Writing a whole trace held as columns (every location's events in one batch, with
location offsets) without a Python step per location: the graph is built in one builder
call (`add_locations`), every small location is walked back in one call
(`native.walk_locations`) and its end checkpoint computed with numpy
(`checkpoint_columns.end_checkpoints`); only locations of more than one checkpoint
interval, or whose calls do not balance, take the per-location path of
`indexes.checkpoints`; a lossless graph's small locations are not walked at all: their
input is their events. The file is the one `save_graph` writes of the same graph."""

from __future__ import annotations

import os

import numpy as np

from ..graph.graph import Graph, root_columns
from ..bulkstep import bulk_step
from ..model import Definitions, EventBatch
from ..params import Params
from .checkpoint_columns import CheckpointColumns
from .groups import location_checkpoints
from .native import builder as make_builder
from .samples import MetricSamples
from .writer import AGGREGATION_BUDGET, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_NODES_PER_BLOCK, Writer, index_kept


def graph_checkpoints(graph: Graph, interval: int, path: str | None = None) -> CheckpointColumns:
    """The checkpoints of every location of ``graph`` (`indexes.checkpoints` of each)."""
    locations, roots, starts, _, counts = root_columns(graph.roots)
    return location_checkpoints(graph.pool, locations, roots, starts, counts, interval, path)


def write_graph(path: str | os.PathLike[str], graph: Graph, *, level: int | None = None,
                checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, checkpoints: CheckpointColumns | None = None,
                samples: MetricSamples | None = None, aggregation: float | None = AGGREGATION_BUDGET,
                index: str = "auto") -> None:
    """Write a built graph: its nodes, then the checkpoints of all its locations
    (``checkpoints`` when given, else `graph_checkpoints`) unless the file gets no index
    (`index_kept`); ``samples``: as for `Writer.finish`, ``aggregation`` and
    ``index`` as for `Writer`."""
    with Writer(path, level=level, checkpoint_interval=checkpoint_interval, nodes_per_block=nodes_per_block,
                aggregation=aggregation, metrics=len(graph.definitions.metrics), index=index) as writer:
        writer.add_nodes(graph.pool, final=True)
        if index_kept(index, graph):
            writer.add_checkpoint_columns(graph_checkpoints(graph, checkpoint_interval, str(path))
                                          if checkpoints is None else checkpoints)
        writer.finish(graph, samples)


def write_table(path: str | os.PathLike[str], definitions: Definitions, batch: EventBatch, offsets: np.ndarray,
                params: Params = Params(), *, locations: np.ndarray | None = None, repair: bool = False,
                level: int | None = None, checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL,
                nodes_per_block: int = DEFAULT_NODES_PER_BLOCK, aggregation: float | None = AGGREGATION_BUDGET,
                index: str = "auto") -> Graph:
    """Build and write an archive of a whole trace held as columns: location
    ``locations[i]`` (default i) holds the events ``offsets[i]:offsets[i + 1]`` of
    ``batch``. Defined locations left out are written without events. Returns the graph.
    ``aggregation``, ``index``: as for `Writer`.

    When the graph is lossless, and locations 0, 1, ... are its only ones, each of at most
    one checkpoint interval, their checkpoints are made from ``batch`` (the events the
    graph gives back) instead of from a walk of the graph; so are the metric tables' samples
    when it is lossless."""
    with bulk_step():
        builder = make_builder(params, definitions, repair=repair)
        fed = np.arange(len(offsets) - 1) if locations is None else np.asarray(locations, np.int64)
        roots = builder.add_locations(fed, batch, offsets)
        graph = builder.finish()
        gives_back = params.lossless and not repair  # the graph's events are its input
        samples = None
        if gives_back and definitions.metrics:
            samples = MetricSamples()
            samples.add(fed, batch, offsets)
        from_input = gives_back and len(graph.roots) == len(fed) and index_kept(index, graph) \
            and np.array_equal(fed, np.arange(len(fed))) and bool((roots[:, 3] <= checkpoint_interval).all())
        write_graph(path, graph, level=level, checkpoint_interval=checkpoint_interval,
                    nodes_per_block=nodes_per_block,
                    checkpoints=location_checkpoints(graph.pool, fed, roots[:, 0], roots[:, 1], roots[:, 3],
                                                     checkpoint_interval, str(path), events=batch)
                    if from_input else None, samples=samples, aggregation=aggregation, index=index)
    return graph

