"""`AggregateModel.to_xarray`: the model's values with their labels - location ids and the
definitions' names, slice bounds in ticks and seconds, state names - for random traces
and corpus traces (one whose hierarchy orders the locations otherwise than their ids)."""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.model import Definitions, Location, Region, SystemTreeNode

from .corpus import corpus_path
from .query_support import CORPUS, converted
from .traces import batches, definitions, traces

xr = pytest.importorskip("xarray")


def check(archive: ccg.Archive, model: ccg.AggregateModel) -> None:
    array = model.to_xarray()
    assert isinstance(array, xr.DataArray)
    assert array.dims == ("location", "slice", "state")
    assert array.dtype == np.int64 and np.array_equal(array.values, model.values)
    assert array["location"].values.tolist() == model.locations.tolist()
    defined = archive.definitions.locations
    assert array["location_name"].values.tolist() == [
        defined[location].name if location < len(defined) else f"location {location}"
        for location in model.locations.tolist()]
    bounds = model.bounds.tolist()
    assert array["slice"].values.tolist() == list(range(len(bounds) - 1))
    assert array["start_tick"].values.tolist() == bounds[:-1] and array["stop_tick"].values.tolist() == bounds[1:]
    resolution = archive.timer_resolution
    assert array.attrs["timer_resolution"] == resolution
    assert array["start"].values.tolist() == pytest.approx([b / resolution for b in bounds[:-1]], rel=1e-12)
    assert array["stop"].values.tolist() == pytest.approx([b / resolution for b in bounds[1:]], rel=1e-12)
    assert array["state"].values.tolist() == list(model.states)
    # selection by label finds the cells: a few locations, and every state named once
    count = len(model.locations)
    for row in sorted({0, count // 2, count - 1}) if count else []:
        picked = array.sel(location=int(model.locations[row]))
        assert picked.values.tolist() == model.values[row].tolist()
    names = list(model.states)
    for position, state in enumerate(names):
        if names.count(state) == 1:
            assert array.sel(state=state).values.tolist() == model.values[:, :, position].tolist()


@given(traces(), st.lists(st.sampled_from([None, 0, 1]), min_size=3, max_size=3), st.integers(1, 6),
       st.sampled_from(["region", "group"]), st.data())
@settings(max_examples=20, deadline=None)
def test_random_traces(tmp_path_factory, trace, parents, slices, states, data):
    """The locations hang below two nodes in any way, so that the hierarchy's leaf order
    (a node's locations together) may differ from the ids' order."""
    path = tmp_path_factory.mktemp("labelled") / "t.ccg"
    tree = replace(definitions(), system_tree=[SystemTreeNode("node a", "node"), SystemTreeNode("node b", "node")])
    tree.locations = [replace(location, parent=parent) for location, parent in zip(tree.locations, parents)]
    ccg.write_trace(path, tree, ((loc, batches(events)) for loc, events in trace.items()))
    with ccg.open(path) as archive:
        chosen = data.draw(st.none() | st.lists(st.sampled_from(sorted(archive.locations)), min_size=1, unique=True))
        check(archive, archive.aggregate(slices, states=states, locations=chosen))


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out"])
def test_corpus_traces(tmp_path_factory, name):
    corpus_path(*CORPUS[name])
    archive = converted(tmp_path_factory, name)
    check(archive, archive.aggregate(7))
    check(archive, archive.aggregate(3, states="group", locations=sorted(archive.locations)[::-2]))


def test_a_hierarchy_that_orders_the_locations_otherwise(tmp_path):
    """Locations 0 and 2 below one node, 1 below another: the leaves are 0, 2, 1, and the
    names still follow the ids."""
    path = tmp_path / "t.ccg"
    tree = Definitions(regions=[Region("r")], system_tree=[SystemTreeNode("a", "node"), SystemTreeNode("b", "node")],
                       locations=[Location(f"rank {i}", parent=parent) for i, parent in enumerate([0, 1, 0])])
    ccg.write_trace(path, tree, [(i, [ccg.EventBatch.from_events([(1, 0, 0), (2 + i, 1, 0)])]) for i in range(3)])
    with ccg.open(path) as archive:
        model = archive.aggregate(2)
        assert model.hierarchy.leaf_locations.tolist() == [0, 2, 1]
        check(archive, model)
        assert model.to_xarray()["location_name"].values.tolist() == ["rank 0", "rank 1", "rank 2"]


def test_seconds_add_up(tmp_path):
    """A call of 3 ms at a microsecond timer: 3000 ticks, 0.003 s."""
    path = tmp_path / "t.ccg"
    ccg.write_trace(path, Definitions(regions=[Region("solve")], locations=[Location("rank 0")],
                                      timer_resolution=1_000_000),
                    [(0, [ccg.EventBatch.from_events([(1000, 0, 0), (4000, 1, 0)])])])
    with ccg.open(path) as archive:
        array = archive.aggregate(2).to_xarray()
    assert (array.sel(state="solve").sum("slice") / array.attrs["timer_resolution"]).item() == 0.003
    assert array["start"].values.tolist() == [0.001, 0.0025] and array["stop"].values.tolist()[-1] == 0.004001


def test_a_missing_xarray_names_its_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.ccg"
    ccg.write_trace(path, Definitions(regions=[Region("r")], locations=[Location("l")]),
                    [(0, [ccg.EventBatch.from_events([(1, 0, 0), (2, 1, 0)])])])
    with ccg.open(path) as archive:
        model = archive.aggregate(2)
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ccg.MissingExtraError, match=r"ccgformat\[xarray\]"):
        model.to_xarray()
