"""A .ccg archive as a conversion source (`ccgformat.convert` rebuilds it with new
parameters): its small locations are read many at a time (`formats._ccg_locations`), the
long ones streamed, and the rebuilt archive gives back every location's events."""

from __future__ import annotations

import dataclasses
import importlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.model import EventBatch

from . import traces

formats = importlib.import_module("ccgformat.formats")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces.traces(max_locations=3), st.integers(0, 12), st.integers(1, 3))
def test_a_rebuilt_archive_gives_back_every_location(tmp_path_factory, monkeypatch, trace, small, per_read):
    """With ``small`` events the most a location read with others may hold and
    ``per_read`` locations read at once, the rebuilt archive's events per location and
    its definitions equal the source's (lossless), whatever the mix."""
    monkeypatch.setattr(formats, "CCG_SMALL_LOCATION", small)
    monkeypatch.setattr(formats, "CCG_LOCATIONS_PER_READ", per_read)
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
            got = EventBatch.concat(list(rebuilt.location(location).events()))
            assert got.equals(want), location
            assert want.equals(EventBatch.from_events(trace.get(location, [])))
