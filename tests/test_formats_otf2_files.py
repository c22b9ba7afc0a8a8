"""OTF2 event files as real writers leave them (issue 13 item 1).

An event file may hold bytes after its last record (a writer's trailing newline): the
OTF2 reference reader (``otf2-print``) reads all its events, and so must the importer,
under either backend. A file cut short must still fail with a `FormatError` naming it,
and without the OTF2 library's re-reading of memory it never filled piling up events.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest

import ccgformat
from ccgformat.errors import FormatError
from ccgformat.formats import read
from ccgformat.model import EventBatch

from .corpus import corpus_path, require_module
from .test_formats_otf2 import CORPUS_TRACES, _all_records_trace, _printed_events, _truncate, \
    assert_matches_otf2_print

otf2 = require_module("otf2", "the otf2 package is not installed")

#: The smallest event chunk the OTF2 library accepts: a few thousand events span chunks.
CHUNK = 256 * 1024
TRAILING = {"newline": b"\n", "bytes": b"\x00\x02\x01\x03B junk\r\n", "beyond-a-chunk": b"\n" * (CHUNK + 100)}


def _chunked_trace(folder: Path, calls: int = 30000) -> Path:
    """One thread of ``calls`` nested calls over several event chunks, and one without events."""
    with otf2.writer.open(str(folder), timer_resolution=1000, chunk_size_events=CHUNK) as trace:
        group = trace.definitions.location_group("process", system_tree_parent=trace.definitions.system_tree_node("n"))
        outer, inner = trace.definitions.region("outer"), trace.definitions.region("inner")
        events = trace.event_writer("thread 0", group=group)
        for i in range(calls):
            t = 10 * i
            events.enter(t, outer)
            events.enter(t + 2, inner)
            events.leave(t + 5, inner)
            events.leave(t + 7, outer)
        trace.event_writer("thread 1", group=group)
    return folder


@pytest.fixture(scope="module")
def chunked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = _chunked_trace(tmp_path_factory.mktemp("chunked") / "trace")
    assert (folder / "traces" / "0.evt").stat().st_size > 4 * CHUNK
    return folder


def _sources(name: str, chunked: Path, folder: Path) -> Path:
    if name == "chunked":
        return chunked
    if name == "every-record":
        return _all_records_trace(folder / "every-record")
    return corpus_path(*CORPUS_TRACES[0])


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def _events(path: Path) -> dict[int, EventBatch]:
    _, streams = read(path)
    return {location: EventBatch.concat(list(batches)) for location, batches in streams}


@pytest.mark.parametrize("trailing", TRAILING.values(), ids=TRAILING.keys())
@pytest.mark.parametrize("name", ["chunked", "every-record", "score-p"])
def test_bytes_after_the_last_record_are_read_like_otf2_print(chunked: Path, tmp_path: Path, name: str,
                                                              trailing: bytes) -> None:
    source = _sources(name, chunked, tmp_path)
    copy = _copy(source, tmp_path / "copy")
    for event_file in (copy / "traces").glob("*.evt"):
        with open(event_file, "ab") as handle:
            handle.write(trailing)
    printed = _printed_events(copy / "traces.otf2")
    assert printed == _printed_events(source / "traces.otf2") and printed
    if name != "every-record":      # otf2-print names some records otherwise than their API
        assert assert_matches_otf2_print(copy) > 0
    original, padded = _events(source), _events(copy)
    assert padded.keys() == original.keys()
    assert all(padded[location].equals(original[location]) for location in original)
    report = ccgformat.convert(copy, tmp_path / "trace.ccg")
    assert report.format == "otf2"
    with ccgformat.open(tmp_path / "trace.ccg") as archive:
        assert archive.stats.events == sum(len(batch) for batch in original.values())


def _read_all(path: Path) -> None:
    _, streams = read(path)
    for _, batches in streams:
        for _ in batches:
            pass


def _peak(path: Path) -> tuple[int, BaseException | None]:
    """The peak of Python-tracked memory (numpy arrays included) while reading ``path``,
    and the error the read raised."""
    tracemalloc.start()
    try:
        _read_all(path)
        error = None
    except FormatError as raised:
        error = raised
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, error


@pytest.mark.parametrize("cut", [0.3, 0.999], ids=["in-an-early-chunk", "in-the-last-chunk"])
def test_cut_short_event_file_fails_within_bounded_memory(chunked: Path, tmp_path: Path, cut: float) -> None:
    """The OTF2 library reads a chunk's worth of memory whatever the file holds, and on the
    end-of-chunk marker it finds there reads the chunk again: the events it would return
    are not in the file, and they grow until something stops them."""
    copy = _copy(chunked, tmp_path / "copy")
    event_file = copy / "traces" / "0.evt"
    _truncate(event_file, int(event_file.stat().st_size * cut))
    peak, error = _peak(copy)
    assert isinstance(error, FormatError) and error.path is not None and Path(error.path).name == "0.evt"
    complete, error = _peak(chunked)
    assert error is None and peak < 2 * complete


def test_event_file_without_a_chunk_header(chunked: Path, tmp_path: Path) -> None:
    copy = _copy(chunked, tmp_path / "copy")
    _truncate(copy / "traces" / "0.evt", 10)
    with pytest.raises(FormatError, match="chunk header") as caught:
        _read_all(copy)
    assert caught.value.path is not None and Path(caught.value.path).name == "0.evt"
