"""Definition records (types below 100): parsed in file order, continuation records folded in."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .source import Source

#: Fixed-layout definition records: name, struct format, field names.
_DEFINITIONS: dict[int, tuple[str, str, tuple[str, ...]]] = {
    3: ("MACHINE", "III", ("mid", "nodec", "mnid")),
    4: ("NODE", "IIIId", ("nid", "mid", "cpuc", "nnid", "cr")),
    5: ("PROCESS", "II", ("pid", "pnid")),
    6: ("THREAD", "III", ("tid", "pid", "tnid")),
    7: ("LOCATION", "IIIII", ("lid", "mid", "nid", "pid", "tid")),
    8: ("FILE", "II", ("fid", "fnid")),
    9: ("REGION", "IIIIIIB", ("rid", "rnid", "fid", "begln", "endln", "rdid", "rtype")),
    10: ("METRIC", "IIIBBB", ("metid", "metnid", "metdid", "metdtype", "metmode", "metiv")),
    12: ("OFFSET", "dd", ("ltime", "offset")),
    13: ("LAST_DEF", "", ()),
    14: ("NUM_EVENTS", "I", ("eventc",)),
    15: ("CALL_SITE", "IIIII", ("csid", "fid", "lno", "erid", "lrid")),
    18: ("MPI_WIN", "II", ("wid", "cid")),
    20: ("CALL_PATH", "IIIQ", ("cpid", "rid", "ppid", "order")),
    23: ("MAP_SECTION", "I", ("rank",)),
    24: ("MAP_OFFSET", "II", ("rank", "offset")),
    29: ("MPI_COMM_REF", "II", ("cid", "gid")),
    30: ("MPI_COMM_DIST", "IIIII", ("cid", "root", "lcid", "lrank", "size")),
}
#: Definition records of variable length (those with a continuation record included).
_VARIABLE = {1: "STRING", 11: "MPI_COMM", 16: "CART_TOPOLOGY", 17: "CART_COORDS", 21: "EVENT_TYPES",
             22: "EVENT_COUNTS", 25: "IDMAP", 27: "MPI_GROUP"}
_CONTINUATIONS = {2: "STRING_CNT", 19: "MPI_COMM_CNT", 26: "IDMAP_CNT", 28: "MPI_GROUP_CNT"}
_MAX_WORLD = 1 << 24     # ranks of an MPI_GROUP with the WORLD flag (its ranks are not listed)
_GROUP_WORLD = 1         # ELG_GROUP_WORLD bit of an MPI_GROUP mode


class _Cursor:
    """Reads the fields of one record body in the file's byte order."""

    def __init__(self, source: Source, offset: int, name: str, body: bytes) -> None:
        self.source, self.offset, self.name, self.body, self.pos = source, offset, name, body, 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        """The next fields, as a `struct` format without byte order."""
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.body):
            raise self.source.error(f"truncated {self.name} record: its {len(self.body)}-byte body ends "
                                    f"before its fields do", self.offset)
        values = struct.unpack_from(self.source.order + fmt, self.body, self.pos)
        self.pos += size
        return values

    def rest(self) -> bytes:
        """The unread remainder of the body."""
        data, self.pos = self.body[self.pos:], len(self.body)
        return data


def _json_value(value: Any) -> Any:
    """``value``, with non-finite floats as their repr (JSON has none)."""
    return repr(value) if isinstance(value, float) and not math.isfinite(value) else value


#: The fields of a definition record that hold a STRING id, and whether the model holds
#: that string's text (a THREAD's only when a LOCATION is that thread): `extension_rows`
#: leaves the texts the model holds out and writes the others in place of their ids.
_STRING_FIELDS: dict[str, dict[str, bool]] = {
    "MACHINE": {"mnid": True}, "NODE": {"nnid": True}, "PROCESS": {"pnid": True}, "THREAD": {"tnid": True},
    "FILE": {"fnid": False}, "REGION": {"rnid": True, "rdid": True}, "METRIC": {"metnid": True, "metdid": False},
    "CART_TOPOLOGY": {"tnid": False, "dimids": False}}

#: Definition kinds whose records are looked up by id, and the id field.
_KEYS = {"MACHINE": "mid", "NODE": "nid", "PROCESS": "pid", "LOCATION": "lid", "FILE": "fid", "REGION": "rid",
         "METRIC": "metid", "CALL_SITE": "csid", "MPI_COMM": "cid", "MPI_COMM_REF": "cid", "MPI_GROUP": "gid"}


@dataclass
class DefinitionRecords:
    """Parsed definition records in file order, and per kind: id -> (offset, record)."""

    strings: dict[int, str] = field(default_factory=dict)
    tables: dict[str, dict[int, tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    threads: dict[tuple[int, int], tuple[int, dict[str, Any]]] = field(default_factory=dict)
    offsets: list[tuple[float, float]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    def table(self, name: str) -> dict[int, tuple[int, dict[str, Any]]]:
        """The records of one kind by id (empty if the file has none)."""
        return self.tables.get(name, {})


class DefinitionReader:
    """Parses the definition records in file order, folding in their continuation records."""

    def __init__(self, source: Source, starts: np.ndarray) -> None:
        self.source = source
        self.starts: list[int] = starts.tolist()
        self.i = 0
        self.defs = DefinitionRecords()

    def run(self) -> DefinitionRecords:
        """Parse every definition record."""
        while self.i < len(self.starts):
            start = self.starts[self.i]
            kind = self.source.data[start + 1]
            if kind in _CONTINUATIONS:
                raise self.source.error(f"{_CONTINUATIONS[kind]} record without the record it continues", start)
            record = self.parse(start, kind, self.body(start))
            self.register(start, record)
            self.defs.records.append(record)
            self.i += 1
        return self.defs

    def body(self, start: int) -> bytes:
        """The body of the record at ``start``."""
        return self.source.data[start + 2:start + 2 + self.source.data[start]]

    def continuation(self, kind: int) -> bytes:
        """The body of the continuation record that must follow the current record."""
        current = self.starts[self.i]
        expected = current + 2 + self.source.data[current]
        if self.i + 1 >= len(self.starts) or self.starts[self.i + 1] != expected or \
                self.source.data[expected + 1] != kind:
            raise self.source.error(f"{_CONTINUATIONS[kind]} record expected here", expected)
        self.i += 1
        body = self.body(expected)
        if not body:
            raise self.source.error(f"empty {_CONTINUATIONS[kind]} record", expected)
        return body

    def continued(self, kind: int, first: bytes, size: int) -> bytes:
        """``size`` bytes: those of ``first``, then of continuation records."""
        data = first[:size]
        while len(data) < size:
            data += self.continuation(kind)[:size - len(data)]
        return data

    def parse(self, start: int, kind: int, body: bytes) -> dict[str, Any]:
        """One record as a JSON-ready dict; unknown types keep their body in hex."""
        source = self.source
        if kind == 1:
            return self.string(start, body)
        if kind not in _DEFINITIONS and kind not in _VARIABLE:
            return {"record": "UNKNOWN", "type": kind, "data": body.hex()}
        name = _DEFINITIONS[kind][0] if kind in _DEFINITIONS else _VARIABLE[kind]
        cursor = _Cursor(source, start, name, body)
        if kind in _DEFINITIONS:
            _, fmt, names = _DEFINITIONS[kind]
            if kind == 4 and source.version < 1001:      # NODE has a clock rate since 1.1
                fmt, names = fmt[:-1], names[:-1]
            values = cursor.take(fmt)
            record: dict[str, Any] = {"record": name, **{n: _json_value(v) for n, v in zip(names, values)}}
            if kind == 12:
                if len(self.defs.offsets) == 2:
                    raise source.error("a third OFFSET record (a trace has at most two)", start)
                self.defs.offsets.append((values[0], values[1]))
        elif kind == 11:
            cid, = cursor.take("I")
            mode = cursor.take("B")[0] if source.version >= 1003 else 0   # mode since 1.3
            size, = cursor.take("I")
            bits = self.continued(19, cursor.rest(), size)
            record = {"record": name, "cid": cid, "mode": mode,
                      "ranks": [i for i in range(8 * size) if bits[i >> 3] >> (i & 7) & 1], "bytes": size}
        elif kind in (25, 27):
            head = cursor.take("BBI" if kind == 25 else "IBI")
            count, world = head[2], kind == 27 and head[1] & _GROUP_WORLD
            if world and count > _MAX_WORLD:
                raise source.error(f"MPI_GROUP of {count} ranks (at most {_MAX_WORLD} are accepted)", start)
            raw = b"" if world else self.continued(kind + 1, cursor.rest(), 4 * count)
            values = list(range(count)) if world else list(struct.unpack(f"{source.order}{count}I", raw))
            keys = ("type", "mode", "count", "map") if kind == 25 else ("gid", "mode", "count", "ranks")
            record = {"record": name, **dict(zip(keys, (*head, values)))}
        elif kind in (16, 17):
            topid, ref, ndims = cursor.take("IIB")
            record = {"record": name, "topid": topid, "cid" if kind == 16 else "lid": ref,
                      "dims" if kind == 16 else "coords": list(cursor.take(f"{ndims}I"))}
            if kind == 16:
                record["periods"] = list(cursor.take(f"{ndims}B"))
                if source.version >= 1009:                # names since 1.9
                    record["tnid"], = cursor.take("I")
                    record["dimids"] = list(cursor.take(f"{ndims}I"))
        else:                                             # EVENT_TYPES, EVENT_COUNTS
            count, = cursor.take("I")
            record = {"record": name, "values": list(cursor.take(f"{count}{'B' if kind == 21 else 'I'}"))}
        extra = cursor.rest()
        if extra:
            record["extra"] = extra.hex()
        return record

    def string(self, start: int, body: bytes) -> dict[str, Any]:
        """A STRING record and its STRING_CNT records (UTF-8, else Latin-1)."""
        strid, count = _Cursor(self.source, start, "STRING", body).take("IB")
        raw = body[5:]
        for _ in range(count):
            raw += self.continuation(2)
        end = raw.find(b"\0")
        if end < 0:
            raise self.source.error("STRING text lacks its terminating NUL byte", start)
        try:
            text = raw[:end].decode("utf-8")
        except UnicodeDecodeError:
            text = raw[:end].decode("latin-1")
        if strid in self.defs.strings:
            raise self.source.error(f"STRING id {strid} defined twice", start)
        self.defs.strings[strid] = text
        return {"record": "STRING", "strid": strid, "text": text}

    def register(self, start: int, record: dict[str, Any]) -> None:
        """File a record that is looked up by id; an id defined twice is an error."""
        name = record["record"]
        if name == "THREAD":
            key, where = (record["pid"], record["tid"]), self.defs.threads
            what = f"THREAD {record['tid']} of process {record['pid']}"
        elif name in _KEYS:
            key, where = record[_KEYS[name]], self.defs.tables.setdefault(name, {})
            what = f"{name} id {key}"
        else:
            return
        if key in where:
            raise self.source.error(f"{what} defined twice", start)
        where[key] = (start, record)


def extension_rows(defs: DefinitionRecords) -> list[list[Any]]:
    """The definition records as ``extensions["epilog"]["definitions"]`` keeps them since
    its version 2 (docs/formats/epilog.md): in file order, each as its name followed by
    its fields in the order of its layout. A field that holds a STRING id is null where
    the model holds that text (a name), the text itself where it does not (a file name);
    an id no STRING defines stays a number. The STRING records those fields name are left
    out; the others stay, as ``["STRING", strid, text]``."""
    located = {(record["pid"], record["tid"]) for _, record in defs.table("LOCATION").values()}
    named: set[int] = set()

    def value(record: dict[str, Any], key: str, item: Any) -> Any:
        if item not in defs.strings:
            return item
        named.add(item)
        held = _STRING_FIELDS[record["record"]][key]
        if record["record"] == "THREAD":
            held = (record["pid"], record["tid"]) in located
        return None if held else defs.strings[item]

    def row(record: dict[str, Any]) -> list[Any]:
        fields = _STRING_FIELDS.get(record["record"], {})
        return [record["record"], *(
            ([value(record, key, item) for item in field] if isinstance(field, list) else value(record, key, field))
            if key in fields else field for key, field in record.items() if key != "record")]

    rows = [None if record["record"] == "STRING" else row(record) for record in defs.records]
    return [[record["record"], record["strid"], record["text"]] if kept is None else kept
            for record, kept in zip(defs.records, rows)
            if kept is not None or record["strid"] not in named]
