"""An OTF2 trace not from Score-P whose archive verifies must be queryable (issue 13 item 2).

One process with three threads, as a measurement library other than Score-P writes it:
the first thread without events, one with only metric samples and records without a
kind of their own (GENERIC), one with calls of varied durations (a graph large enough
for the profile to read the SUMMARY index), some of them badly nested. Converted, it
passes `ccg verify`, and `profile`, `timeline`, `messages` and `cat` answer; the profile
with the index equals the brute-force one (tests/query_oracle.py).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import ccgformat
from ccgformat.cli import main

from .corpus import require_module
from .test_query_profile import check

otf2 = require_module("otf2", "the otf2 package is not installed")


def _write(folder: Path, calls: int = 3000) -> Path:
    from otf2.enums import MeasurementMode, Type

    rng = random.Random(13)
    with otf2.writer.open(str(folder), timer_resolution=1000) as trace:
        d = trace.definitions
        process = d.location_group("process", system_tree_parent=d.system_tree_node("node"))
        outer, inner, other = d.region("outer"), d.region("inner"), d.region("other")
        counter = d.metric("counter", value_type=Type.UINT64)
        threads = [trace.event_writer(f"thread {i}", group=process) for i in range(3)]
        samples = threads[1]
        for i in range(calls):
            samples.metric(10 * i, counter, i * i)
            if i % 100 == 0:
                samples.measurement_on_off(10 * i + 1, MeasurementMode.OFF if i % 200 else MeasurementMode.ON)
        calls_thread, t = threads[2], 0
        for i in range(calls):
            calls_thread.enter(t, outer)
            calls_thread.enter(t + 1 + rng.randrange(50), inner)
            if i % 500 == 250:     # badly nested: the outer call left before the inner one
                calls_thread.leave(t + 60, outer)
                calls_thread.leave(t + 70, inner)
            else:
                calls_thread.leave(t + 55 + rng.randrange(50), inner)
                calls_thread.enter(t + 110, other)
                calls_thread.leave(t + 111 + rng.randrange(20), other)
                calls_thread.leave(t + 140, outer)
            t += 150
    return folder


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("three-threads")
    report = ccgformat.convert(_write(folder / "trace"), folder / "trace.ccg")
    assert report.format == "otf2"
    return folder / "trace.ccg"


def _run(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_the_shape_is_the_one_of_the_issue(archive: Path) -> None:
    from ccgformat.query.profile_query import index_pays

    with ccgformat.open(archive) as ar:
        assert [ar.roots[i].events for i in sorted(ar.roots)][0] == 0
        assert all(ar.roots[i].events > 0 for i in (1, 2))
        assert index_pays(ar, len(ar.roots))      # the CLI's profile reads the SUMMARY index


def test_an_archive_that_verifies_answers_every_query(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "all checks passed" in _run(capsys, "verify", archive)
    profile = json.loads(_run(capsys, "profile", archive, "--json"))
    assert {row["region"] for row in profile["regions"]} == {"outer", "inner", "other"}
    timeline = json.loads(_run(capsys, "timeline", archive, "--json", "--width", "64"))
    assert timeline["rows"] == [0, 1, 2]
    assert "0 messages" in _run(capsys, "messages", archive)
    with ccgformat.open(archive) as ar:
        assert len(_run(capsys, "cat", archive).splitlines()) == ar.stats.events


def test_profiles_with_the_index_equal_the_brute_force_ones(archive: Path) -> None:
    with ccgformat.open(archive) as ar:
        start, stop = ar.time_range
        locations = sorted(ar.roots)
        for lo, hi in [(None, None), (start + 1, stop - 1), (start + (stop - start) // 3, stop)]:
            check(ar, lo, hi, locations, summary_index=True)
        check(ar, start + 7, stop - 7, [0, 2], summary_index=True)
