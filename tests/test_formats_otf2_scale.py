"""OTF2 archives of many locations (issue 14): the importer keeps a bounded number of
files and readers open, whatever the number of locations."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ccgformat.model import Definitions, EventBatch, EventKind, Location, Region

from .corpus import require_module

require_module("otf2", "the otf2 package is not installed")
from ccgformat.formats.otf2.export import write_events  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Open files allowed to the converting process: far fewer than the trace has event files.
FILE_LIMIT = 64
LOCATIONS = 300


def _calls(location: int) -> EventBatch:
    t = 1000 * location
    return EventBatch.from_events([(t, EventKind.ENTER, location % 3), (t + 1 + location % 7, EventKind.LEAVE,
                                                                          location % 3)])


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    definitions = Definitions(regions=[Region(f"r{i}") for i in range(3)],
                              locations=[Location(f"rank {i}") for i in range(LOCATIONS)])
    target = tmp_path_factory.mktemp("wide") / "wide.otf2"
    write_events(definitions, lambda i: [_calls(i)], target)
    assert len(list((target / "traces").glob("*.evt"))) == LOCATIONS > FILE_LIMIT
    return target


@pytest.mark.parametrize("backend", ["native", "python"])
def test_more_locations_than_open_files_allowed(wide: Path, tmp_path: Path, backend: str) -> None:
    """With RLIMIT_NOFILE far below the number of event files, the conversion succeeds
    and every location keeps its events."""
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_NOFILE, ({FILE_LIMIT}, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        import ccgformat
        report = ccgformat.convert(sys.argv[1], sys.argv[2])
        with ccgformat.open(sys.argv[2]) as archive:
            print(report.locations, report.events,
                  sum(archive.location(i).event(1).time - archive.location(i).event(0).time
                      for i in archive.locations))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(wide), str(tmp_path / "w.ccg")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"CCGFORMAT_BACKEND": backend, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    durations = sum(1 + i % 7 for i in range(LOCATIONS))
    assert done.stdout.split() == [str(LOCATIONS), str(2 * LOCATIONS), str(durations)]


def test_only_record_free_definition_files_are_skipped(wide: Path, tmp_path: Path) -> None:
    """The importer skips the library's reading of a local definition file only when it
    is a chunk header followed by END_OF_FILE and END_OF_BUFFER (the exporter's empty file)."""
    from ccgformat.formats.otf2.chunks import DefinitionFile, definition_file

    def holds_no_records(path: str) -> bool:
        return definition_file(path) is DefinitionFile.NO_RECORDS

    empty = wide / "traces" / "0.def"
    assert holds_no_records(str(empty))
    data = empty.read_bytes()
    for name, damaged in {"longer": data + b"\x00", "cut": data[:-1], "record": data[:18] + b"\x05\x01",
                          "not a chunk": b"\x04" + data[1:]}.items():
        (tmp_path / name).write_bytes(damaged)
        assert not holds_no_records(str(tmp_path / name)), name
    assert not holds_no_records(str(tmp_path / "missing"))


def test_a_new_archive_has_the_smallest_chunks(wide: Path) -> None:
    """An export of a trace not from OTF2 uses 256 KiB event and definition chunks (the
    library's minimum), not its 1 MiB / 4 MiB defaults that it allocates per location."""
    import _otf2
    reader = _otf2.Reader_Open(str(wide / "traces.otf2"))
    try:
        assert tuple(_otf2.Reader_GetChunkSize(reader)) == (256 * 1024, 256 * 1024)
    finally:
        _otf2.Reader_Close(reader)
    assert max(p.stat().st_size for p in (wide / "traces").iterdir()) < 256 * 1024


@pytest.mark.parametrize("backend", ["native", "python"])
def test_locations_read_through_one_reader_per_batch(wide: Path, backend: str, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    """With 7 locations per OTF2 reader (43 readers for 300 locations, the last one
    short), every location keeps its own events, and the native reader reads every one
    (none falls back to the Python reference)."""
    from ccgformat.formats.otf2 import reader

    if backend == "native":
        from ccgformat._native import load
        load()  # the native core is built with the package (pip install -e .): it must load
    monkeypatch.setattr(reader.backends, "native", lambda: backend == "native")
    monkeypatch.setattr(reader, "LOCATIONS_PER_READER", 7)
    opened, attached = [], []
    real_open, real_attach = reader._open, reader.NativeEvents.attach

    def open_(*args):
        handle = real_open(*args)
        opened.append(reader.otf2_reader_address(handle))
        return handle
    monkeypatch.setattr(reader, "_open", open_)
    monkeypatch.setattr(reader.NativeEvents, "attach", lambda self, address: attached.append(address) or
                        real_attach(self, address))
    referenced = []
    real_read = reader.EventReader.read
    monkeypatch.setattr(reader.EventReader, "read", lambda self, *args: referenced.append(1) or real_read(self, *args))
    _, streams = reader.read(wide)
    for index, batches in streams:
        assert EventBatch.concat(list(batches)).equals(_calls(index)), index
    assert index == LOCATIONS - 1 and len(opened) == LOCATIONS // 7
    assert attached == (opened if backend == "native" else [])   # the native reader reads through each
    assert len(referenced) == (0 if backend == "native" else LOCATIONS)
