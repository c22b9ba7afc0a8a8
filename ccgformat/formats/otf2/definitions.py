"""The global definitions of an OTF2 archive as model `Definitions`, ``extensions["otf2"]``
and the reference tables the event reader maps OTF2 references with."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import FormatError
from ...model import Communicator, Definitions, EntityList, Location, Metric, Region, SystemTreeNode
from .binding import Binding
from .compact import compact_calls
from .common import GENERIC_PARAMETER, MARKER_PARAMETER, UNDEFINED_UINT32
from .globaldefs import GlobalDefinitions, read_global_definitions

__all__ = ["EXTENSION_VERSION", "Tables", "read_definitions"]

#: Version of the layout of ``extensions["otf2"]`` (2: `compact` leaves out what the
#: model regions hold).
EXTENSION_VERSION = 2
_COMM_GROUP_TYPES = {4, 5}                                  # OTF2_GROUP_TYPE_COMM_LOCATIONS, _COMM_GROUP
_COMM_LOCATIONS = 4
_REGIONS_GROUP = 2                                          # OTF2_GROUP_TYPE_REGIONS
_PARAMETER_STRING, _PARAMETER_INT64 = 0, 1                  # OTF2_PARAMETER_TYPE_STRING, _INT64
_METRIC_TYPES = {4: "uint64", 8: "int64", 10: "double"}     # by OTF2_Type


@functools.lru_cache(maxsize=None)
def _enum_name(enum: Any, value: int) -> str:
    """``RegionRole`` 1 -> ``function`` (the number for values without a name)."""
    try:
        name = str(enum(value)).partition(".")[2]
    except (KeyError, ValueError):
        name = ""
    return name.lower() if name else str(value)


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
    strings: dict[int, str | None]           #: OTF2 string ref -> text (the undefined ref -> None)


def _sorted(refs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The references sorted, and the model index of each."""
    array_ = np.array(refs, dtype=np.uint64)
    order = np.argsort(array_, kind="stable")
    return array_[order], order.astype(np.int64)


class _Names:
    """The texts of the String definitions; an undefined reference is empty, a reference
    to no definition a `FormatError`."""

    def __init__(self, strings: dict[int, str | None], path: str) -> None:
        self.strings = strings
        self.path = path

    def __call__(self, ref: int) -> str:
        try:
            text = self.strings[ref]
        except KeyError:
            raise FormatError(f"a definition names the undefined String {ref}", path=self.path) from None
        return text or ""


def _index(refs: list[int], kind: str, path: str) -> dict[int, int]:
    """Reference -> position; a lookup of another reference is a `FormatError`."""
    class Index(dict):  # type: ignore[type-arg]
        def __missing__(self, ref: int) -> int:
            raise FormatError(f"a definition refers to the undefined {kind} {ref}", path=path)
    return Index((ref, i) for i, ref in enumerate(refs))


def _system_tree(g: GlobalDefinitions, name: _Names, enums: Any, path: str
                 ) -> tuple[EntityList[SystemTreeNode], EntityList[Location], list[int]]:
    """System tree nodes, then location groups, as model nodes; the locations below them,
    and their OTF2 references."""
    nodes, groups, locations = g.of("SystemTreeNode"), g.of("LocationGroup"), g.of("Location")
    node_index = _index([n[0] for n in nodes], "SystemTreeNode", path)
    group_index = _index([gr[0] for gr in groups], "LocationGroup", path)

    def node_of(ref: int) -> int | None:
        return None if ref == UNDEFINED_UINT32 else node_index[ref]

    tree_names = [name(n[1]) for n in nodes] + [name(gr[1]) for gr in groups]
    tree_kinds = [name(n[2]) for n in nodes] + [_enum_name(enums.LocationGroupType, gr[2]) for gr in groups]
    tree_parents = [node_of(n[3]) for n in nodes] + [node_of(gr[3]) for gr in groups]
    names = [name(loc[1]) for loc in locations]
    kinds = [_enum_name(enums.LocationType, loc[2]) for loc in locations]
    parents = [None if loc[4] == UNDEFINED_UINT32 else len(nodes) + group_index[loc[4]] for loc in locations]
    return _entities(SystemTreeNode, tree_names, tree_kinds, tree_parents), \
        _entities(Location, names, kinds, parents), [loc[0] for loc in locations]


def _entities(make: Any, names: list[str], kinds: list[str], parents: list[int | None]) -> EntityList[Any]:
    """System tree nodes or locations as columns (`EntityList`): 20,000 locations' 60,000
    objects took 0.04 s, and the writer and the queries read the columns."""
    return EntityList(make, np.array([-1 if parent is None else parent for parent in parents], np.int64),
                      lambda: names, lambda: kinds)


def _regions(g: GlobalDefinitions, name: _Names, enums: Any) -> list[Region]:
    """The regions, each with the name of the first REGIONS group that holds it."""
    group_of: dict[int, str] = {}
    for group in g.of("Group"):
        if group[2] == _REGIONS_GROUP:
            for member in group[5]:
                group_of.setdefault(member, name(group[1]))
    return [Region(name(r[1]), _enum_name(enums.RegionRole, r[4]), _enum_name(enums.Paradigm, r[5]),
                   group_of.get(r[0], "")) for r in g.of("Region")]


def _communicators(g: GlobalDefinitions, name: _Names, location_index: dict[int, int], path: str
                   ) -> tuple[list[Communicator], np.ndarray, np.ndarray, np.ndarray]:
    """The communicators, and per communicator its number of ranks (0 when ranks cannot be
    mapped back: members not unique, or not a communicator of locations), the start of its
    members in the third array, and all members. A COMM_GROUP's members are ranks in the
    last COMM_LOCATIONS group of its paradigm defined before it."""
    members_of: dict[int, tuple[int, ...]] = {}
    comm_locations: dict[int, list[int]] = {}
    for ref, _, kind, paradigm, _, members in g.of("Group"):
        if kind == _COMM_LOCATIONS:
            comm_locations[paradigm] = members
            members_of[ref] = tuple(location_index[m] for m in members)
        elif kind in _COMM_GROUP_TYPES:
            if paradigm not in comm_locations:
                raise FormatError(f"Group {ref} (COMM_GROUP) has no COMM_LOCATIONS group of its paradigm",
                                  path=path)
            world = comm_locations[paradigm]
            if any(not 0 <= rank < len(world) for rank in members):
                raise FormatError(f"Group {ref} (COMM_GROUP) names a rank beyond its COMM_LOCATIONS group",
                                  path=path)
            members_of[ref] = tuple(location_index[world[rank]] for rank in members)
    communicators, sizes, offsets, members_all = [], [], [], []
    for kind, args in g.calls:
        if kind not in ("Comm", "InterComm"):
            continue
        members = members_of.get(args[2], ()) if kind == "Comm" else ()   # an InterComm has two groups
        communicators.append(Communicator(name(args[1]), members))
        offsets.append(len(members_all))
        sizes.append(len(members) if len(set(members)) == len(members) else 0)
        members_all.extend(members)
    return (communicators, np.array(sizes, np.int64), np.array(offsets, np.int64),
            np.array(members_all, np.int64))


def _metrics(g: GlobalDefinitions, name: _Names, enums: Any, path: str
             ) -> tuple[list[Metric], list[list[int]], dict[int, tuple[int, bytes]]]:
    """One model metric per member of each metric class or instance, its [OTF2 metric,
    position], and per OTF2 metric its first model metric and value types."""
    members = {m[0]: m for m in g.of("MetricMember")}
    classes: dict[int, list[int]] = {}
    metrics, refs, layouts = [], [], {}
    for kind, args in g.calls:
        if kind == "MetricClass":
            classes[args[0]] = args[1]
        elif kind != "MetricInstance":
            continue
        try:
            of_metric = [members[m] for m in classes[args[0] if kind == "MetricClass" else args[1]]]
        except KeyError:
            raise FormatError(f"{kind} {args[0]} refers to an undefined metric", path=path) from None
        layouts[args[0]] = (len(metrics), bytes(m[5] for m in of_metric))
        for position, member in enumerate(of_metric):
            metrics.append(Metric(name(member[1]), name(member[8]),
                                  _enum_name(enums.MetricMode, member[4]).split("_")[0],
                                  _METRIC_TYPES.get(member[5], "int64")))
            refs.append([args[0], position])
    return metrics, refs, layouts


def _parameters(g: GlobalDefinitions, name: _Names) -> tuple[dict[int, int], dict[int, str]]:
    """The parameters the exporter writes MARKER and GENERIC events with."""
    markers, generics = {}, {}
    for ref, text_ref, kind in g.of("Parameter"):
        text = name(text_ref)
        marker = re.fullmatch(f"{MARKER_PARAMETER} (-?[0-9]+)", text)
        if marker and kind == _PARAMETER_INT64:
            markers[ref] = int(marker.group(1))
        elif text.startswith(GENERIC_PARAMETER + " ") and kind == _PARAMETER_STRING:
            generics[ref] = text[len(GENERIC_PARAMETER) + 1:]
    return markers, generics


def _archive_properties(handle: Any, _otf2: Any) -> dict[str, Any]:
    """The anchor's creator, description, machine name, properties and chunk sizes."""
    return {"creator": _otf2.Reader_GetCreator(handle) or "", "description": _otf2.Reader_GetDescription(handle) or "",
            "machine_name": _otf2.Reader_GetMachineName(handle) or "",
            "properties": {name: _otf2.Reader_GetProperty(handle, name)
                           for name in _otf2.Reader_GetPropertyNames(handle)},
            "chunk_sizes": list(_otf2.Reader_GetChunkSize(handle))}


def read_definitions(handle: Any, binding: Binding, path: str) -> tuple[Definitions, Tables]:
    """The definitions of the open OTF2 reader ``handle`` of the anchor ``path``
    (``strings`` left empty for the event reader to fill) and the tables that map the
    references of its events."""
    g = read_global_definitions(binding, handle, path)
    strings: dict[int, str | None] = {UNDEFINED_UINT32: None}
    strings.update((ref, text) for ref, text in g.of("String"))
    name = _Names(strings, path)
    enums = binding.otf2.enums
    tree, locations, location_refs = _system_tree(g, name, enums, path)
    communicators, sizes, offsets, members = _communicators(
        g, name, _index(location_refs, "Location", path), path)
    metrics, metric_refs, layouts = _metrics(g, name, enums, path)
    resolution, offset, length, realtime = g.clock
    archive = _archive_properties(handle, binding._otf2)
    region_calls = g.of("Region")
    regions = _regions(g, name, enums)
    extension = {
        "version": EXTENSION_VERSION,
        "archive": archive,
        "clock_properties": [resolution, offset, length, realtime],
        "definitions": compact_calls(g.calls, regions, binding),
        "regions": [r[0] for r in region_calls],
        "locations": location_refs,
        "communicators": [args[0] for kind, args in g.calls if kind in ("Comm", "InterComm")],
        "metrics": metric_refs,
    }
    version = ".".join(str(v) for v in binding._otf2.Reader_GetVersion(handle))
    definitions = Definitions(
        regions=regions, system_tree=tree, locations=locations, communicators=communicators,
        metrics=metrics, strings=[], timer_resolution=resolution, clock_offset=offset,
        provenance={"source_format": "otf2", "otf2_version": version, "otf2_creator": archive["creator"]},
        extensions={"otf2": extension})
    region_refs, region_index = _sorted(extension["regions"])
    comm_refs, comm_index = _sorted(extension["communicators"])
    markers, generics = _parameters(g, name)
    tables = Tables(location_refs, extension["communicators"], region_refs, region_index, comm_refs, comm_index,
                    sizes, offsets, members, layouts, markers, generics, strings)
    return definitions, tables
