"""The topology's one walk (`analysis/topology_walk`) against the queries it stands in
for: its metric integrals and ends equal `Archive.metric_integrals` and `metric_ends`
bit for bit, its edges those summed from the message matching (`Archive.iter_messages`),
for the corpus's Paje traces, a SimGrid-style platform and generated traces, over windows
that cut variable intervals; and the Paje lifetimes read from the layout's members alone
equal those of the whole layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.analysis.topology_edges import merged_edges, paired_edges
from ccgformat.analysis.topology_walk import walk_topology
from ccgformat.errors import CorruptArchiveError
from ccgformat.formats.paje.lifetimes import container_lifetimes
from ccgformat.model import EventKind
from ccgformat.query.metric_ends import metric_ends

from .corpus import corpus_path
from .topology_support import PAJENG, message_traces, paje_archive, saved

PAJE = ["links.trace", "variables.trace", "native_sample.trace", "states.trace", "containers.trace",
        "events.trace", "platform"]


def cutting_windows(archive, count=6, seed=3):
    """The whole trace, its first tick, and windows whose bounds fall anywhere (inside
    the variables' intervals more often than on their changes)."""
    first, last = archive.time_range
    rng = np.random.default_rng(seed)
    windows = [(first, last + 1), (first, first + 1)]
    for _ in range(count):
        a, b = sorted(rng.integers(first - 2, last + 3, 2).tolist())
        windows.append((a, b + 1))
    return windows


def assert_walk_matches(archive, start, stop):
    walked = walk_topology(archive, start, stop)
    assert walked is not None
    locations = walked.locations
    reference = archive.metric_integrals(1, start, stop, locations=locations.tolist()).values[:, 0, :]
    assert np.array_equal(walked.integrals, reference, equal_nan=True), (start, stop)
    ends = metric_ends(archive, locations)
    assert np.array_equal(walked.metric_ends.sampled, ends.sampled)
    assert np.array_equal(walked.metric_ends.last[ends.sampled], ends.last[ends.sampled])
    if walked.ends is None:
        return walked
    node_of_location = np.arange(max(archive.roots, default=-1) + 1) % 5  # joins some locations, as a cut does
    node_of_location[::7] = -1
    walked_edges, matched = paired_edges(walked.ends, node_of_location, start, stop), \
        merged_edges(archive, node_of_location, start, stop)
    for name in ("first", "second", "messages", "bytes"):
        assert np.array_equal(getattr(walked_edges, name), getattr(matched, name)), (name, start, stop)
    return walked


@pytest.mark.parametrize("name", PAJE)
def test_the_walk_equals_the_queries_on_paje_traces(tmp_path_factory, name):
    _, archive = paje_archive(tmp_path_factory, name)
    for start, stop in cutting_windows(archive):
        assert_walk_matches(archive, start, stop)


@pytest.mark.parametrize("name", PAJE)
def test_lifetimes_from_the_layouts_members_equal_the_whole_layouts(tmp_path_factory, name):
    path = paje_archive(tmp_path_factory, name)[1].path
    with ccgformat.open(path) as fresh, ccgformat.open(path) as whole:
        found = container_lifetimes(fresh.definitions)  # the layout's lifecycle and locations only
        assert "paje" in whole.definitions.extensions
        expected = container_lifetimes(whole.definitions)  # from the decoded layout
    assert np.array_equal(found[0], expected[0]) and found[1] == expected[1]


@settings(max_examples=40, deadline=None)
@given(system=message_traces(samples=True, requests=True), data=st.data())
def test_the_walk_equals_the_queries_on_generated_traces(tmp_path_factory, system, data):
    definitions, trace = system
    times = [event.time for events in trace.values() for event in events]
    start = data.draw(st.integers(min(times) - 3, max(times) + 3))
    stop = data.draw(st.integers(start + 1, max(times) + 5))
    with ccgformat.open(saved(tmp_path_factory, definitions, trace)) as archive:
        walked = assert_walk_matches(archive, start, stop)
        requests = any(event.kind in (EventKind.ISEND, EventKind.IRECV) for events in trace.values()
                       for event in events)
        assert (walked.ends is None) == requests  # their pairing is the matching's: the walk leaves the edges


def test_a_link_ends_hint_without_a_key_is_corrupt(tmp_path_factory):
    _, archive = paje_archive(tmp_path_factory, "links.trace")
    strings = archive.definitions.strings
    hints = [i for i, text in enumerate(strings) if text.startswith('{"f"') and '"Key"' in text]
    assert hints
    original = strings[hints[0]]
    strings[hints[0]] = '{"f": {"Value": "x"}}'
    try:
        with pytest.raises(CorruptArchiveError, match="has no 'Key'"):
            walk_topology(archive, *archive.time_range)
    finally:
        strings[hints[0]] = original


def test_crossing_links_pair_by_their_keys(tmp_path):
    """Two links from p1 to p2 whose ends cross (k1 starts first, ends last): paired by
    key, a window around the inner link counts it alone; paired by order it would count
    both (each would have one end inside)."""
    with open(corpus_path(*PAJENG, "links.trace")) as corpus:
        header = "".join(line for line in corpus if line.startswith("%"))
    body = ('0 PROCESS 0 "PROCESS"\n4 LINK 0 PROCESS PROCESS "LINK"\n'
            '6 0 p1 PROCESS 0 "p1"\n6 0 p2 PROCESS 0 "p2"\n'
            '16 10 0 LINK p1 c k1\n16 20 0 LINK p1 c k2\n19 30 0 LINK p2 c k2\n19 80 0 LINK p2 c k1\n')
    (tmp_path / "crossing.trace").write_text(header + body)
    ccgformat.convert(tmp_path / "crossing.trace", tmp_path / "crossing.ccg")
    with ccgformat.open(tmp_path / "crossing.ccg") as archive:
        for start, stop, inside in [(15, 35, 1), (0, 90, 2), (40, 90, 1), (25, 35, 1), (11, 79, 1)]:
            topology = archive.topology(start, stop)
            assert topology.edges.messages.tolist() == [inside], (start, stop)
            assert_walk_matches(archive, start, stop)
