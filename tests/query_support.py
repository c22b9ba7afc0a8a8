"""Shared pieces of the query tests: the corpus traces as archives, random windows whose
bounds fall on event times as often as not."""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Callable

import numpy as np
from hypothesis import strategies as st

import ccgformat
from .corpus import corpus_path
from .query_oracle import events_of

from corpus_root import CORPUS_TRACES  # noqa: E402 (tools/, on the path through tests/corpus.py)
import synth  # noqa: E402 (tools/ too)

#: Every corpus trace the importers read, by a short name (tools/corpus_root.py).
CORPUS = CORPUS_TRACES

_CONVERTED: dict[str, ccgformat.Archive] = {}


def converted(tmp_path_factory, name: str) -> ccgformat.Archive:
    """The corpus trace ``name`` converted once per test session (lossless)."""
    archive = _CONVERTED.get(name)
    if archive is None:
        source = corpus_path(*CORPUS[name])
        target = tmp_path_factory.mktemp("corpus") / f"{name}.ccg"
        ccgformat.convert(source, target)
        archive = _CONVERTED[name] = ccgformat.open(target)
    return archive


def ring_graph(locations: int, events: int, seed: int) -> ccgformat.Graph:
    """The graph of tools/synth.py's ring trace with log-normal jitter (sigma 0.3): about
    ``events`` events per location, few sub-trees shared."""
    import synth  # tools/, on the path through tests/corpus.py
    definitions, stream = synth.synthesize(locations, events, jitter=0.3, seed=seed, pattern="ring")
    builder = ccgformat.Builder(ccgformat.Params(), definitions)
    for location in range(locations):
        for batch in stream(location):
            builder.add(location, batch)
    return builder.finish()


def with_tables(tmp_path_factory, name: str) -> ccgformat.Archive:
    """The corpus trace ``name`` converted, then rewritten with every aggregation and
    metric level (a budget beyond its size: by default a small trace holds none)."""
    key = f"{name} with tables"
    archive = _CONVERTED.get(key)
    if archive is None:
        source = converted(tmp_path_factory, name)
        target = tmp_path_factory.mktemp("corpus") / f"{name}-tables.ccg"
        ccgformat.write_trace(target, source.definitions,
                              ((location, source.location(location).events()) for location in sorted(source.roots)),
                              aggregation=1000.0)
        archive = _CONVERTED[key] = ccgformat.open(target)
    return archive


def bounds(times: list[int]) -> st.SearchStrategy[int | None]:
    """A window bound for a trace with these event times: as often as not an event time or
    one tick either side (where ``<`` and ``<=`` differ), else open (None) or any time in
    and around the trace."""
    near = st.tuples(st.sampled_from(sorted(set(times))), st.sampled_from([-1, 0, 0, 1])).map(sum)
    return st.one_of(near, near, st.none(), st.integers(min(times) - 2, max(times) + 2))


def windows(data, trace, count: int, kinds=None):
    """``count`` random (start, stop, locations) for a `traces.traces` example, with
    `bounds` on the times of its events (of ``kinds``, if it has any; start <= stop when
    both are given)."""
    times = [e.time for events in trace.values() for e in events]
    chosen = [e.time for events in trace.values() for e in events if kinds is not None and e.kind in kinds]
    bound = bounds(chosen or times)
    for _ in range(count):
        a, b = data.draw(bound), data.draw(bound)
        if a is not None and b is not None and a > b:
            a, b = b, a
        locations = data.draw(st.lists(st.sampled_from(sorted(trace)), min_size=1, unique=True))
        yield a, b, locations


def event_bounds(rng, times, count: int) -> list[int]:
    """``count`` window bounds for a corpus trace: event times, or one tick either side."""
    return (rng.choice(times, size=count) + rng.integers(-1, 2, size=count)).tolist()


def corpus_windows(archive: ccgformat.Archive, seed: int, count: int):
    """``count`` random (start, stop, locations) of a corpus archive: the first two with
    bounds anywhere in and around the trace, the others on event times (or one tick off);
    half of the locations, at random."""
    rng = np.random.default_rng(seed)
    first, last = archive.time_range
    locations = archive.locations
    times = np.array([e.time for location in locations for e in events_of(archive, location)], np.int64)
    for i in range(count):
        a, b = sorted(rng.integers(first - 1, last + 2, size=2).tolist() if i < 2 or not len(times)
                      else event_bounds(rng, times, 2))
        chosen = sorted(rng.choice(locations, size=max(1, len(locations) // 2), replace=False).tolist()) \
            if locations else []
        yield a, b, chosen


def small_walks(monkeypatch) -> None:
    """Large-graph walks at the scale of a memory test: every graph streams
    (`query.streaming`), in batches of 1,024 events, through a block cache of 1 MiB and a
    Python walker's cache of 4,096 events, so that short traces take many batches and
    fill both caches."""
    streaming = importlib.import_module("ccgformat.query.streaming")
    spans = importlib.import_module("ccgformat.graph.spans")
    monkeypatch.setattr(streaming, "STREAM_NODES", 0)
    monkeypatch.setattr(streaming, "WALK_BATCH", 1024)
    monkeypatch.setattr(importlib.import_module("ccgformat.archive.reader"), "BLOCK_CACHE_BYTES", 1 << 20)
    monkeypatch.setattr(importlib.import_module("ccgformat.graph.walk"), "SpanReader",
                        functools.partial(spans.SpanReader, cache_events=1 << 12))


def ring_archive(folder: Path, locations: int, events: int, **options) -> Path:
    """A jittered ring trace (tools/synth.py) of about ``events`` events per location,
    written in blocks of 256 nodes with plain (byte-plane) gaps, which the pure-Python decoder
    decodes several times faster than range-coded ones (``options``: more of `write_trace`'s)."""
    definitions, stream = synth.synthesize(locations, events, jitter=0.3, seed=2, pattern="ring")
    path = folder / f"ring-{events}.ccg"
    ccgformat.write_trace(path, definitions, ((location, stream(location)) for location in range(locations)),
                          nodes_per_block=256, gaps="plain", **options)
    return path


def assert_memory_set_by_the_answer(peak: Callable[[int], tuple[int, int]], slack: int) -> None:
    """The same shape at 6,000 and at 24,000 events per location (``peak(events)``: the
    traced peak and the node count): the graph grows more than 3x, each peak stays under
    8 MiB, and the longer one within 1.3x the shorter plus ``slack`` bytes."""
    short_peak, short_nodes = peak(6_000)
    long_peak, long_nodes = peak(24_000)
    assert long_nodes > 3 * short_nodes
    assert short_peak < 8 << 20 and long_peak < 8 << 20, (short_peak, long_peak)
    assert long_peak < 1.3 * short_peak + slack, (short_peak, long_peak)
