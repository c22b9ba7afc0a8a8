"""The small locations of a stream built in groups (archive/groups.py): `write_trace`
writes the file of the per-location path of the `Writer` protocol (the builder fed one
location at a time, `add_nodes` after every batch, each location's checkpoints added as it
ends), under both backends, wherever the groups and the CHECKPOINT_TABLE blocks end."""

from __future__ import annotations

import dataclasses

import numpy as np

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccgformat.archive import groups, writer as writer_module
from ccgformat.archive.indexes import recorder
from ccgformat.archive.native import builder as make_builder, walker
from ccgformat.archive.writer import Writer, write_trace
from ccgformat.model import Definitions, EventBatch, Location, LocationRun

from .test_archive_bulk import BACKENDS, backend, params_strategy
from .traces import batches, definitions, traces

LOCATIONS = 8


def many_definitions() -> Definitions:
    return dataclasses.replace(definitions(), locations=[Location(f"rank {i}") for i in range(LOCATIONS)])


def per_location(path, defs, stream, params, options) -> bytes:
    """The file of the per-location path."""
    builder = make_builder(params, defs)
    with Writer(path, threads=1, **options) as writer:
        for location, parts in stream:
            record = recorder(writer.checkpoint_interval) if params.lossless else None
            first_node = len(builder.pool)
            for batch in parts:
                builder.add(location, batch)
                if record is not None:
                    record.add(batch)
                writer.add_nodes(builder.pool)
            root = writer.end_location(builder, location, first_node, sum(map(len, parts)))
            if record is not None:
                writer.add_checkpoints(location, record.finish(root.start))
            else:
                writer.add_location(location, walker(builder.pool, root.root, root.start, location))
        graph = builder.finish()
        for location in sorted(graph.roots.keys() - {location for location, _ in stream}):
            writer.add_location(location, graph.location(location))
        writer.finish(graph)
    return path.read_bytes()


def as_runs(stream, sizes):
    """``stream``'s locations in runs of ``sizes`` locations in turn (`LocationRun` items)."""
    items, start, turn = [], 0, 0
    while start < len(stream):
        chosen = stream[start:start + sizes[turn % len(sizes)]]
        items.append(LocationRun(np.array([location for location, _ in chosen], np.int64),
                                 np.array([sum(map(len, parts)) for _, parts in chosen], np.int64),
                                 EventBatch.concat([batch for _, parts in chosen for batch in parts])))
        start, turn = start + len(chosen), turn + 1
    return iter(items)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), params_strategy, st.permutations(range(LOCATIONS)), st.integers(2, LOCATIONS),
       st.lists(st.integers(1, 3), min_size=LOCATIONS, max_size=LOCATIONS), st.sampled_from([2, 7, 65536]),
       st.sampled_from([1, 2, 3, 4096]), st.sampled_from([1, 10, 1 << 20]), st.sampled_from([3, 4096]),
       st.lists(st.integers(1, 4), min_size=1, max_size=LOCATIONS))
def test_write_trace_groups_write_the_per_location_file(tmp_path_factory, monkeypatch, trace, params, order, fed,
                                                        pieces, interval, per_block, per_group, nodes_per_block,
                                                        run_sizes):
    """The file of the per-location path, whether the locations come one pair each or
    in `LocationRun` items of ``run_sizes`` locations (those of more than ``interval``
    events then fed one by one)."""
    monkeypatch.setattr(writer_module, "CHECKPOINTS_PER_TABLE_BLOCK", per_block)
    monkeypatch.setattr(groups, "EVENTS_PER_GROUP", per_group)
    events = list(trace.values())
    stream = [(location, batches(events[location % len(events)], pieces[location]))
              for location in order[:fed]]
    folder = tmp_path_factory.mktemp("groups")
    options = {"level": 1, "checkpoint_interval": interval, "nodes_per_block": nodes_per_block}
    written = set()
    for name in BACKENDS:
        with backend(name):
            reference = per_location(folder / f"{name}-reference.ccg", many_definitions(), stream, params, options)
            write_trace(folder / f"{name}.ccg", many_definitions(), ((location, iter(parts)) for location, parts
                                                                     in stream), params, threads=1, **options)
            assert (folder / f"{name}.ccg").read_bytes() == reference
            write_trace(folder / f"{name}-runs.ccg", many_definitions(), as_runs(stream, run_sizes), params,
                        threads=1, **options)
            assert (folder / f"{name}-runs.ccg").read_bytes() == reference
            written.add(reference)
    assert len(written) == 1
