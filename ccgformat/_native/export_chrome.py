"""Chrome Trace Event JSON in C (export_chrome.c): the first reading of a batch's calls
(`scan`) and the lines of a batch (`ChromeLines.lines`), for batches of calls and
ccgformat instants; ccgformat/formats/chrome/fast.py prepares them."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ..model import COLUMNS, EventBatch
from . import CCG_OK, load
from .export_text import Strings, set_clock

ffi, lib = load()

__all__ = ["ChromeLines", "ScanState", "scan"]

#: Bytes of output asked of C at a time.
CHUNK_BYTES = 1 << 20
_I64 = "int64_t *"


def _pointer(array: np.ndarray, ctype: str = _I64) -> Any:
    return ffi.cast(ctype, ffi.from_buffer(array))


class ScanState:
    """The first reading's state of a location as C reads it (`ccg_chrome_scan`): the
    scalars of calls.CallScan and its open calls as columns (number, start, must)."""

    def __init__(self, scalars: dict[str, int], stack: np.ndarray):
        self.struct = ffi.new("ccg_chrome_scan *", scalars)
        self.stack = np.ascontiguousarray(stack, np.int64)
        self.struct.capacity = self.stack.shape[1]
        self.struct.number, self.struct.start, self.struct.must = (_pointer(row) for row in self.stack)

    def scalars(self) -> dict[str, int]:
        s = self.struct
        return {name: getattr(s, name) for name in ("calls", "complete", "has_entry", "entry", "entry_open",
                                                    "has_ended", "ended", "depth")}

    def open_calls(self) -> np.ndarray:
        """The open calls after the scan: rows number, start, must."""
        return self.stack[:, :self.struct.depth]


def scan(state: ScanState, batch: EventBatch, first_call: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | int:
    """Scan a batch: the ends of its calls (by number from ``first_call``), and the
    numbers and ends of calls begun before it that it ends; or the index of a LEAVE that
    finds no call open."""
    calls = int(np.count_nonzero(batch.kind == 0))
    ends = np.full(calls, -1, np.int64)
    room = max(1, state.struct.depth)
    late_number, late_end = np.empty(room, np.int64), np.empty(room, np.int64)
    count, failed = ffi.new("int64_t *"), ffi.new("int64_t *")
    time = np.ascontiguousarray(batch.time, np.int64)
    kind = np.ascontiguousarray(batch.kind, np.uint8)
    code = lib.ccg_chrome_scan_batch(state.struct, _pointer(time), _pointer(kind, "uint8_t *"), len(batch),
                                     first_call, _pointer(ends), _pointer(late_number), _pointer(late_end), count,
                                     failed)
    if code != CCG_OK:
        return int(failed[0])
    return ends, late_number[:count[0]], late_end[:count[0]]


class ChromeLines:
    """The rendered pieces of a trace's lines (see `ccg_chrome_style`) and the clock."""

    def __init__(self, clock: dict[str, int], complete_begin: Sequence[bytes], begin: Sequence[bytes],
                 end: Sequence[bytes], peer: Sequence[bytes], instant: Sequence[bytes], flow: Sequence[bytes],
                 flow_end: Sequence[bytes], fields: Sequence[Sequence[tuple[int, bytes]]], line_bytes: int):
        self.style = style = ffi.new("ccg_chrome_style *")
        set_clock(style.clock, **clock)
        self.tables = {name: Strings(items) for name, items in (
            ("complete_begin", complete_begin), ("begin", begin), ("end", end), ("peer", peer),
            ("instant", instant), ("flow", flow), ("flow_end", flow_end),
            ("field_key", [key for kind in fields for _, key in kind]))}
        for name, table in self.tables.items():
            setattr(style, name, table.struct[0])
        self.field_start = np.zeros(len(fields) + 1, np.int64)
        np.cumsum([len(kind) for kind in fields], out=self.field_start[1:])
        self.field_column = np.array([column for kind in fields for column, _ in kind] or [0], np.int64)
        style.field_start, style.field_column = _pointer(self.field_start), _pointer(self.field_column)
        style.line_bytes = line_bytes
        self.out = bytearray(CHUNK_BYTES + line_bytes)
        self._out = ffi.from_buffer(self.out)
        self.written = ffi.new("int64_t *")

    def lines(self, batch: EventBatch, place: bytes, complete: bool, ends: np.ndarray, flow: np.ndarray,
              first: bool) -> Iterator[memoryview]:
        """The text of a batch's events, a chunk at a time; ``first``: no event was written
        before (the first line has no leading separator)."""
        columns = {name: np.ascontiguousarray(getattr(batch, name), np.int64) for name in COLUMNS + ("time",)}
        kind = np.ascontiguousarray(batch.kind, np.uint8)
        ends = np.ascontiguousarray(ends, np.int64)
        flow = np.ascontiguousarray(flow, np.int64)
        keep = ffi.from_buffer(place)
        b = ffi.new("ccg_chrome_batch *", {"count": len(batch), "place": keep, "place_bytes": len(place),
                                           "complete": int(complete), "ends": _pointer(ends), "flow": _pointer(flow),
                                           "first": int(first)})
        for name, array in columns.items():
            setattr(b.columns, name, _pointer(array))
        b.columns.kind = _pointer(kind, "uint8_t *")
        index = 0
        while index < len(batch):
            index = lib.ccg_chrome_lines(self.style, b, index, self._out, len(self.out), self.written)
            yield memoryview(self.out)[:self.written[0]]   # valid until the next chunk
