"""The pictures (issue 37, item 3): title, time axis in seconds, row labels thinned by the
stated rule and a legend of the states shown, in SVG (our writer) and PNG (matplotlib),
both from one layout; the missing ``plot`` extra; the command line's picture options."""

from __future__ import annotations

import math
import string
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.cli import main
from ccgformat.errors import MissingExtraError, ParameterError
from ccgformat.figures import Drawing, palette
from ccgformat.figures.axes import thinned
from ccgformat.figures.timeline import TimelineFigure, draw_timeline
from ccgformat.query.overview_query import overview_of

from .figure_support import axis_box, decode_png, grid, layer, parse, rects, rgb, texts
from .overview_support import hierarchy_of, perturbed_model, random_model, trees
from .query_support import converted

#: pixels a row label needs (the stated rule: every k-th row, k = ceil(ROW_LINE / row height))
ROW_LINE = 12.0
NAMES = st.text(string.ascii_letters + string.digits + " _/.", min_size=1, max_size=14)


def check_time_axis(root: ET.Element, box, start: int, stop: int, resolution: int) -> None:
    """Tick labels are seconds from the window's start, increasing, each under the x its
    value maps to, apart enough not to overlap; the caption names the start."""
    span = (stop - start) / resolution
    *ticks, (_, _, caption) = texts(root, "x-axis")
    values = [float(text) for _, _, text in ticks]
    assert len(values) >= 1 and values == sorted(values) and len(set(values)) == len(values)
    assert 0 <= values[0] and values[-1] <= span * (1 + 1e-9)
    for x, _, text in ticks:
        assert x == pytest.approx(box.x + float(text) / span * box.w, abs=0.02)
    for (x0, _, a), (x1, _, b) in zip(ticks, ticks[1:]):
        assert x1 - x0 >= (len(a) + len(b)) / 2 * 6.0, "tick labels overlap"
    if start == 0:
        assert caption == "time (s)"
    else:
        assert caption.startswith("time (s) from ") and caption.endswith(" s")
        assert float(caption[len("time (s) from "):-2]) == pytest.approx(start / resolution, abs=span / 1000,
                                                                          rel=1e-12)


def check_row_labels(root: ET.Element, box, names: list[str]) -> None:
    """Rows of equal height: the labels of rows 0, k, 2k, ... with k = ceil(ROW_LINE * rows
    / height), each at its row's middle."""
    rows = len(names)
    stride = max(1, math.ceil(ROW_LINE * rows / box.h - 1e-9))
    labels = texts(root, "row-labels")
    assert [text for _, _, text in labels] == names[::stride]
    for (_, y, _), row in zip(labels, range(0, rows, stride)):
        assert y == pytest.approx(box.y + (row + 0.5) * box.h / rows, abs=0.02)


@st.composite
def timeline_figures(draw: st.DrawFn) -> tuple[TimelineFigure, int | None]:
    rows, columns = draw(st.integers(1, 120)), draw(st.integers(1, 700))
    resolution = draw(st.sampled_from([1, 1000, 10**6, 10**9, 2_095_147_102]))
    start = draw(st.integers(0, 10**13))
    stop = start + draw(st.integers(1, 10**13))
    names = draw(st.lists(NAMES, min_size=rows, max_size=rows))
    classes = draw(st.lists(NAMES, max_size=8, unique=True))
    pixels = np.random.default_rng(draw(st.integers(0, 2**32))).integers(0, 256, (rows, columns, 3), dtype=np.uint8)
    return (TimelineFigure(draw(NAMES), start, stop, resolution, names, pixels, classes, palette(len(classes))),
            draw(st.none() | st.integers(1, 20)))


@settings(max_examples=25, deadline=None)
@given(timeline_figures())
def test_a_timeline_svg_has_its_title_axis_row_labels_legend_and_cells(case) -> None:
    figure, row_height = case
    root = parse(draw_timeline(figure, row_height).svg())
    assert [text for _, _, text in texts(root, "title")] == [figure.title]
    assert [text for _, _, text in texts(root, "legend")] == figure.classes
    swatches = [rgb(r["fill"]) for r in rects(root, "legend")]
    assert swatches == [tuple(int(round(c)) for c in colour) for colour in figure.colours]
    box, cells = grid(root)
    assert (cells == figure.pixels).all()
    rows, columns = figure.pixels.shape[:2]
    expected_height = rows * (row_height or max(1, min(16, 800 // rows)))
    assert box.h == expected_height and box.w >= min(columns, 480) and box.w % columns == 0
    assert axis_box(root, box.y) == box
    check_time_axis(root, box, figure.start, figure.stop, figure.resolution)
    check_row_labels(root, box, figure.row_names)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.1, 40.0), min_size=1, max_size=60))
def test_labels_are_thinned_greedily_a_line_apart(heights: list[float]) -> None:
    """Of rows of any heights: every labelled middle is at least a line below the last
    labelled one, and every row left out is closer than that (so none could be added)."""
    bottoms = np.cumsum(heights)
    middles = (bottoms - np.asarray(heights) / 2).tolist()
    chosen = thinned(middles)
    assert chosen[0] == 0
    for a, b in zip(chosen, chosen[1:]):
        assert middles[b] - middles[a] >= ROW_LINE - 1e-6
    for row in set(range(len(middles))) - set(chosen):
        last = max(c for c in chosen if c < row)
        assert middles[row] - middles[last] < ROW_LINE


@settings(max_examples=40, deadline=None)
@given(trees(30))
def test_a_node_is_labelled_after_its_parent_unless_that_is_the_root(tree) -> None:
    h = hierarchy_of(tree)
    for node in range(len(h)):
        parent = int(h.parents[node])
        assert h.label(node) == (h.names[node] if parent <= 0 else f"{h.names[parent]}/{h.names[node]}")


def test_rows_by_location_are_labelled_by_their_leaves(tmp_path) -> None:
    """Locations defined out of their hierarchy order: each row the label of its own
    leaf; a location under a same-named parent keeps its name alone."""
    tree = [ccgformat.model.SystemTreeNode("node a", "node"), ccgformat.model.SystemTreeNode("b", "node")]
    locations = [ccgformat.model.Location("rank 1", parent=1), ccgformat.model.Location("rank 0", parent=0),
                 ccgformat.model.Location("b", parent=1)]
    definitions = ccgformat.Definitions(regions=[ccgformat.model.Region("f")], system_tree=tree, locations=locations)
    events = [(i, [ccgformat.EventBatch.from_events([(i, 0, 0), (10 + i, 1, 0)])]) for i in range(3)]
    ccgformat.write_trace(tmp_path / "t.ccg", definitions, events)
    with ccgformat.open(tmp_path / "t.ccg") as archive:
        assert archive.timeline(0, 20, 10).row_names == ["b/rank 1", "node a/rank 0", "b"]
        assert archive.timeline(0, 20, 10, locations=[2, 0], height=1).row_names == ["b (+1)"]


def test_the_timeline_of_a_corpus_trace_names_locations_groups_and_seconds(tmp_path_factory) -> None:
    """Row labels are the locations under their system tree parents, the legend the
    groups with time in the window (by the profile, another path than the timeline's
    walk), the axis in seconds of the archive's timer. The first 40% of the window is
    MPI_Init alone: one group of two."""
    archive = converted(tmp_path_factory, "otf2-stencil")
    assert archive.timer_resolution == 2_095_147_102
    first, last = archive.time_range
    tree, locations = archive.definitions.system_tree, archive.definitions.locations
    names = [f"{tree[locations[i].parent].name}/{locations[i].name}" for i in range(len(locations))]
    seen = []
    for start, stop in ((first, first + (last - first) * 2 // 5), (first + (last - first) // 3, last + 1)):
        result = archive.timeline(start, stop, 600)
        root = parse(result.drawing().svg())
        box, _ = grid(root)
        check_row_labels(root, box, names)
        check_time_axis(root, box, start, stop, archive.timer_resolution)
        groups = {row.group for row in archive.profile(start, stop).regions if row.exclusive > 0}
        assert [text for _, _, text in texts(root, "legend")] == [g for g in result.groups if g in groups]
        seen.append(len(groups))
    assert seen[0] < len(result.groups) == seen[1]


def test_a_timeline_by_depth_names_its_levels(tmp_path_factory) -> None:
    archive = converted(tmp_path_factory, "otf2-stencil")
    first, last = archive.time_range
    result = archive.timeline(first, last + 1, 300, by="depth")
    root = parse(result.drawing().svg())
    labels = [text for _, _, text in texts(root, "row-labels")]
    assert labels == [f"level {k}" for k in range(len(result.rows))] and len(labels) >= 2


def test_a_timeline_of_more_locations_than_rows_says_how_many_a_row_sums(tmp_path_factory) -> None:
    archive = converted(tmp_path_factory, "otf2-stencil")
    first, last = archive.time_range
    result = archive.timeline(first, last + 1, 100, height=5)       # 32 locations in 5 rows
    labels = [text for _, _, text in texts(parse(result.drawing().svg()), "row-labels")]
    counts = np.diff(result.row_starts).tolist()
    assert len(labels) == 5 and all(label.endswith(f" (+{count - 1})") for label, count in zip(labels, counts))
    assert "in 5 rows" in texts(parse(result.drawing().svg()), "title")[0][2]


def test_the_overview_svg_legend_names_exactly_the_colours_drawn() -> None:
    """Every filled part's colour (fill-opacity > 0) is a legend swatch and every swatch
    is drawn; the labels are the nodes of the deepest level at least 10 pixels tall."""
    result = overview_of(perturbed_model(), 0.1, resolution=100)
    root = parse(result.drawing().svg())
    drawn = {rgb(r["fill"]) for r in rects(root, "plot") if float(r.get("fill-opacity", "1")) > 0}
    legend = dict(zip((text for _, _, text in texts(root, "legend")), (rgb(r["fill"]) for r in rects(root, "legend"))))
    assert set(legend.values()) == drawn and set(legend) == {"s0", "s1"}
    node, mode, proportion = result.part_modes()
    assert set(legend) == {result.model.states[m] for m, x in zip(mode.tolist(), proportion.tolist()) if x > 0}
    box = axis_box(root, min(float(r["y"]) for r in rects(root, "plot")))
    bounds = result.model.bounds
    check_time_axis(root, box, int(bounds[0]), int(bounds[-1]), 100)
    assert [text for _, _, text in texts(root, "title")][0].startswith("spatiotemporal overview, p = 0.1: ")
    labels = [text for _, _, text in texts(root, "row-labels")]
    h = result.hierarchy
    # 4 x 4 nodes of 4 leaves, 30 pixels each (their 7.5-pixel leaves are too thin), under their parents' names
    assert labels == [f"{h.names[c]}/{h.names[g]}" for c in h.children(0) for g in h.children(c)]
    assert len(labels) == 16


def test_overview_labels_of_thin_leaves_are_thinned() -> None:
    """2,000 leaves right under the root on 480 pixels: no level is 10 pixels tall, so the
    leaves are labelled, every 50th (ceil(12 / 0.24))."""
    model = random_model(np.random.default_rng(2), 2000, 4, 2, fanout=2000)
    result = overview_of(model, 0.5)
    labels = [text for _, _, text in texts(parse(result.drawing().svg()), "row-labels")]
    h = result.hierarchy
    leaves = [n for n in range(len(h)) if len(h.children(n)) == 0]
    leaves.sort(key=lambda n: h.first_leaf[n])
    assert labels == [h.names[n] for n in leaves[::50]] and len(labels) == 40


def test_the_quality_curve_and_treemap_have_titles_axes_and_legends() -> None:
    result = overview_of(perturbed_model(), 0.1, resolution=100)
    curve = parse(result.curve_drawing().svg())
    assert texts(curve, "title")[0][2].startswith("quality curves of the spatiotemporal overview: ")
    assert [text for _, _, text in texts(curve, "legend")] == ["gain / max gain", "loss / max loss",
                                                                 "chosen p = 0.1"]
    ticks = [float(text) for _, _, text in texts(curve, "x-axis")[:-1]]
    assert ticks[0] == 0.0 and ticks[-1] == 1.0 and ticks == sorted(ticks)
    values = [float(text) for _, _, text in texts(curve, "y-axis")]
    ys = [y for _, y, _ in texts(curve, "y-axis")]
    assert values == sorted(values) and ys == sorted(ys, reverse=True)      # up the page as they grow
    spatial = overview_of(perturbed_model(), 0.01, kind="spatial", resolution=100)
    treemap = parse(spatial.treemap().svg())
    assert texts(treemap, "title")[0][2] == f"spatial aggregation of 12 s from 0 s, p = 0.01: " \
                                           f"{len(spatial.partition)} parts"
    drawn = {rgb(r["fill"]) for r in rects(treemap, "plot") if float(r.get("fill-opacity", "1")) > 0}
    assert drawn == {rgb(r["fill"]) for r in rects(treemap, "legend")}


def test_the_png_is_matplotlibs_rendering_of_the_same_layout() -> None:
    """The PNG decodes to the drawing's size, and its cells and parts have the colours the
    SVG gives them."""
    rng = np.random.default_rng(4)
    for rows, columns, row_height in ((6, 40, 10), (7, 1300, 3)):    # columns 12 pixels wide, and 1
        pixels = rng.integers(0, 256, (rows, columns, 3), dtype=np.uint8)
        figure = TimelineFigure("t", 0, 4000, 1000, [f"r{i}" for i in range(rows)], pixels, ["a"], palette(1))
        drawing = draw_timeline(figure, row_height)
        png = decode_png(drawing.png())
        assert png.shape == (drawing.height, drawing.width, 3)
        box, _ = grid(parse(drawing.svg()))
        ys = (box.y + (np.arange(rows) + 0.5) * row_height).astype(int)
        xs = (box.x + (np.arange(columns) + 0.5) * box.w / columns).astype(int)
        assert np.abs(png[ys[:, None], xs[None, :]].astype(int) - pixels).max() <= 1
    result = overview_of(perturbed_model(), 0.1, resolution=100)
    drawing = result.drawing()
    png = decode_png(drawing.png())
    for r in rects(parse(drawing.svg()), "plot"):
        x, y, w, h = (float(r[k]) for k in ("x", "y", "width", "height"))
        alpha = float(r.get("fill-opacity", "1"))
        want = np.asarray(rgb(r["fill"])) * alpha + 255 * (1 - alpha)
        assert np.abs(png[int(y + h / 2), int(x + w / 4)].astype(float) - want).max() <= 2


def test_a_missing_matplotlib_names_the_plot_extra_and_svg_still_works() -> None:
    """Without matplotlib, PNG raises MissingExtraError naming ``plot``; the SVG draws the
    cells as rectangles of runs, which paint exactly the cells."""
    rng = np.random.default_rng(1)
    pixels = np.repeat(rng.integers(0, 3, (5, 30, 1)) * 100, 3, axis=2).astype(np.uint8)
    drawing = draw_timeline(TimelineFigure("t", 0, 30, 1, list("abcde"), pixels, [], palette(0)), 4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "matplotlib", None)
        with pytest.raises(MissingExtraError, match=r"pip install 'ccgformat\[plot\]'") as caught:
            drawing.png()
        svg = drawing.svg()
    assert isinstance(caught.value, ImportError) and "matplotlib" in str(caught.value)
    root = parse(svg)
    assert layer(root, "plot").find("{http://www.w3.org/2000/svg}image") is None
    x0 = min(float(r["x"]) for r in rects(root, "plot"))
    painted = np.full_like(pixels, 255)
    width = 480 / 30
    for r in rects(root, "plot"):
        if r.get("fill-opacity") == "0.000":
            continue  # the plot's frame
        row, first = round((float(r["y"]) - 32) / 4), round((float(r["x"]) - x0) / width)
        painted[row, first:first + round(float(r["width"]) / width)] = rgb(r["fill"])
    assert (painted == pixels).all()


def test_the_png_refuses_a_picture_beyond_aggs_limit() -> None:
    with pytest.raises(ParameterError, match="too large for a PNG"):
        Drawing(70_000, 10).png()


def test_the_command_line_draws_svg_and_png_and_names_the_extra(tmp_path, capsys) -> None:
    """``ccg timeline --svg/--png``, ``ccg overview --svg/--png [--curve]``; without
    matplotlib (a fresh interpreter where its import fails) ``--png`` exits 1 naming
    the extra, and ``--svg`` still works."""
    path = tmp_path / "t.ccg"
    definitions = ccgformat.Definitions(regions=[ccgformat.model.Region(n) for n in "ABC"],
                                        locations=[ccgformat.model.Location(f"rank {i}") for i in range(3)])
    events = {i: [(10 * i, 0, 0), (10 * i + 5, 0, 1 + i % 2), (10 * i + 50, 1, 1 + i % 2), (200, 1, 0)]
              for i in range(3)}
    ccgformat.write_trace(path, definitions, [(i, [ccgformat.EventBatch.from_events(e)]) for i, e in events.items()])
    for command in (["timeline", "--width", "50"], ["overview", "--slices", "5"],
                    ["overview", "--slices", "5", "--curve"], ["overview", "--slices", "5", "--kind", "spatial"]):
        svg, png = tmp_path / "a.svg", tmp_path / "a.png"
        assert main([command[0], str(path), *command[1:], "--svg", str(svg), "--png", str(png)]) == 0
        assert texts(parse(svg.read_text()), "title")[0][2]
        assert decode_png(png.read_bytes()).shape[2] == 3
        svg.unlink(), png.unlink()
    assert main(["timeline", str(path)]) == 2
    capsys.readouterr()
    blocked = ("import sys; sys.modules['matplotlib'] = None; from ccgformat.cli import main; "
               "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", blocked, "timeline", str(path), "--png", str(tmp_path / "b.png")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and not (tmp_path / "b.png").exists()
    assert "ccg: a PNG picture needs the matplotlib package" in done.stderr
    assert "pip install 'ccgformat[plot]'" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([sys.executable, "-c", blocked, "overview", str(path), "--slices", "4", "--svg",
                           str(tmp_path / "b.svg")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert texts(parse((tmp_path / "b.svg").read_text()), "legend")
