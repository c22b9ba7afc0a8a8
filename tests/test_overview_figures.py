"""The overview result and its pictures on constructed models (issue 16)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ccgformat.aggregate_model import AggregateModel
from ccgformat.figures import palette
from ccgformat.figures.treemap import MIN_AREA
from ccgformat.query.overview_query import overview_of
from ccgformat.query.overview_measures import interval_index

from .figure_support import axis_box, decode_png, parse, rects, texts
from .overview_support import hierarchy_of, model_of, perturbed_model, random_model


def test_the_json_parts_tile_every_cell_once_and_sum_to_the_reported_pic() -> None:
    model = random_model(np.random.default_rng(5), 40, 8, 3, fanout=3)
    result = overview_of(model, 0.2)
    data = result.to_json()
    cover = np.zeros((len(model.locations), 8), dtype=np.int64)
    pic = 0.0
    for part, node, first, last in zip(data["parts"], result.partition.node, result.partition.first,
                                       result.partition.last):
        cover[np.searchsorted(model.locations, part["locations"]), part["first"]:part["last"] + 1] += 1
        column = interval_index(first, last)
        pic += 0.2 * result.measures.gain[node, column] - 0.8 * result.measures.loss[node, column]
        assert part["node"] == model.hierarchy.path(int(node))
    assert (cover == 1).all()
    assert data["pic"] == pytest.approx(pic, rel=1e-9, abs=1e-9)
    assert data["bounds"] == model.bounds.tolist() and data["states"] == list(model.states)


def test_the_overview_png_paints_each_part_in_its_mode_colour_with_alpha() -> None:
    result = overview_of(perturbed_model(), 0.1, resolution=100)
    h = result.hierarchy
    block = int(np.flatnonzero((h.first_leaf == 16) & (h.stop_leaf == 32))[0])
    parts = set(zip(result.partition.node.tolist(), result.partition.first.tolist(), result.partition.last.tolist()))
    assert (block, 4, 7) in parts  # the perturbed block is one part
    figure = result.figure()
    drawing = result.drawing()
    pixels = decode_png(drawing.png())
    colours = palette(2)
    k = next(i for i in range(len(figure.row)) if figure.row[i] == 16 and figure.first[i] == 4)
    assert figure.mode[k] == 1 and figure.alpha[k] == pytest.approx(1.0)
    svg = parse(drawing.svg())
    box = axis_box(svg, min(float(r["y"]) for r in rects(svg, "plot")))
    bounds = figure.bounds
    x = int(box.x + (bounds[6] - bounds[0]) / (bounds[-1] - bounds[0]) * box.w)
    y = int(box.y + 24 / 64 * box.h)
    assert tuple(pixels[y, x]) == tuple(np.rint(colours[1]).astype(int))
    labels = [text for _, _, text in texts(svg, "legend")]
    assert labels == ["s0", "s1"] and texts(svg, "x-axis")[-1][2] == "time (s)"


def test_thin_parts_become_marked_visual_aggregates() -> None:
    """2,000 leaves on 480 pixels: at p = 0 every leaf is its own part and too thin; the
    drawn rectangles are the visual aggregates, far fewer, each with a mark."""
    model = random_model(np.random.default_rng(2), 2000, 4, 2, fanout=10)
    values = model.values.copy()
    values[:, :, :] = 0
    values[:, :, 0] = np.arange(2000)[:, None] % 7 * 10      # leaves differ, constant in time
    model = AggregateModel(model.bounds, model.states, model.locations, values, model.hierarchy)
    result = overview_of(model, 0.0)
    figure = result.figure()
    assert len(result.partition) >= 1000 and len(figure.row) < 400
    assert (figure.mark == 1).all()                           # one temporal partition: diagonals
    values[:1000:2, 0, 0] += 5                                # every other leaf of the first half cut in time
    result = overview_of(AggregateModel(model.bounds, model.states, model.locations, values, model.hierarchy), 0.0)
    assert (result.figure().mark == 2).any()
    rows = np.zeros(2000, dtype=np.int64)
    figure = result.figure()
    for row, stop in zip(figure.row, figure.stop):
        rows[row:stop] += 1
    assert (rows >= 1).all()


def test_a_treemap_of_a_million_leaves_stays_bounded_and_shows_the_odd_machine() -> None:
    leaves = 1_000_000
    tree = [[[None] * 100 for _ in range(100)] for _ in range(100)]
    hierarchy = hierarchy_of(tree)
    values = np.zeros((leaves, 1, 2), dtype=np.int64)
    values[:, 0, 0] = 100
    values[500_000:500_100, 0, 0], values[500_000:500_100, 0, 1] = 0, 100     # one odd machine
    model = model_of(hierarchy, values)
    began = time.perf_counter()
    result = overview_of(model, 0.5, normalize=True, kind="spatial")
    drawing = result.treemap(1000, 600)
    pixels = decode_png(drawing.png())
    elapsed = time.perf_counter() - began
    machine = int(np.flatnonzero((hierarchy.first_leaf == 500_000) & (hierarchy.stop_leaf == 500_100))[0])
    assert machine in result.partition.node.tolist() and len(result.partition) < 1000
    assert len(drawing.shapes) <= 1000 * 600 / MIN_AREA
    legend = min(y for _, y, _ in texts(parse(drawing.svg()), "legend")) - 10
    odd = np.all(pixels[:int(legend)] == np.rint(palette(2)[1]).astype(np.uint8), axis=2).sum()  # above the legend
    assert odd > 0, "the machine in state 1 must show"
    assert elapsed < 60
