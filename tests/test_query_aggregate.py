"""`Archive.aggregate` and `ccg aggregate` (issue 15) against a brute force over the rebuilt
events, and the resource hierarchy (`ccgformat.hierarchy`) against the definitions."""

from __future__ import annotations

import dataclasses
import importlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.cli import main
from ccgformat.errors import CorruptArchiveError
from ccgformat.hierarchy import ROOT_NAME, hierarchy_of
from ccgformat.model import Definitions, EntityList, Location, Region, SystemTreeNode
from ccgformat.query.groups import region_groups

from . import query_oracle as oracle
from . import traces
from .query_support import CORPUS, bounds, converted, with_tables

LOSSY = Params(abs_dev=20, rel_dev=0.3)


def brute_force(source, slices, start, stop, states, locations):
    """The model from the rebuilt events, piece by piece, with the window rules of the
    issue (whole trace: first event time to last event time + 1)."""
    chosen = sorted(locations)
    events = {location: oracle.events_of(source, location) if location in source.roots else []
              for location in chosen}
    times = [e.time for evs in events.values() for e in evs] if locations == sorted(source.roots) else \
        [e.time for location in source.roots for e in oracle.events_of(source, location)]
    start = (min(times) if times else 0) if start is None else start
    stop = (max(times) + 1 if times else 1) if stop is None else stop
    span = stop - start
    boundaries = [start + k * span // slices for k in range(slices + 1)]
    regions = max([len(source.definitions.regions)]
                  + [e.ref + 1 for evs in events.values() for e in evs if e.kind == ccgformat.EventKind.ENTER])
    if states == "group":
        names, group_of = region_groups(source.definitions, regions)
    else:
        names, group_of = [r.name for r in source.definitions.regions], np.arange(regions)
    return boundaries, oracle.timeline(events, boundaries, group_of, len(names))


def check(source, slices, start, stop, states, locations):
    model = ccgformat.query.aggregate(source, slices, start, stop, states, locations)
    boundaries, want = brute_force(source, slices, start, stop, states, locations)
    assert model.bounds.tolist() == boundaries
    assert model.locations.tolist() == sorted(locations)
    assert model.values.dtype == np.int64
    assert np.array_equal(model.values[:, :, :want.shape[2]], want)
    assert not model.values[:, :, want.shape[2]:].any()
    assert sorted(model.hierarchy.leaf_locations.tolist()) == sorted(locations)
    return model


def draw_query(data, trace, source):
    """slices, start, stop, states, locations, the window's ends drawn at the times of the
    source's rebuilt events (a lossy source's window can end before its input's)."""
    times = [e.time for location in trace for e in oracle.events_of(source, location)]
    start, stop = data.draw(bounds(times)), data.draw(bounds(times))
    if start is not None and stop is not None and stop <= start:
        start, stop = min(start, stop), max(start, stop) + 1
    if start is not None and stop is None and start > max(times):
        stop = start + 1
    if stop is not None and start is None and stop <= min(times):
        start = stop - 1
    locations = data.draw(st.lists(st.sampled_from(sorted(trace)), min_size=1, unique=True))
    return (data.draw(st.integers(1, 50)), start, stop, data.draw(st.sampled_from(["region", "group"])), locations)


@settings(max_examples=60, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_graph_model_matches_brute_force(trace, params, data):
    graph = oracle.build(trace, params)
    check(graph, *draw_query(data, trace, graph))


@settings(max_examples=25, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), LOSSY]), st.data())
def test_archive_model_matches_brute_force(tmp_path_factory, trace, params, data):
    path = tmp_path_factory.mktemp("aggregate") / "t.ccg"
    ccgformat.save_graph(oracle.build(trace, params), path, nodes_per_block=3)
    with ccgformat.open(path) as archive:
        for _ in range(3):
            check(archive, *draw_query(data, trace, archive))
        model = archive.aggregate(data.draw(st.integers(1, 20)))  # the whole trace, every location
        assert model.locations.tolist() == archive.locations
        assert model.hierarchy is archive.hierarchy


def test_slices_beyond_the_window_width_are_empty():
    trace = {0: [ccgformat.model.Event(10, ccgformat.EventKind.ENTER, 1),
                 ccgformat.model.Event(13, ccgformat.EventKind.LEAVE, 1)]}
    model = check(oracle.build(trace), 7, None, None, "region", [0])
    assert model.bounds.tolist() == [10, 10, 11, 11, 12, 12, 13, 14]  # 10 + floor(k * 4 / 7)
    assert model.values[0, :, 1].tolist() == [0, 1, 0, 1, 0, 1, 0]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_models(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    for states in ("region", "group"):
        check(archive, 17, None, None, states, archive.locations)
    first, last = archive.time_range
    if last > first + 4:
        check(archive, 5, first + (last - first) // 3, last - (last - first) // 4, "region", archive.locations[:3])


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native"])
def test_corpus_models_walked_a_few_locations_at_a_time(tmp_path_factory, monkeypatch, name):
    """The slices the aggregation tables do not cover (here: all) are walked
    `LOCATIONS_PER_WALK` locations at a time (bounded memory at 10^6 locations); two at a
    time gives the same."""
    monkeypatch.setattr(importlib.import_module("ccgformat.query.aggregate_query"), "LOCATIONS_PER_WALK", 2)
    for archive in (converted(tmp_path_factory, name), with_tables(tmp_path_factory, name)):
        assert len(archive.locations) > 2
        check(archive, 17, None, None, "region", archive.locations)
        first, last = archive.time_range
        check(archive, 7, first + (last - first) // 3, last - (last - first) // 5, "group", archive.locations[1:])
    assert archive.aggregation_tables is not None


def test_bad_arguments():
    graph = oracle.build({0: [ccgformat.model.Event(0, ccgformat.EventKind.ENTER, 0),
                              ccgformat.model.Event(5, ccgformat.EventKind.LEAVE, 0)]})
    for slices, start, stop, states, locations in [(0, None, None, "region", None), (2, 5, 5, "region", None),
                                                   (2, None, None, "depth", None), (2, None, None, "region", [7]),
                                                   (True, None, None, "region", None)]:
        with pytest.raises(ValueError):
            ccgformat.query.aggregate(graph, slices, start, stop, states, locations)


# ----------------------------------------------------------------- the hierarchy

@st.composite
def forests(draw):
    """Definitions with a random system tree (parents before children or after) and
    locations attached to random nodes or to none."""
    size = draw(st.integers(0, 8))
    order = draw(st.permutations(range(size)))  # node order[i] may only hang under order[j], j < i
    parent = {order[i]: (draw(st.one_of(st.none(), st.sampled_from(order[:i]))) if i else None)
              for i in range(size)}
    tree = [SystemTreeNode(f"n{i}", "node", parent[i]) for i in range(size)]
    count = draw(st.integers(0, 10))
    locations = [Location(f"l{i}", "thread", draw(st.one_of(st.none(), st.integers(0, size - 1)))
                          if size else None) for i in range(count)]
    return Definitions(system_tree=tree, locations=locations)


@settings(max_examples=200, deadline=None)
@given(forests(), st.data())
def test_hierarchy_follows_the_definitions(definitions, data):
    count = len(definitions.locations)
    chosen = data.draw(st.lists(st.integers(0, count + 1), unique=True)) if data.draw(st.booleans()) else \
        list(range(count))
    h = hierarchy_of(definitions, chosen)
    assert sorted(h.leaf_locations.tolist()) == sorted(chosen)
    assert h.parents[0] == -1 and (h.parents[1:] < np.arange(1, len(h))).all()  # preorder
    for node in range(len(h)):
        kids = h.children(node)
        if len(kids):  # the children tile the node's leaves, in order
            assert h.first_leaf[kids[0]] == h.first_leaf[node] and h.stop_leaf[kids[-1]] == h.stop_leaf[node]
            assert (h.first_leaf[kids[1:]] == h.stop_leaf[kids[:-1]]).all()
            lowest = [h.leaf_locations[h.first_leaf[k]:h.stop_leaf[k]].min() for k in kids]
            assert lowest == sorted(lowest)  # children by the smallest location below them
        elif node or chosen:
            assert h.stop_leaf[node] == h.first_leaf[node] + 1
    leaf_node = {int(h.leaf_locations[h.first_leaf[n]]): n for n in range(len(h))
                 if h.stop_leaf[n] == h.first_leaf[n] + 1 and not len(h.children(n))}
    for location in chosen:  # the path up is the definitions' chain of system tree nodes
        node, want = leaf_node[location], []
        parent = definitions.locations[location].parent if location < count else None
        while parent is not None:
            want.append(definitions.system_tree[parent].name)
            parent = definitions.system_tree[parent].parent
        got = []
        node = int(h.parents[node])
        while node >= 0:
            got.append(h.names[node])
            node = int(h.parents[node])
        if got and got[-1] == ROOT_NAME and (not want or want[-1] != ROOT_NAME):
            got.pop()
        assert got == want


def _preorder(definitions, chosen):
    """The hierarchy by hand: (name, parent row, leaf location or -1) in preorder, from a
    recursive walk of the tree with children ordered by their smallest location."""
    tree, defined = definitions.system_tree, definitions.locations
    parent_of = {("loc", loc): (defined[loc].parent if loc < len(defined) else None) for loc in chosen}
    below = {}
    for loc in chosen:
        node = parent_of[("loc", loc)]
        while node is not None:
            below.setdefault(node, []).append(loc)
            parent_of[("tree", node)] = tree[node].parent
            node = tree[node].parent
    items = [("loc", loc) for loc in chosen] + [("tree", node) for node in below]
    lowest = {item: item[1] if item[0] == "loc" else min(below[item[1]]) for item in items}
    tops = [item for item in items if parent_of[item] is None]
    kids = {item: sorted((i for i in items if i[0] == "loc" and parent_of[i] == item[1] or
                          i[0] == "tree" and parent_of[i] == item[1] and item[0] == "tree"), key=lowest.get)
            for item in items if item[0] == "tree"}
    rows = []

    def visit(item, parent):
        row = len(rows)
        if item[0] == "tree":
            rows.append((tree[item[1]].name, parent, -1))
            for kid in kids[item]:
                visit(kid, row)
        else:
            loc = item[1]
            rows.append((defined[loc].name if loc < len(defined) else f"location {loc}", parent, loc))

    if len(tops) == 1 and tops[0][0] == "tree":
        visit(tops[0], -1)
    else:
        rows.append((ROOT_NAME, -1, -1))
        for top in sorted(tops, key=lowest.get):
            visit(top, 0)
    return rows


@settings(max_examples=300, deadline=None)
@given(forests(), st.data())
def test_hierarchy_is_the_preorder_by_hand(definitions, data):
    count = len(definitions.locations)
    chosen = sorted(data.draw(st.lists(st.integers(0, count + 1), unique=True)))
    h = hierarchy_of(definitions, chosen)
    leaf = [int(h.leaf_locations[h.first_leaf[n]]) if not len(h.children(n)) and h.stop_leaf[n] > h.first_leaf[n]
            else -1 for n in range(len(h))]
    assert list(zip(h.names, h.parents.tolist(), leaf)) == _preorder(definitions, chosen)
    assert h.leaf_locations.tolist() == [row[2] for row in _preorder(definitions, chosen) if row[2] >= 0]
    columnar = hierarchy_of(as_entity_lists(definitions), chosen)  # as an archive holds them
    assert (columnar.names, columnar.kinds) == (h.names, h.kinds) and columnar.parents.tolist() == h.parents.tolist()
    assert columnar.leaf_locations.tolist() == h.leaf_locations.tolist()


def as_entity_lists(definitions: Definitions) -> Definitions:
    """``definitions`` with the system tree and the locations as an archive's `EntityList`s."""
    def columns(items, make):
        parents = np.array([-1 if item.parent is None else item.parent for item in items], np.int64)
        return EntityList(make, parents, lambda: [item.name for item in items], lambda: [item.kind for item in items])
    return dataclasses.replace(definitions, system_tree=columns(definitions.system_tree, SystemTreeNode),
                               locations=columns(definitions.locations, Location))


def test_hierarchy_refuses_a_cycle_or_a_parent_out_of_range():
    loop = Definitions(system_tree=[SystemTreeNode("a", "node", 1), SystemTreeNode("b", "node", 0)],
                       locations=[Location("x", "thread", 0)])
    with pytest.raises(ValueError, match="own ancestor"):
        hierarchy_of(loop, [0])
    with pytest.raises(ValueError, match="outside"):
        hierarchy_of(Definitions(locations=[Location("x", "thread", 3)]), [0])


def test_archive_with_a_bad_tree_is_corrupt(tmp_path):
    definitions = Definitions(regions=[Region("r")], system_tree=[SystemTreeNode("a", "node", 0)],
                              locations=[Location("x", "thread", 0)])
    trace = {0: [ccgformat.model.Event(0, ccgformat.EventKind.ENTER, 0),
                 ccgformat.model.Event(5, ccgformat.EventKind.LEAVE, 0)]}
    path = tmp_path / "t.ccg"
    with pytest.raises(ValueError, match="own ancestor"):  # the writer's tables (when they fit) need the hierarchy
        ccgformat.save_graph(oracle.build_with(definitions, trace), path, aggregation=1000.0)
    ccgformat.save_graph(oracle.build_with(definitions, trace), path, aggregation=None)
    with ccgformat.open(path) as archive:
        with pytest.raises(CorruptArchiveError, match="own ancestor"):
            archive.aggregate(3)


EXPECTED_PATHS = {  # a leaf's path in the corpus hierarchies, from the reference tools' definitions
    "otf2-stencil": (1, "Linux/quartz2/MPI Rank 1/Master thread"),
    "otf-philosophers": (2, "Programme/Thread1/Thread1"),
    "paje-native": (2, "root/program/MEMNODE0/18190/18190"),
    "epilog-le": (1, "cluster/node0/rank 1/thread 0"),
    "chrome-rocprof": (2, f"{ROOT_NAME}/COPY/thread 0"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_PATHS))
def test_corpus_hierarchies(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    h = archive.hierarchy
    assert sorted(h.leaf_locations.tolist()) == list(range(len(archive.definitions.locations)))
    location, path = EXPECTED_PATHS[name]
    leaf = next(n for n in range(len(h)) if not len(h.children(n))
                and h.leaf_locations[h.first_leaf[n]] == location)
    assert h.path(leaf) == path


def test_cli_json_and_text(tmp_path_factory, capsys):
    archive = converted(tmp_path_factory, "otf2-pingpong")
    assert main(["aggregate", str(archive.path), "--slices", "4", "--states", "group", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    model = archive.aggregate(4, states="group")
    assert document == {"bounds": model.bounds.tolist(), "states": list(model.states),
                        "locations": [loc.name for loc in archive.definitions.locations],
                        "values": model.values.tolist()}
    _, want = brute_force(archive, 4, None, None, "group", archive.locations)
    assert np.array_equal(np.array(document["values"]), want)
    assert main(["aggregate", str(archive.path), "--slices", "3", "--start", "9", "--stop", "9"]) == 2
    assert main(["aggregate", str(archive.path), "--slices", "3"]) == 0
    assert "slices" in capsys.readouterr().out
