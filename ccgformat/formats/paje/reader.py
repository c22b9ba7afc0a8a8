"""Paje import: simulates the container tree, state stacks, variables and links of a
Paje trace (and the files it includes) and turns them into located events.

The mapping is described in the package docstring and in docs/formats/paje.md.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...errors import FormatError
from ...model import Communicator, Definitions, EventBatch, EventKind, Location, Metric, Region, SystemTreeNode
from ..common import StringTable, batches
from .hints import HINT, IMPLICIT, POP, PUSH, RECORD, RESET, SET, explicit_ways, json_text
from .scanner import Definition, Scanner
from .syntax import MAX_DECIMALS, parse_date, parse_double
from ...ordering import sorted_distinct

__all__ = ["read"]

_INT64_MAX = (1 << 63) - 1
_DOUBLE = struct.Struct("<d")
_BITS = struct.Struct("<q")
_DEFINED_KIND = {"PajeDefineContainerType": "container", "PajeDefineStateType": "state",
                 "PajeDefineEventType": "event", "PajeDefineVariableType": "variable",
                 "PajeDefineLinkType": "link", "PajeDefineEntityValue": "value"}


@dataclass
class _Type:
    kind: str
    name: str
    ref: str                        # how records refer to it: its alias, else its name


@dataclass
class _Container:
    index: int
    name: str
    ref: str
    node: int | None                # system tree node (None for the root)
    record: dict[str, Any]          # extensions["paje"]["containers"] entry
    main: _Loc | None = None
    by_state: dict[str, _Loc] = field(default_factory=dict)


@dataclass
class _Loc:
    """A location being read: its columns and its state stack."""

    id: int
    container: _Container
    state: _Type | None
    last: int = -(1 << 63)
    stack: list[int] = field(default_factory=list)
    variables: dict[int, float] = field(default_factory=dict)
    time: array = field(default_factory=lambda: array("q"))
    kind: array = field(default_factory=lambda: array("B"))
    ref: array = field(default_factory=lambda: array("q"))
    comm: array = field(default_factory=lambda: array("q"))
    value: array = field(default_factory=lambda: array("q"))
    way: array = field(default_factory=lambda: array("b"))
    hint: array = field(default_factory=lambda: array("q"))


class _Reader:
    """Simulates the records the `Scanner` hands over, collecting per-location columns,
    then `finish` builds the definitions (and the hints) of the whole trace."""

    def __init__(self, path: Path):
        self.root = str(path)
        self.header: list[list[Any]] = []
        self.types: dict[str, _Type] = {"0": _Type("container", "0", "0")}
        self.type_names: dict[str, _Type] = {}
        self.value_names: dict[tuple[str, str], str] = {}
        self.event_types: dict[str, str] = {}
        root = _Container(0, "0", "0", None, {"ref": "0", "create": None, "destroy": None})
        self.containers = [root]
        self.by_alias: dict[str, _Container] = {}
        self.by_name: dict[str, _Container] = {"0": root}
        self.lifecycle: list[list[int]] = []
        self.system_tree: list[SystemTreeNode] = []
        self.locs: list[_Loc] = []
        self.regions: list[Region] = []
        self.region_refs: list[list[str]] = []
        self.region_ids: dict[tuple[str, str], int] = {}
        self.metrics: list[Metric] = []
        self.metric_refs: list[str] = []
        self.metric_ids: dict[str, int] = {}
        self.link_refs: list[str] = []
        self.link_names: list[str] = []
        self.link_ids: dict[str, int] = {}
        self.link_members: list[set[int]] = []
        self.pending: dict[bool, dict[tuple, deque]] = {True: {}, False: {}}
        self.hints: list[dict[str, Any]] = []
        self.hint_ids: dict[str, int] = {}
        self.strings: list[str] = []
        self._intern = StringTable(self.strings)
        self.decimals = 0
        self.max_time: int | None = None
        self.includes: list[dict[str, Any]] = []
        self.scanner = Scanner({
            **{name: self._define for name in _DEFINED_KIND},
            "PajeCreateContainer": self._create, "PajeDestroyContainer": self._destroy,
            "PajePushState": self._push, "PajeSetState": self._push,
            "PajePopState": self._pop, "PajeResetState": self._pop,
            "PajeNewEvent": self._new_event,
            "PajeSetVariable": self._variable, "PajeAddVariable": self._variable, "PajeSubVariable": self._variable,
            "PajeStartLink": self._link, "PajeEndLink": self._link,
            "PajeTraceFile": self._trace_file,
        })

    def _fail(self, reason: str) -> FormatError:
        return self.scanner.fail(reason)

    # ----------------------------------------------------------------- lookups

    def _tick(self, text: str) -> int:
        parsed = parse_date(text)
        if parsed is None:
            raise self._fail(f"unparseable date {text!r}")
        value, decimals = parsed
        if decimals > self.decimals:
            if decimals > MAX_DECIMALS:
                raise self._fail(f"date {text!r} has more than {MAX_DECIMALS} decimals")
            self._rescale(decimals)
        tick = value * 10 ** (self.decimals - decimals)
        if not -_INT64_MAX <= tick <= _INT64_MAX:
            raise self._fail(f"date {text!r} does not fit 64 bits at 10**{self.decimals} ticks per second")
        if self.max_time is None or tick > self.max_time:
            self.max_time = tick
        return tick

    def _rescale(self, decimals: int) -> None:
        """Finer dates appeared: multiply every tick read so far (exact, checked)."""
        factor = 10 ** (decimals - self.decimals)
        limit = _INT64_MAX // factor
        ticks = [entry[2] for entry in self.lifecycle] + ([self.max_time] if self.max_time is not None else [])
        columns = [np.frombuffer(loc.time, dtype=np.int64) for loc in self.locs if len(loc.time)]
        if any(abs(t) > limit for t in ticks) or any(int(np.abs(c).max()) > limit for c in columns):
            raise self._fail(f"dates with {decimals} decimals do not fit 64 bits")
        for column in columns:
            column *= factor
        del columns
        for entry in self.lifecycle:
            entry[2] *= factor
        for loc in self.locs:
            loc.last = loc.last * factor if len(loc.time) else loc.last
        if self.max_time is not None:
            self.max_time *= factor
        self.decimals = decimals

    def _type(self, ref: str, kind: str) -> _Type:
        found = self.types.get(ref) or self.type_names.get(ref)
        if found is None:
            raise self._fail(f"undefined type {ref!r}")
        if found.kind != kind:
            raise self._fail(f"type {ref!r} is a {found.kind} type, not a {kind} type")
        return found

    def _container(self, ref: str) -> _Container:
        found = self.by_alias.get(ref) or self.by_name.get(ref)
        if found is None:
            raise self._fail(f"undefined container {ref!r}")
        return found

    def _new_loc(self, container: _Container, state: _Type | None) -> _Loc:
        loc = _Loc(len(self.locs), container, state)
        self.locs.append(loc)
        return loc

    def _main(self, container: _Container) -> _Loc:
        if container.main is None:
            container.main = self._new_loc(container, None)
        return container.main

    def _state_loc(self, container: _Container, state: _Type) -> _Loc:
        """The location of a container's stack of one state type: the container's own
        location for the first state type used there, an extra one for every other."""
        loc = container.by_state.get(state.ref)
        if loc is None:
            main = self._main(container)
            if main.state is None:
                main.state = loc = main
            else:
                loc = self._new_loc(container, state)
            loc.state = state
            container.by_state[state.ref] = loc
        return loc

    def _hint(self, definition: Definition, tokens: list[str], expected: dict[str, str]) -> dict[str, Any]:
        """What a writer needs beyond the event's columns: a non-default definition, user
        fields, and fields written differently from the canonical reference."""
        fields = {name: tokens[i] for name, i in definition.extras}
        for name, text in expected.items():
            written = tokens[definition.pos[name]]
            if written != text:
                fields[name] = written
        hint: dict[str, Any] = {} if definition.default else {"d": definition.index}
        if fields:
            hint["f"] = fields
        return hint

    def _hint_id(self, hint: dict[str, Any]) -> int:
        if not hint:
            return -1
        text = json_text(hint)
        index = self.hint_ids.get(text)
        if index is None:
            index = self.hint_ids[text] = len(self.hints)
            self.hints.append(hint)
        return index

    def _append(self, loc: _Loc, tick: int, kind: int, ref: int = 0, comm: int = 0, value: int = 0,
                way: int = 0, hint: int = -1) -> int:
        if tick < loc.last:
            raise self._fail(f"date goes back in time on container {loc.container.name!r}")
        loc.last = tick
        loc.time.append(tick)
        loc.kind.append(kind)
        loc.ref.append(ref)
        loc.comm.append(comm)
        loc.value.append(value)
        loc.way.append(way)
        loc.hint.append(hint)
        return len(loc.time) - 1

    def _close(self, loc: _Loc, tick: int, way: int, hint: int = -1) -> None:
        """LEAVE every open state, innermost first (the hint goes on the last LEAVE)."""
        while loc.stack:
            region = loc.stack.pop()
            self._append(loc, tick, EventKind.LEAVE, region, way=way, hint=-1 if loc.stack else hint)

    # ----------------------------------------------------------------- records

    def _define(self, definition: Definition, tokens: list[str]) -> None:
        self.header.append([definition.index, tokens[1:]])
        kind = _DEFINED_KIND[definition.name]
        pos = definition.pos
        name = tokens[pos["Name"]]
        alias = tokens[pos["Alias"]] if "Alias" in pos else ""
        parent = tokens[pos["Type"]]
        if kind == "value":
            found = self.types.get(parent) or self.type_names.get(parent)
            if found is None or found.kind not in ("state", "event", "link"):
                raise self._fail(f"undefined state, event or link type {parent!r}")
            self.value_names[(found.ref, alias or name)] = name
            return
        self._type(parent, "container")
        if kind == "link":
            self._type(tokens[pos["StartContainerType"]], "container")
            self._type(tokens[pos["EndContainerType"]], "container")
        ref = alias or name
        existing = self.types.get(ref)
        if existing is not None and existing.kind == kind and existing.name == name:
            return  # a repeated definition (StarPU writes some twice)
        defined = self.types[ref] = _Type(kind, name, ref)
        self.type_names.setdefault(name, defined)
        if kind == "event":
            self.event_types.setdefault(name, ref)

    def _create(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        kind = self._type(tokens[pos["Type"]], "container")
        parent = self._container(tokens[pos["Container"]])
        name = tokens[pos["Name"]]
        alias = tokens[pos["Alias"]] if "Alias" in pos else ""
        texts: list[Any] = list(tokens[1:])
        texts[pos["Time"] - 1] = None
        record = {"ref": alias or name, "create": [definition.index, texts], "destroy": None}
        container = _Container(len(self.containers), name, alias or name, len(self.system_tree), record)
        self.containers.append(container)
        self.system_tree.append(SystemTreeNode(name, kind.name, parent.node))
        self.by_name[name] = container
        if alias:
            self.by_alias[alias] = container
        self.lifecycle.append([container.index, 0, tick])
        filename = tokens[pos["Filename"]] if "Filename" in pos else ""
        if filename:
            texts[pos["Filename"] - 1] = "" if self._include(filename, container.ref) else {"self": filename}

    def _destroy(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        container = self._container(tokens[pos["Name"]])
        self._type(tokens[pos["Type"]], "container")
        texts: list[str | None] = list(tokens[1:])
        texts[pos["Time"] - 1] = None
        container.record["destroy"] = [definition.index, texts]
        self.lifecycle.append([container.index, 1, tick])
        for loc in [container.main, *container.by_state.values()]:
            if loc is not None:
                self._close(loc, tick, IMPLICIT)

    def _push(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        state = self._type(tokens[pos["Type"]], "state")
        container = self._container(tokens[pos["Container"]])
        loc = self._state_loc(container, state)
        value = tokens[pos["Value"]]
        key = (state.ref, value)
        region = self.region_ids.get(key)
        if region is None:
            region = self.region_ids[key] = len(self.regions)
            self.regions.append(Region(self.value_names.get(key, value), "function", "user", state.name))
            self.region_refs.append([state.ref, value])
        hint = self._hint_id(self._hint(definition, tokens, {"Type": state.ref, "Container": container.ref}))
        if definition.name == "PajeSetState":
            self._close(loc, tick, IMPLICIT)
            self._append(loc, tick, EventKind.ENTER, region, way=SET, hint=hint)
        else:
            self._append(loc, tick, EventKind.ENTER, region, way=PUSH, hint=hint)
        loc.stack.append(region)

    def _pop(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        state = self._type(tokens[pos["Type"]], "state")
        container = self._container(tokens[pos["Container"]])
        loc = self._state_loc(container, state)
        hint = self._hint(definition, tokens, {"Type": state.ref, "Container": container.ref})
        if definition.name == "PajePopState":
            if not loc.stack:
                raise self._fail(f"PajePopState of {state.name!r} on container {container.name!r} with no "
                                 f"state pushed")
            self._append(loc, tick, EventKind.LEAVE, loc.stack.pop(), way=POP, hint=self._hint_id(hint))
        elif loc.stack:
            self._close(loc, tick, RESET, self._hint_id(hint))
        else:  # a reset of an empty stack changes nothing: kept as a record of its own
            fields = {name: tokens[i] for name, i in pos.items() if name not in ("Time", "Container")}
            if tokens[pos["Container"]] != container.ref:
                fields["Container"] = tokens[pos["Container"]]
            record = json_text({"e": definition.name, "d": definition.index, "f": fields})
            self._append(loc, tick, EventKind.GENERIC, self._intern(RECORD), value=self._intern(record))

    def _new_event(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        kind = self._type(tokens[pos["Type"]], "event")
        container = self._container(tokens[pos["Container"]])
        value = tokens[pos["Value"]]
        name = self.value_names.get((kind.ref, value), value)
        expected = {"Type": self.event_types[kind.name], "Container": container.ref, "Value": name}
        hint = self._hint_id(self._hint(definition, tokens, expected))
        self._append(self._main(container), tick, EventKind.MARKER, self._intern(kind.name),
                     value=self._intern(name), hint=hint)

    def _variable(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        tick = self._tick(tokens[pos["Time"]])
        kind = self._type(tokens[pos["Type"]], "variable")
        container = self._container(tokens[pos["Container"]])
        text = tokens[pos["Value"]]
        number = parse_double(text)
        if number is None:
            raise self._fail(f"unparseable double value {text!r}")
        metric = self.metric_ids.get(kind.ref)
        if metric is None:
            metric = self.metric_ids[kind.ref] = len(self.metrics)
            self.metrics.append(Metric(kind.name, "", "absolute", "double"))
            self.metric_refs.append(kind.ref)
        loc = self._main(container)
        hint = self._hint(definition, tokens, {"Type": kind.ref, "Container": container.ref})
        if definition.name != "PajeSetVariable":
            current = loc.variables.get(metric)
            if current is None:
                raise self._fail(f"{definition.name} of {kind.name!r} on container {container.name!r} before "
                                 f"any PajeSetVariable")
            number = current + number if definition.name == "PajeAddVariable" else current - number
            hint["e"] = definition.name
            hint["v"] = text
        loc.variables[metric] = number
        bits = _BITS.unpack(_DOUBLE.pack(number))[0]
        self._append(loc, tick, EventKind.METRIC, metric, value=bits, hint=self._hint_id(hint))

    def _link(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        start = definition.name == "PajeStartLink"
        tick = self._tick(tokens[pos["Time"]])
        kind = self._type(tokens[pos["Type"]], "link")
        parent = self._container(tokens[pos["Container"]])
        end_field = "StartContainer" if start else "EndContainer"
        container = self._container(tokens[pos[end_field]])
        value, key = tokens[pos["Value"]], tokens[pos["Key"]]
        hint = self._hint(definition, tokens, {"Type": kind.ref, end_field: container.ref})
        hint.setdefault("f", {}).update(Container=tokens[pos["Container"]], Value=value, Key=key)
        comm = self.link_ids.get(kind.ref)
        if comm is None:
            comm = self.link_ids[kind.ref] = len(self.link_refs)
            self.link_refs.append(kind.ref)
            self.link_names.append(kind.name)
            self.link_members.append(set())
        loc = self._main(container)
        index = self._append(loc, tick, EventKind.SEND if start else EventKind.RECV, -1, comm,
                             hint=self._hint_id(hint))
        self.link_members[comm].add(loc.id)
        match = (kind.ref, parent.index, value, key)
        waiting = self.pending[not start].get(match)
        if waiting:
            peer, peer_index, _, _ = waiting.popleft()
            if not waiting:
                del self.pending[not start][match]
            loc.ref[index] = peer.id
            peer.ref[peer_index] = loc.id
        else:
            self.pending[start].setdefault(match, deque()).append((loc, index, self.scanner.path, self.scanner.line))

    def _trace_file(self, definition: Definition, tokens: list[str]) -> None:
        pos = definition.pos
        container = self._container(tokens[pos["Container"]])
        filename = tokens[pos["Filename"]]
        if not self._include(filename, container.ref):
            texts: list[Any] = list(tokens[1:])
            texts[pos["Filename"] - 1] = {"self": filename}
            self.includes[-1]["record"] = [definition.index, texts]  # the entry just made: nothing was read

    def _include(self, filename: str, container: str) -> bool:
        """Read a file named by PajeTraceFile or a container's Filename (see
        `Scanner.include`). Where the record is kept, a file read is named "" (its events
        are inlined) and a file skipped ``{"self": name}``: a writer puts the name of the
        file it writes, which holds those events."""
        entry = {"file": filename, "container": container, "read": False}
        self.includes.append(entry)
        entry["read"] = self.scanner.include(filename)
        return entry["read"]

    # ----------------------------------------------------------------- result

    def finish(self) -> tuple[Definitions, list[tuple[int, dict[str, np.ndarray]]]]:
        for start in (True, False):
            for waiting in self.pending[start].values():
                _, _, path, line = waiting[0]
                raise FormatError(f"{'PajeStartLink' if start else 'PajeEndLink'} without a matching "
                                  f"{'PajeEndLink' if start else 'PajeStartLink'} (same type, container, value "
                                  f"and key)", path=path, line=line)
        self.scanner.path, self.scanner.line = self.root, None
        for loc in self.locs:
            if loc.stack:
                assert self.max_time is not None
                self._close(loc, self.max_time, IMPLICIT)
        order = sorted(self.locs, key=lambda loc: (loc.container.index, loc.id))
        renumber = np.zeros(len(order) + 1, dtype=np.int64)
        for new, loc in enumerate(order):
            renumber[loc.id] = new
        locations, ext_locations, columns = [], [], []
        for new, loc in enumerate(order):
            container = loc.container
            name = container.name if loc is container.main else f"{container.name} ({loc.state.name})"  # type: ignore[union-attr]
            locations.append(Location(name, "thread", container.node))
            ext_locations.append(container.index)
            columns.append((new, self._columns(loc, renumber)))
        extension = {
            "version": 1,
            "eventdefs": self.scanner.eventdefs,
            "header": self.header,
            "containers": [c.record for c in self.containers],
            "lifecycle": self.lifecycle,
            "locations": ext_locations,
            "regions": self.region_refs,
            "metrics": self.metric_refs,
            "links": self.link_refs,
            "event_types": self.event_types,
            "includes": self.includes,
        }
        definitions = Definitions(
            regions=self.regions, system_tree=self.system_tree, locations=locations,
            communicators=[Communicator(name, tuple(sorted(int(renumber[m]) for m in members)))
                           for name, members in zip(self.link_names, self.link_members)],
            metrics=self.metrics, strings=self.strings, timer_resolution=10 ** self.decimals, clock_offset=0,
            provenance={"source_file": os.path.basename(self.root)}, extensions={"paje": extension})
        return definitions, columns

    def _columns(self, loc: _Loc, renumber: np.ndarray) -> dict[str, np.ndarray]:
        """A location's final columns, with a GENERIC hint right before every event that
        needs one (see `hints`)."""
        kind = np.frombuffer(loc.kind, dtype=np.uint8).copy()
        ref = np.frombuffer(loc.ref, dtype=np.int64).copy()
        peers = (kind == EventKind.SEND) | (kind == EventKind.RECV)
        ref[peers] = renumber[ref[peers]]
        time = np.frombuffer(loc.time, dtype=np.int64).copy()
        comm, value = np.frombuffer(loc.comm, dtype=np.int64).copy(), np.frombuffer(loc.value, dtype=np.int64).copy()
        explicit = explicit_ways(time, kind, loc.way)
        hint = np.frombuffer(loc.hint, dtype=np.int64)
        hinted = np.flatnonzero(hint >= 0)
        if not len(hinted) and not explicit:  # most locations: no event needs a hint
            return {"time": time, "kind": kind, "ref": ref, "comm": comm, "value": value}
        needed = sorted_distinct(np.concatenate((hinted, np.fromiter(explicit, dtype=np.int64, count=len(explicit)))))
        texts = []
        for i in needed.tolist():
            entry = dict(self.hints[hint[i]]) if hint[i] >= 0 else {}
            if i in explicit:
                entry["e"] = explicit[i]
            texts.append(self._intern(json_text(entry)))
        record_kind = self._intern(HINT) if texts else 0
        return {
            "time": np.insert(time, needed, time[needed]),
            "kind": np.insert(kind, needed, EventKind.GENERIC),
            "ref": np.insert(ref, needed, record_kind),
            "comm": np.insert(comm, needed, 0),
            "value": np.insert(value, needed, np.array(texts, dtype=np.int64)),
        }


def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    """Definitions and per-location events of a Paje trace (and the files it includes)."""
    reader = _Reader(path)
    reader.scanner.read(str(path))
    definitions, columns = reader.finish()
    return definitions, ((location, batches(arrays)) for location, arrays in columns)
