"""`convert` with deviation bounds never writes a small archive larger than the lossless
one (issue 17): an archive of at most LOSSLESS_TRIAL_BYTES is converted losslessly too
and the smaller kept; the lossless one meets every bound."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat import formats

from .corpus import corpus_path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from corpus_root import CORPUS_TRACES  # noqa: E402

BOUNDS = {"abs_dev": 1000, "rel_dev": 0.05}


def events(path: Path) -> list[tuple]:
    with ccg.open(path) as archive:
        return [row for location in sorted(archive.roots) for batch in archive.location(location).events()
                for row in batch.rows()]


@pytest.mark.parametrize("name", sorted(CORPUS_TRACES))
def test_lossy_is_never_larger_than_lossless_on_the_corpus(tmp_path, name):
    source = corpus_path(*CORPUS_TRACES[name])
    lossless = formats.convert(source, tmp_path / "exact.ccg")
    lossy = formats.convert(source, tmp_path / "lossy.ccg", **BOUNDS)
    assert lossy.file_bytes <= lossless.file_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exact.ccg", "lossy.ccg"]  # no trial left behind
    with ccg.open(tmp_path / "lossy.ccg") as archive:
        assert archive.params.lossless == lossy.lossless_kept
    if lossy.lossless_kept:
        assert (tmp_path / "lossy.ccg").read_bytes() == (tmp_path / "exact.ccg").read_bytes()


def test_a_smaller_lossy_archive_is_kept(tmp_path):
    """otf-out: 96 processes repeating their calls, which the bounds make 13% smaller."""
    source = corpus_path(*CORPUS_TRACES["otf-out"])
    lossy = formats.convert(source, tmp_path / "lossy.ccg", **BOUNDS)
    assert not lossy.lossless_kept
    with ccg.open(tmp_path / "lossy.ccg") as archive:
        assert (archive.params.abs_dev, archive.params.rel_dev) == (1000, 0.05)


def test_no_trial_above_the_threshold(tmp_path, monkeypatch):
    """Above LOSSLESS_TRIAL_BYTES the lossy archive stays, whatever its size."""
    source = corpus_path(*CORPUS_TRACES["paje-states"])
    monkeypatch.setattr(formats, "LOSSLESS_TRIAL_BYTES", 100)
    lossy = formats.convert(source, tmp_path / "lossy.ccg", **BOUNDS)
    assert not lossy.lossless_kept
    monkeypatch.undo()
    assert formats.convert(source, tmp_path / "again.ccg", **BOUNDS).lossless_kept
    formats.convert(source, tmp_path / "exact.ccg")
    assert events(tmp_path / "again.ccg") == events(tmp_path / "exact.ccg")
    with ccg.open(tmp_path / "lossy.ccg") as archive:
        assert not archive.params.lossless
