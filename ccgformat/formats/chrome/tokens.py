"""One location's events as export tokens - calls begun and ended, and instants - read
batch by batch (the reference: a Python step per event).

A GENERIC ``chrome:fields`` record gives its fields to the next event; ``chrome:event``
and ``chrome:flow`` records are written as they are stored (a flow's RECV and SEND right
after it at its time are part of it); consecutive METRIC samples of one counter at one
time form one counter event; every other event is an instant of category ``ccgformat``.
A record, a flow or a counter may span two batches: `Tokenizer.clean` says when none is
open.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any, Union

from ...model import COLUMNS, KIND_FIELDS, PEER_KINDS, Definitions, EventBatch, EventKind
from .common import FIELDS, FLOW, GENERIC_TEXT, OWN, UINT64_END, WHOLE
from .nesting import ENTER, LEAVE, POINT
from .placement import Placement

__all__ = ["Call", "Instant", "Leave", "MESSAGES", "SENDS", "Token", "Tokenizer"]

MESSAGES = (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV)
SENDS = (EventKind.SEND, EventKind.ISEND)
_FLOW_FOLLOWERS = (EventKind.RECV, EventKind.SEND)


@dataclass(slots=True)
class Call:
    """A call begun; ``pre`` holds extra fields of its begin."""

    region: int
    start: int
    pre: dict[str, Any] | None = None


@dataclass(slots=True)
class Leave:
    """A call ended; ``post`` holds extra fields of its end."""

    region: int
    time: int
    post: dict[str, Any] | None = None


@dataclass(slots=True)
class Instant:
    """An exported event that is not a call: its fields (without pid, tid and ts). A plain
    message also records ``(kind, peer, comm, tag)`` for pairing."""

    time: int
    event: dict[str, Any]
    message: tuple[int, int, int, int] | None = None


Token = tuple[int, Union[Call, Leave, Instant]]


@dataclass(slots=True)
class _Counter:
    """A counter event being gathered from consecutive METRIC samples."""

    time: int
    name: str
    pending: dict[str, Any] | None
    args: dict[str, Any] = field(default_factory=dict)


def _sample_json(bits: int, value_type: str) -> int | float | str:
    if value_type == "uint64":
        return bits % UINT64_END
    if value_type != "double":
        return bits
    number = struct.unpack("<d", struct.pack("<q", bits))[0]
    if math.isfinite(number):
        return number
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


class Tokenizer:
    """Turns one location's batches, in order, into export tokens."""

    def __init__(self, definitions: Definitions, placement: Placement):
        self.definitions = definitions
        self.placement = placement
        self.objects: dict[int, dict[str, Any] | None] = {}
        self.pending: dict[str, Any] | None = None   #: fields for the next event
        self.followers: list[int] = []               #: kinds a flow step may still absorb
        self.follow_time = 0
        self.counter: _Counter | None = None

    @property
    def clean(self) -> bool:
        """Whether no record, flow or counter is open (the next event starts afresh)."""
        return self.pending is None and not self.followers and self.counter is None

    def text(self, index: int) -> str | None:
        strings = self.definitions.strings
        return strings[index] if 0 <= index < len(strings) else None

    def object(self, index: int) -> dict[str, Any] | None:
        """The JSON object string ``index`` holds (None if it is none); parsed once."""
        if index not in self.objects:
            try:
                value = json.loads(self.text(index) or "")
            except ValueError:
                value = None
            self.objects[index] = value if isinstance(value, dict) else None
        return self.objects[index]

    def feed(self, batch: EventBatch) -> list[Token]:
        """The tokens completed by the next batch of the location."""
        tokens: list[Token] = []
        columns = [batch.time.tolist(), batch.kind.tolist()] + [getattr(batch, name).tolist() for name in COLUMNS]
        for row in zip(*columns):
            self._event(row, tokens)
        return tokens

    def finish(self) -> list[Token]:
        """The tokens still open at the location's end."""
        tokens: list[Token] = []
        self._close_counter(tokens)
        self.pending, self.followers = None, []
        return tokens

    def _event(self, row: tuple[int, ...], tokens: list[Token]) -> None:
        at, what = row[0], row[1]
        if self.followers:
            while self.followers and not (what == self.followers[0] and at == self.follow_time):
                del self.followers[0]
            if self.followers:
                del self.followers[0]
                return
        if self.counter is not None:
            if self._counts(row):
                return
            self._close_counter(tokens)
        if what == EventKind.GENERIC and self._record(row, tokens):
            return
        pending, self.pending = self.pending, None
        if what == EventKind.ENTER:
            tokens.append((ENTER, Call(row[2], at, pending)))
        elif what == EventKind.LEAVE:
            tokens.append((LEAVE, Leave(row[2], at, pending)))
        elif what == EventKind.METRIC:
            self.counter = _Counter(at, self.placement.counters[row[2]][0], pending)
            self._counts(row)
        else:
            tokens.append((POINT, self._own(row)))

    def _record(self, row: tuple[int, ...], tokens: list[Token]) -> bool:
        """A GENERIC record of the Chrome import; False when it is an ordinary event."""
        record = self.text(row[2])
        loaded = self.object(row[-1]) if record in (FIELDS, FLOW, WHOLE) else None
        if record == FIELDS and loaded is not None:
            self.pending = loaded
            return True
        if loaded is not None and isinstance(loaded.get("ph"), str):
            if record == FLOW:     # the messages the flow step became
                self.followers, self.follow_time = list(_FLOW_FOLLOWERS), row[0]
            tokens.append((POINT, Instant(row[0], loaded)))
            self.pending = None
            return True
        return False

    def _counts(self, row: tuple[int, ...]) -> bool:
        """Add a METRIC sample to the open counter event if it belongs there (consecutive
        samples of one counter at one time with distinct series form one event)."""
        counter = self.counter
        assert counter is not None
        if row[1] != EventKind.METRIC or row[0] != counter.time:
            return False
        name, series = self.placement.counters[row[2]]
        if name != counter.name or series in counter.args:
            return False
        counter.args[series] = _sample_json(row[-1], self.definitions.metrics[row[2]].value_type)
        return True

    def _close_counter(self, tokens: list[Token]) -> None:
        counter = self.counter
        if counter is not None:
            event = {"ph": "C", "name": counter.name, **(counter.pending or {}), "args": counter.args}
            tokens.append((POINT, Instant(counter.time, event)))
            self.counter = None

    def _own(self, row: tuple[int, ...]) -> Instant:
        """A ``ccgformat`` instant carrying the model event ``row`` (time, kind, COLUMNS) exactly."""
        kind = EventKind(row[1])
        fields = dict(zip(COLUMNS, row[2:]))
        args: dict[str, Any] = {"kind": kind.name}
        for name in KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft:
            number = fields[name]
            if name == "ref" and kind in PEER_KINDS:
                args["peer"] = list(self.placement.places[number])
            elif kind == EventKind.GENERIC and (text := self.text(number)) is not None:
                args[GENERIC_TEXT[name]] = text
            else:
                args[name] = number
        event = {"ph": "i", "s": "t", "name": kind.name, "cat": OWN, "args": args}
        if kind in MESSAGES:
            return Instant(row[0], event, (int(kind), fields["ref"], fields["comm"], fields["tag"]))
        if kind == EventKind.GENERIC:
            event["name"] = args.get("record", kind.name)
        return Instant(row[0], event)
