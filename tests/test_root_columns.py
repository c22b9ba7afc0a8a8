"""The columnar stand-ins that keep per-location Python objects out of queries (issue 14):
`RootTable` (an archive's roots as columns) and `chosen_roots`/`roots_at` (the roots of a
query's locations, vectorised) against a plain dict of `LocationRoot`, and `EntityList`
(the location table's entities, made on first use) against a list."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccgformat.graph.graph import LocationRoot, RootTable, chosen_roots, root_columns, roots_at
from ccgformat.model import EntityList, Location, entity_columns


@st.composite
def root_dicts(draw) -> dict[int, LocationRoot]:
    """Roots keyed by increasing locations: dense from 0 (the usual case, where a location
    is its own row) or sparse, up to the largest int64."""
    count = draw(st.integers(0, 30))
    if draw(st.booleans()):
        locations = list(range(count))
    else:
        locations = sorted(draw(st.lists(st.integers(0, (1 << 63) - 1), unique=True, min_size=count, max_size=count)))
    value = st.integers(-(1 << 62), 1 << 62)
    return {location: LocationRoot(draw(st.integers(0, 1 << 40)), draw(value), draw(value), draw(st.integers(0, 99)))
            for location in locations}


def table_of(roots: dict[int, LocationRoot]) -> RootTable:
    return RootTable(*(np.array(column, np.int64) for column in zip(*((k, *v) for k, v in roots.items())))
                     ) if roots else RootTable(*(np.zeros(0, np.int64),) * 5)


class Source:
    """What `chosen_roots` reads of a graph or an archive: its ``roots``."""

    def __init__(self, roots):
        self.roots = roots


PROBES = st.one_of(st.integers(-3, 40), st.integers(-(1 << 70), 1 << 70), st.sampled_from([1.5, "1", None, (0,)]))


@given(root_dicts(), st.lists(PROBES, max_size=10))
def test_root_table_is_the_mapping_of_its_roots(roots, probes):
    table = table_of(roots)
    assert table == roots and roots == table
    assert len(table) == len(roots) and list(table) == list(roots)
    assert list(table.items()) == list(roots.items()) and list(table.values()) == list(roots.values())
    assert [np.asarray(c).tolist() for c in root_columns(table)] == [np.asarray(c).tolist() for c in root_columns(roots)]
    for probe in [*roots, *probes]:
        assert (probe in table) == (probe in roots)
        assert table.get(probe) == roots.get(probe)
    with pytest.raises(KeyError):
        table[-1]


@given(root_dicts(), st.data())
def test_chosen_roots_are_the_dict_lookups(roots, data):
    """Every location in order, or the chosen ones in theirs without repeats; a source
    whose dict is not in location order (a graph's may not be) gives the same."""
    shuffled = dict(data.draw(st.permutations(list(roots.items()))))
    for source in (Source(roots), Source(table_of(roots)), Source(shuffled)):
        every = chosen_roots(source)
        assert every.locations == sorted(roots)
        assert every.root.tolist() == [roots[location].root for location in sorted(roots)]
        if not roots:
            continue
        asked = data.draw(st.lists(st.sampled_from(sorted(roots)), max_size=12))
        chosen = chosen_roots(source, asked)
        assert chosen.locations == list(dict.fromkeys(asked))
        columns = roots_at(source, asked)
        for i, field in enumerate(LocationRoot._fields):
            assert chosen[1 + i].tolist() == [getattr(roots[loc], field) for loc in chosen.locations]
            assert columns[i].tolist() == [getattr(roots[loc], field) for loc in asked]


@given(root_dicts(), st.lists(PROBES, min_size=1, max_size=4))
def test_a_location_without_a_root_is_a_key_error(roots, probes):
    missing = [p for p in probes if p not in roots]
    if not missing:
        return
    for source in (Source(roots), Source(table_of(roots))):
        with pytest.raises(KeyError, match="no location"):
            roots_at(source, [*roots, *probes])
        with pytest.raises(KeyError, match="no location"):
            chosen_roots(source, probes)


def test_entity_list_gives_its_columns_and_makes_its_items_once_and_only_when_read():
    made = []

    def names():
        made.append("names")
        return [f"rank {i}" for i in range(3)]

    items = EntityList(Location, np.array([-1, 0, 4]), names, lambda: ["process", "thread", "process"])
    assert len(items) == 3 and bool(items) and made == []
    plain = [Location("rank 0"), Location("rank 1", "thread", 0), Location("rank 2", "process", 4)]
    parents, names_column, kinds = entity_columns(items)
    assert parents.tolist() == entity_columns(plain)[0].tolist() == [-1, 0, 4]
    assert (names_column, kinds) == entity_columns(plain)[1:] and made == ["names"]
    assert items == plain and plain == items and items != plain[:2]
    assert items[1] == plain[1] and items[1:] == plain[1:] and list(items) == plain
    assert made == ["names"]  # the names are made once, for the columns and the items
    assert pickle.loads(pickle.dumps(items)) == plain and type(copy.deepcopy(items)) is list
    assert repr(items) == repr(plain)
    with pytest.raises(TypeError):
        hash(items)
