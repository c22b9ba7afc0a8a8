"""Call-path profiles (`ccgformat.query.calltree_query`, `Archive.calltree`): against a brute
force replaying the stacks of the rebuilt events (random traces in memory and as
archives, lossless and lossy, random windows and location subsets; every corpus trace),
summed per region against `profile`, the reuse of shared sub-trees, the pandas and
Hatchet tables, and `ccg calltree` as a subprocess."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Event, EventKind as K, Params
from ccgformat.errors import CcgError, MissingExtraError
from ccgformat.query import calltree, profile

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, converted, corpus_windows, windows

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402

#: the module (the package's ``calltree`` is the function of the same name)
calltree_module = importlib.import_module("ccgformat.query.calltree_query")
LOSSY = Params(abs_dev=20, rel_dev=0.3)


def as_rows(tree) -> dict:
    """{(location, call path): [calls, inclusive, exclusive]} of a `CallTree`."""
    columns = (tree.path.tolist(), tree.location.tolist(), tree.calls.tolist(), tree.inclusive.tolist(),
               tree.exclusive.tolist())
    return {(location, tree.paths[path]): [calls, inclusive, exclusive]
            for path, location, calls, inclusive, exclusive in zip(*columns)}


def check(source, start, stop, locations):
    """The call tree equals the brute force; its paths are in depth-first order (siblings
    by region), each once, and its rows ordered by path, then location."""
    events = {location: oracle.events_of(source, location) for location in locations}
    tree = calltree(source, start, stop, locations)
    assert as_rows(tree) == oracle.calltree(events, start, stop)
    assert tree.paths == sorted(set(tree.paths))
    assert all(tree.parent[i] < i and tree.paths[i][:-1] == (tree.paths[tree.parent[i]] if tree.parent[i] >= 0
                                                             else ()) for i in range(len(tree)))
    order = {location: i for i, location in enumerate(tree.locations)}
    keys = [(path, order[location]) for path, location in zip(tree.path.tolist(), tree.location.tolist())]
    assert keys == sorted(set(keys))
    return tree


def region_sums(tree) -> dict[int, tuple[int, int, int]]:
    """Calls, inclusive and exclusive time summed over the paths ending in each region
    (regions with any)."""
    sums: dict[int, list[int]] = {}
    for path, values in zip(tree.paths, zip(*(column.tolist() for column in tree.totals()))):
        row = sums.setdefault(path[-1], [0, 0, 0])
        for i, value in enumerate(values):
            row[i] += value
    return {region: tuple(row) for region, row in sums.items() if any(row)}


def profile_sums(result) -> dict[int, tuple[int, int, int]]:
    return {row.region: (row.calls, row.inclusive, row.exclusive) for row in result.regions}


@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_graph_calltree_matches_brute_force(trace, params, data):
    graph = oracle.build(trace, params)
    for start, stop, locations in windows(data, trace, 3):
        tree = check(graph, start, stop, locations)
        assert region_sums(tree) == profile_sums(profile(graph, start, stop, locations))


@settings(max_examples=20, deadline=None)
@given(traces.traces(), st.data())
def test_archives_of_the_writer_match_brute_force(tmp_path_factory, trace, data):
    """Archives streamed by `write_trace` (lossy, small blocks) answer as their graph does."""
    path = tmp_path_factory.mktemp("calltree") / "t.ccg"
    ccgformat.write_trace(path, traces.definitions(), ((loc, traces.batches(e)) for loc, e in trace.items()),
                          LOSSY, nodes_per_block=3)
    graph = oracle.build(trace, LOSSY)
    with ccgformat.open(path) as archive:
        for start, stop, locations in windows(data, trace, 3):
            assert check(archive, start, stop, locations).to_json() == calltree(graph, start, stop,
                                                                                locations).to_json()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_calltrees(tmp_path_factory, name):
    """The whole trace and windows with bounds anywhere and on event times, over all and
    over half of the locations; summed per region, the profile."""
    archive = converted(tmp_path_factory, name)
    check(archive, None, None, archive.locations)
    for start, stop, locations in corpus_windows(archive, 11, 4):
        tree = check(archive, start, stop, locations)
        assert region_sums(tree) == profile_sums(archive.profile(start, stop, locations))


def test_recursion_and_cut_calls_by_hand():
    """r0 calls itself, which calls r1: path (0, 0, 1) is its own entry. A window cutting
    the calls counts the parts inside and a call only where it is entered."""
    events = [Event(0, K.ENTER, 0), Event(10, K.ENTER, 0), Event(20, K.ENTER, 1), Event(30, K.LEAVE, 1),
              Event(40, K.LEAVE, 0), Event(50, K.ENTER, 1), Event(55, K.LEAVE, 1), Event(100, K.LEAVE, 0)]
    graph = oracle.build({0: events})
    assert as_rows(calltree(graph)) == {(0, (0,)): [1, 100, 65], (0, (0, 0)): [1, 30, 20],
                                        (0, (0, 0, 1)): [1, 10, 10], (0, (0, 1)): [1, 5, 5]}
    # [25, 52): (0,) holds 27 ticks, (0, 0) 15 of them, (0, 0, 1) 5, (0, 1) 2 (entered inside)
    assert as_rows(calltree(graph, 25, 52)) == {(0, (0,)): [0, 27, 10], (0, (0, 0)): [0, 15, 10],
                                                (0, (0, 0, 1)): [0, 5, 5], (0, (0, 1)): [1, 2, 2]}
    # (0, 0) leaves at 40 with nothing inside [40, 45): not listed
    assert as_rows(calltree(graph, 40, 45)) == {(0, (0,)): [0, 5, 5]}


def test_a_path_is_listed_for_the_calls_it_leads_to():
    """A call ending where the window starts has nothing inside it, but the zero-length
    call it holds at that time is entered inside: both paths are listed."""
    events = [Event(0, K.ENTER, 0), Event(5, K.ENTER, 1), Event(10, K.ENTER, 2), Event(10, K.LEAVE, 2),
              Event(10, K.LEAVE, 1), Event(20, K.LEAVE, 0)]
    assert as_rows(calltree(oracle.build({0: events}), 10, 15)) == {
        (0, (0,)): [0, 5, 5], (0, (0, 1)): [0, 0, 0], (0, (0, 1, 2)): [1, 0, 0]}


def test_empty_and_bad_windows():
    graph = oracle.build({0: [Event(0, K.ENTER, 0), Event(9, K.LEAVE, 0)]})
    empty = calltree(graph, 5, 5)
    assert len(empty) == 0 and len(empty.path) == 0 and empty.to_json()["paths"] == []
    assert calltree(graph, 20, 30).to_json()["paths"] == []
    with pytest.raises(ValueError):
        calltree(graph, 10, 5)
    with pytest.raises(KeyError):
        calltree(graph, locations=[7])


def test_shared_sub_trees_are_walked_once_per_call_path(monkeypatch):
    """A regular trace of 8 x 20,000 events compresses to a few dozen nodes: the query
    walks a few (node, call path) pairs per node, not one per call."""
    definitions, events = synth.synthesize(8, 20000)
    builder = ccgformat.Builder(Params(), definitions)
    for location in range(8):
        for batch in events(location):
            builder.add(location, batch)
    graph = builder.finish()
    walked = []
    unique_rows = calltree_module.unique_rows

    def counting(columns, radices):
        distinct, inverse = unique_rows(columns, radices)
        walked.append(len(distinct[0]))
        return distinct, inverse

    monkeypatch.setattr(calltree_module, "unique_rows", counting)
    tree = calltree(graph)
    calls = int(tree.calls.sum())
    assert graph.metrics.n < 200 and calls > 50000
    assert sum(walked) <= 8 * 4 * graph.metrics.n  # per location, a few paths per node
    assert region_sums(tree) == profile_sums(profile(graph))


# ---------------------------------------------------------------------------- tables


@pytest.fixture(scope="module")
def spmd(tmp_path_factory):
    """A jittered synthetic SPMD archive of 3 locations."""
    definitions, events = synth.synthesize(3, 3000, jitter=0.2, seed=3)
    path = tmp_path_factory.mktemp("calltree") / "spmd.ccg"
    ccgformat.write_trace(path, definitions, ((location, events(location)) for location in range(3)))
    with ccgformat.open(path) as archive:
        yield archive


def test_json_rows(spmd):
    first, last = spmd.time_range
    tree = spmd.calltree(first + (last - first) // 3, last - (last - first) // 3)
    document = tree.to_json()
    assert document["timer_resolution"] == spmd.definitions.timer_resolution and document["per_location"]
    assert {(row["location"], tuple(row["regions"])): [row["calls"], row["inclusive"], row["exclusive"]]
            for row in document["paths"]} == as_rows(tree)
    names = [region.name for region in spmd.definitions.regions]
    assert all(row["path"] == [names[r] for r in row["regions"]] for row in document["paths"])
    summed = tree.to_json(per_location=False)["paths"]
    want: dict[tuple, list[int]] = {}
    for (_, path), values in as_rows(tree).items():
        want[path] = [a + b for a, b in zip(want.get(path, [0, 0, 0]), values)]
    assert [tuple(row["regions"]) for row in summed] == tree.paths
    assert {tuple(row["regions"]): [row["calls"], row["inclusive"], row["exclusive"]] for row in summed} == want


def test_pandas(spmd):
    pytest.importorskip("pandas")
    tree = spmd.calltree()
    frame = tree.to_pandas()
    assert list(frame.columns) == ["path_id", "parent", "depth", "region", "region_id", "path", "location", "calls",
                                   "inclusive", "exclusive"]
    assert {(row.location, tuple(tree.paths[row.path_id])): [row.calls, row.inclusive, row.exclusive]
            for row in frame.itertuples()} == as_rows(tree)
    assert all(row.path == tree.names(row.path_id) and row.region == row.path[-1] and row.depth == len(row.path)
               for row in frame.itertuples())
    summed = tree.to_pandas(per_location=False)
    assert "location" not in summed.columns and list(summed.path_id) == list(range(len(tree)))
    assert summed.calls.sum() == frame.calls.sum() and summed.inclusive.sum() == frame.inclusive.sum()
    assert frame.attrs["timer_resolution"] == spmd.definitions.timer_resolution


def hatchet_sums(frame, ticks_per_second: int) -> dict[str, tuple[int, int, int]]:
    """Per region name: calls, and the inclusive and exclusive seconds back in ticks."""
    sums = frame.groupby("name")[["calls", "time (inc)", "time"]].sum()
    return {name: (int(row["calls"]), round(row["time (inc)"] * ticks_per_second),
                   round(row["time"] * ticks_per_second)) for name, row in sums.iterrows()
            if row["calls"] or row["time (inc)"] or row["time"]}


def named(result) -> dict[str, tuple[int, int, int]]:
    return {row.name: (row.calls, row.inclusive, row.exclusive) for row in result.regions}


def check_hatchet(archive, start=None, stop=None) -> None:
    """The GraphFrame's node per call path, and its totals per region name: summed, those
    of `profile`; per rank, those of the profile of that location."""
    pytest.importorskip("hatchet")
    tree = archive.calltree(start, stop)
    ticks = archive.definitions.timer_resolution
    summed = tree.to_hatchet(per_location=False)
    assert list(summed.dataframe.index.names) == ["node"]
    assert sorted(tuple(frame["name"] for frame in (n.frame for n in node.path()))
                  for node in summed.graph.traverse()) == sorted(tree.names(i) for i in range(len(tree)))
    assert hatchet_sums(summed.dataframe, ticks) == named(archive.profile(start, stop))
    per_rank = tree.to_hatchet()
    assert list(per_rank.dataframe.index.names) == ["node", "rank"]
    assert len(per_rank.dataframe) == len(tree) * len(archive.locations)
    for rank, frame in per_rank.dataframe.groupby(level="rank"):
        assert hatchet_sums(frame, ticks) == named(archive.profile(start, stop, [rank]))
    assert per_rank.metadata["timer_resolution"] == ticks and per_rank.default_metric == "time (inc)"


def test_hatchet_totals_are_the_profile(spmd):
    first, last = spmd.time_range
    check_hatchet(spmd)
    check_hatchet(spmd, first + 1000, (first + last) // 2)


@pytest.mark.parametrize("name", ["otf2-pingpong", "otf-out"])
def test_hatchet_corpus(tmp_path_factory, name):
    check_hatchet(converted(tmp_path_factory, name))


@pytest.mark.parametrize("package, method", [("pandas", "to_pandas"), ("hatchet", "to_hatchet")])
def test_a_missing_package_names_its_extra(spmd, monkeypatch, package, method):
    tree = spmd.calltree()
    monkeypatch.setitem(sys.modules, package, None)  # import fails as if not installed
    with pytest.raises(MissingExtraError) as caught:
        getattr(tree, method)()
    assert isinstance(caught.value, CcgError) and f"ccgformat[{package}]" in str(caught.value)


# ---------------------------------------------------------------------------- command line


def ccg(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ccgformat.cli", *map(str, argv)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_cli_json(spmd):
    first, last = spmd.time_range
    window = ["--start", first + 5000, "--stop", last - 5000, "--location", 2, "--location", 0]
    done = ccg("calltree", spmd.path, *window, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == spmd.calltree(first + 5000, last - 5000, [0, 2]).to_json(per_location=False)
    done = ccg("calltree", spmd.path, "--per-location", "--json")
    assert json.loads(done.stdout) == spmd.calltree().to_json()


def test_cli_text(spmd):
    """An indented tree: a line per call path in depth-first order, the region indented by
    its depth, the seconds and calls of the summed rows."""
    done = ccg("calltree", spmd.path)
    assert done.returncode == 0 and done.stderr == ""
    header, *lines = done.stdout.splitlines()
    assert header.split() == ["call", "path", "inclusive", "s", "exclusive", "s", "calls"]
    rows = spmd.calltree().to_json(per_location=False)["paths"]
    assert len(lines) == len(rows)
    ticks = spmd.definitions.timer_resolution
    for line, row in zip(lines, rows):
        name, inclusive, exclusive, calls = line.split()
        assert line.startswith("  " * (len(row["path"]) - 1) + name) and name == row["path"][-1]
        assert (float(inclusive), float(exclusive)) == pytest.approx((row["inclusive"] / ticks,
                                                                      row["exclusive"] / ticks), abs=1e-6)
        assert int(calls.replace(",", "")) == row["calls"]


def test_cli_text_per_location(spmd):
    done = ccg("calltree", spmd.path, "--per-location", "--location", 1, "--location", 2)
    assert done.returncode == 0
    sections = done.stdout.rstrip("\n").split("\n\n")
    assert [section.splitlines()[0] for section in sections] == ["location 1 (rank 1)", "location 2 (rank 2)"]
    tree = spmd.calltree(locations=[1, 2])
    for section, location in zip(sections, (1, 2)):
        assert len(section.splitlines()) == 2 + int((tree.location == location).sum())


def test_cli_usage_errors(spmd):
    done = ccg("calltree", spmd.path, "--start", 10, "--stop", 5)
    assert done.returncode == 2 and "--start 10 is after --stop 5" in done.stderr
    done = ccg("calltree", spmd.path, "--location", 9)
    assert done.returncode == 2 and "no location 9" in done.stderr
