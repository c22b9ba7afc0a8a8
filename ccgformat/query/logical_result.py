"""The answer of `Archive.logical`: a row per communication event, as columns, with each
phase's steps, and its JSON form, its picture and its pandas table."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, TextIO

import numpy as np

from ..archive.queries import run_query

if TYPE_CHECKING:
    import pandas as pd

    from ..figures import Drawing

__all__ = ["COLUMNS", "Logical"]

#: the per-event columns, in order
COLUMNS = ("location", "event", "kind", "step", "phase", "lateness", "aggregate_lateness", "cluster", "partner",
           "leave")


@dataclass(frozen=True, eq=False)
class Logical:
    """Logical steps, phases, lateness and clusters of a trace's communication events.

    Rows are in (location, event) order. ``event``: the event's index in its location;
    ``kind``: its `EventKind`; ``step``: its logical step; ``phase``: its phase (section
    3.1; one phase 0 under Lamport's scheme); ``lateness``: ticks its call exits after the
    earliest one of its phase and step (section 3.2); ``aggregate_lateness``: the same of
    the aggregate non-messaging event before it, at the step below (Ravel's scheme; 0
    under Lamport's); ``cluster``: its location's cluster in its phase (section 3.3.1);
    ``partner``: the row of the other end of its message (-1: none); ``leave``: the event
    index of the LEAVE of the call holding it (-1: none). Per phase ``first_step`` and
    ``last_step``. ``names``: the name of every location of the trace, ``labels`` its
    name after its system tree parent's (the picture's row labels).
    """

    scheme: str
    location: np.ndarray
    event: np.ndarray
    kind: np.ndarray
    step: np.ndarray
    phase: np.ndarray
    lateness: np.ndarray
    aggregate_lateness: np.ndarray
    cluster: np.ndarray
    partner: np.ndarray
    leave: np.ndarray
    first_step: np.ndarray
    last_step: np.ndarray
    names: list[str]
    labels: list[str]
    timer_resolution: int
    title: str = "logical timeline"

    def __len__(self) -> int:
        return len(self.location)

    @property
    def phases(self) -> int:
        return len(self.first_step)

    @property
    def steps(self) -> int:
        """One more than the greatest step (0 without events)."""
        return int(self.step.max()) + 1 if len(self.step) else 0

    def columns(self) -> dict[str, np.ndarray]:
        """The per-event columns by name (`COLUMNS`)."""
        return {name: getattr(self, name) for name in COLUMNS}

    def rows_of(self, location: int) -> slice:
        """The rows of ``location``."""
        first, stop = np.searchsorted(self.location, [location, location + 1])
        return slice(int(first), int(stop))

    def _locations(self) -> Iterator[dict[str, Any]]:
        bounds = np.searchsorted(self.location, np.arange(len(self.names) + 1)).tolist()
        extra = ("phases", "clusters") + (("aggregate_lateness",) if self.scheme == "ravel" else ())
        keys = {"events": "event", "steps": "step", "lateness": "lateness", "phases": "phase", "clusters": "cluster",
                "aggregate_lateness": "aggregate_lateness"}
        for location, name in enumerate(self.names):
            rows = slice(bounds[location], bounds[location + 1])
            entry: dict[str, Any] = {"location": location, "name": name}
            for key in ("events", "steps", "lateness") + extra:
                entry[key] = getattr(self, keys[key])[rows].tolist()
            yield entry

    def _phases(self) -> list[dict[str, Any]]:
        order = np.lexsort((self.location, self.cluster, self.phase))
        phase, cluster, location = self.phase[order], self.cluster[order], self.location[order]
        distinct = np.r_[True, (phase[1:] != phase[:-1]) | (cluster[1:] != cluster[:-1])
                         | (location[1:] != location[:-1])]
        phase, cluster, location = phase[distinct], cluster[distinct], location[distinct]
        groups: list[list[list[int]]] = [[] for _ in range(self.phases)]
        for p, c, l in zip(phase.tolist(), cluster.tolist(), location.tolist()):
            members = groups[p]
            if len(members) <= c:
                members.append([])
            members[c].append(l)
        events = np.bincount(self.phase, minlength=self.phases).tolist()
        return [{"phase": p, "first_step": first, "last_step": last, "events": count, "clusters": members}
                for p, (first, last, count, members) in enumerate(zip(self.first_step.tolist(),
                                                                     self.last_step.tolist(), events, groups))]

    def to_json(self) -> dict[str, Any]:
        """``{"scheme", "timer_resolution", "locations": [{"location", "name", "events",
        "steps", "lateness", "phases", "clusters"[, "aggregate_lateness"]}], "phases":
        [{"phase", "first_step", "last_step", "events", "clusters": [[location, ...]]}]}``;
        each location's lists in trace order, lateness in ticks."""
        return {"scheme": self.scheme, "timer_resolution": self.timer_resolution,
                "locations": list(self._locations()), "phases": self._phases()}

    def write_json(self, out: TextIO) -> None:
        """Write ``json.dumps(self.to_json())``, a location at a time."""
        out.write(f'{{"scheme": {json.dumps(self.scheme)}, "timer_resolution": {self.timer_resolution}, '
                  '"locations": [')
        for k, entry in enumerate(self._locations()):
            out.write((", " if k else "") + json.dumps(entry))
        out.write(f'], "phases": {json.dumps(self._phases())}}}\n')

    def drawing(self, width: int = 1000, height: int = 800) -> Drawing:
        """The logical timeline picture (`ccgformat.figures.logical`) at most ``width`` x
        ``height`` pixels of cells."""
        from .logical_picture import logical_figure
        from ..figures.logical import draw_logical
        return draw_logical(logical_figure(self, width, height))

    def save(self, path: str | os.PathLike[str], width: int = 1000, height: int = 800) -> Path:
        """Write the picture as SVG or PNG, by the suffix of ``path``."""
        return self.drawing(width, height).save(path)

    def to_pandas(self) -> pd.DataFrame:
        """A row per event (`ccgformat.interop.logical`; extra ``pandas``)."""
        return run_query("logical_to_pandas", self)
