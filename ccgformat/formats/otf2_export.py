"""Export an archive as an OTF2 archive folder (``traces.otf2``, ``traces.def``, ``traces/``).

An archive imported from OTF2 carries ``extensions["otf2"]`` (see `ccgformat.formats.otf2`):
its global definitions are written back call for call with their original references,
with the clock properties and the anchor's creator, description and properties. Any
other archive gets definitions made from the model: every system tree node, a location
group (a process) below each node that holds locations, the locations, the regions (with
a REGIONS group per region group name), one MPI COMM_LOCATIONS group of all locations with
a COMM_GROUP and a communicator per model communicator (plus one of all locations when a
peer lies outside its event's communicator), and a metric class of one member per model
metric.

Events: ENTER/LEAVE -> Enter/Leave; SEND/RECV/ISEND/IRECV -> MpiSend/MpiRecv/MpiIsend/
MpiIrecv with the peer location turned back into its rank; IRECV_REQUEST, REQUEST_COMPLETE,
COLL_BEGIN, COLL_END -> MpiIrecvRequest, MpiIsendComplete, MpiCollectiveBegin,
MpiCollectiveEnd; consecutive METRIC events of the members of one OTF2 metric at one time
-> one Metric record. GENERIC ``otf2:<Record>`` events of an OTF2 archive are written as
that record (``otf2:attributes`` becomes the attribute list of the next record); other
GENERIC events become ParameterString events of the parameter ``GENERIC <kind name>``
(value = the fields text) and MARKER events ParameterInt events of the parameter
``MARKER <ref>``, which the importer turns back into GENERIC and MARKER events.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .._version import __version__
from ..archive import Archive, atomic_output
from ..errors import CcgError, FormatError
from ..model import Definitions, EventBatch, EventKind
from .otf2 import GENERIC_PARAMETER, MARKER_PARAMETER, P2P_RECORDS
from .otf2_binding import Binding, load

__all__ = ["write", "write_events", "ARCHIVE_NAME"]

#: Name of the anchor file (``traces.otf2``) and of the event folder.
ARCHIVE_NAME = "traces"
_UNDEFINED_UINT32 = 0xFFFFFFFF
_UINT64 = (1 << 64) - 1                 #: also OTF2's undefined timestamp
_VALUE_TYPES = {"int64": "INT64", "uint64": "UINT64", "double": "DOUBLE"}
_METRIC_MODES = {"accumulated": "ACCUMULATED_START", "absolute": "ABSOLUTE_POINT", "relative": "RELATIVE_POINT"}
_COLUMNS = ("time", "kind", "ref", "comm", "tag", "request", "size", "recv_size", "value")


@dataclass
class _Plan:
    """What the exporter writes: definition writer calls and model -> OTF2 references."""

    calls: list[list[Any]]                   #: [definition class name, writer arguments]
    clock: list[int | None]                  #: resolution, offset, length (None: computed), realtime
    archive: dict[str, Any]                  #: creator, description, machine_name, properties
    regions: list[int]
    locations: list[int]
    comms: list[int]                         #: OTF2 comm per model communicator (+ the world one)
    ranks: list[dict[int, int]]              #: per communicator: location index -> rank
    metrics: list[tuple[int, int]]           #: model metric -> (OTF2 metric, member position)
    metric_types: dict[int, list[int]]       #: OTF2 metric -> value type of each member
    world: int | None                        #: communicator to use when a peer is not in its own
    records: bool                            #: GENERIC "otf2:..." events are OTF2 records
    strings: dict[str, int] = field(init=False)
    parameters: dict[tuple[int, str], int] = field(init=False)
    _next: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.strings = {}
        for name, args in self.calls:
            if name == "String":
                self.strings.setdefault(args[1], args[0])
        texts = {ref: text for text, ref in self.strings.items()}
        self.parameters = {(args[2], texts.get(args[1], "")): args[0] for name, args in self.calls
                           if name == "Parameter"}
        self._next = {kind: 1 + max((args[0] for name, args in self.calls if name == kind), default=-1)
                      for kind in ("String", "Parameter")}

    def _add(self, kind: str, args: list[Any]) -> int:
        ref = self._next[kind]
        self._next[kind] += 1
        self.calls.append([kind, [ref, *args]])
        return ref

    def string(self, text: str) -> int:
        """The ref of a String definition with ``text`` (added when new)."""
        ref = self.strings.get(text)
        if ref is None:
            ref = self.strings[text] = self._add("String", [text])
        return ref

    def parameter(self, name: str, kind: int) -> int:
        """The ref of a Parameter definition named ``name`` of type ``kind`` (added when new)."""
        ref = self.parameters.get((kind, name))
        if ref is None:
            ref = self.parameters[kind, name] = self._add("Parameter", [self.string(name), kind])
        return ref


def _restored_plan(definitions: Definitions, extension: dict[str, Any]) -> _Plan:
    try:
        calls = [[str(name), list(args)] for name, args in extension["definitions"]]
        member_types = {args[0]: args[5] for name, args in calls if name == "MetricMember"}
        classes = {args[0]: list(args[1]) for name, args in calls if name == "MetricClass"}
        classes.update({args[0]: classes[args[1]] for name, args in calls if name == "MetricInstance"})
        archive = dict(extension["archive"])
        plan = _Plan(
            calls=calls, clock=list(extension["clock_properties"]), archive=archive,
            regions=[int(r) for r in extension["regions"]], locations=[int(r) for r in extension["locations"]],
            comms=[int(r) for r in extension["communicators"]],
            ranks=[_ranks(c.members) for c in definitions.communicators],
            metrics=[(int(ref), int(position)) for ref, position in extension["metrics"]],
            metric_types={ref: [member_types[m] for m in members] for ref, members in classes.items()},
            world=None, records=True)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise FormatError(f"extensions['otf2'] is malformed: {type(error).__name__}: {error}") from None
    counts = (len(plan.regions), len(plan.locations), len(plan.comms), len(plan.metrics))
    expected = (len(definitions.regions), len(definitions.locations), len(definitions.communicators),
                len(definitions.metrics))
    if counts != expected:
        raise FormatError(f"extensions['otf2'] maps {counts} regions, locations, communicators and metrics; "
                          f"the definitions have {expected}")
    return plan


def _ranks(members: Iterable[int]) -> dict[int, int]:
    ranks: dict[int, int] = {}
    for rank, location in enumerate(members):
        ranks.setdefault(location, rank)
    return ranks


def _enum(binding: Binding, enum: str, name: str, default: str) -> int:
    """The value of the OTF2 enum member named ``name`` (any case), else of ``default``."""
    kind = getattr(binding.otf2.enums, enum)
    member = getattr(kind, name.upper(), None)
    return (member if isinstance(member, kind) else getattr(kind, default)).value


def _tree_order(parents: list[int | None]) -> list[int]:
    """Node indexes with every parent before its children. A node on a cycle becomes a
    root (its entry in ``parents`` is set to None)."""
    order: list[int] = []
    done: set[int] = set()
    pending = list(range(len(parents)))
    while pending:
        ready = [i for i in pending if parents[i] is None or parents[i] in done]
        if not ready:
            ready = pending[:1]
            parents[ready[0]] = None
        order.extend(ready)
        done.update(ready)
        pending = [i for i in pending if i not in done]
    return order


def _new_plan(definitions: Definitions, binding: Binding) -> _Plan:
    """Definitions for an archive that did not come from OTF2."""
    plan = _Plan(calls=[], clock=[definitions.timer_resolution, definitions.clock_offset, None, _UINT64],
                 archive={"creator": f"ccgformat {__version__}", "description": "", "machine_name": "",
                          "properties": {}},
                 regions=[], locations=[], comms=[], ranks=[], metrics=[], metric_types={}, world=None,
                 records=False)
    string = plan.string
    string("")
    nodes = definitions.system_tree
    parents = [n.parent if n.parent is not None and 0 <= n.parent < len(nodes) else None for n in nodes]
    for i in _tree_order(parents):
        plan.calls.append(["SystemTreeNode", [i, string(nodes[i].name), string(nodes[i].kind),
                                              _UNDEFINED_UINT32 if parents[i] is None else parents[i]]])
    groups: dict[int | None, int] = {}
    process = _enum(binding, "LocationGroupType", "PROCESS", "PROCESS")
    for i, location in enumerate(definitions.locations):
        parent = location.parent if location.parent is not None and 0 <= location.parent < len(nodes) else None
        if parent not in groups:
            if parent is None:   # a machine node of its own for the locations without a parent
                plan.calls.append(["SystemTreeNode", [len(nodes), string("machine"), string("machine"),
                                                      _UNDEFINED_UINT32]])
            groups[parent] = len(groups)
            name = "process" if parent is None else nodes[parent].name
            plan.calls.append(["LocationGroup", [groups[parent], string(name), process,
                                                 len(nodes) if parent is None else parent, _UNDEFINED_UINT32]])
        kind = _enum(binding, "LocationType", location.kind, "CPU_THREAD")
        plan.calls.append(["Location", [i, string(location.name), kind, 0, groups[parent]]])
        plan.locations.append(i)
    region_groups: dict[str, list[int]] = {}
    for i, region in enumerate(definitions.regions):
        role = _enum(binding, "RegionRole", region.role, "UNKNOWN")
        paradigm = _enum(binding, "Paradigm", region.paradigm, "UNKNOWN")
        name = string(region.name)
        plan.calls.append(["Region", [i, name, name, string(""), role, paradigm, 0, _UNDEFINED_UINT32, 0, 0]])
        plan.regions.append(i)
        if region.group:
            region_groups.setdefault(region.group, []).append(i)
    groups_defined = 0
    for name, members in region_groups.items():
        plan.calls.append(["Group", [groups_defined, string(name), _enum(binding, "GroupType", "REGIONS", "REGIONS"),
                                     _enum(binding, "Paradigm", "UNKNOWN", "UNKNOWN"), 0, members]])
        groups_defined += 1
    _new_communicators(plan, definitions, binding, groups_defined)
    for i, metric in enumerate(definitions.metrics):
        value_type = _enum(binding, "Type", _VALUE_TYPES.get(metric.value_type, "INT64"), "INT64")
        mode = _enum(binding, "MetricMode", _METRIC_MODES.get(metric.mode, "ACCUMULATED_START"), "ACCUMULATED_START")
        plan.calls.append(["MetricMember", [i, string(metric.name), string(""),
                                            _enum(binding, "MetricType", "OTHER", "OTHER"), mode, value_type,
                                            _enum(binding, "Base", "DECIMAL", "DECIMAL"), 0, string(metric.unit)]])
        plan.calls.append(["MetricClass", [i, [i], _enum(binding, "MetricOccurrence", "ASYNCHRONOUS", "ASYNCHRONOUS"),
                                           _enum(binding, "RecorderKind", "CPU", "CPU")]])
        plan.metrics.append((i, 0))
        plan.metric_types[i] = [value_type]
    return plan


def _new_communicators(plan: _Plan, definitions: Definitions, binding: Binding, first_group: int) -> None:
    """One COMM_LOCATIONS group of all locations, a COMM_GROUP and a Comm per communicator."""
    count = len(definitions.locations)
    mpi = _enum(binding, "Paradigm", "MPI", "MPI")
    comm_group = _enum(binding, "GroupType", "COMM_GROUP", "COMM_GROUP")
    string = plan.string
    comm_locations = _enum(binding, "GroupType", "COMM_LOCATIONS", "COMM_LOCATIONS")
    plan.calls.append(["Group", [first_group, string(""), comm_locations, mpi, 0, list(range(count))]])
    communicators = [(c.name, list(c.members)) for c in definitions.communicators]
    everyone = list(range(count))
    plan.world = next((i for i, (_, members) in enumerate(communicators) if members == everyone), None)
    if plan.world is None:
        plan.world = len(communicators)
        communicators.append(("all locations", everyone))
    for i, (name, members) in enumerate(communicators):
        group = first_group + 1 + i
        plan.calls.append(["Group", [group, string(""), comm_group, mpi, 0,
                                     [m for m in members if 0 <= m < count]]])
        plan.calls.append(["Comm", [i, string(name), group, _UNDEFINED_UINT32, 0]])
        plan.comms.append(i)
        plan.ranks.append(_ranks(m for m in members if 0 <= m < count))


# --------------------------------------------------------------------------- writing

def _decode(value: Any, binding: Binding) -> Any:
    if isinstance(value, dict):
        attribute = binding._otf2.AttributeValue()
        attribute._arg_value = int(value["bits"])
        return attribute
    if isinstance(value, list):
        return [_decode(v, binding) for v in value]
    return value


def _replay(binding: Binding, handle: Any, plan: _Plan, counts: dict[int, int], last_time: int | None) -> None:
    """Write the clock properties and every definition call to the global definition writer."""
    _otf2 = binding._otf2
    resolution, offset, length, realtime = plan.clock
    if length is None:
        length = max(0, (last_time or 0) - (offset or 0))
    _otf2.GlobalDefWriter_WriteClockProperties(handle, resolution, offset, length, realtime)
    for number, (name, args) in enumerate(plan.calls):
        function = getattr(_otf2, f"GlobalDefWriter_Write{name}", None)
        if function is None or name == "ClockProperties" or not name.isidentifier():
            raise FormatError(f"extensions['otf2'] definition {number} has the unknown kind {name!r}")
        if name == "Location":
            args = [args[0], args[1], args[2], counts.get(args[0], 0), *args[4:]]
        try:
            function(handle, *[_decode(a, binding) for a in args])
        except (TypeError, ValueError, KeyError, ctypes.ArgumentError, _otf2.Error) as error:
            raise FormatError(f"definition {number} ({name} {args[:1]}) cannot be written: {error}") from None


class _LocationWriter:
    """Writes one location's events through the C event writer."""

    def __init__(self, binding: Binding, plan: _Plan, definitions: Definitions, address: int, location: int):
        self.binding = binding
        self.plan = plan
        self.strings = definitions.strings
        self.address = address
        self.location = location
        self.attributes = 0                  #: pending attribute list for the next record
        self.metric: list[Any] | None = None  #: pending Metric record: ref, time, types, values
        self.count = 0
        self.last: int | None = None
        self.fields: dict[int, Any] = {}
        self.writers = binding.writers
        self.int64 = _enum(binding, "ParameterType", "INT64", "INT64")
        self.string_type = _enum(binding, "ParameterType", "STRING", "STRING")

    def _call(self, name: str, time: int, *args: Any) -> None:
        code = self.writers[name](self.address, self.attributes, time, *args)
        if self.attributes:
            self.binding.lib.OTF2_AttributeList_Delete(self.attributes)
            self.attributes = 0
        if code != 0:
            raise FormatError(f"location {self.location}, time {time}: OTF2 cannot write a {name} record "
                              f"(error {code})")
        self.count += 1

    def write(self, batches: Iterable[EventBatch]) -> None:
        for batch in batches:
            if len(batch):
                self.last = int(batch.time[-1])
            for row in zip(*(getattr(batch, c).tolist() for c in _COLUMNS)):
                try:
                    self._event(*row)
                except (OverflowError, IndexError, KeyError, TypeError, ValueError) as error:
                    if isinstance(error, CcgError):
                        raise
                    raise FormatError(f"location {self.location}, time {row[0]}: the {EventKind(row[1]).name} "
                                      f"event does not fit OTF2: {type(error).__name__}: {error}") from None
        if self.metric is not None or self.attributes:
            raise FormatError(f"location {self.location}: the events end inside an OTF2 metric record or "
                              f"before the event an attribute list belongs to")

    def _event(self, time: int, kind: int, ref: int, comm: int, tag: int, request: int, size: int,
               recv_size: int, value: int) -> None:
        plan = self.plan
        if self.metric is not None and kind != EventKind.METRIC:
            raise FormatError(f"location {self.location}, time {time}: an OTF2 metric record lacks members")
        if kind == EventKind.ENTER or kind == EventKind.LEAVE:
            self._call("Enter" if kind == EventKind.ENTER else "Leave", time, plan.regions[ref])
        elif kind in (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV):
            otf2_comm, rank = self._rank(comm, ref)
            extra = (request & _UINT64,) if kind in (EventKind.ISEND, EventKind.IRECV) else ()
            self._call(P2P_RECORDS[kind], time, rank, otf2_comm, tag, size, *extra)
        elif kind == EventKind.IRECV_REQUEST:
            self._call("MpiIrecvRequest", time, request & _UINT64)
        elif kind == EventKind.REQUEST_COMPLETE:
            self._call("MpiIsendComplete", time, request & _UINT64)
        elif kind == EventKind.COLL_BEGIN:
            self._call("MpiCollectiveBegin", time)
        elif kind == EventKind.COLL_END:
            otf2_comm, root = self._rank(comm, None if tag < 0 else tag)
            self._call("MpiCollectiveEnd", time, ref, otf2_comm, root, size, recv_size)
        elif kind == EventKind.METRIC:
            self._metric(time, ref, value)
        elif kind == EventKind.MARKER:
            self._call("ParameterInt", time, plan.parameter(f"{MARKER_PARAMETER} {ref}", self.int64), value)
        else:
            self._generic(time, ref, value)

    def _rank(self, comm: int, peer: int | None) -> tuple[int, int]:
        """The OTF2 communicator and the rank of ``peer`` in it (undefined for ``None``)."""
        plan = self.plan
        if 0 <= comm < len(plan.ranks) and (peer is None or peer in plan.ranks[comm]):
            return plan.comms[comm], _UNDEFINED_UINT32 if peer is None else plan.ranks[comm][peer]
        if plan.world is None or peer is not None and peer not in plan.ranks[plan.world]:
            raise FormatError(f"location {self.location}: location {peer} is not in communicator {comm}")
        return plan.comms[plan.world], _UNDEFINED_UINT32 if peer is None else plan.ranks[plan.world][peer]

    def _metric(self, time: int, ref: int, value: int) -> None:
        metric, position = self.plan.metrics[ref]
        types = self.plan.metric_types[metric]
        if self.metric is None:
            if position != 0:
                raise FormatError(f"location {self.location}, time {time}: METRIC of member {position} of OTF2 "
                                  f"metric {metric} without the members before it")
            self.metric = [metric, time, []]
        elif self.metric[0] != metric or self.metric[1] != time or len(self.metric[2]) != position:
            raise FormatError(f"location {self.location}, time {time}: the members of OTF2 metric "
                              f"{self.metric[0]} are interrupted")
        self.metric[2].append(value & _UINT64)
        if len(self.metric[2]) == len(types):
            self._write_metric(time, metric, types, self.metric[2])
            self.metric = None

    def _write_metric(self, time: int, metric: int, types: list[int], values: list[int]) -> None:
        type_array, type_address = self.binding.array("uint8_t", types)    # the arrays live until the call
        value_array, value_address = self.binding.array("uint64_t", values)  # has returned
        self._call("Metric", time, metric, len(types), type_address, value_address)

    def _generic(self, time: int, ref: int, value: int) -> None:
        kind = self.strings[ref]
        if not (self.plan.records and kind.startswith("otf2:")):
            parameter = self.plan.parameter(f"{GENERIC_PARAMETER} {kind}", self.string_type)
            self._call("ParameterString", time, parameter, self.plan.string(self.strings[value]))
            return
        name = kind[5:]
        fields = self.fields.get(value)
        if fields is None:
            fields = self.fields[value] = json.loads(self.strings[value])
        if name == "attributes":
            self.attributes = self.binding.attribute_list(fields)
        elif name == "Metric":
            self._write_metric(time, fields["metric"], fields["types"], fields["values"])
        elif name == "ProgramBegin":
            arguments = fields["programArguments"]
            array, address = self.binding.array("uint32_t", arguments)   # alive until the call has returned
            self._call("ProgramBegin", time, fields["programName"], len(arguments), address)
        elif name != "Unknown":          # a record the reading library did not know: no fields to write
            record = self.binding.records[name]
            self._call(name, time, *(fields[f] for f in record.fields))


def write(archive: Archive, target: Path) -> None:
    """Write ``archive`` as an OTF2 archive in the folder ``target`` (replaced atomically)."""
    present = set(archive.locations)
    write_events(archive.definitions, lambda i: archive.location(i).events() if i in present else (), target)


def write_events(definitions: Definitions, events: Callable[[int], Iterable[EventBatch]],
                 target: str | os.PathLike[str]) -> None:
    """Write a trace given as definitions and a function from location index to its event
    batches as an OTF2 archive in the folder ``target`` (replaced atomically)."""
    target = Path(target)
    binding = load(str(target))
    extension = definitions.extensions.get("otf2")
    plan = _restored_plan(definitions, extension) if isinstance(extension, dict) else _new_plan(definitions, binding)
    _otf2 = binding._otf2
    counts: dict[int, int] = {}
    times: list[int] = []

    class ArchiveWriter(binding.otf2.writer.Writer):  # type: ignore[name-defined, misc]
        """otf2's writer, writing the planned definitions instead of its registry's."""

        def _write_global_definitions(self) -> None:
            if self.is_primary:
                with binding.otf2.definition_writer.DefinitionWriter(self) as writer:
                    _replay(binding, writer.handle, plan, counts, max(times) if times else None)

    with atomic_output(target, folder=True) as folder:
        try:
            chunks = dict(zip(("chunk_size_events", "chunk_size_definitions"), plan.archive.get("chunk_sizes", ())))
            with contextlib.closing(ArchiveWriter(str(folder), archive_name=ARCHIVE_NAME,
                                                  timer_resolution=plan.clock[0], **chunks)) as writer:
                _set_archive_properties(binding, writer, plan.archive)
                for index, ref in enumerate(plan.locations):
                    location_writer = _write_location(binding, writer, plan, definitions, index, ref, events(index))
                    counts[ref] = location_writer.count
                    if location_writer.last is not None:
                        times.append(location_writer.last)
        except _otf2.Error as error:
            raise FormatError(f"the OTF2 library failed: {error}", path=str(target)) from None
        except FormatError as error:
            raise FormatError(error.reason, path=str(target)) from None


def _set_archive_properties(binding: Binding, writer: Any, properties: dict[str, Any]) -> None:
    writer.creator = str(properties.get("creator", ""))
    writer.description = str(properties.get("description", ""))
    writer.machine_name = str(properties.get("machine_name", ""))
    for name, value in dict(properties.get("properties", {})).items():
        binding._otf2.Archive_SetProperty(writer.handle, str(name), str(value), True)


def _write_location(binding: Binding, writer: Any, plan: _Plan, definitions: Definitions, index: int, ref: int,
                    batches: Iterable[EventBatch]) -> _LocationWriter:
    _otf2 = binding._otf2
    definition_writer = _otf2.Archive_GetDefWriter(writer.handle, ref)   # an empty local definition file
    event_writer = _otf2.Archive_GetEvtWriter(writer.handle, ref)
    try:
        location_writer = _LocationWriter(binding, plan, definitions, binding.writer_address(event_writer), index)
        location_writer.write(batches)
    finally:
        _otf2.Archive_CloseEvtWriter(writer.handle, event_writer)
        _otf2.Archive_CloseDefWriter(writer.handle, definition_writer)
    return location_writer
