"""Logical time streamed (`ccg logical`, `query.logical_spool`): the JSON, the summary and
the picture equal those of the in-memory answer (`Archive.logical`) on every corpus trace
and on generated traces with non-blocking operations and collectives, walked and closed
in small batches; the streamed answer's memory does not grow with the trace's length."""

from __future__ import annotations

import functools
import importlib
import io
import json
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.cli.logical import summary_text
from ccgformat.errors import TraceError
from ccgformat.model import EventKind as K
from ccgformat.query.logical_query import logical
from ccgformat.query.logical_picture import logical_figure
from ccgformat.query.logical_spool import streamed_logical

from .logical_support import build, calls, plans
from .query_support import CORPUS, converted, ring_archive, small_walks

logical_merge = importlib.import_module("ccgformat.query.logical_merge")
logical_stream = importlib.import_module("ccgformat.query.logical_stream")
logical_output = importlib.import_module("ccgformat.query.logical_output")


def small_batches(monkeypatch, walk: int, close: int, window: int) -> None:
    """Locations of more than ``walk`` events walked ``walk`` at a time, the held events
    closed from ``close`` of them, ``window`` events matched at a time; the JSON of a
    location of more than ``walk`` events written ``window`` numbers at a time."""
    monkeypatch.setattr(logical_merge, "WALK_BATCH", walk)
    monkeypatch.setattr(logical_stream, "CLOSE_EVENTS", close)
    monkeypatch.setattr(logical_stream, "STREAM_WINDOW", window)
    monkeypatch.setattr(logical_output, "_AT_ONCE", walk)
    monkeypatch.setattr(logical_output, "_ITEMS", window)


def assert_streamed_equals_whole(source, scheme: str) -> int:
    """The streamed answer writes what the whole one writes; its closed batches."""
    whole = logical(source, scheme)
    expected = io.StringIO()
    whole.write_json(expected)
    assert expected.getvalue() == json.dumps(json.loads(expected.getvalue())) + "\n"  # as json.dumps writes it
    batches = sum(1 for _ in logical_stream.closed_batches(source, scheme, 8))
    with streamed_logical(source, scheme) as streamed:
        written = io.StringIO()
        streamed.write_json(written)
        assert written.getvalue() == expected.getvalue()
        assert summary_text(streamed) == summary_text(whole)
        assert (streamed.steps, streamed.phases, len(streamed)) == (whole.steps, whole.phases, len(whole))
        for rows in (800, 2):  # a row per location; each phase's locations by cluster
            figure, expected_figure = logical_figure(streamed, 1000, rows), logical_figure(whole, 1000, rows)
            assert np.array_equal(figure.pixels, expected_figure.pixels)
            assert np.array_equal(figure.lines, expected_figure.lines)
            assert figure.row_names == expected_figure.row_names
    return batches


@pytest.mark.parametrize("scheme", ["lamport", "ravel"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_streamed_equals_whole_on_the_corpus(tmp_path_factory, monkeypatch, name, scheme):
    """Every corpus trace, its longer locations walked 64 events at a time and the held
    events closed from 16 on: several batches where the trace has messages."""
    archive = converted(tmp_path_factory, name)
    small_batches(monkeypatch, 64, 16, 64)
    try:
        assert_streamed_equals_whole(archive, scheme)
    except TraceError:
        with pytest.raises(TraceError):
            logical(archive, scheme)


@settings(max_examples=60, deadline=None)
@given(plans(), st.sampled_from([(2, 1, 3), (5, 4, 7), (1 << 16, 1 << 20, 1 << 16)]),
       st.sampled_from(["lamport", "ravel"]))
def test_streamed_equals_whole_on_generated_traces(example, sizes, scheme):
    """Blocking, non-blocking (completions reordered) and mixed messages and collectives;
    walked, matched and closed a few events at a time or all at once."""
    trace, _ = example
    graph = build(trace)
    with pytest.MonkeyPatch.context() as patch:
        small_batches(patch, *sizes)
        assert_streamed_equals_whole(graph, scheme)


def test_a_ring_closes_in_many_batches(tmp_path, monkeypatch):
    """A jittered ring: each round is a phase, closed once every message before it is
    received - several batches, each of the rounds the stream has passed."""
    path = ring_archive(tmp_path, 4, 3000)
    small_batches(monkeypatch, 512, 64, 256)
    with ccgformat.open(path) as archive:
        assert assert_streamed_equals_whole(archive, "ravel") >= 4


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=50))
def test_numbers_are_written_as_json_dumps_writes_them(numbers):
    """The JSON's lists of numbers, by the active backend, are those of `json.dumps`."""
    values = np.array(numbers, np.int64)
    expected = json.dumps(numbers)[1:-1]
    assert logical_output.numbers_text(values) == expected
    assert logical_output.numbers_text_reference(values) == expected


class _Sink:
    def write(self, text: str) -> int:
        return len(text)


def streamed_peak(folder, locations: int, events: int) -> tuple[int, int]:
    """The traced peak of `ccg logical --json` (streamed, the text let go) on a ring trace
    of ``events`` events per location, and its communication events."""
    path = ring_archive(folder, locations, events)
    with ccgformat.open(path) as archive:
        with streamed_logical(archive) as warm:  # the modules' first use, outside the trace
            del warm
        tracemalloc.start()
        try:
            with streamed_logical(archive) as answer:
                answer.write_json(_Sink())
                count = len(answer)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return peak, count


def test_streamed_memory_does_not_grow_with_the_trace(tmp_path, monkeypatch):
    """The same ring at 10,000 and 40,000 events per location: 4x the communication
    events, while the peak stays under 8 MiB and the longer within 1.3x the shorter plus
    512 KiB - what grows is a location's spooled events read back to write its JSON (64
    bytes an event: about 0.43 MB at 40,000 events) with a list of its JSON at a time,
    and the phases' few numbers (48 bytes each). Measured: 2.13 and 2.29 MB (native),
    5.13 and 5.89 MB (Python: its decoded blocks and walker memos fill their caches,
    which 6,000 events did not)."""
    small_walks(monkeypatch)
    small_batches(monkeypatch, 1024, 512, 1024)
    peak = functools.partial(streamed_peak, tmp_path, 2)
    short_peak, short_events = peak(10_000)
    long_peak, long_events = peak(40_000)
    assert long_events > 3 * short_events
    assert short_peak < 8 << 20 and long_peak < 8 << 20, (short_peak, long_peak)
    assert long_peak < 1.3 * short_peak + (512 << 10), (short_peak, long_peak)


@pytest.mark.parametrize("scheme", ["lamport", "ravel"])
def test_a_cycle_of_messages_is_an_error_when_streamed(scheme):
    """Both ranks receive before they send: the streamed answer refuses it as the whole one does."""
    graph = build({0: calls([(K.RECV, 1, 0), (K.SEND, 1, 0)]), 1: calls([(K.RECV, 0, 0), (K.SEND, 0, 0)])})
    with pytest.raises(TraceError) as whole:
        logical(graph, scheme)
    with pytest.raises(TraceError) as streamed, streamed_logical(graph, scheme):
        pass
    assert str(streamed.value) == str(whole.value)
