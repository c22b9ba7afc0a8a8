"""Where each location goes in a Chrome trace (pid, tid), its metadata events and each
metric's counter name and series."""

from __future__ import annotations

from typing import Any

from ...model import Definitions
from .common import EXTENSION, Key, identifier


class Placement:
    """Where each location goes (pid, tid), the metadata events, and each metric's counter
    name and series. Archives imported from Chrome keep theirs (extensions); others get a
    pid per process location (a location of kind "process", or without a parent) or per
    parent system-tree node of the other locations, and a tid per location."""

    def __init__(self, definitions: Definitions):
        self.document: dict[str, Any] = {}
        if not self._restore(definitions.extensions.get(EXTENSION), definitions):
            self._synthesise(definitions)

    def _restore(self, extension: Any, definitions: Definitions) -> bool:
        if not isinstance(extension, dict):
            return False
        places, metadata = extension.get("locations"), extension.get("metadata")
        counters, document = extension.get("counters"), extension.get("document")
        if not (isinstance(places, list) and len(places) == len(definitions.locations)
                and all(isinstance(p, list) and len(p) == 2 for p in places)
                and isinstance(metadata, list) and all(isinstance(m, dict) for m in metadata)
                and isinstance(counters, list) and len(counters) == len(definitions.metrics)
                and all(isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c)
                        for c in counters) and isinstance(document, dict)):
            return False
        try:
            self.places: list[Key] = [(identifier(pid), identifier(tid)) for pid, tid in places]
        except ValueError:
            return False
        self.metadata: list[dict[str, Any]] = metadata
        self.counters = [(name, series) for name, series in counters]
        self.document = document
        return True

    def _synthesise(self, definitions: Definitions) -> None:
        owners: dict[tuple[str, int], int] = {}
        names: dict[int, str] = {}
        pids = []
        for index, location in enumerate(definitions.locations):
            parent = location.parent
            if location.kind == "process" or parent is None or not 0 <= parent < len(definitions.system_tree):
                owner, name = ("location", index), location.name
            else:
                owner, name = ("node", parent), definitions.system_tree[parent].name
            pid = owners.setdefault(owner, len(owners) + 1)
            names.setdefault(pid, name)
            pids.append(pid)
        self.places = [(pid, pid if definitions.locations[i].kind == "process" else len(owners) + 1 + i)
                       for i, pid in enumerate(pids)]
        self.metadata = []
        for pid, name in names.items():
            self.metadata.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
            self.metadata.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
        for index, ((pid, tid), location) in enumerate(zip(self.places, definitions.locations)):
            self.metadata.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                  "args": {"name": location.name}})
            self.metadata.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                                  "args": {"sort_index": index}})
        self.counters = [(metric.name, "value") for metric in definitions.metrics]
