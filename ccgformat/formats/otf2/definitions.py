"""The global definitions of an OTF2 archive as model `Definitions`, ``extensions["otf2"]``
and the reference tables the event reader maps OTF2 references with."""

from __future__ import annotations

import ctypes
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ...model import Communicator, Definitions, Location, Metric, Region, SystemTreeNode
from .binding import Binding
from .common import GENERIC_PARAMETER, MARKER_PARAMETER

__all__ = ["EXTENSION_VERSION", "Tables", "read_definitions"]

#: Version of the layout of ``extensions["otf2"]``.
EXTENSION_VERSION = 1
_COMM_GROUP_TYPES = {4, 5}                                  # OTF2_GROUP_TYPE_COMM_LOCATIONS, _COMM_GROUP
_COMM_LOCATIONS = 4
_REGIONS_GROUP = 2                                          # OTF2_GROUP_TYPE_REGIONS
_PARAMETER_STRING, _PARAMETER_INT64 = 0, 1                  # OTF2_PARAMETER_TYPE_STRING, _INT64
_METRIC_TYPES = {4: "uint64", 8: "int64", 10: "double"}     # by OTF2_Type

def _enum_name(value: Any) -> str:
    """``RegionRole.FUNCTION`` -> ``function`` (the number for values without a name)."""
    name = str(value).partition(".")[2]
    return name.lower() if name else str(value.value)


def _json_arg(value: Any) -> Any:
    """A definition writer argument as JSON (attribute values as their 64 bits)."""
    if isinstance(value, (str, int, float)) or value is None:
        return value
    if isinstance(value, ctypes.Union):
        return {"bits": int(value._arg_value)}
    if isinstance(value, ctypes._SimpleCData):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_json_arg(v) for v in value]
    raise TypeError(f"unexpected definition value {value!r}")


class _Recorder:
    """Stands in for the definition writer and the archive: records each write call."""

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []
        self._archive = self

    def write(self, definition: Any, *args: Any) -> None:
        self.calls.append([type(definition).__name__, [_json_arg(a) for a in args]])

    def event_writer_from_location(self, location: Any) -> None:
        """The registry asks for every location's event writer; nothing to do here."""


class _Positions(tuple):  # type: ignore[type-arg]
    """A tuple of definitions whose ``index`` is a dictionary look-up (definitions compare
    by identity)."""

    def __new__(cls, members: tuple[Any, ...]) -> _Positions:
        self = super().__new__(cls, members)
        self.positions: dict[int, int] = {}
        for position, member in enumerate(members):
            self.positions.setdefault(id(member), position)
        return self

    def index(self, value: Any, *bounds: Any) -> int:  # type: ignore[override]
        position = self.positions.get(id(value))
        return super().index(value, *bounds) if position is None or bounds else position


@contextmanager
def _indexed_communicator_members(d: Any) -> Iterator[None]:
    """While active, the members of the communicator location groups of the `otf2`
    registry ``d`` are a `_Positions`: writing a communicator's group, the package finds
    each member in them with ``members.index`` (quadratic in the number of locations:
    1.3 s at 20,000, hours at 10^6)."""
    groups = [g for g in d.groups if g.group_type.value == _COMM_LOCATIONS and type(getattr(g, "_members", None)) is tuple]
    for group in groups:
        group._members = _Positions(group._members)
    try:
        yield
    finally:
        for group in groups:
            group._members = tuple(group._members)


@dataclass
class Tables:
    """OTF2 references -> model indexes, as used while reading events."""

    locations: list[int]                     #: OTF2 location ref per model location
    comms: list[int]                         #: OTF2 communicator ref per model communicator
    region_refs: np.ndarray                  #: sorted OTF2 region refs
    region_index: np.ndarray                 #: model region of each sorted ref
    comm_refs: np.ndarray
    comm_index: np.ndarray
    comm_size: np.ndarray                    #: ranks per model communicator (0: not mappable)
    comm_offset: np.ndarray                  #: start of its members in comm_members
    comm_members: np.ndarray                 #: location indexes in rank order, all communicators
    metrics: dict[int, tuple[int, bytes]]    #: metric ref -> (first model metric, value types)
    markers: dict[int, int]                  #: parameter ref "MARKER <n>" (int64) -> marker type n
    generics: dict[int, str]                 #: parameter ref "GENERIC <kind>" (string) -> kind
    strings: Any                             #: the OTF2 string registry (ref -> text)


def _sorted(refs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The references sorted, and the model index of each."""
    array_ = np.array(refs, dtype=np.uint64)
    order = np.argsort(array_, kind="stable")
    return array_[order], order.astype(np.int64)


def _text(value: Any) -> str:
    """A definition's text; an undefined string reference (None) is empty."""
    return value if isinstance(value, str) else ""


def _system_tree(d: Any) -> tuple[list[SystemTreeNode], list[Location]]:
    """System tree nodes, then location groups, as model nodes; the locations below them."""
    nodes, groups = list(d.system_tree_nodes), list(d.location_groups)
    node_index = {n._ref: i for i, n in enumerate(nodes)}
    group_index = {g._ref: len(nodes) + i for i, g in enumerate(groups)}

    def node_of(node: Any) -> int | None:
        return None if node is None else node_index[node._ref]

    tree = [SystemTreeNode(_text(n.name), _text(n.class_name), node_of(n.parent)) for n in nodes]
    tree += [SystemTreeNode(_text(g.name), _enum_name(g.location_group_type), node_of(g.system_tree_parent))
             for g in groups]
    locations = [Location(_text(loc.name), _enum_name(loc.type),
                          None if loc.group is None else group_index[loc.group._ref]) for loc in d.locations]
    return tree, locations


def _regions(d: Any) -> list[Region]:
    """The regions, each with the name of the first REGIONS group that holds it."""
    group_of: dict[int, str] = {}
    for group in d.groups:
        if group.group_type.value == _REGIONS_GROUP:
            for member in group.members:
                group_of.setdefault(member._ref, _text(group.name))
    return [Region(_text(r.name), _enum_name(r.region_role), _enum_name(r.paradigm), group_of.get(r._ref, ""))
            for r in d.regions]


def _communicators(d: Any, location_index: dict[int, int]) -> tuple[list[Communicator], np.ndarray, np.ndarray,
                                                                     np.ndarray]:
    """The communicators, and per communicator its number of ranks (0 when ranks cannot be
    mapped back: members not unique, or not a communicator of locations), the start of its
    members in the third array, and all members."""
    communicators, sizes, offsets, members_all = [], [], [], []
    for comm in d.comms:
        group = getattr(comm, "group", None)   # an InterComm has two groups and no ranks here
        members: tuple[int, ...] = ()
        if group is not None and group.group_type.value in _COMM_GROUP_TYPES:
            members = tuple(location_index[m._ref] for m in group.members)
        communicators.append(Communicator(_text(comm.name), members))
        offsets.append(len(members_all))
        sizes.append(len(members) if len(set(members)) == len(members) else 0)
        members_all.extend(members)
    return (communicators, np.array(sizes, np.int64), np.array(offsets, np.int64),
            np.array(members_all, np.int64))


def _metrics(d: Any) -> tuple[list[Metric], list[list[int]], dict[int, tuple[int, bytes]]]:
    """One model metric per member of each metric class or instance, its [OTF2 metric,
    position], and per OTF2 metric its first model metric and value types."""
    metrics, refs, layouts = [], [], {}
    for metric in d.metrics:
        members = metric.members
        layouts[metric._ref] = (len(metrics), bytes(m.value_type.value for m in members))
        for position, member in enumerate(members):
            metrics.append(Metric(_text(member.name), _text(member.unit), _enum_name(member.metric_mode).split("_")[0],
                                  _METRIC_TYPES.get(member.value_type.value, "int64")))
            refs.append([metric._ref, position])
    return metrics, refs, layouts


def _parameters(d: Any) -> tuple[dict[int, int], dict[int, str]]:
    """The parameters the exporter writes MARKER and GENERIC events with."""
    markers, generics = {}, {}
    for parameter in d.parameters:
        name, kind = _text(parameter.name), parameter.parameter_type.value
        marker = re.fullmatch(f"{MARKER_PARAMETER} (-?[0-9]+)", name)
        if marker and kind == _PARAMETER_INT64:
            markers[parameter._ref] = int(marker.group(1))
        elif name.startswith(GENERIC_PARAMETER + " ") and kind == _PARAMETER_STRING:
            generics[parameter._ref] = name[len(GENERIC_PARAMETER) + 1:]
    return markers, generics


def _archive_properties(handle: Any, _otf2: Any) -> dict[str, Any]:
    """The anchor's creator, description, machine name, properties and chunk sizes."""
    return {"creator": _otf2.Reader_GetCreator(handle) or "", "description": _otf2.Reader_GetDescription(handle) or "",
            "machine_name": _otf2.Reader_GetMachineName(handle) or "",
            "properties": {name: _otf2.Reader_GetProperty(handle, name)
                           for name in _otf2.Reader_GetPropertyNames(handle)},
            "chunk_sizes": list(_otf2.Reader_GetChunkSize(handle))}


def read_definitions(tr: Any, binding: Binding) -> tuple[Definitions, Tables]:
    """The definitions of the open `otf2` reader ``tr`` (``strings`` left empty for the
    event reader to fill) and the tables that map the references of its events."""
    d = tr.definitions
    tree, locations = _system_tree(d)
    location_refs = [loc._ref for loc in d.locations]
    communicators, sizes, offsets, members = _communicators(d, {ref: i for i, ref in enumerate(location_refs)})
    metrics, metric_refs, layouts = _metrics(d)
    recorder = _Recorder()
    with _indexed_communicator_members(d):
        d.write(recorder)
    clock = d.clock_properties
    archive = _archive_properties(tr.handle, binding._otf2)
    extension = {
        "version": EXTENSION_VERSION,
        "archive": archive,
        "clock_properties": [clock.timer_resolution, clock.global_offset, clock.trace_length,
                             clock.realtime_timestamp],
        "definitions": recorder.calls,
        "regions": [r._ref for r in d.regions],
        "locations": location_refs,
        "communicators": [c._ref for c in d.comms],
        "metrics": metric_refs,
    }
    version = ".".join(str(v) for v in binding._otf2.Reader_GetVersion(tr.handle))
    definitions = Definitions(
        regions=_regions(d), system_tree=tree, locations=locations, communicators=communicators, metrics=metrics,
        strings=[], timer_resolution=clock.timer_resolution, clock_offset=clock.global_offset,
        provenance={"source_format": "otf2", "otf2_version": version, "otf2_creator": archive["creator"]},
        extensions={"otf2": extension})
    region_refs, region_index = _sorted(extension["regions"])
    comm_refs, comm_index = _sorted(extension["communicators"])
    markers, generics = _parameters(d)
    tables = Tables(location_refs, extension["communicators"], region_refs, region_index, comm_refs, comm_index,
                    sizes, offsets, members, layouts, markers, generics, d.strings)
    return definitions, tables

