"""How long a Paje container lives, from what the importer keeps of an imported trace
(``extensions["paje"]``: ``lifecycle`` lists ``[container, 0 create | 1 destroy, tick]``,
``locations`` the container of every location).

A Paje variable holds its last value until its container is destroyed, or until the
trace ends when it never is - the Variable intervals pj_dump prints - while the event
model knows a location only up to its last event. `container_lifetimes` gives what the
difference takes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import FormatError
from ...model import Definitions

__all__ = ["NEVER", "container_lifetimes"]

#: The destruction tick of a container that is never destroyed.
NEVER = np.iinfo(np.int64).max


def _inconsistent(reason: str) -> FormatError:
    return FormatError(f"the archive's Paje layout (extensions['paje']) is inconsistent: {reason}")


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(1 << 63) <= value < 1 << 63


def container_lifetimes(definitions: Definitions) -> tuple[np.ndarray, int | None] | None:
    """For an archive imported from Paje: per location the tick its container is destroyed
    at (`NEVER` when it is not), and the latest creation or destruction tick of any
    container (None without any); None for an archive that did not come from Paje.
    Raises `FormatError` when the kept layout is malformed."""
    if definitions.provenance.get("source_format", "paje") != "paje":
        return None  # known not to be Paje: its extensions, which may be large, are not decoded
    layout = definitions.extensions.get("paje")
    if not isinstance(layout, dict):
        return None
    lifecycle, containers = layout.get("lifecycle"), layout.get("locations")
    if not isinstance(lifecycle, list) or not isinstance(containers, list):
        raise _inconsistent("'lifecycle' or 'locations' is not a list")
    if len(containers) != len(definitions.locations) or not all(map(_integer, containers)):
        raise _inconsistent(f"'locations' does not name a container for each of the {len(definitions.locations)} "
                            f"locations")
    destroyed: dict[int, int] = {}
    for change in lifecycle:
        if not (isinstance(change, list) and len(change) == 3 and all(map(_integer, change)) and change[1] in (0, 1)):
            raise _inconsistent(f"lifecycle entry {change!r} is not [container, 0 or 1, tick]")
        if change[1] == 1:
            destroyed[change[0]] = change[2]
    ends = np.array([destroyed.get(container, NEVER) for container in containers], np.int64)
    return ends, max((change[2] for change in lifecycle), default=None)
