"""How long a Paje container lives, from what the importer keeps of an imported trace
(``extensions["paje"]``: ``lifecycle`` lists ``[container, 0 create | 1 destroy, tick]``,
``locations`` the container of every location).

A Paje variable holds its last value until its container is destroyed, or until the
trace ends when it never is - the Variable intervals pj_dump prints - while the event
model knows a location only up to its last event. `container_lifetimes` gives what the
difference takes.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from ...errors import FormatError
from ...model import Definitions

__all__ = ["NEVER", "container_lifetimes"]

#: The destruction tick of a container that is never destroyed.
NEVER = np.iinfo(np.int64).max


def _inconsistent(reason: str) -> FormatError:
    return FormatError(f"the archive's Paje layout (extensions['paje']) is inconsistent: {reason}")


def container_lifetimes(definitions: Definitions) -> tuple[np.ndarray, int | None] | None:
    """For an archive imported from Paje: per location the tick its container is destroyed
    at (`NEVER` when it is not), and the latest creation or destruction tick of any
    container (None without any); None for an archive that did not come from Paje.
    Raises `FormatError` when the kept layout is malformed."""
    if definitions.provenance.get("source_format", "paje") != "paje":
        return None  # known not to be Paje: its extensions, which may be large, are not decoded
    layout = definitions.extension_members(("paje",), ("lifecycle", "locations"))  # (an archive decodes just those)
    if layout is None:
        return None
    lifecycle, containers = layout.get("lifecycle"), layout.get("locations")
    if not isinstance(lifecycle, (list, np.ndarray)) or not isinstance(containers, (list, np.ndarray)):
        raise _inconsistent("'lifecycle' or 'locations' is not a list")
    if len(containers) != len(definitions.locations) or not _integers(containers):
        raise _inconsistent(f"'locations' does not name a container for each of the {len(definitions.locations)} "
                            f"locations")
    changes = _changes(lifecycle)
    destroy = changes[changes[:, 1] == 1]
    # a container's last destruction counts (as a dict filled in order keeps it)
    order = np.argsort(destroy[:, 0], kind="stable")
    container, tick = destroy[order, 0], destroy[order, 2]
    last = np.append(container[1:] != container[:-1], True)[:len(container)]
    container, tick = np.append(container[last], NEVER), np.append(tick[last], NEVER)  # (a sentinel)
    wanted = np.asarray(containers, np.int64)
    at = np.searchsorted(container, wanted)
    ends = np.where(container[at] == wanted, tick[at], NEVER).astype(np.int64)
    return ends, int(changes[:, 2].max()) if len(changes) else None


def _integers(values: list[Any] | np.ndarray) -> bool:
    """Whether every one of ``values`` is an int within int64 (not a bool)."""
    if isinstance(values, np.ndarray):
        return values.ndim == 1
    if not set(map(type, values)) <= {int}:
        return False
    return not values or (-(1 << 63) <= min(values) and max(values) < 1 << 63)


def _changes(lifecycle: list[Any] | np.ndarray) -> np.ndarray:
    """``[changes, 3]`` int64 of the lifecycle entries ``[container, 0 | 1, tick]``."""
    changes = None
    if isinstance(lifecycle, np.ndarray) and lifecycle.ndim == 2 and lifecycle.shape[1] == 3:
        changes = lifecycle
    elif isinstance(lifecycle, list) and set(map(type, lifecycle)) <= {list} and set(map(len, lifecycle)) <= {3} \
            and _integers(list(chain.from_iterable(lifecycle))):
        changes = np.array(lifecycle, np.int64).reshape(-1, 3)
    if changes is not None and ((changes[:, 1] == 0) | (changes[:, 1] == 1)).all():
        return changes
    entries = lifecycle.tolist() if isinstance(lifecycle, np.ndarray) else lifecycle
    wrong = next(change for change in entries if not (isinstance(change, list) and len(change) == 3
                                                      and _integers(change) and change[1] in (0, 1)))
    raise _inconsistent(f"lifecycle entry {wrong!r} is not [container, 0 or 1, tick]")
