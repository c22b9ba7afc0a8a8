"""The two backends end to end: for random traces and parameters, writing an archive
under the native backend and under the Python reference gives the same bytes, and
reading it back under either gives the same events, statistics, random access and
queries (shared/DESIGN.md: a fast path is checked against the reference)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat import backends
from ccgformat.archive.writer import REFERENCE_CODINGS
from ccgformat.params import Params

from .traces import batches, definitions, traces

try:
    from ccgformat._native import load
    load()
except ImportError as error:  # pragma: no cover - a machine without a C compiler
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

BACKENDS = ("python", "native")

params_strategy = st.builds(
    Params,
    abs_dev=st.sampled_from([0, 0, 3, 60, 1000]),
    rel_dev=st.sampled_from([0.0, 0.05, 0.5]),
    rel_size=st.sampled_from([0.0, 0.0, 0.5]),
    rel_metric=st.sampled_from([0.0, 0.0, 0.5]),
    branching=st.integers(2, 6),
    search_length=st.integers(1, 8),
    leaf_window=st.sampled_from([0, 1, 2, 16]),
    representatives=st.sampled_from([0, 1, 2, 16]),
)


@contextlib.contextmanager
def backend(name: str):
    saved = backends.ACTIVE
    backends.ACTIVE = name
    try:
        yield
    finally:
        backends.ACTIVE = saved


def write(path: Path, trace, params: Params, nodes_per_block: int, interval: int,
          references: str = "auto") -> ccg.Graph:
    return ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()),
                           params, level=1, nodes_per_block=nodes_per_block, checkpoint_interval=interval,
                           references=references)


def reading(path: Path, times: list[int], indexes: list[int]):
    """Everything a reader answers about the archive, as plain values."""
    with ccg.open(path) as archive:
        locations = {}
        for location in archive.locations:
            walker = archive.location(location)
            count = len(walker)
            locations[location] = (
                [list(batch.rows()) for batch in walker.events(batch_size=5)],
                [list(batch.rows()) for batch in walker.events(reverse=True, batch_size=4)],
                [walker.event(i % count) for i in indexes] if count else [],
                [walker.find(t) for t in times],
                [walker.call_stack(t) for t in times],
            )
        merged = [(where.tolist(), list(batch.rows())) for where, batch in archive.events(batch_size=7)]
        return archive.stats, locations, merged, archive.profile()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), params_strategy, st.sampled_from([1, 3, 50, 4096]), st.sampled_from([2, 5, 65536]),
       st.lists(st.integers(-5, 400), max_size=6), st.lists(st.integers(0, 10**6), max_size=6),
       st.sampled_from(REFERENCE_CODINGS))
def test_both_backends_write_the_same_archive_and_read_it_alike(tmp_path_factory, trace, params, nodes_per_block,
                                                                interval, times, indexes, references):
    folder = tmp_path_factory.mktemp("backends")
    written = {}
    for name in BACKENDS:
        with backend(name):
            graph = write(folder / f"{name}.ccg", trace, params, nodes_per_block, interval, references)
            written[name] = ((folder / f"{name}.ccg").read_bytes(), graph.metrics, graph.roots)
    assert written["native"] == written["python"]
    answers = {}
    for name in BACKENDS:
        with backend(name):
            answers[name] = reading(folder / "native.ccg", times, indexes)
    assert answers["native"] == answers["python"]
