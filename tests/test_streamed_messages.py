"""Message matching of a large graph (`streaming.streams`): the message events come from
the locations' events walked in batches instead of the node tables; the answer is the
same, on hypothesis traces (plain, message-heavy, non-blocking) and the corpus. The JSON
of `ccg messages --json` is written a slice of rows at a time, the same text."""

from __future__ import annotations

import importlib
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccgformat.query import messages

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, converted
from .test_query_messages import message_traces, request_traces

streaming = importlib.import_module("ccgformat.query.streaming")


def both(source, monkeypatch, *arguments, **options):
    """`messages` walked in batches (of 3 events: many batches) and from the node tables."""
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    monkeypatch.setattr(streaming, "WALK_BATCH", 3)
    monkeypatch.setattr(importlib.import_module("ccgformat.query.messages"), "tables_for", None)
    walked = messages(source, *arguments, **options)
    monkeypatch.undo()
    monkeypatch.setattr(streaming, "STREAM_NODES", 1 << 62)
    return walked, messages(source, *arguments, **options)


def assert_same(walked, reference):
    assert json.dumps(walked.to_json()) == json.dumps(reference.to_json())
    assert (walked.events, walked.locations) == (reference.events, reference.locations)


@settings(max_examples=60, deadline=None)
@given(st.one_of(traces.traces(), message_traces(), request_traces()), st.data())
def test_walked_message_events_match_the_same(trace, data):
    monkeypatch = pytest.MonkeyPatch()
    try:
        graph = oracle.build(trace)
        times = sorted({e.time for events in trace.values() for e in events})
        start = data.draw(st.one_of(st.none(), st.sampled_from(times)))
        locations = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(sorted(trace)), min_size=1, unique=True)))
        assert_same(*both(graph, monkeypatch, start, None, locations))
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_messages_walked(tmp_path_factory, monkeypatch, name):
    assert_same(*both(converted(tmp_path_factory, name), monkeypatch))


@settings(max_examples=30, deadline=None)
@given(message_traces(), st.integers(1, 5))
def test_json_written_in_slices_is_the_whole_json(trace, rows):
    result = messages(oracle.build(trace))
    out = io.StringIO()
    result.write_json(out, rows_per_write=rows)
    assert out.getvalue() == json.dumps(result.to_json()) + "\n"
