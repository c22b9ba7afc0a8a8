"""Jupyter: archives and query results show a short HTML summary (``_repr_html_``) that
parses, holds the numbers of the object's own API and escapes every name; results that
draw show their picture (``_repr_svg_``, ``_repr_png_``, and inside the HTML); and a real
kernel displays them (nbclient)."""

from __future__ import annotations

import base64
import os
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.interop.html import TOP_ROWS
from ccgformat.model import Definitions, Location, Metric, Region

from .corpus import corpus_path
from .query_support import CORPUS, converted
from .traces import batches, traces

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def parse(html: str) -> ET.Element:
    """The summary as an XML tree (it must be well-formed)."""
    return ET.fromstring(html)


def text(element: ET.Element) -> str:
    return "".join(element.itertext())


def facts(root: ET.Element) -> dict[str, str]:
    """The first table's rows: header -> value."""
    table = root.find("table")
    return {text(row.find("th")): text(row.find("td")) for row in table.findall("tr")}


def rows(root: ET.Element) -> list[list[str]]:
    """The cells of the second table (the top entries), without its header row."""
    table = root.findall("table")[1]
    return [[text(cell) for cell in row.findall("td")] for row in table.findall("tr")[1:]]


def number(value: int) -> str:
    return f"{value:,}"


def picture(root: ET.Element) -> tuple[str, bytes]:
    """The mime type and the bytes of the summary's image."""
    source = root.find("img").get("src")
    head, data = source.split(",", 1)
    assert head.startswith("data:") and head.endswith(";base64")
    return head[5:-7], base64.b64decode(data)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def check_archive(archive: ccg.Archive) -> None:
    root = parse(archive._repr_html_())
    assert text(root.find("p/code")) == archive.path
    got = facts(root)
    stats = archive.stats
    start, end = archive.time_range
    assert got["events"] == number(stats.events)
    assert got["locations"] == number(len(archive.locations))
    assert got["file bytes"] == number(os.path.getsize(archive.path))
    assert got["format version"] == "{}.{}".format(*archive.version)
    assert got["time range (ticks)"] == f"{start:,} .. {end:,}"
    assert float(got["duration (s)"].replace(",", "")) == pytest.approx((end - start) / archive.timer_resolution,
                                                                        rel=1e-5, abs=1e-12)
    assert got["nodes N -> n"] == f"{stats.N:,} -> {stats.n:,}"


def check_profile(profile: ccg.Profile) -> None:
    root = parse(profile._repr_html_())
    got = facts(root)
    assert got["regions called"] == number(len(profile.regions))
    assert got["calls"] == number(sum(r.calls for r in profile.regions))
    assert got["messages sent"] == number(sum(m.sent for m in profile.messages))
    ranked = sorted(profile.regions, key=lambda r: (-r.exclusive, r.region))[:TOP_ROWS]
    assert [row[:5] for row in rows(root)] == [[r.name, r.group, number(r.calls), number(r.inclusive),
                                                number(r.exclusive)] for r in ranked]
    more = [text(p) for p in root.findall("p") if text(p).startswith("and ")]
    assert more == ([f"and {len(profile.regions) - TOP_ROWS:,} more"] if len(profile.regions) > TOP_ROWS else [])


def check_messages(messages: ccg.Messages) -> None:
    root = parse(messages._repr_html_())
    got = facts(root)
    assert got["matched messages"] == number(len(messages))
    assert got["unmatched events"] == number(len(messages.unmatched))
    assert got["collective operations"] == number(len(messages.collectives))
    pairs, volume = Counter(), Counter()
    for row in messages.rows():
        pairs[row["sender"], row["receiver"]] += 1
        volume[row["sender"], row["receiver"]] += row["size"]
    top = sorted(pairs, key=lambda pair: (-pairs[pair], pair))[:TOP_ROWS]
    assert rows(root) == [[number(s), number(r), number(pairs[s, r]), number(volume[s, r])] for s, r in top]
    assert got["bytes sent"] == number(sum(volume.values()))


def check_states(root: ET.Element, names, values: np.ndarray) -> None:
    """The states table: names by total time (ties by position), largest first."""
    totals = {}
    for position, name in enumerate(names):
        totals[position] = sum(int(v) for v in values[..., position].ravel())
    ranked = sorted(totals, key=lambda position: (-totals[position], position))[:TOP_ROWS]
    assert [row[:2] for row in rows(root)] == [[names[p], number(totals[p])] for p in ranked]


def check_model(model: ccg.AggregateModel) -> None:
    root = parse(model._repr_html_())
    got = facts(root)
    assert got["locations"] == number(len(model.locations))
    assert got["slices"] == number(len(model.bounds) - 1)
    assert got["time in states (ticks)"] == number(int(model.values.sum()))
    check_states(root, model.states, model.values)


def check_timeline(timeline: ccg.Timeline) -> None:
    root = parse(timeline._repr_html_())
    assert facts(root)["columns"] == number(timeline.width)
    check_states(root, timeline.groups, timeline.exclusive)
    png = timeline._repr_png_()
    height = timeline.exclusive.shape[0]
    if height == 0:
        assert png is None and root.find("img") is None
        return
    assert picture(root) == ("image/png", png)
    row_height = max(1, min(16, 480 // height))              # the rows near 480 pixels in all
    drawing = timeline.drawing(row_height)
    assert png_size(png) == (drawing.width, drawing.height) and drawing.height > height * row_height


def check_overview(overview: ccg.Overview) -> None:
    root = parse(overview._repr_html_())
    got = facts(root)
    assert got["parts"] == number(len(overview.partition))
    assert got["states"] == number(len(overview.model.states))
    svg = overview._repr_svg_()
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert picture(root) == ("image/svg+xml", svg.encode())


def check_everything(archive: ccg.Archive) -> None:
    check_archive(archive)
    check_profile(archive.profile())
    check_messages(archive.messages())
    first, last = archive.time_range
    check_model(archive.aggregate(5))
    check_model(archive.aggregate(3, states="group"))
    check_timeline(archive.timeline(first, last + 1, 40))
    if archive.locations:
        check_overview(archive.overview(4))
    integrals = archive.metric_integrals(3)
    root = parse(integrals._repr_html_())
    assert facts(root)["metrics"] == number(len(integrals.names))


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native", "otf-out", "paje-containers"])
def test_corpus_summaries(tmp_path_factory, name):
    corpus_path(*CORPUS[name])
    check_everything(converted(tmp_path_factory, name))


#: names with the characters HTML gives a meaning to, and others
NAMES = st.text(st.sampled_from("<>&\"' /aZ\u00e9\u4e2d"), min_size=1, max_size=8)


@given(traces(), st.lists(NAMES, min_size=4, max_size=4), st.lists(NAMES, min_size=3, max_size=3),
       st.lists(NAMES, min_size=3, max_size=3))
@settings(max_examples=12, deadline=None)
def test_random_traces_with_awkward_names(tmp_path_factory, trace, regions, locations, metrics):
    """Every name arrives as itself (escaped, then unescaped by the parser), and no markup
    a name spells becomes an element."""
    folder = tmp_path_factory.mktemp("names")
    path = folder / "a<&>'\"b.ccg"
    definitions = Definitions(regions=[Region(name, group=name) for name in regions],
                              locations=[Location(name) for name in locations], metrics=[Metric(n) for n in metrics])
    ccg.write_trace(path, definitions, ((loc, batches(events)) for loc, events in trace.items()))
    with ccg.open(path) as archive:
        check_everything(archive)
        profile = archive.profile()
        root = parse(profile._repr_html_())
        assert {row[0] for row in rows(root)} <= set(regions)
        assert {element.tag for element in root.iter()} <= {"div", "p", "strong", "code", "table", "tr", "th", "td"}


def test_an_empty_timeline_has_no_picture(tmp_path):
    path = tmp_path / "one.ccg"
    ccg.write_trace(path, Definitions(locations=[Location("rank 0")]),
                    [(0, [ccg.EventBatch.from_events([(5, int(ccg.EventKind.MARKER), 0)])])])
    with ccg.open(path) as archive:
        check_timeline(archive.timeline(0, 10, 5))
        assert archive.timeline(0, 10, 5, locations=[])._repr_png_() is None


def test_summaries_show_in_a_kernel(tmp_path_factory):
    """A notebook run by a real kernel (nbclient) displays the archive and the results with
    the HTML the objects make here, and the pictures."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    definitions, events = synth.synthesize(2, 300, jitter=0.2, seed=3)
    path = tmp_path_factory.mktemp("kernel") / "synth.ccg"
    ccg.write_trace(path, definitions, ((location, events(location)) for location in range(2)))
    archive = ccg.open(path)
    cells = [f"import sys; sys.path.insert(0, {str(ROOT)!r})\nimport ccgformat\n"
             f"archive = ccgformat.open({archive.path!r})\nfirst, last = archive.time_range\narchive",
             "archive.profile()", "archive.overview(4)", "archive.timeline(first, last + 1, 50)"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    shown = [next(o for o in cell.outputs if o.output_type == "execute_result").data for cell in notebook.cells]
    first, last = archive.time_range
    expected = [archive, archive.profile(), archive.overview(4), archive.timeline(first, last + 1, 50)]
    for data, result in zip(shown, expected):
        assert data["text/html"] == result._repr_html_()
    assert shown[2]["image/svg+xml"] == expected[2]._repr_svg_()
    assert base64.b64decode(shown[3]["image/png"]) == expected[3]._repr_png_()

