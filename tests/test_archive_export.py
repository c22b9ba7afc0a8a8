"""The exporter registry behind Archive.export."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive import exporter_for, exporters
from ccgformat.errors import FormatError

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"


def test_the_format_comes_from_the_name_or_the_suffix():
    assert {e.name for e in exporters()} >= {"otf2", "paje", "chrome"}
    assert exporter_for("x/out.json").name == "chrome"
    assert exporter_for("out.JSON.GZ").name == "chrome"
    assert exporter_for("out.trace").name == "paje"
    assert exporter_for("out.otf2").name == "otf2"
    assert exporter_for("whatever.bin", "paje").name == "paje"
    with pytest.raises(FormatError, match="cannot tell the export format"):
        exporter_for("out.bin")
    with pytest.raises(FormatError, match="unknown export format 'xml'"):
        exporter_for("out.json", "xml")


def test_export_never_replaces_the_archive_itself(tmp_path):
    copy = tmp_path / "a.json"
    copy.write_bytes((VECTORS / "minimal.ccg").read_bytes())
    with ccg.open(copy) as archive, pytest.raises(FileExistsError):
        archive.export(copy)
    assert copy.read_bytes() == (VECTORS / "minimal.ccg").read_bytes()
