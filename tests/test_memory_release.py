"""What a conversion and an archive hold is freed as soon as nobody holds them, by
reference counting, not at the garbage collector's next full pass: no reference cycle
keeps a builder's node table or an archive's map and decoded node blocks (C memory the
collector does not see, so it does not hurry). Before, each conversion of a 10 M-event
archive left about 1 GB to the collector, and conversions in one process grew 1.3 GB ->
5 GB and 4.6 s -> 7.4 s each."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import ccgformat
from ccgformat.model import COLUMNS, EventBatch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import synth  # noqa: E402

from ccgformat.formats.otf2.export import write_events  # noqa: E402

from .corpus import require_module  # noqa: E402

#: the objects that hold a graph's nodes or an archive's bytes, by class name
HOLDERS = {"NativeBuilder", "Builder", "TableView", "NodePool", "Graph", "NativeGraph", "Archive",
           "ArchivePool", "NativeNodeBlock", "NodeBlock", "_BlockSource", "_Storage", "mmap"}


def cyclic_holders(action: Callable[[], Any]) -> list[str]:
    """The classes of `HOLDERS` among what ``action`` leaves in reference cycles."""
    gc.collect()
    gc.disable()
    try:
        action()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return sorted({type(found).__name__ for found in gc.garbage} & HOLDERS)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A jittered trace of several node blocks, written with its tables."""
    path = tmp_path_factory.mktemp("release") / "jittered.ccg"
    definitions, events = synth.synthesize(3, 20_000, jitter=0.3, seed=3)
    ccgformat.write_trace(path, definitions, ((location, events(location)) for location in range(3)))
    return path


def test_writing_leaves_no_cycle(tmp_path: Path) -> None:
    definitions, events = synth.synthesize(2, 5_000, jitter=0.3, seed=4)
    assert cyclic_holders(lambda: ccgformat.write_trace(
        tmp_path / "out.ccg", definitions, ((location, events(location)) for location in range(2)))) == []


def test_converting_an_archive_leaves_no_cycle(trace: Path, tmp_path: Path) -> None:
    assert cyclic_holders(lambda: ccgformat.convert(trace, tmp_path / "again.ccg")) == []


def test_converting_otf2_leaves_no_cycle(tmp_path: Path) -> None:
    require_module("otf2", "the OTF2 importer needs the otf2 Python bindings")
    definitions, events = synth.synthesize(2, 3_000, jitter=0.3, seed=5, pattern="ring")
    write_events(definitions, events, tmp_path / "otf2")
    source = next((tmp_path / "otf2").glob("*.otf2"))
    assert cyclic_holders(lambda: ccgformat.convert(source, tmp_path / "out.ccg")) == []


def test_a_dropped_archive_leaves_no_cycle(trace: Path) -> None:
    def queries() -> None:
        archive = ccgformat.open(trace)          # neither closed nor used as a context manager
        for location in archive.locations:
            walker = archive.location(location)
            walker.event(len(walker) // 2)
            sum(len(batch) for batch in walker.events())
        start, stop = archive.time_range
        archive.profile()
        archive.profile(start, (start + stop) // 2, locations=[0, 1])
        archive.timeline(start, stop, 50)
        archive.messages()
        archive.aggregate(8)
        archive.metric_integrals(4)
        archive.overview(slices=4)
        sum(len(batch) for batch in archive.events())

    assert cyclic_holders(queries) == []


def test_a_walker_outlives_its_archive_object(trace: Path) -> None:
    """The pool the walker holds keeps the file's bytes: the archive object is not needed."""
    with ccgformat.open(trace) as archive:
        expected = EventBatch.concat(list(archive.location(1).events()))
    walker = ccgformat.open(trace).location(1)
    gc.collect()
    read = EventBatch.concat(list(walker.events()))
    assert len(read) == len(expected) > 0
    for name in ("time", "kind", *COLUMNS):
        assert np.array_equal(getattr(read, name), getattr(expected, name)), name


def test_closing_lets_the_decoded_blocks_go(trace: Path) -> None:
    archive = ccgformat.open(trace)
    walker = archive.location(0)
    walker.event(len(walker) - 1)
    assert archive.pool._cache
    archive.close()
    assert not archive.pool._cache
    with pytest.raises(ValueError, match="closed"):
        walker.event(0)
