"""`Archive.overview` and `ccg overview` end to end on corpus traces (issue 16)."""

from __future__ import annotations

import importlib
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ccgformat import backends
from ccgformat.cli import main
from ccgformat.errors import ParameterError
from ccgformat.query.overview_dp import partition
from ccgformat.query.overview_measures import interval_index

from .query_support import converted

overview_module = importlib.import_module("ccgformat.query.overview_query")

TRACES = ["otf2-stencil", "otf-out", "paje-native", "otf-philosophers", "epilog-le"]


def _cells(data: dict, locations: list[int], slices: int) -> np.ndarray:
    cover = np.zeros((len(locations), slices), dtype=np.int64)
    row = {location: i for i, location in enumerate(locations)}
    for part in data["parts"]:
        for location in part["locations"]:
            cover[row[location], part["first"]:part["last"] + 1] += 1
    return cover


@pytest.mark.parametrize("name", TRACES)
def test_corpus_overviews_tile_the_model_and_agree_across_backends(tmp_path_factory, name: str) -> None:
    archive = converted(tmp_path_factory, name)
    model = archive.aggregate(12)
    results = {}
    for backend in ("python", "native") if backends.native() else ("python",):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(backends, "ACTIVE", backend)
            results[backend] = archive.overview(12, p=0.2)
    result = results["python"]
    data = result.to_json()
    assert data["bounds"] == model.bounds.tolist() and data["states"] == list(model.states)
    assert (_cells(data, model.locations.tolist(), 12) == 1).all()
    column = interval_index(result.partition.first, result.partition.last)
    pic = (0.2 * result.measures.gain[result.partition.node, column]
           - 0.8 * result.measures.loss[result.partition.node, column]).sum()
    assert data["pic"] == pytest.approx(pic, rel=1e-9, abs=1e-9)
    for other in results.values():
        assert other.partition.same_parts(result.partition)
        assert other.partition.pic == pytest.approx(result.partition.pic, rel=1e-9, abs=1e-9)
    default = archive.overview(12)  # the curve's optimum at its default p is the DP's optimum there
    again = partition(default.measures, default.p)
    assert again.same_parts(default.partition) and again.pic == pytest.approx(default.partition.pic, abs=1e-9)


@pytest.mark.parametrize("name", ["otf2-stencil", "paje-native"])
def test_ccg_overview_writes_json_pictures_and_the_curve(tmp_path_factory, tmp_path, capsys, name: str) -> None:
    archive = converted(tmp_path_factory, name)
    path = str(archive.path)
    png, svg = tmp_path / "o.png", tmp_path / "o.svg"
    assert main(["overview", path, "--slices", "20", "--json", "--png", str(png), "--svg", str(svg)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert 0.0 <= data["p"] <= 1.0 and data["parts"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.fromstring(svg.read_text())
    assert main(["overview", path, "--slices", "20", "--curve", "--json"]) == 0
    curve = json.loads(capsys.readouterr().out)
    assert curve["curve"][0]["p_low"] == 0.0 and curve["curve"][-1]["p_high"] == 1.0
    assert curve["curve"][-1]["parts"] == 1                       # p = 1: the whole trace as one part
    assert any(row["p_low"] <= data["p"] <= row["p_high"] for row in curve["curve"])
    assert main(["overview", path, "--slices", "20", "--kind", "spatial", "--p", "0.1", "--png", str(png)]) == 0
    assert main(["overview", path, "--p", "1.5"]) == 2
    assert main(["overview", path, "--start", "10", "--stop", "5"]) == 2
    capsys.readouterr()


def test_an_overview_too_large_for_memory_is_refused_before_the_model(tmp_path_factory, monkeypatch, capsys) -> None:
    """Above MAX_AREAS (node, interval) areas the overview raises ParameterError, before
    aggregating; the spatial overview of the same hierarchy (one interval) still runs.
    Here the limit is lowered to the areas of 2 slices."""
    archive = converted(tmp_path_factory, "otf2-stencil")
    nodes = len(archive.hierarchy)
    monkeypatch.setattr(overview_module, "MAX_AREAS", nodes * 3)
    monkeypatch.setattr(type(archive), "aggregate", lambda *args, **kwargs: pytest.fail("the model was made"))
    with pytest.raises(ParameterError, match=f"{nodes:,} hierarchy nodes x 3 slices"):
        archive.overview(3, p=0.5)
    assert main(["overview", str(archive.path), "--slices", "3"]) == 1
    assert "ask for the spatial overview or fewer slices" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr(overview_module, "MAX_AREAS", nodes * 3)
    assert len(archive.overview(2, p=0.5).partition) >= 1
    assert len(archive.overview(30, p=0.5, kind="spatial").partition) >= 1
    with pytest.raises(ParameterError):
        overview_module.overview_of(archive.aggregate(3), 0.5)
