"""OTF v1 event streams to per-location columns of the event model.

An event file is a state machine: a line holding a hex number sets the time, ``*p`` the
process, ``K...`` lines collect key-values for the next record, and every other line is
a record of that process at that time. A stream may interleave several processes, so a
stream is read whole into per-process columns (``array('q')``) before its processes are
handed on; marker spots are then merged in by time (after events of equal time).

Mapping (fields no column holds, and a record's key-values, go into a GENERIC
``otf1:attributes`` event right before the event they belong to):

- ``E`` Enter -> ENTER; ``L`` Leave -> LEAVE of the innermost open region (a Leave
  naming function 0 while another function is open says so in its attributes). A Leave
  with nothing open (the trace starts inside a function) and an Enter still open at the
  end of the stream become GENERIC ``otf1:Leave`` / ``otf1:Enter``; a Leave naming a
  function other than the open one is an error.
- ``S``/``R`` -> SEND/RECV (peer process -> its location, communicator = the process
  group's index, tag, size = length).
- ``CNT`` -> METRIC (the raw 64-bit value).
- ``COP`` -> COLL_BEGIN and COLL_END at its time (operation index, communicator, tag =
  root location or -1 without a root, size = sent, recv_size = received; the duration is
  an attribute); ``COPB``/``COPE`` -> COLL_BEGIN/COLL_END paired by matching id (an
  attribute of the begin); a begin never ended becomes GENERIC
  ``otf1:BeginCollectiveOperation``.
- ``MS`` marker spots -> MARKER (ref = marker index, value = the text's string index).
- Everything else (``PB``, ``PE``, ``N``, ``#``, file operations, RMA) -> GENERIC
  ``otf1:<Record>`` whose value is the record's fields as compact JSON.
"""

from __future__ import annotations

import re
from array import array
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...errors import FormatError
from ...model import EventKind
from ..common import StringTable
from .definitions import Catalog, key_value
from .files import lines
from .grammar import EVENT_FILE, KEY_VALUE

_HEX = re.compile(rb"[0-9a-f]+")
_TIME_FIRST = frozenset(b"0123456789abcdef")
_STAR = ord("*")
_INT64_MAX = (1 << 63) - 1
ENTER, LEAVE, SEND, RECV = (int(EventKind.ENTER), int(EventKind.LEAVE), int(EventKind.SEND),
                            int(EventKind.RECV))
COLL_BEGIN, COLL_END, METRIC, MARKER, GENERIC = (int(EventKind.COLL_BEGIN), int(EventKind.COLL_END),
                                                 int(EventKind.METRIC), int(EventKind.MARKER),
                                                 int(EventKind.GENERIC))
#: A marker spot: (time, [(kind, ref, value), ...]) events to insert for one location.
Spot = tuple[int, list[tuple[int, int, int]]]


class Buffer:
    """The events of one location being read, column by column, and its open state."""

    __slots__ = ("time", "kind", "ref", "comm", "tag", "size", "recv_size", "value", "open", "collectives")

    def __init__(self) -> None:
        self.time, self.kind = array("q"), array("B")
        self.ref, self.comm, self.tag = array("q"), array("q"), array("q")
        self.size, self.recv_size, self.value = array("q"), array("q"), array("q")
        self.open: list[tuple[int, int, int]] = []            # (region, function id, position)
        self.collectives: dict[int, tuple[int, dict[str, Any], tuple[int, int, int]]] = {}

    def add(self, time: int, kind: int, ref: int = 0, comm: int = 0, tag: int = 0, size: int = 0,
            recv_size: int = 0, value: int = 0) -> None:
        self.time.append(time)
        self.kind.append(kind)
        self.ref.append(ref)
        self.comm.append(comm)
        self.tag.append(tag)
        self.size.append(size)
        self.recv_size.append(recv_size)
        self.value.append(value)

    def columns(self) -> dict[str, np.ndarray]:
        out = {name: np.frombuffer(getattr(self, name), dtype=np.int64).copy()
               for name in ("time", "ref", "comm", "tag", "size", "recv_size", "value")}
        out["kind"] = np.frombuffer(self.kind, dtype=np.uint8).copy()
        out["request"] = np.zeros(len(self.time), dtype=np.int64)
        return out


class StreamReader:
    """Reads one event file into a `Buffer` per process."""

    def __init__(self, path: Path, catalog: Catalog, strings: StringTable, claimed: set[int]):
        self.path = path
        self.catalog = catalog
        self.strings = strings
        self.claimed = claimed
        self.line = 0
        self.handlers: dict[str, Callable[[Buffer, int, dict[str, Any], list[list[Any]]], None]] = {
            "Enter": self._enter, "Leave": self._leave, "SendMsg": self._send, "RecvMsg": self._receive,
            "Counter": self._counter, "CollectiveOperation": self._collective,
            "BeginCollectiveOperation": self._begin_collective, "EndCollectiveOperation": self._end_collective,
        }

    def fail(self, reason: str) -> FormatError:
        return FormatError(reason, path=str(self.path), line=self.line)

    def read(self) -> dict[int, Buffer]:
        buffers: dict[int, Buffer] = {}
        time: int | None = None
        process: int | None = None
        buffer: Buffer | None = None
        pending: list[list[Any]] = []
        for number, line in lines(self.path):
            self.line = number
            first = line[0]
            if first in _TIME_FIRST:
                if not _HEX.fullmatch(line):
                    raise self.fail("unparseable time stamp line")
                value = int(line, 16)
                if time is not None and value < time:
                    raise self.fail(f"time stamp {value} is smaller than the previous one ({time})")
                if value > _INT64_MAX:
                    raise self.fail(f"time stamp {value} is out of range")
                time = value
            elif first == _STAR:
                if not _HEX.fullmatch(line, 1):
                    raise self.fail("unparseable process line")
                process = int(line[1:], 16)
                if process not in self.catalog.processes:
                    raise self.fail(f"process {process} is not defined")
                buffer = buffers.get(process)
            else:
                parsed = EVENT_FILE.parse(line)
                if parsed is None:
                    raise self.fail("unparseable event record")
                record, fields = parsed
                if record is KEY_VALUE:
                    key = fields["key"]
                    if key not in self.catalog.keys:
                        raise self.fail(f"key {key} is not defined")
                    pending.append(key_value(fields))
                    continue
                if process is None or time is None:
                    raise self.fail("record before the first time stamp and process line")
                if buffer is None:
                    buffer = self._buffer(buffers, process)
                handler = self.handlers.get(record.name)
                try:
                    if handler is None:
                        self.attributes(buffer, time, {}, pending)
                        self.generic(buffer, time, record.name, fields)
                    else:
                        handler(buffer, time, fields, pending)
                except OverflowError:
                    raise self.fail("a value does not fit in 64 signed bits") from None
                pending = []
        if pending:
            raise self.fail("key-value lines at the end of the file belong to no record")
        for buffer in buffers.values():
            self._close(buffer)
        return buffers

    def _buffer(self, buffers: dict[int, Buffer], process: int) -> Buffer:
        if process in self.claimed:
            raise self.fail(f"process {process} has events in more than one stream")
        self.claimed.add(process)
        buffer = buffers[process] = Buffer()
        return buffer

    def _lookup(self, table: dict[int, int], ident: int, what: str) -> int:
        try:
            return table[ident]
        except KeyError:
            raise self.fail(f"{what} {ident} is not defined") from None

    def generic(self, buffer: Buffer, time: int, name: str, fields: dict[str, Any]) -> None:
        buffer.add(time, GENERIC, ref=self.strings(f"otf1:{name}"), value=self.strings.json(fields, ensure_ascii=False))

    def attributes(self, buffer: Buffer, time: int, extra: dict[str, Any], pending: list[list[Any]]) -> None:
        if pending:
            extra["kv"] = pending
        if extra:
            self.generic(buffer, time, "attributes", extra)

    @staticmethod
    def _source(fields: dict[str, Any]) -> dict[str, Any]:
        return {"scl": fields["scl"]} if "scl" in fields else {}

    def _enter(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        function = fields["function"]
        region = self._lookup(self.catalog.functions, function, "function")
        self.attributes(buffer, time, self._source(fields), pending)
        buffer.open.append((region, function, len(buffer.time)))
        buffer.add(time, ENTER, ref=region)

    def _leave(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        function = fields.get("function", 0)
        if function:
            self._lookup(self.catalog.functions, function, "function")
        if not buffer.open:
            self.attributes(buffer, time, {}, pending)
            self.generic(buffer, time, "Leave", fields)
            return
        region, open_function, _ = buffer.open[-1]
        extra = self._source(fields)
        if function != open_function:
            if function:
                raise self.fail(f"Leave of function {function} while function {open_function} is open")
            extra["function"] = 0
        self.attributes(buffer, time, extra, pending)
        buffer.open.pop()
        buffer.add(time, LEAVE, ref=region)

    def _message(self, kind: int, peer: str, buffer: Buffer, time: int, fields: dict[str, Any],
                 pending: list[list[Any]]) -> None:
        location = self._lookup(self.catalog.processes, fields[peer], "process")
        comm = self._lookup(self.catalog.groups, fields["communicator"], "process group")
        self.attributes(buffer, time, self._source(fields), pending)
        buffer.add(time, kind, ref=location, comm=comm, tag=fields["tag"], size=fields["length"])

    def _send(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        self._message(SEND, "receiver", buffer, time, fields, pending)

    def _receive(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        self._message(RECV, "sender", buffer, time, fields, pending)

    def _counter(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        metric = self._lookup(self.catalog.counters, fields["counter"], "counter")
        value = fields["value"]
        if value >> 64:
            raise self.fail(f"counter value {value} does not fit in 64 bits")
        self.attributes(buffer, time, {}, pending)
        buffer.add(time, METRIC, ref=metric, value=value - (1 << 64) if value >> 63 else value)

    def _collective_columns(self, fields: dict[str, Any]) -> tuple[int, int, int]:
        operation = self._lookup(self.catalog.operations, fields["operation"], "collective operation")
        comm = self._lookup(self.catalog.groups, fields["communicator"], "process group")
        root = self._lookup(self.catalog.processes, fields["root"], "root process") if fields["root"] else -1
        return operation, comm, root

    def _collective(self, buffer: Buffer, time: int, fields: dict[str, Any], pending: list[list[Any]]) -> None:
        operation, comm, root = self._collective_columns(fields)
        self.attributes(buffer, time, {"duration": fields["duration"], **self._source(fields)}, pending)
        buffer.add(time, COLL_BEGIN)
        buffer.add(time, COLL_END, ref=operation, comm=comm, tag=root, size=fields["sent"],
                   recv_size=fields["received"])

    def _begin_collective(self, buffer: Buffer, time: int, fields: dict[str, Any],
                          pending: list[list[Any]]) -> None:
        columns = self._collective_columns(fields)
        match = fields["matching_id"]
        if match in buffer.collectives:
            raise self.fail(f"collective operation {match} begins twice")
        self.attributes(buffer, time, {"matching_id": match, **self._source(fields)}, pending)
        buffer.collectives[match] = (len(buffer.time), fields, columns)
        buffer.add(time, COLL_BEGIN)

    def _end_collective(self, buffer: Buffer, time: int, fields: dict[str, Any],
                        pending: list[list[Any]]) -> None:
        begin = buffer.collectives.pop(fields["matching_id"], None)
        if begin is None:
            raise self.fail(f"collective operation {fields['matching_id']} ends but never began")
        _, started, (operation, comm, root) = begin
        self.attributes(buffer, time, {}, pending)
        buffer.add(time, COLL_END, ref=operation, comm=comm, tag=root, size=started["sent"],
                   recv_size=started["received"])

    def _close(self, buffer: Buffer) -> None:
        """Regions still open and collectives never ended become GENERIC records."""
        rewrites = [(position, "Enter", {"function": function}) for _, function, position in buffer.open]
        rewrites += [(position, "BeginCollectiveOperation", fields)
                     for position, fields, _ in buffer.collectives.values()]
        for position, name, fields in rewrites:
            buffer.kind[position] = GENERIC
            buffer.ref[position] = self.strings(f"otf1:{name}")
            buffer.value[position] = self.strings.json(fields, ensure_ascii=False)
        buffer.open.clear()
        buffer.collectives.clear()


def merge_spots(columns: dict[str, np.ndarray], spots: list[Spot]) -> dict[str, np.ndarray]:
    """Insert marker spots after the events of equal or smaller time (spots in any order)."""
    if not spots:
        return columns
    rows = [(time, *event) for time, events in sorted(spots, key=lambda spot: spot[0]) for event in events]
    new = np.array(rows, dtype=np.int64).reshape(-1, 4)
    at = np.searchsorted(columns["time"], new[:, 0], side="right")
    inserted = {"time": new[:, 0], "kind": new[:, 1].astype(np.uint8), "ref": new[:, 2], "value": new[:, 3]}
    return {name: np.insert(values, at, inserted.get(name, 0)) for name, values in columns.items()}
