"""The logical timeline picture: title, step axis, row labels thinned by the figures' rule,
the colour scale's legend, cells coloured by lateness (the aggregate event a step
below), message lines from send to receive while every step and location has a cell,
each phase's locations by cluster when they outnumber the rows; SVG and PNG alike."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccgformat.figures.scale import RAMP, ramp
from ccgformat.model import EventKind as K
from ccgformat.query.logical_query import logical
from ccgformat.query.logical_picture import MESSAGE_LINES, logical_figure

from .figure_support import decode_png, grid, layer, parse, texts
from .logical_support import build, calls

ROW_LINE = 12.0  # pixels a row label needs: every k-th row is labelled, k = ceil(ROW_LINE / row height)


def ring(ranks: int, rounds: int = 2, late: int = 0):
    """``ranks`` exchanging in a ring ``rounds`` times; rank ``late`` starts 40 ticks late
    and its receives last 30 ticks."""
    ops = lambda rank: [op for r in range(rounds) for op in  # noqa: E731
                        ((K.SEND, (rank + 1) % ranks, r), (K.RECV, (rank - 1) % ranks, r, 0, 30 if rank == late else 2))]
    return build({rank: calls(ops(rank), start=40 if rank == late else 0) for rank in range(ranks)})


def test_cells_title_axis_labels_legend_and_messages():
    result = logical(ring(4, late=2))
    root = parse(result.drawing().svg())
    assert [text for _, _, text in texts(root, "title")] == ["logical timeline (ravel)"]
    box, cells = grid(root)
    assert cells.shape == (4, result.steps, 3)
    high = int(max(result.lateness.max(), result.aggregate_lateness.max()))
    want = np.full((4, result.steps, 3), 255, np.uint8)
    want[result.location, result.step] = ramp(result.lateness / high)
    want[result.location, result.step - 1] = ramp(result.aggregate_lateness / high)
    assert (cells == want).all()
    # the step axis: whole steps under the middles of their columns
    *ticks, (_, _, caption) = texts(root, "x-axis")
    assert caption == "logical step"
    for x, _, label in ticks:
        assert float(label).is_integer()
        assert x == pytest.approx(box.x + (float(label) + 0.5) * box.w / result.steps, abs=0.02)
    assert [text for _, _, text in texts(root, "row-labels")] == result.labels
    # the legend: the ramp and round lateness ticks in the unit of its caption (ticks of 1 ns here)
    *scale, (_, _, unit) = texts(root, "legend")
    assert unit == "lateness (ns)" and float(scale[0][2]) == 0 and float(scale[-1][2]) <= high
    image = layer(root, "legend").find("{http://www.w3.org/2000/svg}image")
    assert image is not None
    # a line per message, from the middle of its send's cell to its receive's
    lines = [tuple(float(line.get(k)) for k in ("x1", "y1", "x2", "y2"))
             for line in layer(root, "messages").iter("{http://www.w3.org/2000/svg}line")]
    sends = np.flatnonzero(np.isin(result.kind, (K.SEND, K.ISEND)))
    middle = lambda row, step: (box.x + (step + 0.5) * box.w / result.steps,  # noqa: E731
                                box.y + (row + 0.5) * box.h / 4)
    expected = sorted((*middle(result.location[s], result.step[s]), *middle(result.location[r], result.step[r]))
                      for s, r in zip(sends.tolist(), result.partner[sends].tolist()))
    assert len(lines) == len(expected) > 0
    assert np.allclose(sorted(lines), expected, rtol=0, atol=0.01)


def test_the_png_shows_the_svgs_cells():
    result = logical(ring(3, late=1))
    drawing = result.drawing()
    box, cells = grid(parse(drawing.svg()))
    page = decode_png(drawing.png())
    assert page.shape[:2] == (drawing.height, drawing.width)
    rows, columns = cells.shape[:2]
    height, width = int(box.h) // rows, int(box.w) // columns
    for row in range(rows):
        for column in range(columns):  # a pixel inside each cell, away from the message lines' ends
            y, x = int(box.y) + row * height + 1, int(box.x) + column * width + 1
            assert tuple(page[y, x]) == tuple(cells[row, column])


def test_many_steps_share_columns_and_lines_give_way():
    """40 rounds, 161 steps in 20 columns: a column holds the steps
    [c * 161 // 20, (c + 1) * 161 // 20), its cell the greatest lateness; no message lines."""
    result = logical(ring(3, rounds=40, late=1))
    figure = logical_figure(result, 20, 100)
    assert figure.pixels.shape[:2] == (3, 20) and len(figure.lines) == 0
    bounds = [c * result.steps // 20 for c in range(21)]
    for row in range(3):
        for column in range(20):
            mine = result.rows_of(row)
            steps, late = result.step[mine], result.lateness[mine]
            aggregate = result.aggregate_lateness[mine]
            inside = [v for s, v in zip(steps.tolist() + (steps - 1).tolist(), late.tolist() + aggregate.tolist())
                      if bounds[column] <= s < bounds[column + 1]]
            high = max(result.lateness.max(), result.aggregate_lateness.max())  # the darkest colour's ticks
            want = ramp(np.array(max(inside) / high)) if inside else np.full(3, 255, np.uint8)
            assert tuple(figure.pixels[row, column]) == tuple(want)


def test_row_labels_are_thinned():
    """60 ranks share 800 pixels in rows of 13 (every row labelled), 90 ranks in rows of 8
    (every second row): k = ceil(12 / row height)."""
    for ranks in (60, 90):
        result = logical(ring(ranks, rounds=1))
        root = parse(result.drawing().svg())
        box, _ = grid(root)
        row_height = box.h / ranks
        stride = max(1, math.ceil(ROW_LINE / row_height - 1e-9))
        assert [text for _, _, text in texts(root, "row-labels")] == result.labels[::stride]


def test_more_locations_than_rows_are_ordered_by_cluster():
    """Eight ranks in four rows, one phase: two by two, each row holds the locations of a
    quarter of the phase's members ordered by (cluster, location); ranks 2 and 5 are late
    alike and cluster together, so they share a row."""
    ops = lambda rank: [(K.SEND, (rank + 1) % 8, 0), (K.RECV, (rank - 1) % 8, 0, 0, 60 if rank in (2, 5) else 2)]  # noqa: E731
    result = logical(build({rank: calls(ops(rank)) for rank in range(8)}), clusters=2)
    clusters = [int(result.cluster[result.rows_of(rank)][0]) for rank in range(8)]
    assert clusters == [0, 0, 1, 0, 0, 1, 0, 0]
    figure = logical_figure(result, 100, 4)
    order = sorted(range(8), key=lambda rank: (clusters[rank], rank))  # 0 1 3 4 | 6 7 2 5
    high = max(result.lateness.max(), result.aggregate_lateness.max())
    for row in range(4):
        members = order[2 * row:2 * row + 2]
        late = max(int(result.lateness[result.rows_of(rank)][1]) for rank in members)
        assert tuple(figure.pixels[row, result.step[1]]) == tuple(ramp(np.array(late / high)))
    assert figure.row_names == ["0 %", "25 %", "50 %", "75 %"] and len(figure.lines) == 0


def test_lines_are_dropped_beyond_their_limit(monkeypatch):
    import ccgformat.query.logical_picture as picture
    result = logical(ring(3))
    assert len(logical_figure(result, 100, 100).lines) == 6
    monkeypatch.setattr(picture, "MESSAGE_LINES", 5)
    assert len(picture.logical_figure(result, 100, 100).lines) == 0
    assert MESSAGE_LINES >= 1000


def test_the_ramp_runs_from_yellow_to_dark_red():
    assert ramp(np.array([0.0, 1.0])).tolist() == RAMP[[0, -1]].astype(int).tolist()
    assert ramp(np.array(0.5)).tolist() == np.rint((RAMP[1] + RAMP[2]) / 2).astype(int).tolist()
