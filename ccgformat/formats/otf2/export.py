"""Export an archive as an OTF2 archive folder (``traces.otf2``, ``traces.def``, ``traces/``).

The global definitions are the ones `plan.make_plan` plans. Events: ENTER/LEAVE ->
Enter/Leave; SEND/RECV/ISEND/IRECV -> MpiSend/MpiRecv/MpiIsend/MpiIrecv with the peer
location turned back into its rank; IRECV_REQUEST, REQUEST_COMPLETE, COLL_BEGIN,
COLL_END -> MpiIrecvRequest, MpiIsendComplete, MpiCollectiveBegin, MpiCollectiveEnd;
consecutive METRIC events of the members of one OTF2 metric at one time -> one Metric
record. GENERIC ``otf2:<Record>`` events of an OTF2 archive are written as that record
(``otf2:attributes`` becomes the attribute list of the next record); other GENERIC
events become ParameterString events of the parameter ``GENERIC <kind name>`` (value =
the fields text) and MARKER events ParameterInt events of the parameter ``MARKER <ref>``,
which the importer turns back into GENERIC and MARKER events. With a logical-time answer
(`Archive.logical`), events carry its steps, phases and lateness as attributes
(`logical_attributes`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ...archive import Archive, ExportProgress
from ...atomic import atomic_output
from ...errors import CcgError, FormatError
from ...model import Definitions, EventBatch, EventKind
from .binding import Binding, enum_value, load
from .common import GENERIC_PARAMETER, MARKER_PARAMETER, P2P_RECORDS, UINT64, UNDEFINED_UINT32
from .fast import RECORD_OF_KIND, FastPath
from .logical_attributes import LogicalAttributes, Marks
from .plan import Plan, make_plan

__all__ = ["write", "write_events", "ARCHIVE_NAME"]

#: Name of the anchor file (``traces.otf2``) and of the event folder.
ARCHIVE_NAME = "traces"
_COLUMNS = ("time", "kind", "ref", "comm", "tag", "request", "size", "recv_size", "value")


def _decode(value: Any, binding: Binding) -> Any:
    """A definition writer argument from its JSON form (``{"bits": n}``: an attribute value)."""
    if isinstance(value, dict):
        attribute = binding._otf2.AttributeValue()
        attribute._arg_value = int(value["bits"])
        return attribute
    if isinstance(value, list):
        return [_decode(v, binding) for v in value]
    return value


def _replay(binding: Binding, handle: Any, plan: Plan, counts: dict[int, int], last_time: int | None) -> None:
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

    def __init__(self, binding: Binding, plan: Plan, definitions: Definitions, address: int, location: int,
                 fast: FastPath | None, marks: Marks | None = None) -> None:
        self.binding = binding
        self.fast = fast
        self.marks = marks  #: logical-time attribute lists of some events
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
        self.int64 = enum_value(binding, "ParameterType", "INT64", "INT64")
        self.string_type = enum_value(binding, "ParameterType", "STRING", "STRING")

    def _call(self, name: str, time: int, *args: Any) -> None:
        """Write record ``name`` with the pending attribute list."""
        code = self.writers[name](self.address, self.attributes, time, *args)
        if self.attributes:
            self.binding.lib.OTF2_AttributeList_Delete(self.attributes)
            self.attributes = 0
        if code != 0:
            raise FormatError(f"location {self.location}, time {time}: OTF2 cannot write a {name} record "
                              f"(error {code})")
        self.count += 1

    def write(self, batches: Iterable[EventBatch]) -> None:
        """Write all the location's events."""
        for batch in batches:
            if len(batch):
                self.last = int(batch.time[-1])
            for piece, entries in (self.marks.pieces(batch) if self.marks else [(batch, None)]):
                if entries is not None:
                    self.attributes = self.marks.attach(self.attributes, entries)  # type: ignore[union-attr]
                if self.fast is None:
                    for row in zip(*(getattr(piece, c).tolist() for c in _COLUMNS)):
                        self._row(row)
                else:
                    self._write_fast(piece)
        if self.metric is not None or self.attributes:
            raise FormatError(f"location {self.location}: the events end inside an OTF2 metric record or "
                              f"before the event an attribute list belongs to")

    def _write_fast(self, batch: EventBatch) -> None:
        """Write a batch through the native writer, but for the rows it leaves to `_row`
        and the rows after an attribute list or inside a Metric record."""
        assert self.fast is not None
        prepared = self.fast.prepare(batch)
        rows: list[tuple[int, ...]] | None = None
        index = 0
        while index < len(batch):
            if self.metric is None and not self.attributes:
                done, code = self.fast.write(self.address, prepared, index)
                self.count += done - index
                if code != 0:
                    raise FormatError(f"location {self.location}, time {int(batch.time[done])}: OTF2 cannot write "
                                      f"a {RECORD_OF_KIND[EventKind(batch.kind[done])]} record (error {code})")
                index = done
                if index == len(batch):
                    break
            if rows is None:
                rows = list(zip(*(getattr(batch, c).tolist() for c in _COLUMNS)))
            self._row(rows[index])
            index += 1

    def _row(self, row: tuple[int, ...]) -> None:
        """Write one event (a row of the columns; the reference)."""
        try:
            self._event(*row)
        except (OverflowError, IndexError, KeyError, TypeError, ValueError) as error:
            if isinstance(error, CcgError):
                raise
            raise FormatError(f"location {self.location}, time {row[0]}: the {EventKind(row[1]).name} "
                              f"event does not fit OTF2: {type(error).__name__}: {error}") from None

    def _event(self, time: int, kind: int, ref: int, comm: int, tag: int, request: int, size: int,
               recv_size: int, value: int) -> None:
        """Write one event (a row of the columns)."""
        plan = self.plan
        if self.metric is not None and kind != EventKind.METRIC:
            raise FormatError(f"location {self.location}, time {time}: an OTF2 metric record lacks members")
        if kind == EventKind.ENTER or kind == EventKind.LEAVE:
            self._call("Enter" if kind == EventKind.ENTER else "Leave", time, plan.regions[ref])
        elif kind in (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV):
            otf2_comm, rank = self._rank(comm, ref)
            extra = (request & UINT64,) if kind in (EventKind.ISEND, EventKind.IRECV) else ()
            self._call(P2P_RECORDS[kind], time, rank, otf2_comm, tag, size, *extra)
        elif kind == EventKind.IRECV_REQUEST:
            self._call("MpiIrecvRequest", time, request & UINT64)
        elif kind == EventKind.REQUEST_COMPLETE:
            self._call("MpiIsendComplete", time, request & UINT64)
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
            return plan.comms[comm], UNDEFINED_UINT32 if peer is None else plan.ranks[comm][peer]
        if plan.world is None or peer is not None and peer not in plan.ranks[plan.world]:
            raise FormatError(f"location {self.location}: location {peer} is not in communicator {comm}")
        return plan.comms[plan.world], UNDEFINED_UINT32 if peer is None else plan.ranks[plan.world][peer]

    def _metric(self, time: int, ref: int, value: int) -> None:
        """Collect a METRIC event; write the Metric record once all its members are there."""
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
        self.metric[2].append(value & UINT64)
        if len(self.metric[2]) == len(types):
            self._write_metric(time, metric, types, self.metric[2])
            self.metric = None

    def _write_metric(self, time: int, metric: int, types: list[int], values: list[int]) -> None:
        """Write a Metric record."""
        type_array, type_address = self.binding.array("uint8_t", types)    # the arrays live until the call
        value_array, value_address = self.binding.array("uint64_t", values)  # has returned
        self._call("Metric", time, metric, len(types), type_address, value_address)

    def _generic(self, time: int, ref: int, value: int) -> None:
        """A GENERIC event: its OTF2 record, else a ParameterString event."""
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


def write(archive: Archive, target: Path, progress: ExportProgress | None = None, logical: Any = None) -> None:
    """Write ``archive`` as an OTF2 archive in the folder ``target`` (replaced atomically);
    ``progress`` hears of each batch of events as it is handed to the OTF2 writer. With
    ``logical`` - a scheme's name (its answer streamed, as `ccg logical` streams it) or
    an answer of `Archive.logical` - the events carry its steps, phases and lateness as
    attributes."""
    present = set(archive.locations)
    if isinstance(logical, str):
        with archive.streamed_logical(logical) as answer:
            write(archive, target, progress, answer)
        return

    def events(location: int) -> Iterator[EventBatch]:
        if location in present:
            for batch in archive.location(location).events():
                yield batch
                if progress is not None:
                    progress(len(batch))

    write_events(archive.definitions, events, target, logical)


def write_events(definitions: Definitions, events: Callable[[int], Iterable[EventBatch]],
                 target: str | os.PathLike[str], logical: Any = None) -> None:
    """Write a trace given as definitions and a function from location index to its event
    batches as an OTF2 archive in the folder ``target`` (replaced atomically), its
    events carrying the attributes of the `Logical` answer ``logical`` if given."""
    target = Path(target)
    binding = load(str(target))
    plan = make_plan(definitions, binding)
    marks = LogicalAttributes(binding, plan, logical) if logical is not None else None
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
                fast = FastPath.create(binding, plan)
                for index, ref in enumerate(plan.locations):
                    location_writer = _write_location(binding, writer, plan, fast, definitions, index, ref,
                                                      events(index), marks.of(index) if marks else None)
                    counts[ref] = location_writer.count
                    if location_writer.last is not None:
                        times.append(location_writer.last)
        except _otf2.Error as error:
            raise FormatError(f"the OTF2 library failed: {error}", path=str(target)) from None
        except FormatError as error:
            raise FormatError(error.reason, path=str(target)) from None


def _set_archive_properties(binding: Binding, writer: Any, properties: dict[str, Any]) -> None:
    """Creator, description, machine name and properties of the anchor file."""
    writer.creator = str(properties.get("creator", ""))
    writer.description = str(properties.get("description", ""))
    writer.machine_name = str(properties.get("machine_name", ""))
    for name, value in dict(properties.get("properties", {})).items():
        binding._otf2.Archive_SetProperty(writer.handle, str(name), str(value), True)


def _write_location(binding: Binding, writer: Any, plan: Plan, fast: FastPath | None, definitions: Definitions,
                    index: int, ref: int, batches: Iterable[EventBatch], marks: Marks | None = None
                    ) -> _LocationWriter:
    """Write the events of model location ``index`` (OTF2 location ``ref``), with the
    attribute lists of ``marks``."""
    _otf2 = binding._otf2
    definition_writer = _otf2.Archive_GetDefWriter(writer.handle, ref)   # an empty local definition file
    event_writer = _otf2.Archive_GetEvtWriter(writer.handle, ref)
    try:
        location_writer = _LocationWriter(binding, plan, definitions, binding.writer_address(event_writer), index,
                                          fast, marks)
        location_writer.write(batches)
    finally:
        _otf2.Archive_CloseEvtWriter(writer.handle, event_writer)
        _otf2.Archive_CloseDefWriter(writer.handle, definition_writer)
    return location_writer
