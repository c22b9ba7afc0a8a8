"""Exploring p (paper 000, section III.C; Ocelotl's quality curves): every distinct
optimal partition as p goes from 0 to 1, each with its gain and loss, and the default p.

The optimal pIC is the upper envelope of the lines ``p G - (1 - p) L`` of all partitions,
so it is convex in p, and a partition optimal at two values of p is optimal between them.
`explore` therefore bisects an interval ``[a, b]`` only while the optima at its ends
differ, at the point where their two lines cross (the midpoint when they do not cross
inside), and stops when the optimal pIC at the crossing is that of the two lines (then no
other partition is optimal inside) or when ``b - a`` falls below ``threshold``.

At p = 1 the optimum is known without a DP (`coarsest`): gain is superadditive (merging
two parts never lowers it, as ``(a + b) log2 (a + b) >= a log2 a + b log2 b``), so the whole
trace as one part has the highest pIC, and ties go to the fewest parts.

The default p (`default_p`): with gain and loss of every optimum normalised by their
largest values, the largest jump of normalised loss between consecutive optima marks where
aggregating further starts to lose much information; the default is the middle of the
p-range of the optimum just before that jump (the first optimum when there is one only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .overview_dp import TOLERANCE, Partition, partition
from .overview_measures import Measures, interval_index

__all__ = ["Curve", "THRESHOLD", "coarsest", "default_p", "explore"]

#: How close two values of p may get before `explore` stops bisecting between them.
THRESHOLD = 1e-4


@dataclass(frozen=True)
class Curve:
    """The distinct optima by increasing p: ``optima[k]`` is optimal for p from ``low[k]``
    to ``high[k]`` (where its pIC line meets those of its neighbours)."""

    optima: tuple[Partition, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]

    def to_json(self) -> list[dict[str, float | int]]:
        """One row per optimum: the p range, gain, loss and part count."""
        return [{"p": part.p, "p_low": low, "p_high": high, "gain": part.gain, "loss": part.loss,
                 "parts": len(part)} for part, low, high in zip(self.optima, self.low, self.high)]


def _line(part: Partition, p: float) -> float:
    return p * part.gain - (1.0 - p) * part.loss


def _crossing(a: Partition, b: Partition, low: float, high: float) -> float | None:
    """Where the pIC lines of ``a`` and ``b`` meet, if strictly between low and high."""
    p = _meet(a, b)
    return p if low < p < high and (a.gain + a.loss) != (b.gain + b.loss) else None


def coarsest(measures: Measures) -> Partition:
    """The optimum at p = 1: the root over all slices as one part (module docstring)."""
    whole = interval_index(0, measures.slices - 1)
    gain, loss = float(measures.gain[0, whole]), float(measures.loss[0, whole])
    one = np.zeros(1, dtype=np.int64)
    return Partition(1.0, gain, gain, loss, one, one.copy(), np.full(1, measures.slices - 1, dtype=np.int64))


def explore(measures: Measures, threshold: float = THRESHOLD) -> Curve:
    """The distinct optimal partitions for p in [0, 1] (see the module docstring)."""
    found: dict[float, Partition] = {0.0: partition(measures, 0.0), 1.0: coarsest(measures)}
    pending = [(0.0, 1.0)]
    while pending:
        low, high = pending.pop()
        a, b = found[low], found[high]
        if a.same_parts(b) or high - low < threshold:
            continue
        crossing = _crossing(a, b, low, high)
        p = (low + high) / 2 if crossing is None else crossing
        middle = found[p] = partition(measures, p)
        if crossing is not None and middle.pic <= _line(a, p) + TOLERANCE * max(1.0, abs(middle.pic)):
            continue  # nothing beats a and b inside: the envelope is their two lines
        pending += [(low, p), (p, high)]
    optima: list[Partition] = []
    for p in sorted(found):
        if not (optima and found[p].same_parts(optima[-1])):
            optima.append(found[p])
    # each optimum holds from where its line crosses the previous one's to where it crosses the next one's
    breaks = [0.0] + [min(1.0, max(0.0, _meet(a, b))) for a, b in zip(optima, optima[1:])] + [1.0]
    return Curve(tuple(optima), tuple(breaks[:-1]), tuple(breaks[1:]))


def _meet(a: Partition, b: Partition) -> float:
    slope = (a.gain + a.loss) - (b.gain + b.loss)
    return (a.loss - b.loss) / slope if slope != 0 else a.p


def default_p(curve: Curve) -> float:
    """The documented default p of `curve` (module docstring)."""
    if len(curve.optima) == 1:
        return (curve.low[0] + curve.high[0]) / 2
    loss = np.array([part.loss for part in curve.optima])
    scale = loss.max() if loss.max() > 0 else 1.0
    jump = int(np.argmax(np.diff(loss / scale)))
    return (curve.low[jump] + curve.high[jump]) / 2
