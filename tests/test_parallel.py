"""The pieces of ``--mpi`` that need no MPI: the split of locations into shares, a
conversion of a subset of an OTF2 trace's locations, and the reductions of the parallel
queries (partial profiles joined, model rows stacked, message events merged into time
order), each against the serial answer over every location. tests/test_parallel_mpi.py
runs them on ranks."""

from __future__ import annotations

import dataclasses
import importlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ccgformat as ccg
from ccgformat.archive.merge import Writes
from ccgformat.archive import primed_lzma, write_trace
from ccgformat.archive import writer as writer_module
from ccgformat.archive.layout import SectionKind
from ccgformat.archive.writer import extension_table
from ccgformat.errors import ParallelError
from ccgformat.archive.native import builder as make_builder
from ccgformat.formats import otf2 as otf2_format, read
from ccgformat.formats.common import StringTable
from ccgformat.model import EventBatch, EventKind, location_pairs
from ccgformat.params import Params
from ccgformat.parallel import gather
from ccgformat.parallel.convert import owner_of_range, part_ranges
from ccgformat.parallel.distribute import Sender
from ccgformat.parallel.queries import _in_time_order, _message_events
from ccgformat.parallel import world
from ccgformat.parallel.world import no_delay, one_node_transport, split
from ccgformat.query.messages_query import MessageStream
from ccgformat.query.profile_query import ProfileParts, profile_parts

from .corpus import corpus_path
from .parallel_support import location_rows
from .test_formats_otf2 import CORPUS_TRACES
from .traces import batches, definitions, traces

ROOT = Path(__file__).resolve().parent.parent
#: the module (`ccgformat.parallel.convert` is its function)
parallel_convert = importlib.import_module("ccgformat.parallel.convert")


@given(st.lists(st.integers(0, 1000), max_size=40), st.integers(1, 9))
def test_split_gives_consecutive_ranges_of_about_equal_weight(weights, parts):
    ranges = split(np.array(weights), parts)
    assert len(ranges) == parts
    assert ranges[0][0] == 0 and ranges[-1][1] == len(weights)
    assert all(a <= b for a, b in ranges) and all(b == c for (_, b), (c, _) in zip(ranges[:-1], ranges[1:]))
    if weights:  # no range exceeds an equal share by more than its heaviest item
        total, heaviest = sum(weights), max(weights)
        for a, b in ranges:
            assert sum(weights[a:b]) <= total / parts + heaviest + 1e-6


@given(st.lists(st.integers(0, 1000), max_size=40), st.integers(1, 9), st.floats(0.05, 4))
def test_split_gives_the_first_range_its_share(weights, parts, first):
    """The first range holds ``first`` times what each other holds: ``first / (first +
    parts - 1)`` of the total, give or take its heaviest item."""
    ranges = split(np.array(weights), parts, first)
    assert len(ranges) == parts and ranges[0][0] == 0 and ranges[-1][1] == len(weights)
    assert all(b == c for (_, b), (c, _) in zip(ranges[:-1], ranges[1:]))
    if weights:
        total, heaviest = sum(weights), max(weights)
        shares = [first] + [1.0] * (parts - 1)
        for (a, b), share in zip(ranges, shares):
            assert sum(weights[a:b]) <= total * share / sum(shares) + heaviest + 1e-6


@pytest.mark.parametrize("environment, pml", [
    ({"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, "ob1"),  # one node: shared memory
    ({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, None),  # two nodes: Open MPI's choice
    ({"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_MCA_pml": "ucx"}, "ucx"),  # the user's
    ({}, None),  # not started by Open MPI's mpirun
])
def test_ranks_of_one_node_initialise_mpi_without_probing_fabrics(environment, pml):
    environment = dict(environment)
    one_node_transport(environment)
    assert environment.get("OMPI_MCA_pml") == pml


def test_tcp_connections_of_the_process_send_small_writes_at_once(tmp_path):
    """`no_delay` turns Nagle's algorithm off on TCP sockets (as MPI_Init leaves the PMIx
    connection to mpirun) and leaves every other descriptor as it was, open."""
    left, right = socket.socketpair()
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as client, left, right, \
            open(tmp_path / "file", "wb") as file:
        accepted, _ = server.accept()
        with accepted:
            tcp = [client, accepted]
            assert [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in tcp] == [0, 0]
            descriptors = [s.fileno() for s in (server, client, accepted, left)] + [file.fileno(), 10 ** 6]
            assert no_delay(descriptors) == 3  # the listening socket too; not the local pair, the file, a closed number
            assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in tcp)
            client.sendall(b"still open")
            assert accepted.recv(10) == b"still open"
            left.sendall(b"x")
            assert right.recv(1) == b"x"
            file.write(b"open")


class _Mailbox:
    """Rank 0 and rank EXTENSIONS_RANK in one process: what the latter sends rank 0
    waits until rank 0 receives it."""

    def __init__(self):
        self.sent: list = []

    def send(self, value, rank):
        assert rank == 0
        self.sent.append(value)

    def receive(self, rank):
        assert rank == parallel_convert.EXTENSIONS_RANK and self.sent  # else a real rank 0 would wait forever
        return self.sent.pop(0)


EXTENSIONS = {"otf2": {"version": 2, "calls": [["String", [0, "main"]]]}}


@pytest.mark.parametrize("merge_asks", [True, False], ids=["asked", "merge failing first"])
def test_the_extensions_rank_hands_rank_0_the_extension_table(monkeypatch, merge_asks):
    """Rank EXTENSIONS_RANK encodes the extensions the parts leave out while rank 0
    merges; rank 0 takes its message whatever the merge does, so neither waits forever."""
    box, given = _Mailbox(), []

    def merge(parts, target, rows, moved, extensions, **writes):
        assert writes == dataclasses.asdict(Writes())
        if not merge_asks:
            raise OSError("disk full")
        given.append(extensions())

    monkeypatch.setattr(parallel_convert, "merge_archives", merge)
    parallel_convert._send_extensions(box, EXTENSIONS)
    if merge_asks:
        parallel_convert._merge(box, [], Path("t.ccg"), (), (), True, Writes())
        assert given == [extension_table(EXTENSIONS)]
    else:
        with pytest.raises(OSError, match="disk full"):
            parallel_convert._merge(box, [], Path("t.ccg"), (), (), True, Writes())
    assert box.sent == []


@pytest.mark.parametrize("extensions", [EXTENSIONS, {"otf2": {"calls": [["Location", [i, f"rank {i}", 1, 50, i]]
                                                                   for i in range(5000)]}}],
                         ids=["few", "a table's worth"])
@pytest.mark.parametrize("bundled", [True, False], ids=["bundled", "each block alone"])
def test_extensions_encoded_elsewhere_write_the_same_file(tmp_path, monkeypatch, extensions, bundled):
    """The gathered way's rank 0 writes with the extension table and its frame that
    another rank made (`Writer`'s ``encoded_extensions``): the file of the writer that
    encodes them itself, whether the blocks are bundled or stored alone (the frame's)."""
    if not bundled:
        monkeypatch.setattr(writer_module, "BUNDLE_RAW_BYTES", 0)
    trace = {0: [(1, int(EventKind.ENTER), 0), (5, int(EventKind.LEAVE), 0)]}
    defined = dataclasses.replace(definitions(), extensions=extensions)
    files = []
    for name, encoded in [("itself", None), ("elsewhere", lambda: extension_table(extensions))]:
        write_trace(tmp_path / f"{name}.ccg", defined, [(0, batches(trace[0], 1))], encoded_extensions=encoded)
        files.append((tmp_path / f"{name}.ccg").read_bytes())
    assert files[0] == files[1]
    with ccg.open(tmp_path / "elsewhere.ccg") as archive:
        assert archive.definitions.extensions == extensions


def test_a_failure_to_encode_the_extensions_fails_rank_0s_merge(monkeypatch):
    box = _Mailbox()
    monkeypatch.setattr(parallel_convert, "extension_table", lambda extensions: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        parallel_convert._send_extensions(box, EXTENSIONS)
    monkeypatch.setattr(parallel_convert, "merge_archives",
                        lambda parts, target, rows, moved, extensions, **writes: extensions())
    with pytest.raises(ParallelError, match=f"rank {parallel_convert.EXTENSIONS_RANK} failed: division by zero"):
        parallel_convert._merge(box, [], Path("t.ccg"), (), (), True, Writes())
    assert box.sent == []


def test_without_extensions_rank_0_merges_alone(monkeypatch):
    box, given = _Mailbox(), []
    monkeypatch.setattr(parallel_convert, "merge_archives",
                        lambda parts, target, rows, moved, extensions, **writes: given.append(extensions))
    parallel_convert._merge(box, [], Path("t.ccg"), (), (), False, Writes())
    assert given == [None]


def test_the_transport_is_chosen_before_mpi_starts(monkeypatch):
    """MPI_Init reads the variable: it is set before mpi4py.MPI is imported (the import
    recorded here, not run)."""
    imported: dict[str, str | None] = {}
    monkeypatch.setattr(world.importlib, "import_module",
                        lambda name: imported.setdefault(name, os.environ.get("OMPI_MCA_pml")))
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "3")
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3")
    monkeypatch.delenv("OMPI_MCA_pml", raising=False)
    world._mpi()
    assert imported["mpi4py.MPI"] == "ob1"


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_every_range_has_one_owner_and_rank_0_the_last(size):
    assert sorted(owner_of_range(k, size) for k in range(size)) == list(range(size))
    assert owner_of_range(size - 1, size) == 0
    assert sum(b - a for a, b in part_ranges(7, size)) == 7


@pytest.mark.parametrize("parts", CORPUS_TRACES, ids=lambda parts: parts[-1])
def test_a_subset_of_otf2_locations_converts_to_their_events_alone(tmp_path, parts):
    """`convert(locations=...)`: the chosen locations' events as in the whole conversion,
    the other defined locations present without events."""
    source = corpus_path(*parts)
    ccg.convert(source, tmp_path / "all.ccg")
    with ccg.open(tmp_path / "all.ccg") as whole:
        count = len(whole.locations)
        chosen = set(range(count)[1::2])
        ccg.convert(source, tmp_path / "part.ccg", locations=lambda n: sorted(chosen))
        with ccg.open(tmp_path / "part.ccg") as part:
            assert part.locations == whole.locations
            for location in whole.locations:
                if location in chosen:
                    assert location_rows(part, location) == location_rows(whole, location)
                else:
                    assert part.roots[location].events == 0


def _archive(tmp_path: Path, trace: dict) -> ccg.Archive:
    path = tmp_path / "trace.ccg"
    write_trace(path, definitions(), [(location, batches(events)) for location, events in trace.items()])
    return ccg.open(path)


def _shares(locations: list[int], cuts: list[int]) -> list[list[int]]:
    bounds = [0, *sorted(min(c, len(locations)) for c in cuts), len(locations)]
    return [locations[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


@given(traces(), st.lists(st.integers(0, 3), max_size=3), st.sampled_from([(None, None), (0, None), (5, 10**12)]))
def test_profiles_of_shares_joined_equal_the_profile(tmp_path_factory, trace, cuts, window):
    start, stop = window
    with _archive(tmp_path_factory.mktemp("p"), trace) as archive:
        parts = [profile_parts(archive, start, stop, share) for share in _shares(archive.locations, cuts)]
        joined = ProfileParts.joined(parts).result(archive.definitions, start, stop)
        assert joined.to_json() == archive.profile(start, stop).to_json()


@given(traces(), st.lists(st.integers(0, 3), max_size=3), st.sampled_from(["region", "group"]))
def test_models_of_shares_stacked_equal_the_model(tmp_path_factory, trace, cuts, states):
    with _archive(tmp_path_factory.mktemp("a"), trace) as archive:
        whole = archive.aggregate(5, states=states)
        stacked = np.concatenate([archive.aggregate(5, states=states, locations=share).values
                                  for share in _shares(archive.locations, cuts)])
        assert np.array_equal(stacked, whole.values)


@given(traces(), st.lists(st.integers(0, 3), max_size=3), st.integers(1, 7))
def test_message_events_of_shares_merged_match_as_the_serial_stream(tmp_path_factory, trace, cuts, window):
    """The ranks' message events merged into time order and matched on rank 0: the same
    messages, unmatched events and collectives as matching over every location."""
    with _archive(tmp_path_factory.mktemp("m"), trace) as archive:
        parts = [_message_events(archive, share, window) for share in _shares(archive.locations, cuts)]
        merged = MessageStream(archive, None, None, None, window, False, _in_time_order(parts, window)).collect()
        serial = archive.messages()
        assert merged.to_json() == serial.to_json()


def test_corpus_messages_of_two_shares_match_as_the_serial_stream(tmp_path):
    source = corpus_path(*CORPUS_TRACES[-1])
    ccg.convert(source, tmp_path / "t.ccg")
    with ccg.open(tmp_path / "t.ccg") as archive:
        half = len(archive.locations) // 2
        parts = [_message_events(archive, share, 64) for share in (archive.locations[:half], archive.locations[half:])]
        merged = MessageStream(archive, None, None, None, 64, False, _in_time_order(parts, 64)).collect()
        assert merged.to_json() == archive.messages().to_json()
        assert len(merged) > 100


def test_without_mpi_nothing_imports_mpi4py(tmp_path):
    """A conversion and every query that has --mpi, run without it, import no mpi4py."""
    npz = tmp_path / "t.npz"
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(npz), "--locations", "2",
                    "--events-per-location", "200"], check=True, capture_output=True)
    code = f"""
import sys
from ccgformat.cli import main
archive = {str(tmp_path / 't.ccg')!r}
assert main(["convert", "-q", {str(npz)!r}, archive]) == 0
for argv in (["profile"], ["messages"], ["aggregate", "--slices", "3"], ["verify"]):
    assert main([argv[0], archive, *argv[1:]]) in (0, 1)
assert "mpi4py" not in sys.modules, "mpi4py imported"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_parts_keep_the_definitions_growing_while_they_stream(tmp_path):
    """A part's definitions are the trace's, with the strings its own events interned."""
    source = corpus_path(*CORPUS_TRACES[-1])
    ccg.convert(source, tmp_path / "all.ccg")
    ccg.convert(source, tmp_path / "part.ccg", locations=[0])
    with ccg.open(tmp_path / "all.ccg") as whole, ccg.open(tmp_path / "part.ccg") as part:
        mine, every = part.definitions, whole.definitions
        assert every.strings[:len(mine.strings)] == mine.strings
        assert dataclasses.replace(mine, strings=every.strings) == every


def test_a_small_part_is_written_in_the_block_layout_without_the_compact_trials(tmp_path, monkeypatch):
    """A part is read once, by the merge: a small one bundles its small sections as the
    serial writer does (the merge then encodes the definitions as the serial file does)
    but is never written in the compact layout, whose trials (the primed LZMA2 body, the
    zstd dictionaries) took 0.022 s of each rank's 0.10 s part of a 1 M-event regular
    trace. The serial conversion of the same locations is compact: the trials run there."""
    coded = []
    real = primed_lzma.compress
    monkeypatch.setattr(primed_lzma, "compress", lambda raw: coded.append(len(raw)) or real(raw))
    source = corpus_path(*CORPUS_TRACES[0])
    ccg.convert(source, tmp_path / "serial.ccg", locations=[0])
    assert coded, "the serial conversion tried the compact layout's bodies"
    coded.clear()
    part = tmp_path / "part.ccg"
    trace = read(source, "otf2", lambda count: range(0, 1))
    parallel_convert._part(None, source, part, "otf2", Params(), trace, dict(parallel_convert.PART_OPTIONS))
    assert coded == []
    with ccg.open(tmp_path / "serial.ccg") as serial, ccg.open(part) as written:
        assert serial.version[0] == 2  # the compact layout (spec 2.7)
        assert written.version[0] == 1
        assert SectionKind.DICTIONARY_BUNDLE in {entry.kind for entry in written.directory}
        assert {**written.definitions.to_dict(), "extensions": {}} == {**serial.definitions.to_dict(), "extensions": {}}
        assert written.stats.events == serial.stats.events


def test_mpi_without_mpi4py_names_the_extra(tmp_path, monkeypatch, capsys):
    from ccgformat.cli import main

    monkeypatch.setitem(sys.modules, "mpi4py", None)  # an import of it raises ImportError
    archive = ROOT / "spec" / "vectors" / "metric_integrals.ccg"
    assert main(["profile", str(archive), "--mpi"]) == 1
    assert "pip install 'ccgformat[mpi]'" in capsys.readouterr().err


class _Loopback:
    """A world of rank 0 and reading ranks in one process: every message sent is queued
    for rank 0 at once (each request complete), taken in order from its sender."""

    def __init__(self, rank: int = 1):
        self.rank, self.size = rank, 2
        self.queues: dict[int, list] = {}
        self.comm = self

    def isend(self, message, dest):
        assert dest == 0
        self.queues.setdefault(self.rank, []).append(message)
        return None

    def wait(self, request):
        pass

    def receive(self, rank):
        return self.queues[rank].pop(0)


def _with_strings(events: list, texts: list[str], table) -> EventBatch:
    """``events`` with every GENERIC event's ref and value the ids of two of ``texts`` in ``table``."""
    rows = []
    for position, event in enumerate(events):
        if event.kind == EventKind.GENERIC:
            event = event._replace(ref=table(texts[position % len(texts)]),
                                   value=table(texts[-1 - position % len(texts)]))
        rows.append(event)
    return EventBatch.from_events(rows)


@given(traces(), st.lists(st.text(max_size=3), min_size=1, max_size=6), st.lists(st.text(max_size=3), max_size=4),
       st.sampled_from([1, 3, 1 << 30]), st.integers(1, 3))
def test_locations_read_on_a_rank_reach_rank_0_with_its_string_ids(trace, texts, known, pack, pieces):
    """`gather`: what a reading rank sends (its locations in ``pieces`` batches each, packed
    `pack` events at most: a location in several messages, or many in one) reaches rank 0
    as the same locations, each whole and once, and events, each GENERIC text named by
    rank 0's id for it: the texts rank 0 knew keep theirs, the new ones are appended in
    the reader's order of first use."""
    reader_strings: list[str] = []
    reader = StringTable(reader_strings)
    sent = [(location, batches(list(_with_strings(events, texts, reader).rows()), pieces))
            for location, events in trace.items()]
    world = _Loopback()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gather, "PACK_EVENTS", pack)
        gather.send_locations(Sender(world, 0), iter(sent), reader_strings)
    rank0_strings = list(dict.fromkeys(known))
    expected_strings = list(dict.fromkeys(known + reader_strings))
    received = [(location, list(batches)) for location, batches in
                location_pairs(gather.Gathered(world, [1], rank0_strings).locations())]
    assert rank0_strings == expected_strings
    assert [location for location, _ in received] == [location for location, _ in sent]
    for (_, got), (_, want) in zip(received, sent):
        got_events = [event for batch in got for event in batch.rows()]
        want_events = [event for batch in want for event in batch.rows()]
        assert len(got_events) == len(want_events)
        for mine, theirs in zip(got_events, want_events):
            if theirs.kind == EventKind.GENERIC:
                assert (rank0_strings[mine.ref], rank0_strings[mine.value]) == \
                       (reader_strings[theirs.ref], reader_strings[theirs.value])
                mine = mine._replace(ref=theirs.ref, value=theirs.value)
            assert mine == theirs
    assert world.queues[1] == []


def test_a_reading_rank_failing_fails_rank_0_which_takes_the_rest():
    world = _Loopback()

    def broken():
        yield 0, [EventBatch.from_events([(5, int(EventKind.ENTER), 0)])]
        raise OSError("disk gone")
    with pytest.raises(OSError, match="disk gone"):
        gather.send_locations(Sender(world, 0), broken(), [])
    gathered = gather.Gathered(world, [1], [])
    with pytest.raises(ParallelError, match="rank 1 failed: disk gone"):
        list(gathered.locations())
    gathered.drain()
    assert world.queues[1] == []


@given(st.integers(0, 10**6), st.integers(2, 9))
def test_the_gathered_ranges_give_rank_0_the_smaller_share(count, size):
    ranges = parallel_convert.gathered_ranges(count, size)
    assert ranges[0][0] == 0 and ranges[-1][1] == count
    assert all(b == c for (_, b), (c, _) in zip(ranges[:-1], ranges[1:]))
    lengths = [b - a for a, b in ranges]
    assert all(length >= 0 for length in lengths)
    others = lengths[1:]
    assert max(others) - min(others) <= 1
    assert lengths[0] <= round(parallel_convert.GATHERED_RANK0_SHARE * max(others)) + 1
    # rank 0 opens the parts' first range before the way is chosen: it must hold the gathered one
    assert ranges[0][1] <= part_ranges(count, size)[0][1]


def test_the_sampled_bytes_of_an_otf2_location_are_its_event_files_mean():
    """Every event file of a trace of at most SAMPLED_EVENT_FILES locations: their mean."""
    for parts in CORPUS_TRACES:
        source = corpus_path(*parts)
        files = list((source / "traces").glob("*.evt")) if source.is_dir() else \
            list(source.with_suffix("").glob("*.evt"))
        assert 0 < len(files) <= otf2_format.SAMPLED_EVENT_FILES
        assert otf2_format.location_bytes(source) == sum(f.stat().st_size for f in files) / len(files)
    assert otf2_format.location_bytes(ROOT / "no such trace") is None


def test_only_small_locations_of_a_small_trace_may_be_gathered():
    small, limit = parallel_convert.GATHERED_LOCATION_BYTES, parallel_convert.GATHERED_BYTES
    assert parallel_convert.may_gather(small, limit // small)
    assert not parallel_convert.may_gather(small + 1, 10)
    assert not parallel_convert.may_gather(small, limit // small + 1)
    assert not parallel_convert.may_gather(None, 10)


@pytest.mark.parametrize("end", [1, 3, 64])
def test_the_probe_holds_the_locations_it_built_and_counts_their_nodes(end):
    """`_probe` stops at ``end`` (or its limits), holds the locations as read, and gives
    the nodes a builder makes of them per event."""
    source = corpus_path(*CORPUS_TRACES[-1])
    _, whole = ccg.formats.read(source)
    expected = [(location, list(read)) for location, read in whole]
    definitions, streams = ccg.formats.read(source)
    held, new_nodes = parallel_convert._probe(ccg.Params(), definitions, streams, end)
    assert [location for location, _ in held] == list(range(min(end, len(expected))))
    for (location, got), (_, want) in zip(held, expected):
        assert [event for batch in got for event in batch.rows()] == \
               [event for batch in want for event in batch.rows()]
    builder = make_builder(ccg.Params(), definitions)
    for location, kept in held:
        for batch in kept:
            builder.add(location, batch)
        builder.end_location(location)
    assert new_nodes == len(builder.pool) / sum(len(batch) for _, kept in held for batch in kept)
    rest = [location for location, _ in streams]  # the stream goes on after the held locations
    assert rest == list(range(len(held), len(expected)))


class _Rank0:
    """Rank 0 of two ranks, alone: what it broadcasts is recorded."""

    rank, size = 0, 2

    def __init__(self):
        self.broadcasts: list = []

    def broadcast(self, value):
        self.broadcasts.append(value)
        return value


@pytest.mark.parametrize("pattern, gathered", [("spmd", True), ("ring", False)])
def test_rank_0_gathers_small_locations_that_build_into_few_nodes(tmp_path, pattern, gathered):
    """`_read_own` with "auto": 300 locations of 48 events, the same program on every rank
    (0.15 new nodes per event) are gathered, a ring of messages (0.36) is not; rank 0 tells
    the other ranks, and reads its range of the way chosen - its probed locations and the
    rest alike, as a serial read has them."""
    source = tmp_path / pattern
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(source), "--otf2", "--pattern", pattern,
                    "--locations", "300", "--events-per-location", "48", "--seed", "3"],
                   check=True, capture_output=True)
    rank0 = _Rank0()
    (definitions, streams), chosen = parallel_convert._read_own(
        rank0, source, "otf2", ccg.Params(), otf2_format.location_bytes(source), "auto")
    assert chosen is gathered and rank0.broadcasts == [(gathered, None)]
    got = [(location, [event for batch in read for event in batch.rows()]) for location, read in streams]
    ranges = (parallel_convert.gathered_ranges if gathered else part_ranges)(len(definitions.locations), 2)
    _, serial = ccg.formats.read(source)
    want = [(location, [event for batch in read for event in batch.rows()]) for location, read in serial
            if location < ranges[0][1]]
    assert got == want


def test_a_waiting_rank_looks_soon_then_every_arrival_poll():
    """The pauses between a waiting rank's looks: FIRST_POLL, doubling, then ARRIVAL_POLL
    for ever (a short wait ends soon after the last arrival, a long one sleeps)."""
    pauses = world._pauses()
    taken = [next(pauses) for _ in range(20)]
    assert taken[0] == world.FIRST_POLL < world.ARRIVAL_POLL
    assert all(later in (2 * earlier, world.ARRIVAL_POLL) and later >= earlier for earlier, later in zip(taken, taken[1:]))
    assert taken[-1] == world.ARRIVAL_POLL and sum(taken[:5]) < 2 * world.ARRIVAL_POLL
