"""Compression parameters of the cCCG engine (dissertation 3.3.1, 4.1.2, 4.2.2)."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ParameterError

#: Relative bounds are applied as the exact rational ``floor(rel * 2**32) / 2**32`` so
#: that every backend decides compatibility with integer arithmetic only; the
#: effective bound is never larger than the one the user asked for.
REL_SCALE_BITS = 32


@dataclass(frozen=True)
class Params:
    """How the graph is built and how much it may deviate from the input.

    ``abs_dev``: every reconstructed timestamp lies within this many ticks of the original
    (eq. 3.5). ``rel_dev``: every duration between two timestamps is stretched or shrunk
    by at most this fraction (eq. 3.6). Both time bounds always apply together, so time is
    exact when either is zero. ``rel_size``: message and collective byte counts within
    this fraction. ``rel_metric``: differences between successive samples of an integer
    metric within this fraction (floating-point metrics are always exact).
    ``branching``: the bounded branching factor b (3.2.2). ``search_length``: the cache
    area L of every S-list (4.2.2; 16, not the dissertation's 1000: a node found deeper
    in an S-list is a far child reference, which costs this file format more than the
    node stored again; docs/compression.md). ``leaf_window``: with exact time, a leaf call (a call
    without children) whose S-list has had fewer hits than misses is shared with an equal
    earlier node only when that node was made or last shared at most this many nodes ago,
    else stored again (0: always shared; see docs/compression.md). ``representatives``:
    with deviation bounds, an S-list of call or artificial nodes that holds this many
    nodes and finds none for a new one is no longer searched: its durations are jitter,
    not structure, and that node and every later one of its key are stored (rounded)
    instead of shared (0: always searched; docs/compression.md). ``epoch_nodes``: once
    this many nodes were stored since the replacement index last started empty, it starts
    empty again (dissertation 4.7.2): the index holds the nodes of one epoch only, and
    sharing reaches no node of an earlier epoch (0: never; docs/scale.md).
    """

    abs_dev: int = 0
    rel_dev: float = 0.0
    rel_size: float = 0.0
    rel_metric: float = 0.0
    branching: int = 20
    search_length: int = 16
    leaf_window: int = 4
    representatives: int = 16
    epoch_nodes: int = 1 << 20

    def __post_init__(self) -> None:
        if not isinstance(self.abs_dev, int) or self.abs_dev < 0:
            raise ParameterError(f"abs_dev must be a non-negative integer, got {self.abs_dev!r}")
        for name in ("rel_dev", "rel_size", "rel_metric"):
            value = getattr(self, name)
            if not (0.0 <= float(value) <= 1e6):
                raise ParameterError(f"{name} must be between 0 and 1e6, got {value!r}")
        if not isinstance(self.branching, int) or not 2 <= self.branching <= 65535:
            raise ParameterError(f"branching must be an integer in [2, 65535], got {self.branching!r}")
        if not isinstance(self.search_length, int) or self.search_length < 1:
            raise ParameterError(f"search_length must be a positive integer, got {self.search_length!r}")
        if not isinstance(self.leaf_window, int) or self.leaf_window < 0:
            raise ParameterError(f"leaf_window must be a non-negative integer, got {self.leaf_window!r}")
        if not isinstance(self.representatives, int) or self.representatives < 0:
            raise ParameterError(f"representatives must be a non-negative integer, got {self.representatives!r}")
        if not isinstance(self.epoch_nodes, int) or self.epoch_nodes < 0:
            raise ParameterError(f"epoch_nodes must be a non-negative integer, got {self.epoch_nodes!r}")

    @property
    def lossless(self) -> bool:
        """True when nothing may deviate: the graph reproduces the input exactly."""
        return self.exact_time and self.rel_size == 0 and self.rel_metric == 0

    @property
    def exact_time(self) -> bool:
        """Time is exact when either time bound is zero (both must hold at once)."""
        return self.abs_dev == 0 or self.rel_dev == 0


def rel_numerator(rel: float) -> int:
    """The integer numerator of a relative bound over ``2**REL_SCALE_BITS``."""
    return int(rel * (1 << REL_SCALE_BITS))


def within_rel(new: int, original: int, numerator: int) -> bool:
    """``|new - original| <= rel * |original|`` decided exactly in integers."""
    return abs(new - original) << REL_SCALE_BITS <= numerator * abs(original)
