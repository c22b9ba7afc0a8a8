"""Reading one location's events into plain lists through C callbacks.

Every OTF2 event record gets a ctypes callback (see `binding`) that appends to four
lists: time, kind, ref and, for the events that use more columns, flat runs of the
other fields. Records without a kind of their own, and attribute lists, become GENERIC
``otf2:<Record>`` events whose fields are compact JSON. No Python object per event:
about four times the speed of the `otf2` package's own event iteration.
`columns.to_columns` turns the lists into model columns.
"""

from __future__ import annotations

import ctypes
from array import array
from typing import Any, Callable, Collection

from ...errors import FormatError
from ...model import EventKind
from ..common import StringTable
from .binding import CALLBACK_INTERRUPT, Binding
from .common import UINT64
from .definitions import Tables

__all__ = ["EventReader"]

_READ_CHUNK = 1 << 20
#: Event kinds as plain ints: the per-event lists convert to numpy 4x faster than IntEnums.
_COLL_BEGIN, _COLL_END, _METRIC, _MARKER, _GENERIC = (int(k) for k in (
    EventKind.COLL_BEGIN, EventKind.COLL_END, EventKind.METRIC, EventKind.MARKER, EventKind.GENERIC))


class EventReader:
    """Reads one location's events into lists through C callbacks."""

    def __init__(self, binding: Binding, tables: Tables, intern: StringTable, skip: Collection[str] = ()) -> None:
        """``skip``: records to leave without a callback (the library passes over them);
        then `starts` holds the first event of every record read."""
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
        self.starts: list[int] = []
        self.callbacks = binding._otf2.EvtReaderCallbacks_New()
        self._keep: list[Any] = []
        self._counted = bool(skip)
        handlers = self._handlers()
        for name, record in binding.records.items():
            if name not in skip:
                handler = handlers[name] if name in handlers else self._guarded(self._generic(name, record.fields))
                self._register(name, binding.callback_type(record), handler)
        self._register("Unknown", binding.callback_type(None), self._guarded(self._generic("Unknown", ())))

    def _register(self, name: str, prototype: Any, handler: Callable[..., int]) -> None:
        """Make ``handler`` the C callback of record ``name``."""
        if self._counted:
            handler = self._counting(handler)
        function = prototype(handler)
        self._keep.append(function)          # OTF2 holds only the C pointer
        self.binding.set_callback(self.callbacks, name, function)

    def _counting(self, handler: Callable[..., int]) -> Callable[..., int]:
        """``handler``, noting where the events of each record start."""
        starts, time = self.starts, self.time

        def callback(*arguments: Any) -> int:
            starts.append(len(time))
            return handler(*arguments)
        return callback

    def close(self) -> None:
        """Release the callback table."""
        self.binding._otf2.EvtReaderCallbacks_Delete(self.callbacks)

    def _fail(self, error: BaseException) -> int:
        """Keep ``error`` for `read` and stop reading."""
        self.error = error
        return CALLBACK_INTERRUPT

    def _attributes(self, address: int, time: int) -> None:
        """The attribute list at ``address`` as a GENERIC ``otf2:attributes`` event."""
        self._generic_event(time, "otf2:attributes", self.binding.attributes(address))

    def _generic_event(self, time: int, kind: str, fields: Any) -> None:
        """Append a GENERIC event of ``kind`` with ``fields`` as compact JSON."""
        self.ref.append(self.intern(kind))
        self.extra.extend((len(self.time), 0, 0, 0, 0, 0, self.intern.json(fields, ensure_ascii=True)))
        self.time.append(time)
        self.kind.append(_GENERIC)

    def _guarded(self, body: Callable[..., None]) -> Callable[..., int]:
        """The C callback of a record around ``body(time, position, *fields)``: the record's
        attribute list first (a GENERIC event before its own), and any exception kept for
        `read`, the library interrupted (none may cross into C)."""
        count = self.binding.lib.OTF2_AttributeList_GetNumberOfElements
        attributes, fail = self._attributes, self._fail

        def callback(location: int, time: int, position: int, user: Any, attribute_list: int, *fields: Any) -> int:
            try:
                if attribute_list and count(attribute_list):
                    attributes(attribute_list, time)
                body(time, position, *fields)
                return 0
            except BaseException as error:
                return fail(error)
        return callback

    def _generic(self, name: str, fields: tuple[str, ...]) -> Callable[..., None]:
        """The body (for `_guarded`) that keeps record ``name`` as a GENERIC ``otf2:<name>`` event."""
        kind, generic_event = f"otf2:{name}", self._generic_event

        def body(time: int, position: int, *values: int) -> None:
            generic_event(time, kind, dict(zip(fields, values)))
        return body

    def _handlers(self) -> dict[str, Callable[..., int]]:
        """Callbacks of the records with a kind of their own (kept lean: they run per event)."""
        time_, kind_, ref_, extra_ = self.time, self.kind, self.ref, self.extra
        ta, ka, ra, xa = time_.append, kind_.append, ref_.append, extra_.extend
        binding, generic_event, guarded = self.binding, self._generic_event, self._guarded

        def region(code: int) -> Callable[..., int]:
            def body(time: int, position: int, region: int) -> None:
                ta(time)
                ka(code)
                ra(region)
            return guarded(body)

        def p2p(code: int) -> Callable[..., int]:
            def body(time: int, position: int, peer: int, comm: int, tag: int, length: int,
                     request: int = 0) -> None:          # MpiSend/Recv have no request
                xa((len(time_), comm, tag, request, length, 0, 0))
                ta(time)
                ka(code)
                ra(peer)
            return guarded(body)

        def request(code: int) -> Callable[..., int]:
            def body(time: int, position: int, request: int) -> None:
                xa((len(time_), 0, 0, request, 0, 0, 0))
                ta(time)
                ka(code)
                ra(0)
            return guarded(body)

        @guarded
        def collective_begin(time: int, position: int) -> None:
            ta(time)
            ka(_COLL_BEGIN)
            ra(0)

        @guarded
        def collective_end(time: int, position: int, operation: int, comm: int, root: int, sent: int,
                           received: int) -> None:
            xa((len(time_), comm, root, 0, sent, received, 0))
            ta(time)
            ka(_COLL_END)
            ra(operation)

        layouts = self.tables.metrics

        @guarded
        def metric(time: int, position: int, metric: int, n: int, types: int, values: int) -> None:
            layout = layouts.get(metric)
            if layout is None:
                raise FormatError(f"event {position} (time {time}): metric {metric} is not defined")
            type_bytes = ctypes.string_at(types, n) if n else b""
            bits = array("Q", ctypes.string_at(values, 8 * n) if n else b"")
            if type_bytes != layout[1]:
                generic_event(time, "otf2:Metric", {"metric": metric, "types": list(type_bytes),
                                                    "values": bits.tolist()})
                return
            base = layout[0]
            for i, value in enumerate(bits):
                xa((len(time_), 0, 0, 0, 0, 0, value))
                ta(time)
                ka(_METRIC)
                ra(base + i)

        @guarded
        def program_begin(time: int, position: int, name: int, n: int, arguments: int) -> None:
            generic_event(time, "otf2:ProgramBegin",
                          {"programName": name, "programArguments": binding.unpack("uint32_t", arguments, n)})

        markers, generics, texts, intern = self.tables.markers, self.tables.generics, self.tables.strings, self.intern
        parameter_int, parameter_string = self._generic("ParameterInt", ("parameter", "value")), \
            self._generic("ParameterString", ("parameter", "string"))

        @guarded
        def marker(time: int, position: int, parameter: int, value: int) -> None:
            if parameter not in markers:
                return parameter_int(time, position, parameter, value)
            xa((len(time_), 0, 0, 0, 0, 0, value & UINT64))
            ta(time)
            ka(_MARKER)
            ra(markers[parameter] & UINT64)

        @guarded
        def generic(time: int, position: int, parameter: int, string: int) -> None:
            if parameter not in generics:
                return parameter_string(time, position, parameter, string)
            xa((len(time_), 0, 0, 0, 0, 0, intern(texts[string])))
            ta(time)
            ka(_GENERIC)
            ra(intern(generics[parameter]))

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

    def read(self, handle: Any, ref: int, path: str, records: int | None) -> None:
        """Fill the lists with the events of location ``ref`` (event file ``path``), which
        must hold exactly ``records`` event records (its chunk headers' count; None: unknown)."""
        _otf2 = self.binding._otf2
        for column in (self.time, self.kind, self.ref, self.extra, self.starts):
            column.clear()
        self.error = None
        reader = _otf2.Reader_GetEvtReader(handle, ref)
        try:
            _otf2.EvtReader_SetCallbacks(reader, self.callbacks, None)
            # never more than one record past the announced count: a file cut short has the
            # library read (and repeat) memory it never filled
            read = 0
            while True:
                ask = _READ_CHUNK if records is None else min(_READ_CHUNK, records - read + 1)
                got = _otf2.EvtReader_ReadEvents(reader, ask)
                read += got
                if got < ask or (records is not None and read > records):
                    break
            if records is not None and read != records:
                raise FormatError(f"{read:,} event records where the chunk headers announce {records:,}: "
                                  "the file was cut short or is damaged", path=path)
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
