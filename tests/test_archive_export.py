"""The exporter registry behind Archive.export and its atomic output."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.archive import atomic_output, exporter_for, exporters
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


@pytest.mark.parametrize("folder", [False, True])
def test_atomic_output_publishes_with_plain_permissions(tmp_path, folder):
    target = tmp_path / "out"
    with atomic_output(target, folder=folder) as temporary:
        assert temporary.parent == tmp_path and not target.exists()
        (temporary / "inner").write_text("x") if folder else temporary.write_text("x")
    mask = os.umask(0)
    os.umask(mask)
    expected = (0o777 if folder else 0o666) & ~mask
    assert stat.S_IMODE(target.stat().st_mode) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("folder", [False, True])
def test_atomic_output_leaves_nothing_on_failure(tmp_path, folder):
    target = tmp_path / "out"
    target.write_text("old") if not folder else target.mkdir()
    with pytest.raises(RuntimeError):
        with atomic_output(target, folder=folder) as temporary:
            (temporary / "part").write_text("x") if folder else temporary.write_text("partial")
            raise RuntimeError("exporter failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert target.is_dir() if folder else target.read_text() == "old"


def test_export_never_replaces_the_archive_itself(tmp_path):
    copy = tmp_path / "a.json"
    copy.write_bytes((VECTORS / "minimal.ccg").read_bytes())
    with ccg.open(copy) as archive, pytest.raises(FileExistsError):
        archive.export(copy)
    assert copy.read_bytes() == (VECTORS / "minimal.ccg").read_bytes()
