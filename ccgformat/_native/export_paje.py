"""Paje in C (export_paje.c): the lines of a merged batch up to where the reference must
take over; ccgformat/formats/paje/fast.py prepares the pieces and drives it."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..model import COLUMNS, EventBatch
from . import load
from .export_text import Strings, set_clock

ffi, lib = load()

__all__ = ["LINES", "PajeBatch", "PajeLines", "PajeState", "SLOTS", "STOPS"]

#: Line kinds, field slots and stop reasons, by the names of export_paje.h.
LINES = {name: getattr(lib, f"CCG_PAJE_{name}") for name in
         ("SET", "PUSH", "POP", "START_LINK", "END_LINK", "OTHER", "VARIABLE")}
SLOTS = {name: getattr(lib, f"CCG_PAJE_{name}") for name in
         ("LITERAL", "TIME", "CONTAINER", "REGION_TYPE", "REGION_VALUE", "METRIC_TYPE", "METRIC_VALUE", "LINK_VALUE",
          "LINK_KEY", "DESCRIBE")}
STOPS = {name: getattr(lib, f"CCG_PAJE_{name}") for name in ("DONE", "FULL", "EVENT", "GROUP")}
#: Bytes of output asked of C at a time.
CHUNK_BYTES = 1 << 20
_INT64_MAX = (1 << 63) - 1


def _pointer(array: np.ndarray, ctype: str = "int64_t *") -> Any:
    return ffi.cast(ctype, ffi.from_buffer(array))


class PajeLines:
    """The rendered pieces of one trace's lines (`ccg_paje_style`). ``lines`` maps a line
    kind (`LINES`) to its event definition's id and fields, each ``(slot, literal)``:
    a `SLOTS` code and, for a literal, its text."""

    def __init__(self, clock: dict[str, int], generic: bool, lines: dict[int, tuple[bytes, list[tuple[int, bytes]]]],
                 tables: dict[str, Sequence[bytes]], metric_format: Sequence[int],
                 describe: Sequence[Sequence[tuple[int, bytes]]], line_bytes: int):
        self.style = style = ffi.new("ccg_paje_style *")
        set_clock(style.clock, **clock)
        style.generic = int(generic)
        kinds = range(len(LINES))
        literals = sorted({text for _, fields in lines.values() for slot, text in fields if slot == SLOTS["LITERAL"]})
        self.tables = {name: Strings(items) for name, items in tables.items()}
        self.tables["line_id"] = Strings([lines[k][0] if k in lines else b"" for k in kinds])
        self.tables["literal"] = Strings(literals)
        self.tables["describe_key"] = Strings([key for fields in describe for _, key in fields])
        for name, table in self.tables.items():
            setattr(style, name, table.struct[0])
        slots = [fields if k in lines else [] for k, fields in ((k, lines.get(k, (b"", []))[1]) for k in kinds)]
        self.arrays = {
            "line_ok": np.array([k in lines for k in kinds], np.int64),
            "line_start": np.cumsum([0] + [len(fields) for fields in slots], dtype=np.int64),
            "slot": np.array([slot for fields in slots for slot, _ in fields] or [0], np.int64),
            "slot_literal": np.array([literals.index(text) if slot == SLOTS["LITERAL"] else 0
                                      for fields in slots for slot, text in fields] or [0], np.int64),
            "metric_format": np.array(list(metric_format) or [0], np.int64),
            "describe_start": np.cumsum([0] + [len(fields) for fields in describe], dtype=np.int64),
            "describe_column": np.array([column for fields in describe for column, _ in fields] or [0], np.int64),
        }
        for name, array in self.arrays.items():
            setattr(style, name, _pointer(array))
        style.line_bytes = line_bytes
        self.out = bytearray(CHUNK_BYTES + line_bytes)
        self._out = ffi.from_buffer(self.out)
        self.written = ffi.new("int64_t *")
        self.stop = ffi.new("int *")

    def run(self, state: PajeState, batch: PajeBatch, index: int) -> tuple[int, int, memoryview]:
        """Write from event ``index`` on: the first event not written, why (`STOPS`), and
        the text (valid until the next call)."""
        index = lib.ccg_paje_lines(self.style, state.struct, batch.struct, index, self._out, len(self.out),
                                   self.written, self.stop)
        return index, self.stop[0], memoryview(self.out)[:self.written[0]]


class PajeBatch:
    """The columns of a merged batch for C (kept alive with it)."""

    def __init__(self, locations: np.ndarray, batch: EventBatch, numbers: np.ndarray | None,
                 matched: np.ndarray | None):
        self.arrays = {name: np.ascontiguousarray(getattr(batch, name), np.int64) for name in ("time",) + COLUMNS}
        self.kind = np.ascontiguousarray(batch.kind, np.uint8)
        self.location = np.ascontiguousarray(locations, np.int64)
        self.numbers = np.ascontiguousarray(numbers if numbers is not None else np.zeros(0), np.int64)
        self.matched = np.ascontiguousarray(matched if matched is not None else np.zeros(0), np.uint8)
        self.struct = s = ffi.new("ccg_paje_batch *")
        for name, array in self.arrays.items():
            setattr(s.columns, name, _pointer(array))
        s.columns.kind = _pointer(self.kind, "uint8_t *")
        s.count = len(batch)
        s.location = _pointer(self.location)
        s.link_number = _pointer(self.numbers)
        s.link_matched = _pointer(self.matched, "uint8_t *")


class PajeState:
    """The writer's state as C reads and changes it: the group, the LEAVEs held back (as
    time and region; room for ``capacity``), the depth per location (the writer's own
    array, changed in place) and the time from which a new group may change containers."""

    def __init__(self, depth: np.ndarray, capacity: int):
        self.pending_arrays = np.zeros((2, capacity), np.int64)
        self.depth = depth
        self.struct = s = ffi.new("ccg_paje_state *")
        s.capacity = capacity
        s.pending_time, s.pending_ref = (_pointer(row) for row in self.pending_arrays)
        s.depth = _pointer(depth)
        s.locations = len(depth)

    def load(self, group: tuple[int, int] | None, pending: Sequence[tuple[int, int]], lifecycle: int | None) -> None:
        """Take the writer's group, held-back LEAVEs and next container change."""
        s = self.struct
        if len(pending) > s.capacity:
            raise ValueError("more LEAVEs held back than room for them")
        s.has_group = group is not None
        s.group_time, s.group_location = group if group is not None else (0, 0)
        s.pending = len(pending)
        if pending:
            self.pending_arrays[:, :len(pending)] = np.array(pending, np.int64).T
        s.lifecycle = _INT64_MAX if lifecycle is None else min(lifecycle, _INT64_MAX)

    def group(self) -> tuple[int, int] | None:
        s = self.struct
        return (s.group_time, s.group_location) if s.has_group else None

    def pending(self) -> list[tuple[int, int]]:
        """The LEAVEs held back: time and region."""
        return [(time, ref) for time, ref in self.pending_arrays[:, :self.struct.pending].T.tolist()]
