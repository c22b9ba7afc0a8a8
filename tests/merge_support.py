"""Traces cut into parts (by locations, by time) written as archives, for the merge tests:
a merge of the parts must equal the conversion of the whole."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

import ccgformat
from ccgformat.model import Definitions, EventBatch, EventKind

Trace = dict[int, EventBatch]


def write(path: Path, definitions: Definitions, trace: Trace, params: ccgformat.Params = ccgformat.Params(),
          **options: Any) -> Path:
    """``trace`` (its locations in order) written as an archive of ``definitions``
    (``options``: as for `ccgformat.write_trace`)."""
    ccgformat.write_trace(path, definitions, ((location, [trace[location]]) for location in sorted(trace)), params,
                          **options)
    return path


def by_locations(folder: Path, definitions: Definitions, trace: Trace, groups: list[list[int]],
                 params: ccgformat.Params = ccgformat.Params(), **options: Any) -> list[Path]:
    """One archive per group of locations, each with the whole definitions (as the ranks
    of an MPI conversion write them)."""
    return [write(folder / f"part{i}.ccg", definitions, {location: trace[location] for location in group
                                                          if location in trace}, params, **options)
            for i, group in enumerate(groups)]


def top_level_cuts(batch: EventBatch) -> np.ndarray:
    """Event indexes where a location's events can be cut into balanced segments: before
    an event at nesting depth 0 whose time is later than the event before it (so the
    segments do not overlap in time), and the end."""
    depth = np.cumsum(np.where(batch.kind == EventKind.ENTER, 1, np.where(batch.kind == EventKind.LEAVE, -1, 0)))
    before = np.r_[0, depth[:-1]]
    later = np.r_[True, batch.time[1:] > batch.time[:-1]]
    return np.flatnonzero((before == 0) & later)


def by_time(folder: Path, definitions: Definitions, trace: Trace, fractions: list[float],
            params: ccgformat.Params = ccgformat.Params(), **options: Any) -> list[Path]:
    """One archive per time segment: every location cut at the top-level cut nearest each
    fraction of its events (a segment may be empty for a location)."""
    parts: list[Trace] = [{} for _ in range(len(fractions) + 1)]
    for location, batch in trace.items():
        cuts = top_level_cuts(batch)
        chosen = sorted({int(cuts[np.argmin(abs(cuts - f * len(batch)))]) for f in fractions}) if len(cuts) else []
        bounds = [0, *chosen, len(batch)]
        bounds = bounds + [len(batch)] * (len(parts) + 1 - len(bounds))
        for part, (a, b) in zip(parts, zip(bounds[:-1], bounds[1:])):
            if b > a:
                part[location] = batch[a:b]
    return [write(folder / f"segment{i}.ccg", definitions, part, params, **options) for i, part in enumerate(parts)]


def events_of(archive: ccgformat.Archive) -> dict[int, EventBatch]:
    """Every location's events (locations without events left out)."""
    return {location: EventBatch.concat(list(archive.location(location).events()))
            for location in archive.locations if archive.roots[location].events}


def assert_same_trace(merged: Path, whole: Path) -> None:
    """The merged archive holds the whole's definitions (but provenance), events,
    profile and messages."""
    with ccgformat.open(merged) as got, ccgformat.open(whole) as want:
        assert _without_provenance(got.definitions) == _without_provenance(want.definitions)
        got_events, want_events = events_of(got), events_of(want)
        assert sorted(got_events) == sorted(want_events)
        for location, batch in want_events.items():
            assert got_events[location].equals(batch), location
        assert got.time_range == want.time_range
        assert got.profile().to_json() == want.profile().to_json()
        assert got.messages().to_json() == want.messages().to_json()


def _without_provenance(definitions: Definitions) -> dict:
    return dataclasses.replace(definitions, provenance={}).to_dict()

