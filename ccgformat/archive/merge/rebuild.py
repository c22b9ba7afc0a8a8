"""A merge rebuilt from events: every merged location's pieces walked in time order,
renumbered and fed to the builder as one stream (`write_trace`), like `ccg convert` of a
.ccg (docs/merge.md). It takes any archives a merge accepts, time segments included."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from ...graph import Graph
from ...model import EventBatch
from ..writer import write_trace
from .events import remap_batch
from .plan import Plan, lossless
from .writes import Writes


def rebuild(plan: Plan, target: Path, progress: Callable[[int], None], writes: Writes) -> Graph:
    """Write the merged archive of ``plan`` to ``target`` from its events, as ``writes``
    says; ``progress`` is called with the number of events written after every batch."""
    def pieces(location: int) -> Iterator[EventBatch]:
        for piece in plan.pieces[location]:
            archive = plan.archives[piece.source]
            for batch in archive.location(piece.location).events():
                yield remap_batch(batch, plan.maps[piece.source], plan.paths[piece.source])
                progress(len(batch))

    locations = ((location, pieces(location)) for location in plan.pieces)
    return write_trace(target, plan.definitions, locations, lossless(plan.params), recorded=plan.params,
                       **writes.writer())
