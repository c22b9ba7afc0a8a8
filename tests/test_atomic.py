"""Atomic output (ccgformat.atomic), the one way every output is written: whole or not
at all, with the permissions of a plainly created file under any umask."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat import atomic
from ccgformat.atomic import atomic_output
from ccgformat.cli import main

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "spec" / "vectors" / "minimal.ccg"
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402


@pytest.fixture(params=[0o022, 0o077, 0o002, 0o027])
def umask(request):
    """Run the test under this umask, restoring the previous one after it."""
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("folder", [False, True])
def test_atomic_output_publishes_with_plain_permissions(tmp_path, umask, folder):
    target = tmp_path / "out"
    with atomic_output(target, folder=folder) as temporary:
        assert temporary.parent == tmp_path and not target.exists()
        (temporary / "inner").write_text("x") if folder else temporary.write_text("x")
    assert mode(target) == (0o777 if folder else 0o666) & ~umask
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


def _folder_of_files(temporary: Path, count: int) -> None:
    (temporary / "sub").mkdir()
    for i in range(count):
        (temporary / "sub" / f"{i}.evt").write_bytes(b"x" * i)


def test_a_folder_is_flushed_in_one_pass_not_per_file(tmp_path, monkeypatch):
    """An OTF2 export writes two files per location: committing the folder costs one
    ``syncfs`` and the fsync of the parent folder, not one fsync per file."""
    if atomic._syncfs() is None:
        pytest.skip("this platform's C library has no syncfs")
    fsynced, synced = [], []
    real_fsync, real_syncfs = os.fsync, atomic._syncfs()
    monkeypatch.setattr(os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(atomic, "_syncfs", lambda: lambda fd: (synced.append(fd), real_syncfs(fd))[1])
    with atomic_output(tmp_path / "out", folder=True) as temporary:
        _folder_of_files(temporary, 300)
    assert len(synced) == 1 and len(fsynced) == 1        # the parent folder, after the rename
    assert sorted(p.name for p in (tmp_path / "out" / "sub").iterdir()) == sorted(f"{i}.evt" for i in range(300))


def test_without_syncfs_every_file_of_a_folder_is_fsynced(tmp_path, monkeypatch):
    fsynced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(atomic, "_syncfs", lambda: None)
    with atomic_output(tmp_path / "out", folder=True) as temporary:
        _folder_of_files(temporary, 30)
    assert len(fsynced) == 30 + 1


def test_a_failed_syncfs_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_syncfs", lambda: lambda fd: -1)
    with pytest.raises(OSError):
        with atomic_output(tmp_path / "out", folder=True) as temporary:
            _folder_of_files(temporary, 3)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="the target's folder does not exist"):
        with atomic_output(tmp_path / "nowhere" / "out"):
            pass


def test_every_output_gets_the_umask_permissions(tmp_path, umask, capsys):
    """`ccg convert` (the archive writer), exports, PNG timelines and synth's .npz files."""
    plain = 0o666 & ~umask
    assert main(["convert", str(MINIMAL), str(tmp_path / "a.ccg"), "--quiet"]) == 0
    assert mode(tmp_path / "a.ccg") == plain
    graph = ccg.write_trace(tmp_path / "b.ccg", *_trace())
    ccg.save_graph(graph, tmp_path / "c.ccg")
    with ccg.open(tmp_path / "a.ccg") as archive:
        archive.export(tmp_path / "a.json")
        archive.export(tmp_path / "a.trace")
        archive.timeline(*archive.time_range, 10).save_png(tmp_path / "a.png")
    synth.write_npz(tmp_path / "a.npz", *synth.synthesize(1, 10))
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == ["a.ccg", "a.json", "a.npz", "a.png", "a.trace", "b.ccg", "c.ccg"]
    assert {name: mode(tmp_path / name) for name in made} == dict.fromkeys(made, plain)


def test_a_failed_write_leaves_no_archive(tmp_path):
    definitions, locations, params = _trace()
    broken = [(0, [ccg.EventBatch.from_events([(5, ccg.EventKind.LEAVE, 0)])])]  # a LEAVE of nothing
    with pytest.raises(ccg.TraceError):
        ccg.write_trace(tmp_path / "x.ccg", definitions, broken, params)
    assert list(tmp_path.iterdir()) == []


def _trace():
    K = ccg.EventKind
    events = ccg.EventBatch.from_events([(10, K.ENTER, 0), (20, K.LEAVE, 0)])
    definitions = ccg.Definitions(regions=[ccg.model.Region("A")], locations=[ccg.model.Location("rank 0")])
    return definitions, [(0, [events])], ccg.Params()


@pytest.mark.parametrize("folder", [False, True])
def test_a_target_that_is_not_what_is_written_is_refused_and_kept(tmp_path, folder):
    """A FIFO (as /dev/null would be: a device) or the other kind of entry is never
    replaced by the rename: refused before anything is written."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    other = tmp_path / "other"
    other.write_text("a file") if folder else other.mkdir()
    for target in (fifo, other):
        with pytest.raises(FileExistsError, match="never replaced"):
            with atomic_output(target, folder=folder):
                pass
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert other.is_file() if folder else other.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "other"]


def test_a_conversion_to_a_fifo_is_refused(tmp_path, capsys):
    fifo = tmp_path / "out.ccg"
    os.mkfifo(fifo)
    assert main(["convert", str(MINIMAL), str(fifo), "--quiet"]) == 1
    assert "never replaced" in capsys.readouterr().err
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("folder", [False, True])
def test_a_symbolic_link_is_written_through(tmp_path, folder):
    """The entry the link names gets the output; the link stays a link to it."""
    real = tmp_path / "disk" / "out"
    real.parent.mkdir()
    real.mkdir() if folder else real.write_text("old")
    link = tmp_path / "out"
    link.symlink_to(real)
    with atomic_output(link, folder=folder) as temporary:
        assert temporary.parent == real.parent
        (temporary / "inner").write_text("new") if folder else temporary.write_text("new")
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert ((real / "inner") if folder else real).read_text() == "new"
