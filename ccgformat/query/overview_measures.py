"""The measures of an aggregate (paper 000, section III.C, as issue 16 fixes it): for a
part ``A = (S_k, T(i..j))`` with ``|A| = |S_k| (j - i + 1)`` cells and each state ``x``,
``V_x`` is the sum over ``A`` of the cell proportions ``r = d_x(s, t) / d(t)``;
``gain_x = V_x log2 V_x - sum r log2 r``, ``loss_x = V_x log2 |A| - gain_x`` (with
``0 log 0 = 0``). `measures` gives gain and loss summed over the states for every node of
the hierarchy and every interval of slices.

Intervals are packed in a triangle: interval ``(i, j)``, ``i <= j``, is column
``j (j + 1) / 2 + i`` (`interval_index`), so a node's row holds ``T (T + 1) / 2`` values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import backends
from ..aggregate_model import AggregateModel, Hierarchy

__all__ = ["Measures", "interval_index", "measures", "proportions", "triangle"]

_CHUNK = 1 << 22  # values held at once per chunk of nodes in the reference


def triangle(slices: int) -> int:
    """How many intervals ``T`` slices have: ``T (T + 1) / 2``."""
    return slices * (slices + 1) // 2


def interval_index(first: int | np.ndarray, last: int | np.ndarray) -> int | np.ndarray:
    """The packed column of the interval ``first..last`` (both inclusive)."""
    return last * (last + 1) // 2 + first


@dataclass(frozen=True, eq=False)
class Measures:
    """Gain and loss of every (node, interval) area, ``[nodes, T (T + 1) / 2]`` float64."""

    hierarchy: Hierarchy
    slices: int
    gain: np.ndarray
    loss: np.ndarray

    def normalized(self) -> Measures:
        """Gain and loss divided by those of the whole trace (root, all slices), as Ocelotl
        can; a zero total leaves its measure as is."""
        whole = interval_index(0, self.slices - 1)
        gain, loss = self.gain[0, whole], self.loss[0, whole]
        return Measures(self.hierarchy, self.slices, self.gain / (gain if gain > 0 else 1.0),
                        self.loss / (loss if loss > 0 else 1.0))


def proportions(model: AggregateModel) -> np.ndarray:
    """The cell proportions ``r[leaf, t, x] = d_x(s, t) / d(t)``, rows in the hierarchy's
    leaf order (a slice of zero duration has proportions 0)."""
    durations = np.diff(np.asarray(model.bounds, dtype=np.int64)).astype(np.float64)
    values = model.values_by_leaf().astype(np.float64)
    # a finite value over an infinite duration is 0: the idle slices, in place, without temporaries
    return np.divide(values, np.where(durations > 0, durations, np.inf)[None, :, None], out=values)


def leaf_prefix(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums over leaf positions of ``r`` (``[leaves + 1, T, X]``) and of
    ``sum_x r log2 r`` (``[leaves + 1, T]``), so that a node's per-slice sums are
    ``P[stop_leaf] - P[first_leaf]``."""
    values = np.zeros((r.shape[0] + 1,) + r.shape[1:])
    infos = np.zeros((r.shape[0] + 1, r.shape[1]))
    np.cumsum(r, axis=0, out=values[1:])
    np.cumsum(_xlogx(r).sum(axis=2), axis=0, out=infos[1:])
    return values, infos


def _xlogx(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape)
    np.log2(v, out=out, where=v > 0)
    return np.multiply(out, v, out=out)


def measures_reference(hierarchy: Hierarchy, r: np.ndarray) -> Measures:
    """`measures` in numpy."""
    leaves, slices, states = r.shape
    values, infos = leaf_prefix(r)
    first = np.asarray(hierarchy.first_leaf, dtype=np.int64)
    stop = np.asarray(hierarchy.stop_leaf, dtype=np.int64)
    nodes, columns = len(first), triangle(slices)
    last_of, first_of = np.nonzero(np.tril(np.ones((slices, slices), dtype=bool)))  # j, i in packed order
    gain, loss = np.empty((nodes, columns)), np.empty((nodes, columns))
    step = max(1, _CHUNK // max(1, columns * states))
    for begin in range(0, nodes, step):
        end = min(nodes, begin + step)
        part = slice(begin, end)
        per_slice = values[stop[part]] - values[first[part]]          # [n, T, X]
        info = infos[stop[part]] - infos[first[part]]                  # [n, T]
        v = np.concatenate((np.zeros((end - begin, 1, states)), np.cumsum(per_slice, axis=1)), axis=1)
        s = np.concatenate((np.zeros((end - begin, 1)), np.cumsum(info, axis=1)), axis=1)
        sums = v[:, last_of + 1] - v[:, first_of]                      # [n, K, X]
        g = _xlogx(sums).sum(axis=2) - (s[:, last_of + 1] - s[:, first_of])
        cells = (stop[part] - first[part])[:, None] * (last_of - first_of + 1)[None, :]
        gain[part] = g
        loss[part] = sums.sum(axis=2) * np.log2(cells) - g
    return Measures(hierarchy, slices, gain, loss)


def measures(hierarchy: Hierarchy, r: np.ndarray) -> Measures:
    """Gain and loss of every (node, interval) for the proportions ``r[leaf, t, x]`` (leaf
    order), with the active backend (the C kernel or `measures_reference`)."""
    if backends.native():
        from .._native import overview as native
        return Measures(hierarchy, r.shape[1], *native.measures(hierarchy, *leaf_prefix(r), triangle(r.shape[1])))
    return measures_reference(hierarchy, r)
