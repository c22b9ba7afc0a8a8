"""The OTF v1 record syntax, short and long form, as one regular expression per record.

Every record of definition, event and marker files (OTF 1.12.3 keywords) is a `Record`:
a name, its short and long keyword and its fields in writing order. A field is the
record's leading value (no keyword) or a keyword followed by a value. Numbers are
lowercase hex, texts are double-quoted, member lists are hex numbers each followed by a
comma, a version is ``major.minor.sub``. Spaces and tabs may separate the tokens (the
long form writes them, the short form does not); a keyword ends where a value begins, so
``E1fX3`` is Enter 0x1f with source location 3. `parse` returns the record and its
fields (ints, strs, lists of ints; a key-value payload stays hex text), or None when no
record of the given family matches the whole line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

#: Field value kinds: their pattern and how the matched bytes become a Python value.
_VALUES: dict[str, tuple[bytes, Callable[[bytes], Any]]] = {
    "int": (rb"[0-9a-f]+", lambda raw: int(raw, 16)),
    "text": (rb'"[^"\n]*"', lambda raw: decode_text(raw[1:-1])),
    "ints": (rb"(?:[0-9a-f]+,)*", lambda raw: [int(x, 16) for x in raw.split(b",") if x]),
    "version": (rb"[0-9a-f]+\.[0-9a-f]+\.[0-9a-f]+", lambda raw: raw.decode("ascii")),
    "hex": (rb"[0-9a-f]*", lambda raw: raw.decode("ascii")),
}
_SPACE = rb"[ \t]*"


def decode_text(raw: bytes) -> str:
    """A record's text: UTF-8 where valid, else Latin-1 (OTF writers copy bytes as given)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


@dataclass(frozen=True)
class Field:
    """One field: its name, value kind, (short, long) keyword or () for a leading value."""

    name: str
    kind: str = "int"
    keywords: tuple[str, ...] = ()
    optional: bool = False


@dataclass(frozen=True)
class Record:
    """A record type and its compiled syntax."""

    name: str
    short: str
    long: str
    fields: tuple[Field, ...]
    pattern: re.Pattern[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = [_keyword(self.short, self.long)]
        for item in self.fields:
            value = _VALUES[item.kind][0]
            part = _SPACE + (_keyword(*item.keywords) + _SPACE if item.keywords else b"") + b"(" + value + b")"
            parts.append(b"(?:" + part + b")?" if item.optional else part)
        object.__setattr__(self, "pattern", re.compile(b"".join(parts)))

    def parse(self, line: bytes) -> dict[str, Any] | None:
        match = self.pattern.fullmatch(line)
        if match is None:
            return None
        return {item.name: _VALUES[item.kind][1](raw)
                for item, raw in zip(self.fields, match.groups(), strict=True) if raw is not None}


def _keyword(short: str, long: str) -> bytes:
    """Either keyword; the long one is tried first because a short one may prefix it."""
    return b"(?:" + re.escape(long.encode()) + b"|" + re.escape(short.encode()) + b")"


# Local keywords (short, long) of OTF_Keywords.h.
NAME, PARENT, MEMBERS, GROUP = ("NM", "NAME"), ("PT", "PARENT"), ("M", "MEMBERS"), ("G", "GROUP")
SCL, TYPE, VALUE, TAG, TIME = ("X", "SCL"), ("Y", "TYPE"), ("V", "VALUE"), ("T", "TAG"), ("T", "TIME")
LENGTH, COMM, ROOT, SENT, RECVD = ("L", "LEN"), ("C", "COMM"), ("RT", "ROOT"), ("S", "SENT"), ("R", "RECVD")
DURATION, HANDLE, OPERATION, BYTES = ("D", "DUR"), ("H", "HANDLEID"), ("OP", "OPERATION"), ("B", "BYTES")
MATCH, PROCESS, UNIT, PROPERTIES = ("MI", "MATCHID"), ("P", "PROCESS"), ("U", "UNIT"), ("P", "PROPERTIES")


def _f(name: str, kind: str = "int", keywords: tuple[str, ...] = (), optional: bool = False) -> Field:
    return Field(name, kind, keywords, optional)


_SOURCE = _f("scl", "int", SCL, optional=True)
_NAMED = (_f("name", "text", NAME),)
_P2P = (_f("length", "int", LENGTH), _f("tag", "int", TAG), _f("communicator", "int", COMM), _SOURCE)
_RMA = (_f("target", "int", PROCESS), _f("communicator", "int", COMM), _f("tag", "int", TAG),
        _f("bytes", "int", LENGTH), _SOURCE)

#: Definition records (``D``/``DEF`` + keyword), files ``*.def``.
DEFINITIONS: tuple[Record, ...] = tuple(Record(name, "D" + short, "DEF" + long, fields)
                                        for name, short, long, fields in (
    ("DefinitionComment", "CMT", "COMMENT", (_f("comment", "text"),)),
    ("DefTimerResolution", "TR", "TIMERRESOLUTION", (_f("ticks_per_second"),)),
    ("DefProcess", "P", "PROCESS", (_f("process"), _f("name", "text", NAME, True),
                                     _f("parent", "int", PARENT, True))),
    ("DefProcessGroup", "PG", "PROCESSGROUP", (_f("group"), _f("members", "ints", MEMBERS)) + _NAMED),
    ("DefAttributeList", "A", "ATTRIBUTELIST", (_f("attribute_list"), _f("attributes", "ints", MEMBERS))),
    ("DefProcessOrGroupAttributes", "PGA", "PROCESSORGROUPATTR", (_f("process"), _f("attribute_list", "int", VALUE))),
    ("DefFunction", "F", "FUNCTION", (_f("function"), _f("group", "int", GROUP)) + _NAMED + (_SOURCE,)),
    ("DefFunctionGroup", "FG", "FUNCTIONGROUP", (_f("group"),) + _NAMED),
    ("DefCollectiveOperation", "CO", "COLLOP", (_f("operation"),) + _NAMED + (_f("type", "int", TYPE),)),
    ("DefCounter", "CNT", "COUNTER", (_f("counter"), _f("group", "int", GROUP)) + _NAMED
     + (_f("properties", "int", PROPERTIES), _f("unit", "text", UNIT))),
    ("DefCounterGroup", "CG", "COUNTERGROUP", (_f("group"),) + _NAMED),
    ("DefScl", "S", "SCL", (_f("scl"), _f("file", "int", ("F", "FILE")), _f("line", "int", ("LN", "LINE")))),
    ("DefSclFile", "SF", "SCLFILE", (_f("file"),) + _NAMED),
    ("DefUniqueId", "UI", "UNIQUEID", (_f("unique_id"),)),
    ("DefVersion", "V", "VERSION", (_f("version", "version"), _f("identifier", "text", optional=True))),
    ("DefCreator", "CR", "CREATOR", (_f("creator", "text"),)),
    ("DefFile", "FL", "FILE", (_f("file"),) + _NAMED + (_f("group", "int", GROUP),)),
    ("DefFileGroup", "FLG", "FILEGROUP", (_f("group"),) + _NAMED),
    ("DefKeyValue", "K", "KEYVALUE", (_f("key"), _f("type", "int", TYPE)) + _NAMED
     + (_f("description", "text", TAG),)),
    ("DefTimeRange", "TRG", "TIMERANGE", (_f("minimum"), _f("maximum", "int", TIME))),
    ("DefCounterAssignments", "CA", "COUNTERASSIGNMENTS", (_f("counter"), _f("members", "ints", MEMBERS))),
    ("DefProcessSubstitutes", "PS", "PROCESSSUBSTITUTES", (_f("representative"), _f("processes", "ints", MEMBERS))),
    ("DefAuxSamplePoint", "AUX", "AUXSAMPLEPOINT", (_f("time"), _f("type", "int", TYPE))),
))

#: Event records, files ``*.events``.
EVENTS: tuple[Record, ...] = tuple(Record(name, short, long, fields) for name, short, long, fields in (
    ("NoOp", "N", "NOOP", ()),
    ("EventComment", "#", "#EVTCOMMENT", (_f("comment", "text"),)),
    ("Enter", "E", "ENTER", (_f("function"), _SOURCE)),
    ("Leave", "L", "LEAVE", (_f("function", optional=True), _SOURCE)),
    ("RecvMsg", "R", "RECEIVE", (_f("sender"),) + _P2P),
    ("SendMsg", "S", "SEND", (_f("receiver"),) + _P2P),
    ("Counter", "CNT", "COUNTER", (_f("counter"), _f("value", "int", VALUE))),
    ("CollectiveOperation", "COP", "COLLOP", (_f("operation"), _f("communicator", "int", COMM),
                                              _f("root", "int", ROOT), _f("sent", "int", SENT),
                                              _f("received", "int", RECVD), _f("duration", "int", DURATION),
                                              _SOURCE)),
    ("BeginCollectiveOperation", "COPB", "COLLOPBEGIN", (_f("operation"), _f("matching_id", "int", HANDLE),
                                                         _f("communicator", "int", COMM), _f("root", "int", ROOT),
                                                         _f("sent", "int", SENT), _f("received", "int", RECVD),
                                                         _SOURCE)),
    ("EndCollectiveOperation", "COPE", "COLLOPEND", (_f("matching_id"),)),
    ("BeginProcess", "PB", "PROCESSBEGIN", ()),
    ("EndProcess", "PE", "PROCESSEND", ()),
    ("FileOperation", "F", "FILEOP", (_f("file"), _f("handle", "int", HANDLE), _f("operation", "int", OPERATION),
                                      _f("bytes", "int", BYTES), _f("duration", "int", DURATION), _SOURCE)),
    ("BeginFileOperation", "FA", "FILEOPBEGINNEW", (_f("matching_id"), _SOURCE)),
    ("EndFileOperation", "FF", "FILEOPENDNEW", (_f("file"), _f("matching_id", "int", MATCH),
                                                _f("handle", "int", HANDLE), _f("operation", "int", OPERATION),
                                                _f("bytes", "int", BYTES), _SOURCE)),
    ("BeginFileOperationOld", "FB", "FILEOPBEGIN", (_f("handle"), _SOURCE)),
    ("EndFileOperationOld", "FE", "FILEOPEND", (_f("file"), _f("handle", "int", HANDLE),
                                                _f("operation", "int", OPERATION), _f("bytes", "int", BYTES),
                                                _SOURCE)),
    ("RMAPut", "T", "TRMAPUT", (_f("origin"),) + _RMA),
    ("RMAPutRemoteEnd", "U", "URMAPUTRE", (_f("origin"),) + _RMA),
    ("RMAGet", "G", "GRMAGET", (_f("origin"),) + _RMA),
    ("RMAEnd", "M", "MRMAEND", (_f("remote"), _f("communicator", "int", COMM), _f("tag", "int", TAG), _SOURCE)),
))

#: Marker records, files ``*.marker``.
MARKERS: tuple[Record, ...] = (
    Record("DefMarker", "MD", "MARKERDEF", (_f("marker"),) + _NAMED + (_f("type", "int", TYPE),)),
    Record("Marker", "MS", "MARKERSPOT", (_f("marker"), _f("time", "int", TIME), _f("process", "int", PROCESS),
                                          _f("text", "text", VALUE))),
)

#: A key-value pair attached to the next record of any file (the byte-array type adds its length).
KEY_VALUE = Record("KeyValue", "K", "KEY", (_f("key"), _f("type", "int", TYPE), _f("value", "hex", VALUE),
                                             _f("length", "int", LENGTH, True)))


class Family:
    """The records one kind of file may hold (plus key-value lines), indexed by first byte."""

    def __init__(self, records: tuple[Record, ...]):
        self.by_first: dict[int, list[Record]] = {}
        for record in sorted(records + (KEY_VALUE,), key=lambda r: -len(r.short)):
            for keyword in (record.short, record.long):
                candidates = self.by_first.setdefault(keyword.encode()[0], [])
                if record not in candidates:
                    candidates.append(record)

    def parse(self, line: bytes) -> tuple[Record, dict[str, Any]] | None:
        """The record on ``line`` (non-empty, without surrounding white space) and its
        fields, or None."""
        for record in self.by_first.get(line[0], ()):
            fields = record.parse(line)
            if fields is not None:
                return record, fields
        return None


DEFINITION_FILE = Family(DEFINITIONS)
EVENT_FILE = Family(EVENTS)
MARKER_FILE = Family(MARKERS)
