"""Conversion on two cores (issue 35 item 4): `write_trace(overlap=True)` reads the input
in one thread while the builder works in another (small locations' groups built in a
thread, a large location's batches read in a thread). It must write the file the
sequential pass writes, on generated traces and the corpus, under both backends, and
report the first error in input order."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive import groups, writer as writer_module
from ccgformat.archive.writer import write_trace
from ccgformat.errors import FormatError, TraceError
from ccgformat.formats import read
from ccgformat.model import EventBatch, EventKind, Location

from .corpus import corpus_path
from .query_support import CORPUS
from .test_archive_bulk import BACKENDS, backend, params_strategy
from .traces import batches, definitions, traces

LOCATIONS = 8


def both_ways(folder, defs, stream, params, **options) -> bytes:
    """The bytes `write_trace` writes with and without ``overlap``; they must agree."""
    written = []
    for overlap in (False, True):
        path = folder / f"overlap-{overlap}.ccg"
        write_trace(path, defs, ((location, iter(parts)) for location, parts in stream), params, threads=1,
                    overlap=overlap, **options)
        written.append(path.read_bytes())
    assert written[0] == written[1]
    return written[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), params_strategy, st.permutations(range(LOCATIONS)),
       st.lists(st.integers(1, 3), min_size=LOCATIONS, max_size=LOCATIONS), st.sampled_from([2, 7, 65536]),
       st.sampled_from([1, 10, 1 << 20]))
def test_overlap_writes_the_sequential_file(tmp_path_factory, monkeypatch, trace, params, order, pieces, interval,
                                            per_group):
    monkeypatch.setattr(groups, "EVENTS_PER_GROUP", per_group)
    monkeypatch.setattr(writer_module, "CHECKPOINTS_PER_TABLE_BLOCK", 3)
    events = list(trace.values())
    defs = dataclasses.replace(definitions(), locations=[Location(f"rank {i}") for i in range(LOCATIONS)])
    stream = [(location, batches(events[location % len(events)], pieces[location])) for location in order]
    folder = tmp_path_factory.mktemp("overlap")
    files = set()
    for name in BACKENDS:
        with backend(name):
            files.add(both_ways(folder, defs, stream, params, level=1, checkpoint_interval=interval,
                                nodes_per_block=4))
    assert len(files) == 1


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_overlap_writes_the_sequential_file_of_every_corpus_trace(name, tmp_path, monkeypatch):
    monkeypatch.setattr(groups, "EVENTS_PER_GROUP", 64)  # several groups, built one after another
    source = corpus_path(*CORPUS[name])
    written = []
    for overlap in (False, True):
        defs, streams = read(source)
        path = tmp_path / f"overlap-{overlap}.ccg"
        write_trace(path, defs, streams, checkpoint_interval=256, overlap=overlap)
        written.append(path.read_bytes())
    assert written[0] == written[1]
    events = sum(len(batch) for _, location in read(source)[1] for batch in location)
    with ccgformat.open(tmp_path / "overlap-True.ccg") as archive:
        assert sum(len(archive.location(i)) for i in archive.locations) == events


@pytest.mark.parametrize("cores", [1, 2])
def test_by_default_the_input_is_read_ahead_only_with_another_core(tmp_path, monkeypatch, cores):
    """Without ``overlap`` the native builder reads a large location in a thread when the
    process may run on more than one core (`compression.default_threads`, the cores of
    its affinity: ``mpirun`` binds a rank to one, where the thread only took turns with
    the builder); the file is the same either way."""
    started, original = [], writer_module.locations_ahead

    def recorded(pairs):
        started.append(True)
        return original(pairs)

    monkeypatch.setattr(writer_module, "default_threads", lambda: cores)
    monkeypatch.setattr(writer_module, "locations_ahead", recorded)
    large = [EventBatch.from_events(call(10 * step)) for step in range(4)]
    with backend("native"):
        write_trace(tmp_path / "default.ccg", definitions(), iter([(0, iter(large))]), checkpoint_interval=2)
        write_trace(tmp_path / "sequential.ccg", definitions(), iter([(0, iter(large))]), checkpoint_interval=2,
                    overlap=False)
    assert started == ([True] if cores > 1 else [])
    assert (tmp_path / "default.ccg").read_bytes() == (tmp_path / "sequential.ccg").read_bytes()


def call(time: int) -> list[tuple[int, int, int]]:
    return [(time, EventKind.ENTER, 0), (time + 1, EventKind.LEAVE, 0)]


def test_the_first_error_in_input_order_is_raised(tmp_path, monkeypatch):
    """Location 0 breaks the nesting (the builder finds it, in the group's thread);
    location 2's input fails while it is read. Both ways report location 0."""
    monkeypatch.setattr(groups, "EVENTS_PER_GROUP", 2)
    broken = EventBatch.from_events([(0, EventKind.ENTER, 0), (1, EventKind.LEAVE, 1)])

    def stream() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        yield 0, iter([broken])
        yield 1, iter([EventBatch.from_events(call(10))])
        raise FormatError("the input is cut short", path="input")

    defs = dataclasses.replace(definitions(), locations=[Location(f"rank {i}") for i in range(3)])
    for overlap in (False, True):
        target = tmp_path / f"overlap-{overlap}.ccg"
        with pytest.raises(TraceError) as error:
            write_trace(target, defs, stream(), overlap=overlap)
        assert error.value.location == 0
        assert not target.exists()


def test_an_error_inside_a_large_location_read_ahead_is_raised(tmp_path):
    """A location of more than a checkpoint interval is read in a thread of its own:
    what its input raises reaches the caller, and no file is left."""
    def large() -> Iterator[EventBatch]:
        for step in range(3):
            yield EventBatch.from_events(call(10 * step))
        raise FormatError("the event file changed while it was read", path="input")

    target = tmp_path / "large.ccg"
    with pytest.raises(FormatError, match="changed while it was read"):
        write_trace(target, definitions(), iter([(0, large())]), checkpoint_interval=2, overlap=True)
    assert not target.exists()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=6), max_size=12), st.lists(st.integers(0, 7), min_size=12,
                                                                                  max_size=12),
       st.sampled_from([1, 2, 1 << 16]), st.sampled_from([1, 3, 4096]))
def test_locations_ahead_hands_on_every_location_and_the_batches_taken(sizes, taken, per_run, entries_per_run):
    """`ahead.locations_ahead` yields the input's locations in order; each location's
    batches are those of the input, also when the consumer takes only a prefix of them."""
    import ccgformat.ahead as ahead

    def streams():
        for location, lengths in enumerate(sizes):
            yield location, iter([list(range(length)) for length in lengths])

    previous = ahead.EVENTS_PER_RUN, ahead.ENTRIES_PER_RUN
    ahead.EVENTS_PER_RUN, ahead.ENTRIES_PER_RUN = per_run, entries_per_run
    try:
        seen = []
        for location, stream in ahead.locations_ahead(streams()):
            seen.append((location, [batch for batch, _ in zip(stream, range(taken[location]))]))
    finally:
        ahead.EVENTS_PER_RUN, ahead.ENTRIES_PER_RUN = previous
    assert seen == [(location, [list(range(length)) for length in lengths][:taken[location]])
                    for location, lengths in enumerate(sizes)]
