"""Which OTF v1 process groups become levels of the resource hierarchy, and how they nest.

A process group (``DPG``) is a named set of processes and threads. Writers use it for MPI
communicators and OpenMP teams (which events name in their ``C`` field) as well as for
groups that describe the machine: VampirTrace writes one group per compute node (named
after the host), one over all processes and one over the GPU threads. Every group stays
a communicator; a group is also a level of the hierarchy, a system-tree node between the
processes and the root, when all of these hold:

1. It is not flagged as a communicator: no ``DPGA`` (DefProcessOrGroupAttributes) naming
   it carries attribute 7, ``IsCommunicator`` (VampirTrace flags its MPI communicators,
   OpenMP teams and user communicators so). The ``DPGA`` value names a ``DA`` attribute
   list when one with that id is defined; otherwise it is read as VampirTrace writes it,
   a bit set with bit ``a`` for attribute ``a``.
2. It holds whole processes: each member's top process (the end of its ``PT`` chain) is
   a member too. It then covers those top processes with all their threads; a group of
   threads without their process (the GPU threads) is no level.
3. It covers more than one top process and not all of them (one process is its own
   node already; a group of all adds nothing), and no group defined before it that meets
   1 and 2 covers the same processes.
4. It nests with the groups kept before it. The groups are taken from the largest (most
   top processes) to the smallest, in definition order among equal sizes, and one that
   partly overlaps a group already kept (shares processes with it without lying inside
   it) is left out, so the levels form a tree and a coarse level wins over a finer one
   that cuts across it.

A kept group's parent is the smallest kept group that holds it; a top process hangs under
the smallest kept group holding it (or under none); threads stay under their process.
"""

from __future__ import annotations

from typing import Mapping, Sequence

__all__ = ["IS_COMMUNICATOR", "group_levels", "is_communicator"]

#: ``OTF_ATTR_IsCommunicator``, the attribute that marks a group as a communicator.
IS_COMMUNICATOR = 7


def is_communicator(value: int, attribute_lists: Mapping[int, set[int]]) -> bool:
    """Whether a ``DPGA`` value flags its group as a communicator (rule 1)."""
    if value in attribute_lists:
        return IS_COMMUNICATOR in attribute_lists[value]
    return bool(value >> IS_COMMUNICATOR & 1)


def group_levels(tops: Sequence[int], groups: Sequence[Sequence[int]], communicators: set[int]
                 ) -> tuple[dict[int, int | None], dict[int, int]]:
    """The groups that are levels and where everything hangs.

    ``tops[i]`` is the location index of location i's top process, ``groups`` the members
    (location indexes) of every group in definition order, ``communicators`` the positions
    of the flagged groups. Returns ``{group: parent group or None}`` for the kept groups in
    definition order, and ``{top process: the smallest kept group holding it}``.
    """
    everything = sum(1 for location, top in enumerate(tops) if location == top)
    first: dict[frozenset[int], int] = {}
    for position, members in enumerate(groups):
        processes = frozenset(tops[member] for member in members)
        if position not in communicators and 1 < len(processes) < everything and processes <= set(members):
            first.setdefault(processes, position)
    holder: dict[int, int] = {}
    levels: dict[int, int | None] = {}
    for processes, position in sorted(first.items(), key=lambda item: (-len(item[0]), item[1])):
        above = {holder.get(process) for process in processes}
        if len(above) == 1:  # every process lies in the same smallest kept group (or in none)
            levels[position] = above.pop()
            holder.update(dict.fromkeys(processes, position))
    return dict(sorted(levels.items())), holder
