"""The Chrome export takes memory set by its batches, the call depth and the message
channels, not by the trace's length (shared/DESIGN.md: the same shape at two lengths,
the same memory). Before, it held each location whole, its token objects, a flow id per
message and up to 4 M cached events: 4.4 -> 13.3 MB at the native backend's lengths
below, 0.8 -> 2.6 MB at the Python backend's."""

from __future__ import annotations

import functools
import importlib
import sys
import tracemalloc
from pathlib import Path

import ccgformat
from ccgformat import backends

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402

#: per backend: events per location of the short trace (the long one has 4x), events
#: per batch read, and the caches of the archive (decoded bytes) and of the Python walker
#: (events), made small enough that both lengths fill them. The Python reference walks
#: about 100x slower, so it takes a shorter trace.
SIZES = {"native": (6_000, 1024, 1 << 20, 1 << 12), "python": (800, 256, 1 << 18, 1 << 8)}


def export_peak(folder: Path, events: int) -> tuple[int, int]:
    """The traced peak of the Chrome export of a jittered ring trace of 2 locations of
    about ``events`` events each (tools/synth.py), and the size of what it wrote."""
    definitions, stream = synth.synthesize(2, events, jitter=0.3, seed=3, pattern="ring")
    path = folder / f"ring-{events}.ccg"
    ccgformat.write_trace(path, definitions, ((location, stream(location)) for location in range(2)),
                          nodes_per_block=256)
    target = folder / f"ring-{events}.json"
    with ccgformat.open(path) as archive:
        tracemalloc.start()
        try:
            archive.export(target, to="chrome")
            return tracemalloc.get_traced_memory()[1], target.stat().st_size
        finally:
            tracemalloc.stop()


def test_the_chrome_export_of_a_long_trace_takes_the_memory_of_a_short_one(tmp_path, monkeypatch):
    """The same jittered ring shape at two lengths, 4x apart. Bound: the batches read and
    their tokens, the small caches, the native writer's 1 MiB output buffer, and the
    archive's facts per block (which grow a little): within 1 MiB of the short trace's."""
    events, batch, block_cache, span_cache = SIZES[backends.ACTIVE]
    monkeypatch.setattr(importlib.import_module("ccgformat.formats.chrome.writer"), "READ_BATCH", batch)
    monkeypatch.setattr(importlib.import_module("ccgformat.archive.reader"), "BLOCK_CACHE_BYTES", block_cache)
    monkeypatch.setattr(importlib.import_module("ccgformat.graph.walk"), "SpanReader",
                        functools.partial(importlib.import_module("ccgformat.graph.spans").SpanReader,
                                          cache_events=span_cache))
    export_peak(tmp_path, 100)     # what a first export sets up once (types, tables) is not counted
    short_peak, short_bytes = export_peak(tmp_path, events)
    long_peak, long_bytes = export_peak(tmp_path, 4 * events)
    assert long_bytes > 3.5 * short_bytes
    assert short_peak < 8 << 20 and long_peak < 8 << 20, (short_peak, long_peak)
    assert long_peak < short_peak + (1 << 20), (short_peak, long_peak)
