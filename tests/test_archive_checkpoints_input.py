"""Indexes made from the input while writing (lossless, no repair) equal those of a walk
of the built locations; lossy archives keep the indexes of the rebuilt events."""

from __future__ import annotations


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.archive import SectionKind
from ccgformat.archive.indexes import checkpoints, recorder
from ccgformat.graph import Builder

from .test_backend_differential import backend
from .traces import batches, definitions, traces



@settings(max_examples=40, deadline=None)
@given(traces(), st.integers(1, 9), st.integers(1, 6), st.sampled_from(["python", "native"]))
def test_checkpoints_of_the_input_equal_those_of_the_walk(trace, interval, pieces, name):
    builder = Builder(ccg.Params(branching=3), definitions())
    for location, events in trace.items():
        for batch in batches(events):
            builder.add(location, batch)
    graph = builder.finish()
    with backend(name):
        for location, events in trace.items():
            record = recorder(interval)
            for batch in batches(events, pieces):
                record.add(batch)
            walked = graph.location(location)
            assert record.finish(walked.start) == checkpoints(walked, interval)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(max_locations=2), st.integers(1, 9))
def test_a_lossy_archive_indexes_its_rebuilt_events(tmp_path_factory, trace, interval):
    path = tmp_path_factory.mktemp("lossy") / "a.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                    ccg.Params(abs_dev=1000, rel_dev=0.5, rel_size=0.5, branching=3), checkpoint_interval=interval,
                    index="always")
    with ccg.open(path) as archive:
        for location in trace:
            expected = checkpoints(archive.location(location), interval)
            summary = archive.checkpoints(SectionKind.SUMMARY, location)
            assert [(c["index"], c["time"], c["regions"], c["messages"]) for c in summary] == \
                [(p.index, p.time, p.regions, p.messages) for p in expected]
            snapshots = archive.checkpoints(SectionKind.SNAPSHOTS, location)
            assert [(c["stack"], c["metrics"]) for c in snapshots] == [(p.stack, p.metrics) for p in expected]
