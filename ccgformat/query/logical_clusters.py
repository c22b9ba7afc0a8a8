"""Per-phase clusters of locations by lateness (paper 003 section 3.3.1).

The distance between two locations in a phase takes the phase's steps as a vector: at a
step where both have an event, the squared difference of their lateness; where only
one has, the other's value is its previous event's in the phase, and the step is
skipped when it has none; steps where neither has an event are skipped. The distance is
the mean over the steps counted (0 when none is).

Ravel clusters with CLARA (sampled k-medoids) and then single linkage over the CLARA
clusters; the paper allows other algorithms. Here: farthest-point clustering (Gonzalez's
k-center), deterministic and one pass over the phase per centre. The first centre of a
phase is its lowest-numbered location; each next one is the location farthest from its
nearest centre (ties: the lowest-numbered), until `CLUSTERS` centres or until every
location is at distance 0 from one; every location joins its nearest centre (ties: the
earlier centre). Clusters are numbered within their phase by their lowest-numbered
location. A phase of at most `CLUSTERS` locations has a cluster per location. All phases
are clustered at once, a round per centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import backends

__all__ = ["CLUSTERS", "cluster_locations", "distances", "distances_reference"]

#: the most clusters per phase
CLUSTERS = 8


def cluster_locations(phase: np.ndarray, location: np.ndarray, step: np.ndarray, value: np.ndarray,
                      count: int = CLUSTERS) -> np.ndarray:
    """The cluster of every event's location in its phase, by the events' ``value``
    (lateness); events in (location, index) order, so that a location's events of a
    phase are consecutive with rising steps."""
    if count < 1:
        raise ValueError(f"clusters must be at least 1, not {count}")
    if not len(phase):
        return np.zeros(0, np.int64)
    members = _Members.of(phase, location)
    owner = np.arange(members.count, dtype=np.int64)  # the centre each member joins: itself, at first
    big = members.sizes > count
    if big.any():
        kept = np.flatnonzero(big[members.group[members.block]])
        clustered = _Members.of(phase[kept], location[kept])
        full = members.block[kept[clustered.starts]]  # a clustered member's number among all members
        owner[full] = full[_farthest_point(clustered, step[kept], value[kept], count)]
    return _numbered(members, owner)[members.block]


@dataclass
class _Members:
    """The (phase, location) pairs of events ("members"): ``starts`` their first events,
    ``block`` every event's member; ``by_phase`` the members ordered by (phase,
    location), ``firsts`` and ``sizes`` where each phase's run in it begins and how long
    it is, ``group`` every member's phase run."""

    starts: np.ndarray
    block: np.ndarray
    by_phase: np.ndarray
    firsts: np.ndarray
    sizes: np.ndarray
    group: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts)

    @classmethod
    def of(cls, phase: np.ndarray, location: np.ndarray) -> _Members:
        rows = len(phase)
        starts = np.flatnonzero(np.r_[True, (location[1:] != location[:-1]) | (phase[1:] != phase[:-1])])
        block = np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(np.r_[starts, rows]))
        by_phase = np.lexsort((location[starts], phase[starts]))
        ordered = phase[starts][by_phase]
        firsts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        sizes = np.diff(np.r_[firsts, len(starts)])
        group = np.empty(len(starts), np.int64)
        group[by_phase] = np.repeat(np.arange(len(firsts), dtype=np.int64), sizes)
        return cls(starts, block, by_phase, firsts, sizes, group)


def _farthest_point(members: _Members, step: np.ndarray, value: np.ndarray, count: int) -> np.ndarray:
    """Per member the centre it joins, after up to ``count`` rounds of farthest-point
    clustering in every phase (module docstring)."""
    stop = np.r_[members.starts[1:], len(step)]
    centre = members.by_phase[members.firsts].copy()  # the newest centre of each phase
    nearest = np.full(members.count, np.inf)
    owner = np.zeros(members.count, np.int64)
    open_ = np.ones(len(centre), bool)
    for round_ in range(count):
        found = distances(members.starts, stop, centre[members.group], step, value)
        closer = found < nearest  # ties stay with the earlier centre
        nearest[closer], owner[closer] = found[closer], centre[members.group[closer]]
        if round_ == count - 1:
            break
        farthest = _farthest(nearest[members.by_phase], members.firsts, members.sizes)
        open_ &= nearest[members.by_phase][farthest] > 0
        if not open_.any():
            break
        centre[open_] = members.by_phase[farthest[open_]]
    return owner


def distances(start: np.ndarray, stop: np.ndarray, centre: np.ndarray, step: np.ndarray,
              value: np.ndarray) -> np.ndarray:
    """Per member (its events ``step``/``value[start:stop]``, steps rising) the distance
    of section 3.3.1 to member ``centre[member]``; in C under the native core."""
    if backends.native():
        from .._native.logical import distances as native
        return native(start, stop, centre, step, value)
    return distances_reference(start, stop, centre, step, value)


def _farthest(nearest: np.ndarray, firsts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per phase the position (in phase order) of its member farthest from a centre;
    ties: the first."""
    best = np.maximum.reduceat(nearest, firsts)
    hit = np.flatnonzero(nearest == np.repeat(best, sizes))
    phase = np.searchsorted(firsts, hit, side="right") - 1
    first = np.full(len(firsts), -1, np.int64)
    first[phase[::-1]] = hit[::-1]  # the last write is the first hit
    return first


def _numbered(members: _Members, owner: np.ndarray) -> np.ndarray:
    """Per member its cluster number within its phase: the clusters (members with one
    owner) ranked by their lowest-numbered location."""
    position = np.empty(members.count, np.int64)
    position[members.by_phase] = np.arange(members.count, dtype=np.int64)
    lowest = np.full(members.count, members.count, np.int64)
    np.minimum.at(lowest, owner, position)
    lowest = lowest[owner]  # per member, the position of its cluster's first member
    leads = np.cumsum(lowest[members.by_phase] == np.arange(members.count))  # clusters begun so far
    return leads[lowest] - np.r_[0, leads][members.firsts[members.group]] - 1


def distances_reference(start: np.ndarray, stop: np.ndarray, centre: np.ndarray, step: np.ndarray,
                        value: np.ndarray) -> np.ndarray:
    """`distances` with numpy: at each member's own events the centre's value there (else
    its previous one); at the centre's events where the member has none, the member's
    previous value; squared differences summed and averaged per member."""
    members = len(start)
    lengths = stop - start
    block = np.repeat(np.arange(members, dtype=np.int64), lengths)
    low = int(step.min(initial=0))
    relative = step - low
    span = int(relative.max(initial=0)) + 2
    keys = block * span + relative  # rising: members in order, steps rising within one

    def value_at(member: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``member``'s value at relative step ``at`` (its event there, else its previous
        one), whether it has one, and whether it has an event there."""
        query = member * span + at
        j = np.maximum(np.searchsorted(keys, query, side="right") - 1, 0)
        found = (block[j] == member) & (keys[j] <= query)
        return value[j].astype(np.float64), found, found & (keys[j] == query)

    # at the member's own events
    theirs, found, _ = value_at(centre[block], relative)
    gap = value[found] - theirs[found]
    total = np.bincount(block[found], gap * gap, members).astype(np.float64)  # (int64 when empty)
    counted = np.bincount(block[found], minlength=members).astype(np.float64)
    # at the centre's events where the member has none
    pairs = lengths[centre]
    member = np.repeat(np.arange(members, dtype=np.int64), pairs)
    row = start[centre][member] + np.arange(int(pairs.sum()), dtype=np.int64) - np.repeat(np.cumsum(pairs) - pairs,
                                                                                         pairs)
    mine, found, active = value_at(member, relative[row])
    use = found & ~active
    gap = mine[use] - value[row[use]]
    total += np.bincount(member[use], gap * gap, members)
    counted += np.bincount(member[use], minlength=members)
    return np.divide(total, counted, out=np.zeros(members), where=counted > 0)
