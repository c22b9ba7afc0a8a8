"""The cached summary query (dissertation 3.4.3, 4.5.3, 5.4.1): a profile of any time
window and any set of locations, computed on the compressed graph.

Rules for a window ``[start, stop)`` (``None`` is open-ended):

* an event counts when ``start <= time < stop``; a call is *counted* (``calls``) when
  its ENTER is in the window;
* times count the part of every call inside the window, also for calls that straddle a
  bound: ``inclusive`` is ``|[enter, leave) ∩ window|`` summed over calls, ``exclusive``
  the inclusive part minus the inclusive parts of its direct callees;
* ``min``/``max``/``mean`` are taken over the counted calls, of their inclusive part
  inside the window (the full ``leave - enter`` for calls that end inside it);
* messages count SEND/ISEND events as sent and RECV/IRECV events as received, per
  (sender, receiver) location pair; collectives count COLL_END events per operation with
  the bytes sent and received; metrics give, for every metric sampled in the trace, its
  change over the window (value after it minus value before it, summed over the
  locations: the sum of the sample differences inside it, or for ``double`` metrics the
  difference of the two floating-point values; integer sums wrap to 64 bits like every
  sum of the format).

All sums are additive over adjacent windows (the additivity of 4.26). A sub-tree lying
wholly inside the window contributes its partial profile, which is the same wherever the
sub-tree is referenced - within one location, across locations and across queries. The
window's bounds cut at most b nodes per level along two paths; those are evaluated
directly, all locations descending together. The sub-trees taken whole (also at most b
per level and bound) are memoized; each is computed by a vectorised pass over the
distinct nodes below it that counts how often each is reached, and in that pass the
nodes chosen by the partial caching policy of 5.4.1 (depth below the location root a
multiple of ``cache_modulus``, or more than ``cache_references`` references) are
memoized too and end the descent of later passes. A successive query therefore costs
the two boundary paths plus one memo lookup per whole sub-tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..archive.indexes import INDEX_NODES_PER_LOCATION
from ..graph.graph import chosen_roots
from .interior import Cut, SummaryIndex
from .profile_engine import check_policy, engine_for
from .profile_metrics import double_metrics, double_steps, metric_changes, sampled_metrics
from .profile_result import Profile, build_profile
from .profile_totals import Totals
from .profile_window import NO_START, NO_STOP


def profile(source: Any, start: int | None = None, stop: int | None = None,
            locations: Iterable[int] | None = None, *, cache_modulus: int = 10,
            cache_references: int = 5, summary_index: bool | None = None) -> Profile:
    """The profile of ``[start, stop)`` over ``locations`` (default all) of a `Graph` or
    an `Archive` (see the module docstring for what counts where). An archive's SUMMARY
    index can answer the interior of windows that hold whole checkpoint segments
    (`ccgformat.query.interior`), the graph the rest: with ``summary_index=True``
    wherever it applies, with False never, and with None (the default) when the graph
    is large for the query (`index_pays`). The answers are the same."""
    parts = profile_parts(source, start, stop, locations, cache_modulus=cache_modulus,
                          cache_references=cache_references, summary_index=summary_index)
    return parts.result(source.definitions, start, stop)


@dataclass
class ProfileParts:
    """A profile before its rows: the additive totals over ``chosen``, the metrics sampled
    (``doubles`` the floating-point ones among them) and those ones' change on each chosen
    location. Parts of consecutive location ranges, `joined` in location order, give the
    profile of their union (dissertation 4.7.5: partial summaries reduced)."""

    chosen: list[int]
    totals: Totals
    sampled: set[int]
    doubles: set[int]
    steps: dict[int, np.ndarray]

    def result(self, definitions: Any, start: int | None, stop: int | None) -> Profile:
        metrics = metric_changes(definitions, self.sampled, self.doubles, self.totals.metrics, self.steps)
        return build_profile(definitions, start, stop, self.chosen, self.totals, metrics)

    @staticmethod
    def joined(parts: list[ProfileParts]) -> ProfileParts:
        """The parts of the union of the parts' locations (given in location order)."""
        totals = Totals(max(len(part.totals.calls) for part in parts))
        for part in parts:
            t, n = part.totals, len(part.totals.calls)
            totals.add_regions(slice(0, n), t.calls, t.inclusive, t.exclusive, t.before)
            totals.extremes(slice(0, n), t.low, t.high)
            totals.pairs.extend(t.pairs)
            for operation, (count, sent, received) in t.collectives.items():
                totals.add_collective(operation, count, sent, received)
            for metric, change in t.metrics.items():
                totals.add_metric(metric, change)
        steps = {metric: np.concatenate([part.steps[metric] for part in parts if metric in part.steps])
                 for metric in set().union(*(part.steps for part in parts))}
        return ProfileParts([location for part in parts for location in part.chosen], totals,
                            set().union(*(part.sampled for part in parts)),
                            set().union(*(part.doubles for part in parts)), steps)


def profile_parts(source: Any, start: int | None = None, stop: int | None = None,
                  locations: Iterable[int] | None = None, *, cache_modulus: int = 10,
                  cache_references: int = 5, summary_index: bool | None = None) -> ProfileParts:
    """`profile`'s answer before its rows (`ProfileParts`), arguments as there."""
    check_policy(cache_modulus, cache_references)
    lo = NO_START if start is None else int(start)
    hi = NO_STOP if stop is None else int(stop)
    if lo > hi:
        raise ValueError(f"the window starts at {start}, after its stop {stop}")
    chosen = chosen_roots(source, locations).locations
    if not (lo < hi and chosen):
        return ProfileParts(chosen, Totals(0), set(), set(), {})
    definitions = source.definitions
    wanted = index_pays(source, len(chosen)) if summary_index is None else summary_index
    index = SummaryIndex.of(source) if wanted else None
    if index is not None and hi - lo <= index.shortest_segment():
        index = None  # too short to hold a whole segment anywhere
    cuts: dict[int, Cut | None] = ({location: index.cut(location, lo, hi) for location in chosen} if index
                                   else dict.fromkeys(chosen))
    where, starts, stops, begins = _graph_pieces(cuts, lo, hi) if index else _whole_windows(chosen, lo, hi)
    engine = engine_for(source, cache_modulus, cache_references) if len(where) else None
    sampled = sampled_metrics(source, index, engine)
    doubles = double_metrics(definitions, sampled)
    totals = Totals(max(len(definitions.regions), engine.layout.R if engine else 0))
    if engine is not None:
        engine.add_window(totals, where, starts, stops, hi, begins)
    inner = [cut for cut in cuts.values() if cut is not None] if index else []
    if inner:
        index.add_interiors(totals, inner, lo, hi, doubles)
    steps = double_steps(index, engine, cuts, lo, hi, sorted(doubles)) if doubles else {}
    return ProfileParts(chosen, totals, sampled, doubles, steps)


def index_pays(source: Any, locations: int) -> bool:
    """Whether the summary index is worth reading for a window over ``locations``: when
    the graph has more than `INDEX_NODES_PER_LOCATION` nodes per location. Below that,
    building and walking the node tables (about a microsecond a node, once) costs less
    than reading each location's checkpoints (about 0.3 ms a location)."""
    return len(source.pool) > INDEX_NODES_PER_LOCATION * locations


def _whole_windows(chosen: list[int], lo: int, hi: int) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of `_graph_pieces` where no location is cut by the index: every
    location's whole window, as columns."""
    count = len(chosen)
    return chosen, np.full(count, lo, np.int64), np.full(count, hi, np.int64), np.ones(count, bool)


def _graph_pieces(cuts: dict[int, Cut | None], lo: int, hi: int) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of the window ``[lo, hi)`` that the graph answers, as columns of
    location, start, stop and whether the piece begins the window: a location's whole
    window where the index does not cut it, else the ends outside its interior."""
    pieces = []
    for location, cut in cuts.items():
        if cut is None:
            pieces.append((location, lo, hi, True))
            continue
        if not cut.starts_window:
            pieces.append((location, lo, cut.low, True))
        if not cut.ends_window:
            pieces.append((location, cut.high, hi, False))
    where, starts, stops, begins = (list(column) for column in zip(*pieces)) if pieces else ([], [], [], [])
    return where, np.array(starts, np.int64), np.array(stops, np.int64), np.array(begins, bool)
