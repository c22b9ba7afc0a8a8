"""Region groups: the colour groups of the timeline and the group rows of a profile.

A region's group is its ``group`` definition (OTF2 region groups, OTF function groups,
Chrome categories) when the importer gave one, else its paradigm (``mpi``, ``openmp``,
``user``...), so that every region belongs to exactly one group and traces without
groups still split into communication and computation (dissertation 4.5.4 colours
"function groups").
"""

from __future__ import annotations

import numpy as np

from ..model import Definitions


def region_name(definitions: Definitions, region: int) -> str:
    """The name of region id ``region``, or ``region N`` where the definitions have none."""
    return definitions.regions[region].name if 0 <= region < len(definitions.regions) else f"region {region}"


def group_name(definitions: Definitions, region: int) -> str:
    if 0 <= region < len(definitions.regions):
        r = definitions.regions[region]
        return r.group or r.paradigm
    return "unknown"


def region_groups(definitions: Definitions, regions: int) -> tuple[list[str], np.ndarray]:
    """Group names (first appearance order) and, per region id ``0..regions-1``, its group index."""
    names: list[str] = []
    index: dict[str, int] = {}
    of_region = np.zeros(regions, dtype=np.int64)
    for region in range(regions):
        name = group_name(definitions, region)
        if name not in index:
            index[name] = len(names)
            names.append(name)
        of_region[region] = index[name]
    return names, of_region

