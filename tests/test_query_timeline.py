"""Timeline rendering against clipping every exclusive stretch of the rebuilt events to
every pixel column; colour blending and the PNG."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat import Params
from ccgformat.query import timeline
from ccgformat.query.groups import region_groups
from ccgformat.figures import PALETTE, palette
from ccgformat.query.bounds import column_bounds
from ccgformat.query.timeline_query import REGION_CLASSES, region_classes
from ccgformat.query.timeline_walk import _cell_sums, unique_rows

from . import query_oracle as oracle
from . import traces
from .figure_support import decode_png, grid, parse
from .query_support import CORPUS, bounds, converted, event_bounds


def check(source, start, stop, width, locations, by, color_by="group"):
    result = timeline(source, start, stop, width, locations, by, color_by)
    events = {location: oracle.events_of(source, location) for location in locations}
    regions = max(len(source.definitions.regions), 1 + max(
        (e.ref for evs in events.values() for e in evs if e.kind == ccgformat.EventKind.ENTER), default=-1))
    classes = region_groups(source.definitions, regions) if color_by == "group" else region_classes(source, regions)
    group_of = classes[1]
    want = oracle.timeline(events, result.boundaries.tolist(), group_of, len(result.groups), by)
    got = result.exclusive
    if by == "depth":  # levels without any time may be missing on either side
        rows = max(len(got), len(want))
        got, want = (np.concatenate([x, np.zeros((rows - len(x),) + x.shape[1:], np.int64)]) for x in (got, want))
    assert np.array_equal(got, want)
    assert result.boundaries[0] == start and result.boundaries[-1] == stop
    assert (result.shares.sum(axis=2) <= 1 + 1e-9).all()
    return result


def draw_window(trace, data):
    """A window of the trace (its bounds on event times as often as not), a width and some
    of its locations."""
    times = [e.time for events in trace.values() for e in events]
    start, stop = (data.draw(bounds(times).filter(lambda t: t is not None)) for _ in range(2))
    start, stop = min(start, stop), max(start + 1, stop)
    locations = data.draw(st.lists(st.sampled_from(sorted(trace)), min_size=1, unique=True))
    return start, stop, data.draw(st.integers(1, 40)), locations


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([Params(), Params(abs_dev=20, rel_dev=0.3)]), st.data())
def test_timeline_matches_brute_force(trace, params, data):
    graph = oracle.build(trace, params)
    check(graph, *draw_window(trace, data), data.draw(st.sampled_from(["location", "depth"])),
          data.draw(st.sampled_from(["group", "region"])))


@settings(max_examples=80, deadline=None)
@given(traces.traces(), st.sampled_from([Params(branching=2), Params(abs_dev=20, rel_dev=0.3, branching=3)]),
       st.data())
def test_running_sums_over_children_match_brute_force(trace, params, data):
    """Running sums over children (`child_runs`) for every node with children that crosses
    fewer column bounds than it has children, not only for the nodes with many children;
    a small branching factor for artificial nodes, whose gaps are uncovered time."""
    graph = oracle.build(trace, params)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importlib.import_module("ccgformat.query.timeline_walk"), "INDEXED_CHILDREN", 1)
        check(graph, *draw_window(trace, data), "location")


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_timelines(tmp_path_factory, name):
    archive = converted(tmp_path_factory, name)
    first, last = archive.time_range
    locations = archive.locations
    check(archive, first, last + 1, 64, locations, "location")
    middle = (first + last) // 2
    check(archive, middle - (last - first) // 50, middle + (last - first) // 50 + 1, 33, locations[:3], "depth")
    times = np.array([e.time for location in locations[:3] for e in oracle.events_of(archive, location)], np.int64)
    rng = np.random.default_rng(5)
    for by in ("location", "depth") if len(times) else ():  # bounds on event times (or one tick off)
        start, stop = sorted(event_bounds(rng, times, 2))
        check(archive, start, max(stop, start + 1), int(rng.integers(1, 40)), locations[:3], by)


def test_a_single_group_trace_coloured_by_region(tmp_path_factory):
    """The OTF `out` trace puts all its 173 regions in one group: by group it is one
    colour; by region the 20 regions with the most exclusive time are classes of their
    own, in that order (over the whole trace a class's time is its region's exclusive
    time in the profile), the others one more class, and the image takes many colours."""
    archive = converted(tmp_path_factory, "otf-out")
    first, last = archive.time_range
    assert len(timeline(archive, first, last + 1, 50).groups) == 1
    result = check(archive, first, last + 1, 50, archive.locations, "location", "region")
    assert len(result.groups) == REGION_CLASSES + 1 and result.groups[-1] == "other regions"
    exclusive = {row.name: row.exclusive for row in archive.profile().regions}
    per_class = result.exclusive.sum(axis=(0, 1))
    assert per_class[:-1].tolist() == [exclusive[name] for name in result.groups[:-1]]
    assert per_class[:-1].tolist() == sorted(per_class[:-1].tolist(), reverse=True)
    assert per_class[-1] == sum(exclusive.values()) - per_class[:-1].sum()
    assert len({tuple(pixel) for pixel in result.rgb().reshape(-1, 3).tolist()}) > 10


def test_the_palette_keeps_many_classes_apart():
    colours = palette(300)
    assert np.array_equal(colours[:len(PALETTE)], PALETTE)
    assert len({tuple(np.rint(c).astype(int)) for c in colours}) == 300
    assert ((colours >= 0) & (colours <= 255)).all()


@given(st.integers(-(1 << 62), (1 << 62) - 1), st.integers(1, 1 << 62), st.integers(1, 5000))  # within int64
def test_column_bounds_follow_the_formula(start, span, width):
    want = [start + i * span // width for i in range(width + 1)]
    assert column_bounds(start, start + span, width).tolist() == want


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(0, 6)), min_size=1, max_size=60),
       st.booleans())
def test_unique_rows_packed_or_row_wise(rows, huge):
    """The same distinct rows and inverse whether the key fits in an int64 or not."""
    columns = [np.array(column, np.int64) for column in zip(*rows)]
    radices = [10, 4, 1 << 62] if huge else [10, 4, 7]
    (a, b, c), inverse = unique_rows(columns, radices)
    want = sorted(set(rows))
    assert list(zip(a.tolist(), b.tolist(), c.tolist())) == want
    assert [want[i] for i in inverse.tolist()] == rows


def test_colours_blend_linearly():
    """One group alone gives its colour; a column half busy is halfway to the background."""
    E, L = ccgformat.EventKind.ENTER, ccgformat.EventKind.LEAVE
    graph = oracle.build({0: [ccgformat.Event(0, E, 0), ccgformat.Event(100, L, 0)]})
    result = timeline(graph, 0, 200, 4)
    assert result.exclusive[0, :, 0].tolist() == [50, 50, 0, 0]
    rgb = result.rgb()
    assert rgb[0, 0].tolist() == PALETTE[0].astype(int).tolist()
    assert rgb[0, 2].tolist() == [255, 255, 255]
    half = timeline(graph, 0, 200, 1).rgb()[0, 0]
    assert half.tolist() == np.rint((PALETTE[0] + 255) / 2).astype(int).tolist()


def test_the_pictures_show_the_cells(tmp_path):
    """``save_png`` (matplotlib) and ``save`` by suffix: the picture's cells are `rgb`'s,
    a row each for locations 0, 1 and 2 (defined by traces.definitions, 2 without events)."""
    graph = oracle.build({0: [ccgformat.Event(0, 0, 0), ccgformat.Event(10, 1, 0)],
                          1: [ccgformat.Event(5, 0, 1), ccgformat.Event(20, 1, 1)]})
    result = timeline(graph, 0, 20, 7)
    png = decode_png(result.save_png(tmp_path / "t.png", row_height=3).read_bytes())
    svg = parse(result.save(tmp_path / "t.svg", row_height=3).read_text())
    box, cells = grid(svg)
    assert (cells == result.rgb()).all() and cells.shape == (3, 7, 3) and box.h == 9
    assert png.shape[:2] == (int(svg.get("height")), int(svg.get("width")))
    ys = (box.y + (np.arange(3) + 0.5) * 3).astype(int)
    xs = (box.x + (np.arange(7) + 0.5) * box.w / 7).astype(int)
    assert np.abs(png[ys[:, None], xs[None, :]].astype(int) - result.rgb()).max() <= 1


def test_bad_arguments():
    graph = oracle.build({0: [ccgformat.Event(0, 0, 0), ccgformat.Event(10, 1, 0)]})
    for args in ((5, 5, 3), (0, 10, 0)):
        with pytest.raises(ValueError):
            timeline(graph, *args)
    with pytest.raises(ValueError):
        timeline(graph, 0, 10, 3, by="pixel")


def test_cell_sums_stay_exact_beyond_doubles():
    cells = np.array([0, 2, 0, 2, 1])
    # the last: the absolute values' int64 sum wraps, which must not pick the double path
    for ticks in ([5, 7, -2, 1, 0], [2**62, 3, -(2**61) + 1, 2**60 + 1, 7], [2**62, 2**62 + 1, 1, -(2**62), -3]):
        want = [sum(t for c, t in zip(cells.tolist(), ticks) if c == cell) for cell in range(4)]
        assert _cell_sums(cells, np.array(ticks, np.int64), 4).tolist() == want
