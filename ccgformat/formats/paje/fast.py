"""The native fast path of the Paje export (ccgformat/_native/export_paje.c): under the
native backend, C writes the lines of calls, messages, the other events of the generic
layout and integer metric samples, from pieces of text rendered (and quoted) here once,
with the writer's state (group, LEAVEs held back, depths) handed back and forth. The
reference `Writer.step` writes every other event - GENERIC records, markers, double
samples - and every event while a hint is pending; container changes stay with the
reference too (C stops before a group that may need one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ... import backends
from ...errors import FormatError
from ...model import COLUMNS, KIND_FIELDS, EventBatch, EventKind
from . import generic
from .hints import ENTER_WAYS, HINT, LEAVE_WAYS
from .syntax import date_scale, quote

if TYPE_CHECKING:
    from .writer import Writer

__all__ = ["FastPath"]

_TIME_BYTES = 41      # CCG_FIXED_BYTES
_NUMBER_BYTES = 20    # CCG_INT_BYTES
#: Each line C writes: the Paje event, and what each field of its definition holds - a slot
#: of export_paje.h by name, or text as it is written (bytes); fields not named are written
#: empty, as the reference writes them.
_STATE: dict[str, str | bytes] = {"Time": "TIME", "Type": "REGION_TYPE", "Container": "CONTAINER"}
_LINK: dict[str, str | bytes] = {"Time": "TIME", "Type": quote(generic.LINK).encode(), "Container": b"0",
                                 "Value": "LINK_VALUE", "Key": "LINK_KEY"}
_LINE_FIELDS: dict[str, tuple[str, dict[str, str | bytes]]] = {
    "SET": (ENTER_WAYS[1], {**_STATE, "Value": "REGION_VALUE"}),
    "PUSH": (ENTER_WAYS[0], {**_STATE, "Value": "REGION_VALUE"}),
    "POP": (LEAVE_WAYS[0], _STATE),
    "START_LINK": ("PajeStartLink", {**_LINK, "StartContainer": "CONTAINER"}),
    "END_LINK": ("PajeEndLink", {**_LINK, "EndContainer": "CONTAINER"}),
    "OTHER": ("PajeNewEvent", {"Time": "TIME", "Type": quote(generic.OTHER).encode(), "Container": "CONTAINER",
                               "Value": "DESCRIBE"}),
    "VARIABLE": ("PajeSetVariable", {"Time": "TIME", "Type": "METRIC_TYPE", "Container": "CONTAINER",
                                     "Value": "METRIC_VALUE"}),
}
_METRIC_FORMATS = {"int64": 0, "uint64": 1}


def _described(kind: EventKind) -> tuple[bytes, list[tuple[int, bytes]], bytes]:
    """How `generic.describe` writes an event of ``kind`` (quoted): head, fields, tail."""
    names = KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft
    quoted = '"' if names else ""
    return (quoted + kind.name).encode(), [(COLUMNS.index(n), f" {n}=".encode()) for n in names], quoted.encode()


class FastPath:
    """The pieces of one writer's lines and the C writer that joins them."""

    def __init__(self, writer: Writer):
        from ..._native.export_paje import LINES, SLOTS, PajeLines

        self.generic = writer.links is not None
        layout = writer.layout
        tables = {"region_type": [quote(state).encode() for state, _ in layout["regions"]],
                  "region_value": [quote(value).encode() for _, value in layout["regions"]],
                  "container": [quote(ref).encode() for ref in writer.location_refs],
                  "metric_type": [quote(name).encode() for name in layout["metrics"]]}
        metric_format = [_METRIC_FORMATS.get(writer.metric_types[i], -1) if i < len(writer.metric_types) else -1
                         for i in range(len(layout["metrics"]))]
        described = [_described(kind) if kind not in (EventKind.GENERIC, EventKind.METRIC, EventKind.MARKER)
                     else (b"", [], b"") for kind in EventKind]
        tables["describe_head"] = [head for head, _, _ in described]
        tables["describe_tail"] = [tail for _, _, tail in described]
        longest = {"LITERAL": 0, "TIME": _TIME_BYTES, "METRIC_VALUE": _NUMBER_BYTES,
                   "LINK_VALUE": len('"comm  tag "') + 2 * _NUMBER_BYTES, "LINK_KEY": 4 + 5 * _NUMBER_BYTES,
                   "DESCRIBE": max(len(head) + sum(len(key) + _NUMBER_BYTES for _, key in fields) + len(tail)
                                   for head, fields, tail in described),
                   **{name: max(map(len, tables[table]), default=0) for name, table in (
                       ("CONTAINER", "container"), ("REGION_TYPE", "region_type"), ("REGION_VALUE", "region_value"),
                       ("METRIC_TYPE", "metric_type"))}}
        lines: dict[int, tuple[bytes, list[tuple[int, bytes]]]] = {}
        line_bytes = 0
        for name, (event, holds) in _LINE_FIELDS.items():
            index = writer.default.get(event)
            if index is None:
                continue
            fields = []
            size = len(writer.ids[index]) + 1            # the id and the line break
            for field in writer.fields[index]:
                held = holds.get(field, quote("").encode())
                literal = isinstance(held, bytes)
                fields.append((SLOTS["LITERAL"], held) if literal else (SLOTS[held], b""))
                size += 1 + (len(held) if literal else longest[held])
            lines[LINES[name]] = (writer.ids[index].encode(), fields)
            line_bytes = max(line_bytes, size)
        definitions = writer.archive.definitions
        scale, decimals = date_scale(definitions.timer_resolution)
        clock = {"offset": definitions.clock_offset, "scale": scale, "numerator": 1 if scale else 10 ** decimals,
                 "denominator": definitions.timer_resolution, "digits": decimals, "half_even": False, "strip": False}
        self.lines = PajeLines(clock, self.generic, lines, tables, metric_format,
                               [fields for _, fields, _ in described], line_bytes)
        self.hint = writer.strings.index(HINT) if HINT in writer.strings else -1

    @classmethod
    def create(cls, writer: Writer) -> FastPath | None:
        """The fast path, or None under the Python backend, when C cannot write the dates
        exactly, or when the layout holds what the reference would only fail on when used."""
        if not backends.native():
            return None
        from ..._native.export_text import clock_fits

        scale, decimals = date_scale(writer.archive.definitions.timer_resolution)
        if not clock_fits(scale, 1 if scale else 10 ** decimals, decimals):
            return None
        try:
            return cls(writer)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, UnicodeEncodeError):
            return None

    def takes(self, batch: EventBatch) -> bool:
        """Whether C takes part in this batch: in the generic layout, not when a hint
        could reach a message (link numbers are counted a batch at a time)."""
        return not (self.generic and self.hint >= 0
                    and np.any((batch.kind == EventKind.GENERIC) & (batch.ref == self.hint)))

    def write(self, writer: Writer, locations: np.ndarray, batch: EventBatch) -> None:
        """Write a merged batch: C where it can, the reference where it must."""
        from ..._native.export_paje import STOPS, PajeBatch, PajeState

        numbers, matched = writer.links.numbers(locations, batch) if writer.links is not None else (None, None)
        columns = PajeBatch(locations, batch, numbers, matched)
        state = PajeState(writer.depth, len(writer.pending) + len(batch))
        index = self._reference(writer, locations, batch, numbers, 0)
        while index < len(batch):
            state.load(writer.group, [(time, ref) for time, ref, _ in writer.pending], writer.next_change())
            index, stop, text = self.lines.run(state, columns, index)
            writer.out.write_bytes(text)
            writer.group, writer.pending = state.group(), [(time, ref, {}) for time, ref in state.pending()]
            if stop == STOPS["GROUP"]:
                writer.begin_group(int(batch.time[index]), int(locations[index]))
            elif stop == STOPS["EVENT"]:
                index = self._reference(writer, locations, batch, numbers, index, at_least=1)
            elif stop not in (STOPS["DONE"], STOPS["FULL"]):
                raise FormatError(f"the native Paje writer stopped for an unknown reason ({stop})")

    @staticmethod
    def _reference(writer: Writer, locations: np.ndarray, batch: EventBatch, numbers: np.ndarray | None,
                   index: int, at_least: int = 0) -> int:
        """Let the reference write ``at_least`` events from ``index`` on, and then as long
        as a hint is pending (C writes no hint); returns the next index."""
        while index < len(batch) and (at_least > 0 or writer.hint or any(hint for _, _, hint in writer.pending)):
            number = int(numbers[index]) if numbers is not None else None
            writer.step(int(locations[index]), batch.event(index), number)
            index += 1
            at_least -= 1
        return index
