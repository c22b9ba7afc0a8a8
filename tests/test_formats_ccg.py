"""A .ccg archive as a conversion source (`ccgformat.convert` rebuilds it with new
parameters) reads its locations through `Archive.location_events`: the small ones many at
a time, the long ones streamed. Both give back every location's events."""

from __future__ import annotations

import dataclasses
import importlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.model import EventBatch

from . import traces

reader = importlib.import_module("ccgformat.archive.reader")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces.traces(max_locations=3), st.integers(0, 12), st.integers(1, 3), st.data())
def test_location_events_are_each_locations_events(tmp_path_factory, monkeypatch, trace, small, per_read, data):
    """With ``small`` events the most a location read with others may hold and
    ``per_read`` locations read at once, every chosen location with events comes once,
    with its events in order."""
    monkeypatch.setattr(reader, "LOCATIONS_PER_READ", per_read)
    path = tmp_path_factory.mktemp("ccg") / "a.ccg"
    ccgformat.write_trace(path, traces.definitions(),
                          ((location, traces.batches(events)) for location, events in trace.items()))
    with ccgformat.open(path) as archive:
        chosen = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(archive.locations), unique=True)))
        got = {location: EventBatch.concat(list(batches))
               for location, batches in archive.location_events(chosen, batch_size=small)}
        wanted = archive.locations if chosen is None else chosen
        assert sorted(got) == sorted(location for location in wanted if trace.get(location))
        for location, batch in got.items():
            assert batch.equals(EventBatch.from_events(trace[location]))


@settings(max_examples=20, deadline=None)
@given(traces.traces(max_locations=3))
def test_a_rebuilt_archive_gives_back_every_location(tmp_path_factory, trace):
    """The rebuilt archive's events per location and its definitions (lossless) equal the
    source's."""
    folder = tmp_path_factory.mktemp("ccg")
    ccgformat.write_trace(folder / "a.ccg", traces.definitions(),
                          ((location, traces.batches(events)) for location, events in trace.items()))
    report = ccgformat.convert(folder / "a.ccg", folder / "b.ccg")
    assert report.format == "ccg"
    with ccgformat.open(folder / "a.ccg") as source, ccgformat.open(folder / "b.ccg") as rebuilt:
        assert rebuilt.locations == source.locations
        assert dataclasses.replace(rebuilt.definitions, provenance={}) == \
            dataclasses.replace(source.definitions, provenance={})
        for location in source.locations:
            want = EventBatch.concat(list(source.location(location).events()))
            assert EventBatch.concat(list(rebuilt.location(location).events())).equals(want), location
