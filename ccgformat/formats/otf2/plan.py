"""The definitions the OTF2 exporter writes, planned as definition writer calls.

An archive imported from OTF2 carries ``extensions["otf2"]`` (see `definitions`): its
global definitions are written back call for call with their original references, with
the clock properties and the anchor's creator, description and properties. Any other
archive gets definitions made from the model: every system tree node, a location group
(a process) below each node that holds locations, the locations, the regions (with a
REGIONS group per region group name), one MPI COMM_LOCATIONS group of all locations with
a COMM_GROUP and a communicator per model communicator (plus one of all locations when a
peer lies outside its event's communicator), and a metric class of one member per model
metric. Its chunks are the smallest the library allows (`NEW_CHUNK_SIZES`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..._version import __version__
from ...errors import FormatError
from ...model import Definitions
from .binding import Binding, enum_value
from .compact import restore_calls
from .common import UINT64, UNDEFINED_UINT32

__all__ = ["NEW_CHUNK_SIZES", "Plan", "make_plan"]

#: Event and definition chunk sizes of a new archive: the library's minimum, 256 KiB. The
#: writer allocates and writes a chunk buffer per location, so with its defaults (1 MiB
#: and 4 MiB) writing 20,000 small locations takes 12x longer; readers read a chunk per
#: location too.
NEW_CHUNK_SIZES = [256 * 1024, 256 * 1024]

_VALUE_TYPES = {"int64": "INT64", "uint64": "UINT64", "double": "DOUBLE"}
_METRIC_MODES = {"accumulated": "ACCUMULATED_START", "absolute": "ABSOLUTE_POINT", "relative": "RELATIVE_POINT"}


@dataclass
class Plan:
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
                      for kind in ("String", "Parameter", "Attribute")}

    def _add(self, kind: str, args: list[Any]) -> int:
        """Append a ``kind`` definition with the next free reference; returns the reference."""
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

    def attribute(self, name: str, description: str, kind: int) -> int:
        """The ref of a new Attribute definition named ``name`` of type ``kind``."""
        return self._add("Attribute", [self.string(name), self.string(description), kind])

    def parameter(self, name: str, kind: int) -> int:
        """The ref of a Parameter definition named ``name`` of type ``kind`` (added when new)."""
        ref = self.parameters.get((kind, name))
        if ref is None:
            ref = self.parameters[kind, name] = self._add("Parameter", [self.string(name), kind])
        return ref


def make_plan(definitions: Definitions, binding: Binding) -> Plan:
    """The restored definitions of an archive from OTF2, else new ones made from the model."""
    extension = definitions.extensions.get("otf2")
    return _restored_plan(definitions, extension, binding) if isinstance(extension, dict) \
        else _new_plan(definitions, binding)


def _restored_plan(definitions: Definitions, extension: dict[str, Any], binding: Binding) -> Plan:
    """The definitions and references kept in ``extensions["otf2"]`` (what version 2
    leaves out restored from the model regions, `compact`)."""
    try:
        calls = restore_calls([[str(name), list(args)] for name, args in extension["definitions"]],
                              definitions.regions, binding)
        member_types = {args[0]: args[5] for name, args in calls if name == "MetricMember"}
        classes = {args[0]: list(args[1]) for name, args in calls if name == "MetricClass"}
        classes.update({args[0]: classes[args[1]] for name, args in calls if name == "MetricInstance"})
        archive = dict(extension["archive"])
        plan = Plan(
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
    """Location index -> rank (its first position in ``members``)."""
    ranks: dict[int, int] = {}
    for rank, location in enumerate(members):
        ranks.setdefault(location, rank)
    return ranks


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


def _new_plan(definitions: Definitions, binding: Binding) -> Plan:
    """Definitions for an archive that did not come from OTF2."""
    plan = Plan(calls=[], clock=[definitions.timer_resolution, definitions.clock_offset, None, UINT64],
                 archive={"creator": f"ccgformat {__version__}", "description": "", "machine_name": "",
                          "properties": {}, "chunk_sizes": list(NEW_CHUNK_SIZES)},
                 regions=[], locations=[], comms=[], ranks=[], metrics=[], metric_types={}, world=None,
                 records=False)
    string = plan.string
    string("")
    nodes = definitions.system_tree
    parents = [n.parent if n.parent is not None and 0 <= n.parent < len(nodes) else None for n in nodes]
    for i in _tree_order(parents):
        plan.calls.append(["SystemTreeNode", [i, string(nodes[i].name), string(nodes[i].kind),
                                              UNDEFINED_UINT32 if parents[i] is None else parents[i]]])
    groups: dict[int | None, int] = {}
    process = enum_value(binding, "LocationGroupType", "PROCESS", "PROCESS")
    for i, location in enumerate(definitions.locations):
        parent = location.parent if location.parent is not None and 0 <= location.parent < len(nodes) else None
        if parent not in groups:
            if parent is None:   # a machine node of its own for the locations without a parent
                plan.calls.append(["SystemTreeNode", [len(nodes), string("machine"), string("machine"),
                                                      UNDEFINED_UINT32]])
            groups[parent] = len(groups)
            name = "process" if parent is None else nodes[parent].name
            plan.calls.append(["LocationGroup", [groups[parent], string(name), process,
                                                 len(nodes) if parent is None else parent, UNDEFINED_UINT32]])
        kind = enum_value(binding, "LocationType", location.kind, "CPU_THREAD")
        plan.calls.append(["Location", [i, string(location.name), kind, 0, groups[parent]]])
        plan.locations.append(i)
    region_groups: dict[str, list[int]] = {}
    for i, region in enumerate(definitions.regions):
        role = enum_value(binding, "RegionRole", region.role, "UNKNOWN")
        paradigm = enum_value(binding, "Paradigm", region.paradigm, "UNKNOWN")
        name = string(region.name)
        plan.calls.append(["Region", [i, name, name, string(""), role, paradigm, 0, UNDEFINED_UINT32, 0, 0]])
        plan.regions.append(i)
        if region.group:
            region_groups.setdefault(region.group, []).append(i)
    groups_defined = 0
    for name, members in region_groups.items():
        plan.calls.append(["Group", [groups_defined, string(name),
                                     enum_value(binding, "GroupType", "REGIONS", "REGIONS"),
                                     enum_value(binding, "Paradigm", "UNKNOWN", "UNKNOWN"), 0, members]])
        groups_defined += 1
    _new_communicators(plan, definitions, binding, groups_defined)
    for i, metric in enumerate(definitions.metrics):
        value_type = enum_value(binding, "Type", _VALUE_TYPES.get(metric.value_type, "INT64"), "INT64")
        mode = enum_value(binding, "MetricMode", _METRIC_MODES.get(metric.mode, "ACCUMULATED_START"),
                          "ACCUMULATED_START")
        plan.calls.append(["MetricMember", [i, string(metric.name), string(""),
                                            enum_value(binding, "MetricType", "OTHER", "OTHER"), mode, value_type,
                                            enum_value(binding, "Base", "DECIMAL", "DECIMAL"), 0, string(metric.unit)]])
        plan.calls.append(["MetricClass", [i, [i],
                                           enum_value(binding, "MetricOccurrence", "ASYNCHRONOUS", "ASYNCHRONOUS"),
                                           enum_value(binding, "RecorderKind", "CPU", "CPU")]])
        plan.metrics.append((i, 0))
        plan.metric_types[i] = [value_type]
    return plan


def _new_communicators(plan: Plan, definitions: Definitions, binding: Binding, first_group: int) -> None:
    """One COMM_LOCATIONS group of all locations, a COMM_GROUP and a Comm per communicator."""
    count = len(definitions.locations)
    mpi = enum_value(binding, "Paradigm", "MPI", "MPI")
    comm_group = enum_value(binding, "GroupType", "COMM_GROUP", "COMM_GROUP")
    string = plan.string
    comm_locations = enum_value(binding, "GroupType", "COMM_LOCATIONS", "COMM_LOCATIONS")
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
        plan.calls.append(["Comm", [i, string(name), group, UNDEFINED_UINT32, 0]])
        plan.comms.append(i)
        plan.ranks.append(_ranks(m for m in members if 0 <= m < count))
