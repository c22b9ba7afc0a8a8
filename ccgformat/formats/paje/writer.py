"""Paje export: a header, the untimed type definitions, then every container creation and
destruction and every event in global time order, dates written exactly from the ticks.

The layout (event definitions, type records, containers, references) comes from
``extensions["paje"]`` when the archive was imported from Paje, or is built by
`generic.schema` for any other archive. The package docstring gives the mapping. Events
are written one at a time here (the reference) or, under the native backend, by C for
the kinds it writes (`fast.py`); memory follows the number of locations and channels.
"""

from __future__ import annotations

import json
import struct
from collections import deque
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...archive import Archive, ExportProgress
from ...atomic import atomic_output
from ...errors import CcgError, FormatError
from ...model import Event, EventKind
from ..sink import Utf8Sink
from . import generic
from .fast import FastPath
from .hints import ENTER_WAYS, HINT, LEAVE_WAYS, RECORD
from .syntax import canonical_fields, date_formatter, quote

__all__ = ["Writer", "write"]

_DOUBLE = struct.Struct("<d")
_BITS = struct.Struct("<q")
(_PUSH, _SET), (_POP, _RESET, _) = ENTER_WAYS, LEAVE_WAYS
_LINK_SIDE = {EventKind.SEND: ("PajeStartLink", "StartContainer"), EventKind.ISEND: ("PajeStartLink", "StartContainer"),
              EventKind.RECV: ("PajeEndLink", "EndContainer"), EventKind.IRECV: ("PajeEndLink", "EndContainer")}


def write(archive: Archive, target: Path, progress: ExportProgress | None = None) -> None:
    """Write ``archive`` as a Paje trace file (atomically); ``progress`` hears of each
    batch of events once written."""
    layout = archive.definitions.extensions.get("paje")
    with atomic_output(target) as temporary, open(temporary, "wb") as binary:
        out = Utf8Sink(binary)
        try:
            links = None
            if not isinstance(layout, dict):
                layout, links = generic.schema(archive)
            Writer(archive, layout, links, out, target.name).run(progress)
            out.flush()
        except CcgError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
            raise FormatError(f"the archive's Paje layout (extensions['paje']) is inconsistent: "
                              f"{type(error).__name__}: {error}", path=str(archive.path)) from None


class Writer:
    """Writes one archive; ``links`` numbers messages when the layout is generic."""

    def __init__(self, archive: Archive, layout: dict[str, Any], links: generic.LinkKeys | None, out: Utf8Sink,
                 name: str):
        definitions = archive.definitions
        self.name = name
        self.archive = archive
        self.out = out
        self.links = links
        self.strings = definitions.strings
        self.metric_types = [metric.value_type for metric in definitions.metrics]
        self.date: Callable[[int], str] = date_formatter(definitions.timer_resolution, definitions.clock_offset)
        self.layout = layout
        self.eventdefs = layout["eventdefs"]
        self.fields = [canonical_fields(d["name"], [name for name, _ in d["fields"]]) for d in self.eventdefs]
        self.ids = _output_ids([str(d["id"]) for d in self.eventdefs])
        self.default: dict[str, int] = {}
        for index, definition in enumerate(self.eventdefs):
            self.default.setdefault(definition["name"], index)
        self.location_refs = [layout["containers"][c]["ref"] for c in layout["locations"]]
        self.depth = np.zeros(len(self.location_refs), np.int64)  # open calls per location
        self.hint: dict[str, Any] = {}                      # for the next event
        self.group: tuple[int, int] | None = None           # (time, location) of the last event
        self.pending: list[tuple[int, int, dict[str, Any]]] = []  # LEAVEs of the group not written yet: time, ref, hint
        changes = sorted(layout["lifecycle"], key=lambda change: change[2])
        self.creates = deque(change for change in changes if not change[1])
        self.destroys = deque(change for change in changes if change[1])

    def run(self, progress: ExportProgress | None) -> None:
        for index, definition in enumerate(self.eventdefs):
            self.out.write(f"%EventDef {definition['name']} {self.ids[index]}\n")
            self.out.writelines(f"% {name} {kind}\n" for name, kind in definition["fields"])
            self.out.write("%EndEventDef\n")
        for index, texts in self.layout["header"]:
            self._record(index, texts, None)
        fast = FastPath.create(self)
        for locations, batch in self.archive.events():
            if fast is not None and fast.takes(batch):
                fast.write(self, locations, batch)
            else:
                for location, event in zip(locations.tolist(), batch.rows()):
                    self.step(location, event)
            if progress is not None:
                progress(len(batch))
        self._flush()
        self._lifecycle(None)
        for include in self.layout.get("includes", []):
            if "record" in include:  # a file not read again: now a harmless self-reference
                self._record(*include["record"], None)

    def step(self, location: int, event: Event, number: int | None = None) -> None:
        """Write one event (``number``: a message's number in its channel, when counted
        already: `generic.LinkKeys.numbers`)."""
        if (event.time, location) != self.group:
            self.begin_group(event.time, location)
        self._event(location, event, number)

    def begin_group(self, time: int, location: int) -> None:
        """Before the first event at ``time`` of ``location``: the LEAVEs held back, and
        the container changes due."""
        self._flush()
        self._lifecycle(time)
        self.group = (time, location)

    def next_change(self) -> int | None:
        """The earliest time of an event before which containers change (None: never)."""
        times = ([self.creates[0][2]] if self.creates else []) + ([self.destroys[0][2] + 1] if self.destroys else [])
        return min(times, default=None)

    # ----------------------------------------------------------------- lines

    def _record(self, index: int, texts: list[Any], time: int | None) -> None:
        """A record kept whole (type definitions, container changes): None marks its date,
        ``{"self": ...}`` a file name that now means the file written."""
        fields = (self.date(time) if text is None and time is not None else
                  quote(self.name if isinstance(text, dict) else text or "") for text in texts)
        self.out.write(" ".join((self.ids[index], *fields)) + "\n")

    def _line(self, event: str, values: dict[str, str], hint: dict[str, Any], time: int) -> None:
        index = hint.get("d", self.default[event])
        values.update(hint.get("f", {}))
        fields = (self.date(time) if name == "Time" else quote(values.get(name, "")) for name in self.fields[index])
        self.out.write(" ".join((self.ids[index], *fields)) + "\n")

    def _lifecycle(self, time: int | None) -> None:
        """Container changes due before an event at ``time`` (all when None): creations
        up to that time, destructions before it; creations first at equal times."""
        creates, destroys = self.creates, self.destroys
        while True:
            create = creates[0] if creates and (time is None or creates[0][2] <= time) else None
            destroy = destroys[0] if destroys and (time is None or destroys[0][2] < time) else None
            if destroy is not None and (create is None or destroy[2] < create[2]):
                change = destroys.popleft()
            elif create is not None:
                change = creates.popleft()
            else:
                return
            container, destroyed, tick = change
            record = self.layout["containers"][container]["destroy" if destroyed else "create"]
            self._record(record[0], record[1], tick)

    # ----------------------------------------------------------------- events

    def _event(self, location: int, event: Event, number: int | None) -> None:
        kind = event.kind
        if kind == EventKind.GENERIC and self.strings[event.ref] == HINT:
            self.hint = json.loads(self.strings[event.value])
            return
        hint, self.hint = self.hint, {}
        if kind == EventKind.LEAVE and "e" not in hint:
            self.pending.append((event.time, event.ref, hint))
            self.depth[location] -= 1
            return
        if kind == EventKind.ENTER:
            way = hint.get("e", _SET if self.depth[location] == 0 else _PUSH)
            if way == _SET:
                self.pending.clear()  # the LEAVEs a PajeSetState implies
        self._flush()
        container = self.location_refs[location]
        if kind == EventKind.ENTER:
            state, value = self.layout["regions"][event.ref]
            self.depth[location] += 1
            self._line(way, {"Type": state, "Container": container, "Value": value}, hint, event.time)
        elif kind == EventKind.LEAVE:
            self.depth[location] -= 1
            if hint["e"] == _POP or (hint["e"] == _RESET and self.depth[location] == 0):
                self._line(hint["e"], {"Type": self.layout["regions"][event.ref][0], "Container": container},
                           hint, event.time)
        elif kind == EventKind.METRIC:
            self._metric(container, event, hint)
        elif kind == EventKind.MARKER:
            self._line("PajeNewEvent", {"Type": self.layout["event_types"][self.strings[event.ref]],
                                        "Container": container, "Value": self.strings[event.value]},
                       hint, event.time)
        elif kind in _LINK_SIDE and (hint or self.links is not None):
            self._link(location, container, event, hint, number)
        elif kind == EventKind.GENERIC and self.strings[event.ref] == RECORD:
            record = json.loads(self.strings[event.value])
            self._line(record["e"], {"Container": container}, record, event.time)
        elif self.links is not None:
            self._other(container, event)

    def _flush(self) -> None:
        """Write the LEAVEs held back (no PajeSetState followed them) as PajePopState."""
        for time, ref, hint in self.pending:
            container = self.location_refs[self.group[1]]  # type: ignore[index]
            self._line(_POP, {"Type": self.layout["regions"][ref][0], "Container": container}, hint, time)
        self.pending.clear()

    def _metric(self, container: str, event: Event, hint: dict[str, Any]) -> None:
        way = hint.get("e", "PajeSetVariable")
        if "v" in hint:
            text = hint["v"]
        elif self.metric_types[event.ref] == "double":
            text = repr(_DOUBLE.unpack(_BITS.pack(event.value))[0])
        elif self.metric_types[event.ref] == "uint64":
            text = str(event.value & 0xFFFF_FFFF_FFFF_FFFF)
        else:
            text = str(event.value)
        self._line(way, {"Type": self.layout["metrics"][event.ref], "Container": container, "Value": text},
                   hint, event.time)

    def _link(self, location: int, container: str, event: Event, hint: dict[str, Any], number: int | None) -> None:
        way, side = _LINK_SIDE[EventKind(event.kind)]
        values = {side: container}
        if self.links is None:
            values["Type"] = self.layout["links"][event.comm]
        else:
            fields = self.links.fields(location, event, number)
            if fields is None:
                self._other(container, event)
                return
            values.update(fields)
        self._line(way, values, hint, event.time)

    def _other(self, container: str, event: Event) -> None:
        """An event with no Paje counterpart, in the generic layout."""
        self._line("PajeNewEvent", {"Type": generic.OTHER, "Container": container,
                                    "Value": generic.describe(event, self.strings)}, {}, event.time)


def _output_ids(ids: list[str]) -> list[str]:
    """Event definition ids for one file: the original ones, except that a definition whose
    id an earlier one (of another included file) already took gets a fresh number."""
    taken = set()
    numbers = [int(i) for i in ids if i.isdigit()]
    fresh = max(numbers, default=-1) + 1
    result = []
    for i in ids:
        if i in taken:
            i, fresh = str(fresh), fresh + 1
        taken.add(i)
        result.append(i)
    return result
