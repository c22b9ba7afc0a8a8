"""OTF2 (Open Trace Format 2) archives, read through the `otf2` package.

An OTF2 archive is a folder: the anchor file ``<name>.otf2`` (its content starts with a
two-byte buffer header and the NUL-terminated text ``OTF2``), the global definitions
``<name>.def`` and a folder ``<name>/`` with one event file (and local definitions) per
location. Either the folder or the anchor file may be given.

Mapping to the event model (docs/formats/otf2.md has the full table):

* Locations are the OTF2 locations in definition order; the system tree holds the OTF2
  system tree nodes (kind = class name) followed by the location groups (kind = their
  type, e.g. ``process``), and every location hangs below its group. Regions keep name,
  role and paradigm (lower-case OTF2 enum names) and the name of a REGIONS group that
  holds them. Communicators list their members' location indexes in rank order.
  Every metric member of every metric class or instance is one model metric.
  Timestamps stay the OTF2 ticks; ``clock_offset`` is the global offset.
* Enter/Leave -> ENTER/LEAVE; MpiSend/MpiRecv -> SEND/RECV and MpiIsend/MpiIrecv ->
  ISEND/IRECV with the peer rank turned into the peer's location index;
  MpiIrecvRequest -> IRECV_REQUEST; MpiIsendComplete -> REQUEST_COMPLETE (requests keep
  their 64 bits); MpiCollectiveBegin -> COLL_BEGIN; MpiCollectiveEnd -> COLL_END (ref =
  OTF2 collective operation, tag = root location or -1 when there is none); a Metric
  record with n values -> n METRIC events (value = the 64 bits of each value);
  ParameterInt of a parameter ``MARKER <n>`` -> MARKER, ParameterString of a parameter
  ``GENERIC <kind>`` -> GENERIC (how the exporter writes those kinds).
* Every other record, and one of the records above that the model cannot hold exactly
  (a rank outside its communicator, a size beyond int64, metric values whose types differ
  from their definition, an Enter or Leave that breaks the nesting), becomes a GENERIC
  event: ref = the string ``otf2:<Record>``, value = its fields as compact JSON with raw
  OTF2 references (``{"measurementMode":1}``). A record's attribute list becomes a
  GENERIC ``otf2:attributes`` event (``[[attribute, type, value bits], ...]``) just
  before it.
* ``extensions["otf2"]`` keeps every global definition as the writer call that restores
  it (original references), the clock properties, the anchor's creator, description and
  properties, and the OTF2 reference of every model region, location, communicator and
  metric, so that the exporter (`ccgformat.formats.otf2_export`) writes the same archive.

Events are read per location with C callbacks that append to plain lists: no Python
object per event, about four times the speed of the `otf2` package's own event
iteration. The strings of GENERIC events are added to the returned
``Definitions.strings`` while the locations stream.
"""

from __future__ import annotations

import ctypes
import json
import re
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ..errors import CcgError, FormatError
from ..model import (Communicator, Definitions, EventBatch, EventKind, Location, Metric, Region,
                     SystemTreeNode)
from .otf2_binding import CALLBACK_INTERRUPT, Binding, load

__all__ = ["sniff", "read", "ANCHOR_MAGIC", "EXTENSION_VERSION", "MARKER_PARAMETER", "GENERIC_PARAMETER",
           "P2P_RECORDS"]

#: Bytes 2..6 of an anchor file (after the two-byte buffer header).
ANCHOR_MAGIC = b"OTF2\x00"
#: Version of the layout of ``extensions["otf2"]``.
EXTENSION_VERSION = 1
#: A ParameterInt event of the parameter "MARKER <n>" is a MARKER event of type n; a
#: ParameterString event of the parameter "GENERIC <kind>" a GENERIC event of that kind
#: (how the exporter writes the events of archives not from OTF2).
MARKER_PARAMETER = "MARKER"
GENERIC_PARAMETER = "GENERIC"
BATCH_SIZE = 65536
_READ_CHUNK = 1 << 20
_UNDEFINED_UINT32 = 0xFFFFFFFF
_INT64_LIMIT = 1 << 63
_UINT64 = (1 << 64) - 1
_JSON = {"separators": (",", ":")}
_COMM_GROUP_TYPES = {4, 5}                                  # OTF2_GROUP_TYPE_COMM_LOCATIONS, _COMM_GROUP
_REGIONS_GROUP = 2                                          # OTF2_GROUP_TYPE_REGIONS
_PARAMETER_STRING, _PARAMETER_INT64 = 0, 1                  # OTF2_PARAMETER_TYPE_STRING, _INT64
_METRIC_TYPES = {4: "uint64", 8: "int64", 10: "double"}     # by OTF2_Type
#: Event kinds as plain ints: the per-event lists convert to numpy 4x faster than IntEnums.
_COLL_BEGIN, _COLL_END, _METRIC, _MARKER, _GENERIC = (int(k) for k in (
    EventKind.COLL_BEGIN, EventKind.COLL_END, EventKind.METRIC, EventKind.MARKER, EventKind.GENERIC))
#: The OTF2 record of each point-to-point event kind.
P2P_RECORDS = {EventKind.SEND: "MpiSend", EventKind.RECV: "MpiRecv", EventKind.ISEND: "MpiIsend",
                EventKind.IRECV: "MpiIrecv"}


def _is_anchor(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(7)[2:] == ANCHOR_MAGIC
    except OSError:
        return False


def _anchors(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.otf2") if p.is_file() and _is_anchor(p))
    except OSError:
        return []


def sniff(path: Path, head: bytes) -> bool:
    """An anchor file (``OTF2\\0`` after the buffer header), or a folder holding one."""
    if path.is_dir():
        return bool(_anchors(path))
    return head[2:7] == ANCHOR_MAGIC


def _anchor(path: Path) -> Path:
    if not path.is_dir():
        if not _is_anchor(path):
            raise FormatError("not an OTF2 anchor file (no 'OTF2' after the buffer header)", path=str(path))
        return path
    anchors = _anchors(path)
    if not anchors:
        raise FormatError("the folder holds no OTF2 anchor file (*.otf2)", path=str(path))
    if len(anchors) > 1:
        raise FormatError(f"the folder holds several OTF2 anchor files: {', '.join(p.name for p in anchors)}",
                          path=str(path))
    return anchors[0]


# --------------------------------------------------------------------------- definitions

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


class _Strings:
    """Interns texts into ``Definitions.strings``."""

    def __init__(self, strings: list[str]):
        self.strings = strings
        self.index = {text: i for i, text in enumerate(strings)}

    def __call__(self, text: str) -> int:
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.strings)
            self.strings.append(text)
        return i


@dataclass
class _Tables:
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


def _lookup(refs: np.ndarray, index: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model indexes of OTF2 references, and a mask of those not defined."""
    if len(refs) == 0:
        return np.zeros(len(values), np.int64), np.ones(len(values), bool)
    pos = np.minimum(np.searchsorted(refs, values), len(refs) - 1)
    return index[pos], refs[pos] != values


def _sorted(refs: list[int]) -> tuple[np.ndarray, np.ndarray]:
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
    return {"creator": _otf2.Reader_GetCreator(handle) or "", "description": _otf2.Reader_GetDescription(handle) or "",
            "machine_name": _otf2.Reader_GetMachineName(handle) or "",
            "properties": {name: _otf2.Reader_GetProperty(handle, name)
                           for name in _otf2.Reader_GetPropertyNames(handle)},
            "chunk_sizes": list(_otf2.Reader_GetChunkSize(handle))}


def _definitions(tr: Any, binding: Binding) -> tuple[Definitions, _Tables]:
    d = tr.definitions
    tree, locations = _system_tree(d)
    location_refs = [loc._ref for loc in d.locations]
    communicators, sizes, offsets, members = _communicators(d, {ref: i for i, ref in enumerate(location_refs)})
    metrics, metric_refs, layouts = _metrics(d)
    recorder = _Recorder()
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
    tables = _Tables(location_refs, extension["communicators"], region_refs, region_index, comm_refs, comm_index,
                     sizes, offsets, members, layouts, markers, generics, d.strings)
    return definitions, tables


# --------------------------------------------------------------------------- events

class _EventReader:
    """Reads one location's events into lists through C callbacks, then into columns."""

    def __init__(self, binding: Binding, tables: _Tables, intern: _Strings):
        self.binding = binding
        self.tables = tables
        self.intern = intern
        self.time: list[int] = []
        self.kind: list[int] = []
        self.ref: list[int] = []
        #: flat runs of (event index, comm, tag, request, size, recv_size, value) for the
        #: events that use more columns than ref
        self.extra: list[int] = []
        self.error: BaseException | None = None
        self.callbacks = binding._otf2.EvtReaderCallbacks_New()
        self._keep: list[Any] = []
        handlers = self._handlers()
        for name, record in binding.records.items():
            handler = handlers[name] if name in handlers else self._generic(name, record.fields)
            self._register(name, binding.callback_type(record), handler)
        self._register("Unknown", binding.callback_type(None), self._generic("Unknown", ()))

    def _register(self, name: str, prototype: Any, handler: Callable[..., int]) -> None:
        function = prototype(handler)
        self._keep.append(function)          # OTF2 holds only the C pointer
        self.binding.set_callback(self.callbacks, name, function)

    def close(self) -> None:
        self.binding._otf2.EvtReaderCallbacks_Delete(self.callbacks)

    def _fail(self, error: BaseException) -> int:
        self.error = error
        return CALLBACK_INTERRUPT

    def _attributes(self, address: int, time: int) -> None:
        self._generic_event(time, "otf2:attributes", self.binding.attributes(address))

    def _generic_event(self, time: int, kind: str, fields: Any) -> None:
        self.ref.append(self.intern(kind))
        self.extra.extend((len(self.time), 0, 0, 0, 0, 0, self.intern(json.dumps(fields, **_JSON))))
        self.time.append(time)
        self.kind.append(_GENERIC)

    def _generic(self, name: str, fields: tuple[str, ...]) -> Callable[..., int]:
        kind = f"otf2:{name}"
        count = self.binding.lib.OTF2_AttributeList_GetNumberOfElements
        attributes, generic_event, fail = self._attributes, self._generic_event, self._fail

        def callback(location: int, time: int, position: int, user: Any, attribute_list: int, *values: int) -> int:
            try:
                if attribute_list and count(attribute_list):
                    attributes(attribute_list, time)
                generic_event(time, kind, dict(zip(fields, values)))
                return 0
            except BaseException as error:
                return fail(error)
        return callback

    def _handlers(self) -> dict[str, Callable[..., int]]:
        """Callbacks of the records with a kind of their own (kept lean: they run per event)."""
        time_, kind_, ref_, extra_ = self.time, self.kind, self.ref, self.extra
        ta, ka, ra, xa = time_.append, kind_.append, ref_.append, extra_.extend
        count = self.binding.lib.OTF2_AttributeList_GetNumberOfElements
        attributes, fail, binding = self._attributes, self._fail, self.binding

        def region(code: int) -> Callable[..., int]:
            def callback(location: int, time: int, position: int, user: Any, al: int, region: int) -> int:
                try:
                    if al and count(al):
                        attributes(al, time)
                    ta(time)
                    ka(code)
                    ra(region)
                    return 0
                except BaseException as error:
                    return fail(error)
            return callback

        def p2p(code: int) -> Callable[..., int]:
            def callback(location: int, time: int, position: int, user: Any, al: int, peer: int, comm: int,
                         tag: int, length: int, request: int = 0) -> int:   # MpiSend/Recv have no request
                try:
                    if al and count(al):
                        attributes(al, time)
                    xa((len(time_), comm, tag, request, length, 0, 0))
                    ta(time)
                    ka(code)
                    ra(peer)
                    return 0
                except BaseException as error:
                    return fail(error)
            return callback

        def request(code: int) -> Callable[..., int]:
            def callback(location: int, time: int, position: int, user: Any, al: int, request: int) -> int:
                try:
                    if al and count(al):
                        attributes(al, time)
                    xa((len(time_), 0, 0, request, 0, 0, 0))
                    ta(time)
                    ka(code)
                    ra(0)
                    return 0
                except BaseException as error:
                    return fail(error)
            return callback

        def collective_begin(location: int, time: int, position: int, user: Any, al: int) -> int:
            try:
                if al and count(al):
                    attributes(al, time)
                ta(time)
                ka(_COLL_BEGIN)
                ra(0)
                return 0
            except BaseException as error:
                return fail(error)

        def collective_end(location: int, time: int, position: int, user: Any, al: int, operation: int,
                           comm: int, root: int, sent: int, received: int) -> int:
            try:
                if al and count(al):
                    attributes(al, time)
                xa((len(time_), comm, root, 0, sent, received, 0))
                ta(time)
                ka(_COLL_END)
                ra(operation)
                return 0
            except BaseException as error:
                return fail(error)

        layouts = self.tables.metrics
        generic_event = self._generic_event

        def metric(location: int, time: int, position: int, user: Any, al: int, metric: int, n: int,
                   types: int, values: int) -> int:
            try:
                if al and count(al):
                    attributes(al, time)
                layout = layouts.get(metric)
                if layout is None:
                    raise FormatError(f"event {position} (time {time}): metric {metric} is not defined")
                type_bytes = ctypes.string_at(types, n) if n else b""
                bits = array("Q", ctypes.string_at(values, 8 * n) if n else b"")
                if type_bytes != layout[1]:
                    generic_event(time, "otf2:Metric", {"metric": metric, "types": list(type_bytes),
                                                        "values": bits.tolist()})
                    return 0
                base = layout[0]
                for i, value in enumerate(bits):
                    xa((len(time_), 0, 0, 0, 0, 0, value))
                    ta(time)
                    ka(_METRIC)
                    ra(base + i)
                return 0
            except BaseException as error:
                return fail(error)

        def program_begin(location: int, time: int, position: int, user: Any, al: int, name: int, n: int,
                          arguments: int) -> int:
            try:
                if al and count(al):
                    attributes(al, time)
                generic_event(time, "otf2:ProgramBegin",
                              {"programName": name, "programArguments": binding.unpack("uint32_t", arguments, n)})
                return 0
            except BaseException as error:
                return fail(error)

        markers, generics, texts, intern = self.tables.markers, self.tables.generics, self.tables.strings, self.intern
        parameter_int, parameter_string = self._generic("ParameterInt", ("parameter", "value")), \
            self._generic("ParameterString", ("parameter", "string"))

        def marker(location: int, time: int, position: int, user: Any, al: int, parameter: int, value: int) -> int:
            if parameter not in markers:
                return parameter_int(location, time, position, user, al, parameter, value)
            try:
                if al and count(al):
                    attributes(al, time)
                xa((len(time_), 0, 0, 0, 0, 0, value & _UINT64))
                ta(time)
                ka(_MARKER)
                ra(markers[parameter] & _UINT64)
                return 0
            except BaseException as error:
                return fail(error)

        def generic(location: int, time: int, position: int, user: Any, al: int, parameter: int, string: int) -> int:
            if parameter not in generics:
                return parameter_string(location, time, position, user, al, parameter, string)
            try:
                if al and count(al):
                    attributes(al, time)
                xa((len(time_), 0, 0, 0, 0, 0, intern(texts[string])))
                ta(time)
                ka(_GENERIC)
                ra(intern(generics[parameter]))
                return 0
            except BaseException as error:
                return fail(error)

        return {
            "ParameterInt": marker, "ParameterString": generic,
            "Enter": region(int(EventKind.ENTER)), "Leave": region(int(EventKind.LEAVE)),
            "MpiSend": p2p(int(EventKind.SEND)), "MpiRecv": p2p(int(EventKind.RECV)),
            "MpiIsend": p2p(int(EventKind.ISEND)), "MpiIrecv": p2p(int(EventKind.IRECV)),
            "MpiIrecvRequest": request(int(EventKind.IRECV_REQUEST)),
            "MpiIsendComplete": request(int(EventKind.REQUEST_COMPLETE)),
            "MpiCollectiveBegin": collective_begin, "MpiCollectiveEnd": collective_end,
            "Metric": metric, "ProgramBegin": program_begin,
        }

    def read(self, handle: Any, ref: int, path: str) -> None:
        """Fill the lists with the events of location ``ref`` (event file ``path``)."""
        _otf2 = self.binding._otf2
        for column in (self.time, self.kind, self.ref, self.extra):
            column.clear()
        self.error = None
        reader = _otf2.Reader_GetEvtReader(handle, ref)
        try:
            _otf2.EvtReader_SetCallbacks(reader, self.callbacks, None)
            while _otf2.EvtReader_ReadEvents(reader, _READ_CHUNK) == _READ_CHUNK:
                pass
        except _otf2.Error as error:
            if isinstance(self.error, FormatError):
                raise FormatError(self.error.reason, path=path) from None
            if isinstance(self.error, (KeyboardInterrupt, MemoryError)):
                raise self.error from None
            if self.error is not None:
                raise FormatError(f"event {len(self.time)}: {type(self.error).__name__}: {self.error}",
                                  path=path) from None
            raise FormatError(f"cannot read the events: {error}", path=path) from None
        finally:
            _otf2.Reader_CloseEvtReader(handle, reader)

    def columns(self, path: str) -> dict[str, np.ndarray]:
        """The location's columns, references mapped to model indexes (see the module doc)."""
        n = len(self.time)
        time = np.array(self.time, dtype=np.uint64)
        if n and int(time.max()) >= _INT64_LIMIT:
            i = int(np.argmax(time >= _INT64_LIMIT))
            raise FormatError(f"event {i}: timestamp {int(time[i])} is beyond the int64 range", path=path)
        kind = np.array(self.kind, dtype=np.uint8)
        raw_ref = np.array(self.ref, dtype=np.uint64)
        cols = {name: np.zeros(n, np.uint64) for name in ("comm", "tag", "request", "size", "recv_size", "value")}
        if self.extra:
            extra = np.array(self.extra, dtype=np.uint64).reshape(-1, 7)
            at = extra[:, 0].astype(np.intp)
            for j, name in enumerate(cols, start=1):
                cols[name][at] = extra[:, j]
        ref = raw_ref.astype(np.int64)
        self._map_regions(kind, raw_ref, ref, path)
        fallback = self._map_communication(kind, raw_ref, ref, cols, path)
        columns = {"time": time.view(np.int64), "kind": kind, "ref": ref}
        columns.update({name: values.view(np.int64) for name, values in cols.items()})
        for i in fallback:
            self._to_generic(columns, raw_ref, i)
        for i in _unmatched_calls(kind, ref):
            name = "otf2:Enter" if kind[i] == EventKind.ENTER else "otf2:Leave"
            self._set_generic(columns, i, name, {"region": int(raw_ref[i])})
        return columns

    def _map_regions(self, kind: np.ndarray, raw: np.ndarray, ref: np.ndarray, path: str) -> None:
        calls = np.flatnonzero(kind <= EventKind.LEAVE)
        mapped, bad = _lookup(self.tables.region_refs, self.tables.region_index, raw[calls])
        if bad.any():
            i = int(calls[np.argmax(bad)])
            raise FormatError(f"event {i}: region {int(raw[i])} is not defined", path=path)
        ref[calls] = mapped

    def _map_communication(self, kind: np.ndarray, raw: np.ndarray, ref: np.ndarray,
                           cols: dict[str, np.ndarray], path: str) -> list[int]:
        """Map communicators, peers and roots; returns the events that must become GENERIC."""
        t = self.tables
        selected = np.flatnonzero(np.isin(kind, [*P2P_RECORDS, EventKind.COLL_END]))
        if not len(selected):
            return []
        comm, bad = _lookup(t.comm_refs, t.comm_index, cols["comm"][selected])
        if bad.any():
            i = int(selected[np.argmax(bad)])
            raise FormatError(f"event {i}: communicator {int(cols['comm'][i])} is not defined", path=path)
        collective = kind[selected] == EventKind.COLL_END
        rank = np.where(collective, cols["tag"][selected], raw[selected])
        no_root = collective & (rank == _UNDEFINED_UINT32)
        ok = no_root | (rank < t.comm_size[comm].astype(np.uint64))
        ok &= (cols["size"][selected] < _INT64_LIMIT) & (cols["recv_size"][selected] < _INT64_LIMIT)
        members = t.comm_members if len(t.comm_members) else np.zeros(1, np.int64)
        position = np.where(ok & ~no_root, t.comm_offset[comm] + rank.astype(np.int64), 0)
        location = np.where(no_root, -1, members[position])
        cols["comm"][selected] = comm.astype(np.uint64)
        p2p = ~collective & ok
        ref[selected[p2p]] = location[p2p]
        roots = collective & ok
        cols["tag"][selected[roots]] = location[roots].astype(np.int64).view(np.uint64)
        return selected[~ok].tolist()

    def _to_generic(self, columns: dict[str, np.ndarray], raw_ref: np.ndarray, i: int) -> None:
        """An event the model cannot hold exactly becomes its OTF2 record as GENERIC."""
        kind = EventKind(int(columns["kind"][i]))
        comm = self.tables.comms[int(columns["comm"][i])]
        size = int(columns["size"][i].view(np.uint64))
        if kind == EventKind.COLL_END:
            fields = {"collectiveOp": int(raw_ref[i]), "communicator": comm,
                      "root": int(columns["tag"][i].view(np.uint64)), "sizeSent": size,
                      "sizeReceived": int(columns["recv_size"][i].view(np.uint64))}
            self._set_generic(columns, i, "otf2:MpiCollectiveEnd", fields)
            return
        name = P2P_RECORDS[kind]
        peer = "receiver" if kind in (EventKind.SEND, EventKind.ISEND) else "sender"
        fields = {peer: int(raw_ref[i]), "communicator": comm, "msgTag": int(columns["tag"][i]), "msgLength": size}
        if kind in (EventKind.ISEND, EventKind.IRECV):
            fields["requestID"] = int(columns["request"][i].view(np.uint64))
        self._set_generic(columns, i, f"otf2:{name}", fields)

    def _set_generic(self, columns: dict[str, np.ndarray], i: int, kind: str, fields: dict[str, int]) -> None:
        for name in ("comm", "tag", "request", "size", "recv_size"):
            columns[name][i] = 0
        columns["kind"][i] = EventKind.GENERIC
        columns["ref"][i] = self.intern(kind)
        columns["value"][i] = self.intern(json.dumps(fields, **_JSON))


def _unmatched_calls(kind: np.ndarray, ref: np.ndarray) -> list[int]:
    """ENTER and LEAVE events that break the nesting: a LEAVE of a region that is not
    open, the ENTERs still open inside a LEAVE of a region further out, and the ENTERs
    open at the end. The rest nests properly."""
    calls = np.flatnonzero(kind <= EventKind.LEAVE)
    if not len(calls):
        return []
    enter = kind[calls] == EventKind.ENTER
    depth = np.cumsum(np.where(enter, 1, -1))
    if depth.min() >= 0 and depth[-1] == 0:
        # nested iff, per depth level in time order, ENTER and LEAVE of one region alternate
        level = np.where(enter, depth, depth + 1)
        order = np.argsort(level, kind="stable")
        regions = ref[calls][order]
        if enter[order][0::2].all() and not enter[order][1::2].any() and np.array_equal(regions[0::2], regions[1::2]):
            return []
    unmatched: list[int] = []
    stack: list[tuple[int, int]] = []
    for i, is_enter, region in zip(calls.tolist(), enter.tolist(), ref[calls].tolist()):
        if is_enter:
            stack.append((region, i))
            continue
        depth_of = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][0] == region), None)
        if depth_of is None:
            unmatched.append(i)
        else:
            unmatched.extend(j for _, j in stack[depth_of + 1:])
            del stack[depth_of:]
    unmatched.extend(j for _, j in stack)
    return sorted(unmatched)


# --------------------------------------------------------------------------- read

def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    """The definitions and the per-location event batches of an OTF2 archive."""
    anchor = _anchor(Path(path))
    binding = load(str(anchor))
    _otf2 = binding._otf2
    errors = (_otf2.Error, binding.otf2.error.TraceReaderError, TypeError, KeyError, ValueError)
    try:
        _otf2.Reader_Close(_otf2.Reader_Open(str(anchor)))
    except errors as error:
        raise FormatError(f"not a readable OTF2 anchor file: {error}", path=str(anchor)) from None
    try:
        tr = binding.otf2.reader.Reader(str(anchor))
    except errors as error:
        raise FormatError(f"cannot read the global definitions: {error}",
                          path=str(anchor.with_suffix(".def"))) from None
    try:
        definitions, tables = _definitions(tr, binding)
        handle = tr.handle
        events_folder = anchor.with_suffix("")
        _open_event_files(binding, handle, tables.locations, events_folder)
        reader = _EventReader(binding, tables, _Strings(definitions.strings))
    except BaseException as error:
        tr.close()
        if isinstance(error, (CcgError, KeyboardInterrupt)):
            raise
        if isinstance(error, errors):
            raise FormatError(f"cannot read the OTF2 archive: {error}", path=str(anchor)) from None
        raise

    def streams() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        try:
            for index, ref in enumerate(tables.locations):
                event_file = str(events_folder / f"{ref}.evt")
                reader.read(handle, ref, event_file)
                yield index, _batches(reader.columns(event_file))
        finally:
            reader.close()
            try:
                _otf2.Reader_CloseEvtFiles(handle)
            finally:
                tr.close()

    return definitions, streams()


def _open_event_files(binding: Binding, handle: Any, refs: list[int], folder: Path) -> None:
    """Select every location, read its local definitions (mappings, clock offsets) and
    open its event reader, as the OTF2 reading protocol asks."""
    _otf2 = binding._otf2
    for ref in refs:
        _otf2.Reader_SelectLocation(handle, ref)
    try:
        _otf2.Reader_OpenDefFiles(handle)
        local_definitions = True
    except _otf2.Error:
        local_definitions = False   # an archive without local definition files
    _otf2.Reader_OpenEvtFiles(handle)
    for ref in refs:
        if local_definitions:
            reader = _otf2.Reader_GetDefReader(handle, ref)
            if reader:
                try:
                    _otf2.Reader_ReadAllLocalDefinitions(handle, reader)
                except _otf2.Error as error:
                    raise FormatError(f"cannot read the local definitions: {error}",
                                      path=str(folder / f"{ref}.def")) from None
                finally:
                    _otf2.Reader_CloseDefReader(handle, reader)
        _otf2.Reader_GetEvtReader(handle, ref)
    if local_definitions:
        _otf2.Reader_CloseDefFiles(handle)


def _batches(columns: dict[str, np.ndarray]) -> Iterator[EventBatch]:
    n = len(columns["time"])
    for start in range(0, n, BATCH_SIZE):
        yield EventBatch(**{name: values[start:start + BATCH_SIZE] for name, values in columns.items()})
