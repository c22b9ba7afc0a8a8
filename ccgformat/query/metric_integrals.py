"""Metric integrals (issue 15; spec 4.11): per metric, location and time slice, what the
metric's samples say about the slice, as a float64.

- ``absolute`` (and ``rate``) metrics: the time integral, in value x ticks, of the step
  function "the last sample's value holds until the next sample of the metric on the
  location, the last one until the location's last event; nothing before the first".
- ``accumulated`` metrics (counters since some start): the increase within the slice, the
  sum of ``v_i - v_(i-1)`` over the samples ``i`` in the slice (a location's first sample
  of the metric adds nothing: nothing is known before it).
- ``relative`` metrics (each sample the increase since the previous one): the sum of the
  samples in the slice.

Values are taken as float64 (int64, uint64 or the double bits per ``Metric.value_type``);
a contribution (``v x length`` of a step piece within one slice, or one increase) is
rounded once, and a slice adds its contributions in time order from 0.0. Integer metrics
are exact while every sample value, contribution and partial sum stays below 2^53 in
magnitude (beyond, spec 4.11 bounds the error).

The slices are those of the model (`column_bounds`). An archive with METRIC_LEVEL tables
answers the slices that are unions of table cells from the tables (cells added left to
right) and the rest from the events of the graph, read over just those pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np

from ..archive.many import event_passes
from ..archive.metric_tables import MetricLevel
from ..archive.native import walk_locations
from ..archive.queries import run_query
from ..graph.graph import roots_at, source_root_columns
from ..model import EventBatch, EventKind
from .aggregate_tables import LEVELS, MAX_CELLS, sliced_window, trace_window
from .bounds import column_bounds
from .streaming import kept_events, streams
from .tables import tables_for

__all__ = ["MetricIntegrals", "batch_samples", "metric_integrals", "metric_levels", "sample_integrals", "sample_values",
           "walked_batches", "walked_samples"]

#: How a metric's samples make a slice's number: a step-function integral, the increases
#: of a counter, or the sum of the samples.
STEP, INCREASE, SUM = 0, 1, 2
_RULES = {"accumulated": INCREASE, "relative": SUM}
#: A window of locations of at most this many events each on average is read by walking
#: them whole, many at a time, not by a window walk per location: a location's window walk
#: costs about as much Python as walking a thousand events in C (20,000 locations of 70
#: events: 15 s a location at a time, 1 s in passes).
WHOLE_WALK_EVENTS = 1024


@dataclass(frozen=True, eq=False)
class MetricIntegrals:
    """``values[r, t, m]`` (float64): the integral of metric ``metrics[m]`` (spec 4.11) on
    location ``locations[r]`` within slice ``[bounds[t], bounds[t + 1])``."""

    bounds: np.ndarray
    metrics: np.ndarray
    names: tuple[str, ...]
    locations: np.ndarray
    values: np.ndarray

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)


def sample_values(bits: np.ndarray, value_type: str) -> np.ndarray:
    """Raw 64-bit sample values as float64, read as ``value_type`` (int64, uint64 or double bits)."""
    if value_type == "double":
        return bits.astype(np.int64).view(np.float64)
    return bits.astype(np.int64).view(np.uint64).astype(np.float64) if value_type == "uint64" \
        else bits.astype(np.float64)


def _before(walker: Any, index: int, wanted: set[int]) -> dict[int, int]:
    """metric -> the raw value of its last sample before event ``index``, for the metrics
    of ``wanted`` sampled before it (a walk backwards until each is found)."""
    found: dict[int, int] = {}
    for batch in walker.events(0, index, reverse=True):
        rows = np.flatnonzero(batch.kind == EventKind.METRIC)
        for metric, value in zip(batch.ref[rows].tolist(), batch.value[rows].tolist()):
            if metric in wanted and metric not in found:
                found[metric] = value
        if len(found) == len(wanted):
            break
    return found


def _window_events(walker: Any, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """time, metric and raw value of the samples among events ``first <= i < last``."""
    parts = [(b.time[m], b.ref[m], b.value[m]) for b in walker.events(first, last)
             for m in [b.kind == EventKind.METRIC]]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return tuple(np.concatenate(column) for column in zip(*parts))  # type: ignore[return-value]


def _step_pieces(bounds: np.ndarray, begin: np.ndarray, end: np.ndarray,
                 value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(segment, column, value x length) of the segments ``[begin, end)`` clipped to the
    bounds and cut at the column bounds, in segment order; empty segments give nothing."""
    begin, end = np.maximum(begin, bounds[0]), np.minimum(end, bounds[-1])
    keep = np.flatnonzero(end > begin)
    begin, end, value = begin[keep], end[keep], value[keep]
    if len(bounds) == 2:  # one column: each segment is its piece
        return keep, np.zeros(len(keep), np.int64), value * (end - begin).astype(np.float64)
    c0 = np.searchsorted(bounds, begin, "right") - 1
    c1 = np.searchsorted(bounds, end - 1, "right") - 1
    counts = c1 - c0 + 1
    segment = np.repeat(np.arange(len(begin)), counts)
    column = c0[segment] + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    lo = np.maximum(bounds[column], begin[segment])
    hi = np.minimum(bounds[column + 1], end[segment])
    return keep[segment], column, value[segment] * (hi - lo).astype(np.float64)


def _contributions(columns: int, row: np.ndarray, time: np.ndarray, ref: np.ndarray, raw: np.ndarray,
                   stop: np.ndarray, bounds: np.ndarray, metrics: list[int], rules: list[int], types: list[str],
                   prior: dict[int, int] | None = None) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per metric ``m`` (index into ``metrics``): ``(m, cell, contribution)`` with cell
    ``row x columns + column``, each cell's contributions in time order, for the samples
    (``row``, ``time``, metric ``ref``, ``raw`` value) ordered by row then time, within the
    columns ``bounds`` (what lies outside them counts nothing, but a sample before them
    holds into them and is a counter's previous value); ``stop[r]``: where row ``r``'s last
    sample stops holding. ``prior`` (one row only): metric -> the raw value of its last
    sample before ``bounds[0]``."""
    for m, (metric, rule, value_type) in enumerate(zip(metrics, rules, types)):
        mine = ref == metric
        r, t, v = row[mine], time[mine], sample_values(raw[mine], value_type)
        if prior is not None and metric in prior and rule != SUM:  # the sample before, as the row's first
            r = np.concatenate([[0], r])
            t = np.concatenate([[bounds[0]], t])
            v = np.concatenate([sample_values(np.array([prior[metric]], np.int64), value_type), v])
        first = np.ones(len(r), bool)  # the row's first sample of the metric
        first[1:] = r[1:] != r[:-1]
        if rule == STEP:
            last = np.append(first[1:], True)
            end = np.minimum(np.where(last, stop[r], np.append(t[1:], 0)), stop[r])
            segment, column, piece = _step_pieces(bounds, t, end, v)
            yield m, r[segment] * columns + column, piece
        else:
            column = np.searchsorted(bounds, t, "right") - 1
            piece = v if rule == SUM else np.diff(v, prepend=0.0)
            counted = (column >= 0) & (column < columns) & (True if rule == SUM else ~first)
            yield m, (r * columns + column)[counted], piece[counted]


def _integrals(rows: int, *samples: Any, **options: Any) -> np.ndarray:
    """``[rows, columns, metrics]``: the sums of `_contributions` (same arguments)."""
    columns = len(samples[5]) - 1
    out = np.zeros((rows, columns, len(samples[6])))
    for m, cell, piece in _contributions(columns, *samples, **options):
        out[:, :, m] = np.bincount(cell, weights=piece, minlength=rows * columns).reshape(rows, columns)
    return out


def _span(walker: Any, location_end: int, bounds: np.ndarray, metrics: list[int], rules: list[int],
          types: list[str]) -> np.ndarray:
    """``[columns, metrics]``: the integrals of one location over the columns ``bounds``."""
    first, last = walker.find(int(bounds[0])), walker.find(int(bounds[-1]))
    time, ref, raw = _window_events(walker, first, last)
    if not len(time) and all(rule != STEP for rule in rules):
        return np.zeros((len(bounds) - 1, len(metrics)))
    stop = np.array([min(int(bounds[-1]), location_end)], np.int64)
    return _integrals(1, np.zeros(len(time), np.int64), time, ref, raw, stop, bounds, metrics, rules, types,
                      _before(walker, first, set(metrics)))[0]


def _metric_setup(source: Any, metrics: Iterable[int] | None) -> tuple[list[int], list[int], list[str]]:
    defined = source.definitions.metrics
    chosen = list(range(len(defined))) if metrics is None else sorted(set(int(m) for m in metrics))
    for metric in chosen:
        if not 0 <= metric < len(defined):
            raise ValueError(f"no metric {metric} in the trace")
    return (chosen, [_RULES.get(defined[m].mode, STEP) for m in chosen],
            [defined[m].value_type for m in chosen])


def walked_batches(source: Any, locations: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, EventBatch, np.ndarray]]:
    """``(locations, offsets, batch, ends)`` per run of ``locations`` (increasing, with
    events; not of a streamed graph, `streaming.streams`) walked together, about
    `event_passes` events at a time: every event of location ``locations[i]`` as rows
    ``offsets[i]:offsets[i + 1]`` of ``batch``, ``ends[i]`` its last event time."""
    nodes, starts, ends, counts = roots_at(source, locations)
    for run in event_passes(counts):
        offsets = np.concatenate(([0], np.cumsum(counts[run])))
        yield locations[run], offsets, walk_locations(source.pool, locations[run], nodes[run], starts[run], offsets,
                                                      getattr(source, "path", None)), ends[run]


def walked_samples(source: Any, locations: np.ndarray) -> Iterator[tuple[np.ndarray, tuple[np.ndarray, ...]]]:
    """``(locations, (row, time, ref, raw, stop))`` per run of ``locations`` (increasing,
    with events) walked together (`walked_batches`): the metric samples of the run,
    ``row`` indexing into the run, and each location's last event time."""
    if streams(source):  # a location at a time, its samples kept of its batches
        ends = roots_at(source, locations)[2]
        for i, location in enumerate(locations.tolist()):
            parts = [(batch.time[keep], batch.ref[keep], batch.value[keep])
                     for batch, keep in kept_events(source, location, (int(EventKind.METRIC),))]
            time, ref, raw = [np.concatenate(column) for column in zip(*parts)] if parts \
                else [np.zeros(0, np.int64)] * 3
            yield locations[i:i + 1], (np.zeros(len(time), np.int64), time, ref, raw, ends[i:i + 1])
        return
    for run, offsets, batch, ends in walked_batches(source, locations):
        yield run, batch_samples(offsets, batch, ends)


def batch_samples(offsets: np.ndarray, batch: EventBatch, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(row, time, ref, raw, stop)`` of `walked_samples` from a run of `walked_batches`."""
    samples = np.flatnonzero(batch.kind == EventKind.METRIC)
    return (np.searchsorted(offsets, samples, "right") - 1, batch.time[samples], batch.ref[samples],
            batch.value[samples], ends)


def sample_integrals(source: Any, samples: tuple[np.ndarray, ...], bounds: np.ndarray) -> np.ndarray:
    """``[rows, columns, metrics]``: the integrals (all metrics) of one run of
    `walked_samples` over the columns ``bounds``, its rows the run's locations."""
    metrics, rules, types = _metric_setup(source, None)
    return _integrals(len(samples[4]), *samples, bounds, metrics, rules, types)


def _graph_integrals(source: Any, chosen: list[int], bounds: np.ndarray, metrics: list[int]) -> np.ndarray:
    """``[locations, columns, metrics]`` straight from the events: one walk of many
    locations at a time when the columns cover the whole trace or the locations are short
    (`WHOLE_WALK_EVENTS`), else a window of each."""
    _, rules, types = _metric_setup(source, metrics)
    out = np.zeros((len(chosen), len(bounds) - 1, len(metrics)))
    known, _, _, _, events = source_root_columns(source)
    rows = np.flatnonzero(np.isin(np.asarray(chosen, np.int64), known[events > 0])).tolist()
    if not rows or not metrics:
        return out
    first, last = trace_window(source)
    short = not streams(source) and roots_at(source, [chosen[row] for row in rows])[3].sum() \
        <= WHOLE_WALK_EVENTS * len(rows)
    if (bounds[0] > first or bounds[-1] < last) and not short:
        for row in rows:
            root = source.roots[chosen[row]]
            out[row] = _span(source.location(chosen[row]), root.end, bounds, metrics, rules, types)
        return out
    row_of = np.asarray(chosen, np.int64)
    for locations, samples in walked_samples(source, row_of[rows]):
        out[np.searchsorted(row_of, locations)] = _integrals(len(locations), *samples, bounds, metrics, rules, types)
    return out


def _locations(source: Any, locations: Iterable[int] | None) -> list[int]:
    every = set(range(len(source.definitions.locations))) | set(source.roots)
    chosen = sorted(every) if locations is None else sorted(set(int(location) for location in locations))
    missing = [location for location in chosen if location not in every]
    if missing:
        raise ValueError(f"no location {missing[0]} in the trace")
    return chosen


def _graph_pieces(source: Any, chosen: list[int], pieces: list[tuple[int, int]], metrics: list[int]) -> np.ndarray:
    """``[locations, pieces, metrics]``: the integrals of ``pieces`` (disjoint, in time
    order), each run of adjacent pieces read in one pass over its events."""
    out = np.zeros((len(chosen), len(pieces), len(metrics)))
    first = 0
    for i in range(1, len(pieces) + 1):
        if i == len(pieces) or pieces[i][0] != pieces[i - 1][1]:
            bounds = np.array([a for a, _ in pieces[first:i]] + [pieces[i - 1][1]], np.int64)
            out[:, first:i] = _graph_integrals(source, chosen, bounds, metrics)
            first = i
    return out


def _from_tables(source: Any, tables: Any, chosen: list[int], bounds: np.ndarray, metrics: list[int],
                 out: np.ndarray) -> None:
    """Fill ``out``: per slice, the graph's piece before its first table cell, the cells
    left to right, then the graph's piece after its last cell (pieces outside the trace
    hold nothing)."""
    for level in tables.levels:  # the coarsest level whose cells cover the slices exactly, else the finest
        fine = column_bounds(tables.start, tables.stop, level.slices)
        first = np.searchsorted(fine, bounds[:-1], "left")
        last = np.searchsorted(fine, bounds[1:], "right") - 1
        whole = first < last
        if (whole & (fine[np.minimum(first, level.slices)] == bounds[:-1])
                & (fine[np.maximum(last, 0)] == bounds[1:])).all():
            break
    pieces: list[tuple[int, int]] = []
    head = np.full(len(bounds) - 1, -1)  # slice -> its piece before the cells (or its only piece), tail: after
    tail = np.full(len(bounds) - 1, -1)
    for t, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        ends = [(a, int(fine[first[t]])), (int(fine[last[t]]), b)] if whole[t] else [(a, b)]
        for slot, (x, y) in zip((head, tail), ends):
            x, y = max(x, tables.start), min(y, tables.stop)
            if x < y:
                slot[t] = len(pieces)
                pieces.append((x, y))
    graph = _graph_pieces(source, chosen, pieces, metrics) if pieces else np.zeros((len(chosen), 0, len(metrics)))
    dense = level.dense(chosen, metrics)  # [rows, cells, metrics]
    zero = np.zeros((len(chosen), len(metrics)))
    for t in range(len(bounds) - 1):
        total = graph[:, head[t]] if head[t] >= 0 else zero
        for cell in range(int(first[t]), int(last[t])) if whole[t] else ():
            total = total + dense[:, cell]
        out[:, t] = total + graph[:, tail[t]] if tail[t] >= 0 else total


def metric_integrals(source: Any, slices: int, start: int | None = None, stop: int | None = None,
                     metrics: Iterable[int] | None = None, locations: Iterable[int] | None = None) -> MetricIntegrals:
    """The integrals of ``metrics`` (default: all) over ``[start, stop)`` (default: the
    whole trace) in ``slices`` slices on ``locations`` (default: all) of a `Graph` or
    `Archive`."""
    bounds = sliced_window(source, slices, start, stop)
    chosen_metrics = _metric_setup(source, metrics)[0]
    chosen = _locations(source, locations)
    tables = getattr(source, "metric_tables", None)
    if tables is None:
        values = _graph_integrals(source, chosen, bounds, chosen_metrics)
    else:
        values = np.zeros((len(chosen), int(slices), len(chosen_metrics)))
        _from_tables(source, tables, chosen, bounds, chosen_metrics, values)
    names = tuple(source.definitions.metrics[m].name for m in chosen_metrics)
    return MetricIntegrals(bounds, np.array(chosen_metrics, np.int64), names, np.array(chosen, np.int64), values)


def finest_level(locations: int, metrics: int) -> int:
    """The finest table level: `LEVELS`, or less while ``locations x 2^k x metrics`` cells
    would exceed `MAX_CELLS`."""
    k = LEVELS
    while k and locations * (1 << k) * metrics > MAX_CELLS:
        k -= 1
    return k


def _sum_runs(key: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys of ``key`` (sorted) and per key the float64 sum of its values,
    added from 0.0 in array order."""
    first = np.ones(len(key), bool)
    first[1:] = key[1:] != key[:-1]
    return key[first], np.bincount(np.cumsum(first) - 1, weights=value, minlength=int(first.sum()))


def _pair_sums(key: np.ndarray, value: np.ndarray, metrics: int) -> tuple[np.ndarray, np.ndarray]:
    """The next coarser level of a sparse one (keys ``cell x metrics + metric``, increasing):
    each cell the float64 sum of its two halves, left then right (spec 4.11)."""
    parent = (key // metrics >> 1) * metrics + key % metrics
    order = np.argsort(parent, kind="stable") if metrics > 1 else slice(None)  # one metric: already sorted
    return _sum_runs(parent[order], value[order])


def _given_samples(source: Any, samples: tuple[np.ndarray, ...]) -> Iterator[tuple[np.ndarray, tuple[np.ndarray, ...]]]:
    """`walked_samples` of every location with events, from ``samples`` (`MetricSamples.columns`)."""
    location, time, ref, raw = samples
    run = np.sort(source_root_columns(source)[0])
    yield run, (np.searchsorted(run, location), time, ref, raw, roots_at(source, run)[2])


def finest_cells(source: Any, start: int, stop: int, finest: int,
                 samples: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The metric level ``finest`` over ``[start, stop)`` of every location with events:
    the keys ``((location << finest) + slice) x metrics + metric``, increasing, of its
    cells and their values (0.0 included), from ``samples`` or walked (`metric_levels`)."""
    defined = len(source.definitions.metrics)
    bounds = column_bounds(start, stop, 1 << finest)
    metrics, rules, types = _metric_setup(source, None)
    keys, pieces = [], []
    if samples is not None:
        runs = _given_samples(source, samples)
    else:
        known, _, _, _, events = source_root_columns(source)
        sampled = streams(source) or (tables_for(source.pool).kind == EventKind.METRIC).any()
        walked = np.sort(known[events > 0]) if sampled else np.zeros(0, np.int64)
        runs = walked_samples(source, walked)
    for locations, run in runs:
        for m, cell, piece in _contributions(1 << finest, *run, bounds, metrics, rules, types):
            row, column = np.divmod(cell, 1 << finest)
            keys.append(((locations[row] << finest) + column) * defined + m)
            pieces.append(piece)
    key = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    order = np.argsort(key, kind="stable")  # each cell's contributions stay in time order
    return _sum_runs(key[order], np.concatenate(pieces)[order] if pieces else np.zeros(0))


def metric_levels(source: Any, finest: int | None = None, samples: tuple[np.ndarray, ...] | None = None,
                  rows: Any = None) -> Iterator[MetricLevel]:
    """Levels 0..finest of the metric tables (spec 4.11; ``finest`` default `finest_level`),
    sparse: the level ``finest`` from the graph's samples (``samples``, the ``(location,
    time, metric, raw value)`` columns of all of them when known, else walked; a pool
    without METRIC nodes holds none and needs no walk), or ``rows`` (a merge's
    `archive.merge.tables.TableRows` over the trace's window: its finest metric level),
    each coarser one the sums of the next one's pairs of slices; nothing for a trace
    without metrics."""
    defined = len(source.definitions.metrics)
    locations = max(len(source.definitions.locations), max(source.roots, default=-1) + 1)
    if not defined or not locations:
        return
    start, stop = trace_window(source)
    if rows is not None:
        if (rows.start, rows.stop) != (start, stop):
            raise ValueError(f"table rows over [{rows.start}, {rows.stop}), not the trace's window")
        finest = rows.metric_finest
        levels = [(((rows.metric_location << finest) + rows.metric_slice) * defined + rows.metric, rows.metric_value)]
    else:
        finest = finest_level(locations, defined) if finest is None else finest
        levels = [finest_cells(source, start, stop, finest, samples)]
    for _ in range(finest):
        levels.append(_pair_sums(*levels[-1], defined) if len(levels[-1][0]) else levels[-1])
    for k, (key, value) in enumerate(reversed(levels)):
        stored = value != 0.0  # NaN is stored
        yield MetricLevel(k, finest, start, stop, defined, locations, key[stored] // defined, key[stored] % defined,
                          value[stored])
