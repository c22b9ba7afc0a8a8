"""The metrics part of a profile: which metrics were sampled, and each one's change over
the window (see `ccgformat.query.profile_query`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph.pool import wrap64
from .interior import Cut, SummaryIndex
from .profile_engine import ProfileEngine, engine_for
from .profile_window import NO_START


def double_steps(index: SummaryIndex | None, engine: ProfileEngine | None, cuts: dict[int, Cut | None],
                 lo: int, hi: int, doubles: list[int]) -> dict[int, np.ndarray]:
    """Per floating-point metric, the change of its value over the window on each location
    (a difference of floats, so it needs the values at both ends, not the sum of
    differences inside): at an end that is a checkpoint from the snapshot, else from the
    graph (`ProfileEngine.metric_bits`, all such ends in one call)."""
    locations = np.fromiter(cuts, np.int64, len(cuts))
    bits = np.zeros((2, len(locations), len(doubles)), np.int64)  # (before, after) x location -> raw bits
    from_graph = np.ones((2, len(locations)), bool)
    from_graph[0] = lo != NO_START  # nothing lies before an open start
    if index is not None:  # the ends at a checkpoint (the index cuts a location at a time)
        for row, (location, cut) in enumerate(cuts.items()):
            for side, at_checkpoint, point in ((0, cut is not None and cut.starts_window, cut and cut.a),
                                               (1, cut is not None and cut.ends_window, cut and cut.b)):
                if at_checkpoint:
                    bits[side, row] = index.metric_bits(location, point, doubles)
                    from_graph[side, row] = False
    before, after = np.flatnonzero(from_graph[0]), np.flatnonzero(from_graph[1])
    if len(before) or len(after):
        asked = engine.metric_bits(np.concatenate((locations[before], locations[after])).tolist(),
                                   [lo] * len(before) + [hi] * len(after))[:, doubles]
        bits[0, before], bits[1, after] = asked[:len(before)], asked[len(before):]
    floats = bits.view(np.float64)
    return dict(zip(doubles, (floats[1] - floats[0]).T))


def sampled_metrics(source: Any, index: SummaryIndex | None, engine: ProfileEngine | None) -> set[int]:
    """The metrics sampled anywhere in the trace: from the graph when it is at hand, else
    from the index."""
    if engine is not None or index is None:
        return (engine or engine_for(source)).sampled
    return index.sampled_metrics()


def _value_type(definitions: Any, metric: int) -> str:
    metrics = definitions.metrics
    return metrics[metric].value_type if 0 <= metric < len(metrics) else "int64"


def _change(value_type: str, first: int, last: int) -> int:
    """An integer metric's change (floating-point ones: `_double_changes`)."""
    change = wrap64(last - first)
    return change % (1 << 64) if value_type == "uint64" else change


def double_metrics(definitions: Any, sampled: set[int]) -> set[int]:
    """The sampled metrics whose values are floating-point."""
    return {m for m in sampled if _value_type(definitions, m) == "double"}


def metric_changes(definitions: Any, sampled: set[int], doubles: set[int], sums: dict[int, int],
                   steps: dict[int, np.ndarray]) -> dict[int, int | float]:
    """Per sampled metric its change over the window: for integer ones from the ``sums``
    of sample differences, for floating-point ones (``doubles``) from their ``steps`` on
    each location (`double_steps`), summed location after location from 0.0, as a Python
    sum would (not numpy's pairwise sum)."""
    metrics: dict[int, int | float] = {m: _change(_value_type(definitions, m), 0, sums.get(m, 0))
                                       for m in sampled - doubles}
    for metric in sorted(doubles):
        changes = steps.get(metric, np.zeros(0))
        metrics[metric] = float(np.cumsum(np.concatenate(([0.0], changes)))[-1])
    return metrics
