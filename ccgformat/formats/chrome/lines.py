"""The lines of a Chrome export: one JSON event per line, and the fields of the events
that calls and paired messages become."""

from __future__ import annotations

from typing import Any

from ...model import Region
from ..sink import Utf8Sink
from .clock import Clock
from .common import Key, compact
from .tokens import SENDS, Instant

__all__ = ["LineWriter", "begin_fields", "end_fields", "flow_fields", "place_fields"]


class LineWriter:
    """Writes the events, one per line."""

    def __init__(self, out: Utf8Sink, clock: Clock):
        self.out = out
        self.clock = clock
        self.first = True

    def event(self, fields: dict[str, Any], place: Key, time: int | None = None, end: int | None = None) -> None:
        """One event; ``time`` and ``end`` are timestamps in ticks. The duration is the
        difference of the written texts, so rounding keeps calls nested."""
        body = dict(fields)
        body.update(place_fields(place))
        text = compact(body)
        if time is not None:
            start = self.clock.scaled(time)
            text = text[:-1] + ',"ts":' + self.clock.text(start)
            text += (',"dur":' + self.clock.text(self.clock.scaled(end) - start) if end is not None else "") + "}"
        self.out.write(("" if self.first else ",\n") + text)
        self.first = False

    def lines(self, data: bytes | memoryview) -> None:
        """Events written elsewhere (by the native core), each but the first of the file
        preceded by a comma and a line break."""
        if len(data):
            self.out.write_bytes(data)
            self.first = False


def place_fields(place: Key) -> dict[str, Any]:
    """The ``pid`` and ``tid`` of an event at ``place`` (None: left out)."""
    return {name: value for name, value in zip(("pid", "tid"), place) if value is not None}


def begin_fields(region: Region, complete: bool) -> dict[str, Any]:
    """The begin of a call: a complete event (X) or a begin event (B)."""
    fields = {"ph": "X" if complete else "B", "name": region.name}
    if region.group:
        fields["cat"] = region.group
    return fields


def end_fields(region: Region) -> dict[str, Any]:
    """The end event of a call: it repeats its begin's name (speedscope and chrome-trace
    match by it)."""
    return {"ph": "E", "name": region.name}


def flow_fields(item: Instant, flow: int | None) -> dict[str, Any]:
    """An instant's fields; a paired message as a flow start (send) or end (receive)
    bound to its call."""
    if flow is None or item.message is None:
        return item.event
    event = {k: v for k, v in item.event.items() if k != "s"}
    event.update(name="message", id=flow)
    if item.message[0] in SENDS:
        return dict(event, ph="s")
    return dict(event, ph="f", bp="e")
