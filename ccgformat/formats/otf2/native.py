"""Reading OTF2 events in C (``ccgformat/_native/otf2read.c``): no Python per event.

The native core dlopens the OTF2 library inside the `otf2` package and registers C event
callbacks for the records with a kind of their own (`PROTOTYPES`) that write the model
columns directly, with the mapping of the Python reference (`callbacks` + `columns`).

Every other record (ProgramBegin, MeasurementOnOff, ParameterInt, ...) is skipped by the
library and noted by the C reader as a gap (where, how many records). Such sparse
records are read by the reference itself, with callbacks for them only (the ``sparse``
function `reader` passes in), and their events are inserted at the gaps. Whatever else
the reference turns into a GENERIC event or an error - an attribute list on a mapped
record, ranks outside their communicator, sizes or timestamps beyond int64, metric values
of other types than defined, ENTER/LEAVE records that break the nesting, undefined
references, damaged files - the native reader does not map: `location` returns None and
`reader` reads that location with the reference. So the result is always the
reference's.

A location is read in chunks of at most `BATCH_SIZE` events, each handed on as an
`EventBatch` over freshly allocated arrays. Since a location may only be handed on once
it is known to need no fallback (the nesting is known at its end), a first pass checks
it; a location of up to `SINGLE_PASS_EVENTS` is held from that pass, a larger one read
a second time and handed on chunk by chunk, so memory stays bounded.

`NativeEvents.create` returns None, with a `NativeOtf2Warning` (once per archive read),
when the native core is built but the OTF2 library or one of its functions cannot be
loaded.
"""

from __future__ import annotations

import ctypes
import warnings
from collections import deque
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np

from ...errors import FormatError
from ...model import COLUMNS, EventBatch
from ..common import BATCH_SIZE
from .binding import Binding
from .definitions import Tables

__all__ = ["PROTOTYPES", "LocationBatches", "NativeEvents", "NativeOtf2Warning", "Sparse", "otf2_reader_address",
           "symbol_names"]

_UINT64_MAX = (1 << 64) - 1
#: Locations of up to about this many events are held from the checking pass, larger ones
#: read again (chunk by chunk): the memory bound of a location, at 65 bytes per event.
SINGLE_PASS_EVENTS = 1 << 21
#: Gaps (runs of skipped records) per chunk at most; a chunk ends early when they are used up.
GAPS_PER_CHUNK = 4096
_MESSAGE_BYTES = 512
#: The C argument types (after the attribute list) of the records otf2read.c maps, as it
#: declares them; checked against the `otf2` package's own prototypes before use.
PROTOTYPES = {
    "Enter": ("uint32_t",), "Leave": ("uint32_t",),
    "MpiSend": ("uint32_t", "uint32_t", "uint32_t", "uint64_t"),
    "MpiRecv": ("uint32_t", "uint32_t", "uint32_t", "uint64_t"),
    "MpiIsend": ("uint32_t", "uint32_t", "uint32_t", "uint64_t", "uint64_t"),
    "MpiIrecv": ("uint32_t", "uint32_t", "uint32_t", "uint64_t", "uint64_t"),
    "MpiIrecvRequest": ("uint64_t",), "MpiIsendComplete": ("uint64_t",), "MpiCollectiveBegin": (),
    "MpiCollectiveEnd": ("uint8_t", "uint32_t", "uint32_t", "uint64_t", "uint64_t"),
    "Metric": ("uint32_t", "uint8_t", "uintptr_t", "uintptr_t"),
}
#: column rows of a chunk's int64 block, in `EventBatch` order after ``kind``: the order
#: in which otf2r_columns_place lays them out
_ROWS = ("time", "ref", "comm", "tag", "request", "size", "recv_size", "value")
_ALL = ("time", "kind") + COLUMNS

#: The reference's reading of a location's sparse records: its columns and, per record, the
#: index of its first event (plus the event count at the end); None when it failed.
Sparse = Callable[[int, str, "int | None"], "tuple[dict[str, np.ndarray], np.ndarray] | None"]


class _Chunk(NamedTuple):
    """Events read in C, and the gaps where skipped records' events go (all in ``buffer``)."""

    batch: EventBatch
    gap_at: np.ndarray
    gap_records: np.ndarray
    buffer: np.ndarray


class NativeOtf2Warning(UserWarning):
    """The native OTF2 reader cannot load; events are read by the Python reference."""


def symbol_names() -> list[str]:
    """The OTF2 C functions the native reader looks up, in the order it expects them."""
    ffi, lib = _core()
    return [ffi.string(lib.otf2r_symbol_name(i)).decode() for i in range(lib.otf2r_symbol_count())]


def _core() -> tuple[Any, Any]:
    from ..._native import load
    return load()


class _Library:
    """The dlopened OTF2 library (closed when garbage collected)."""

    def __init__(self, path: str, names: Sequence[str]) -> None:
        ffi, lib = _core()
        self.ffi, self.lib = ffi, lib
        encoded = [ffi.new("char[]", name.encode()) for name in names]
        array = ffi.new("const char *[]", encoded or [ffi.NULL])
        out = ffi.new("otf2r_library **")
        message = ffi.new("char[]", _MESSAGE_BYTES)
        if lib.otf2r_library_open(path.encode(), array, len(names), out, message, _MESSAGE_BYTES) != 0:
            raise OSError(ffi.string(message).decode(errors="replace") or "cannot load the OTF2 library")
        self.handle = ffi.gc(out[0], lib.otf2r_library_close)


class NativeEvents:
    """Per location: its batches read in C, or None when the Python reference must read it."""

    def __init__(self, library: _Library, otf2_reader: int, tables: Tables, sparse: Sparse) -> None:
        self.library = library
        self.sparse = sparse
        ffi, lib = library.ffi, library.lib
        self.ffi, self.lib = ffi, lib
        self._arrays = _table_arrays(tables)
        struct = ffi.new("otf2r_tables *")
        for name, values in self._arrays.items():
            setattr(struct, name, ffi.cast(f"{_C_TYPES[values.dtype.char]} *", values.ctypes.data))
        struct.region_count = len(tables.region_refs)
        struct.comm_count = len(tables.comm_refs)
        struct.member_count = len(tables.comm_members)
        struct.metric_count = len(self._arrays["metric_refs"])
        out = ffi.new("otf2r_reader **")
        message = ffi.new("char[]", _MESSAGE_BYTES)
        code = lib.otf2r_reader_new(library.handle, ffi.cast("void *", otf2_reader), struct, out, message,
                                    _MESSAGE_BYTES)
        if code != 0:
            raise MemoryError(ffi.string(message).decode(errors="replace")) if code == 1 else \
                RuntimeError(ffi.string(message).decode(errors="replace"))
        self.reader = out[0]
        self._open: list[_Stream] = []
        # what every stream's open and reads fill in, one stream at a time: made once, not
        # four times per location (20,000 ranks of 50 events spent more on them than in C)
        self.stream_out = ffi.new("otf2r_stream **")
        self.message = ffi.new("char[]", _MESSAGE_BYTES)
        self.columns = ffi.new("otf2r_columns *")
        self.state = ffi.new("int *")

    @classmethod
    def create(cls, binding: Binding, otf2_reader: int, tables: Tables, sparse: Sparse,
               library_path: str | None = None, names: Sequence[str] | None = None) -> NativeEvents | None:
        """The native reader of the open OTF2 reader at address ``otf2_reader`` (``sparse``
        reads the records it skips); None (with a `NativeOtf2Warning`) when the library
        (default: the one of ``binding``) or one of the functions ``names`` (default:
        `symbol_names`) cannot be loaded, or the library's event records have other C types
        than `otf2read.c` declares (`PROTOTYPES`)."""
        try:
            changed = [name for name, types in PROTOTYPES.items()
                       if name not in binding.records or binding.records[name].c_types != types]
            if changed:
                raise OSError(f"the OTF2 records {', '.join(changed)} have other C types than expected")
            path = binding._otf2.Config.lib_path() if library_path is None else library_path
            library = _Library(path, symbol_names() if names is None else names)
        except (OSError, AttributeError) as error:       # AttributeError: a native core built without otf2read.c
            warnings.warn(f"the native OTF2 reader cannot load ({error}); reading events in Python",
                          NativeOtf2Warning, stacklevel=3)
            return None
        return cls(library, otf2_reader, tables, sparse)

    def close(self) -> None:
        """Close every stream and the reader (before the OTF2 reader is closed)."""
        for stream in list(self._open):
            stream.close()
        if self.reader is not None:
            self.lib.otf2r_reader_free(self.reader)
            self.reader = None

    def attach(self, otf2_reader: int) -> None:
        """Read from now on through the OTF2 reader at address ``otf2_reader`` (another
        reader of the same archive: the importer opens one per batch of locations)."""
        if self._open:
            raise RuntimeError("a location's stream is still open")
        self.lib.otf2r_reader_attach(self.reader, self.ffi.cast("void *", otf2_reader))

    def location(self, ref: int, path: str, records: int | None) -> LocationBatches | None:
        """The batches of location ``ref`` (event file ``path`` of ``records`` event records
        by its chunk headers; None: unknown); None when the Python reference must read it
        (its event reader is then closed, to be opened anew)."""
        limit = _UINT64_MAX if records is None else records
        stream = self._stream(ref, limit)
        try:
            chunk, state = stream.read()
            held: list[_Chunk] | None = [chunk]
            while state == self.lib.OTF2R_MORE:
                if held is not None and len(held) * BATCH_SIZE < SINGLE_PASS_EVENTS:
                    chunk, state = stream.read()
                    held.append(chunk)
                else:       # too many to hold: only checked here, a second pass yields them
                    held = None
                    state = stream.read(into=chunk)[1]
            skipped = self.lib.otf2r_stream_skipped(stream.handle)
        finally:
            stream.close()
        if state == self.lib.OTF2R_FALLBACK:
            return None
        filler = None
        if skipped:
            sparse = self.sparse(ref, path, records)
            if sparse is None or len(sparse[1]) != skipped + 1:
                return None
            filler = _Filler(*sparse)
        chunks = iter(held) if held is not None else self._stream(ref, limit).chunks()
        return LocationBatches(_batches(chunks, filler))

    def _stream(self, ref: int, limit: int) -> _Stream:
        stream = _Stream(self, ref, limit)
        self._open.append(stream)
        return stream


class LocationBatches:
    """A location's batches, read while they are consumed; `detach` reads the rest at once
    (the reader calls it before it moves on, so that the OTF2 reader may close)."""

    def __init__(self, source: Iterator[EventBatch]) -> None:
        self._source = source
        self._held: deque[EventBatch] = deque()

    def __iter__(self) -> LocationBatches:
        return self

    def __next__(self) -> EventBatch:
        return self._held.popleft() if self._held else next(self._source)

    def detach(self) -> None:
        self._held.extend(self._source)


class _Stream:
    """One pass over a location's events, chunk by chunk."""

    def __init__(self, owner: NativeEvents, ref: int, limit: int) -> None:
        ffi, lib = owner.ffi, owner.lib
        self.owner, self.ffi, self.lib = owner, ffi, lib
        out, message = owner.stream_out, owner.message
        if lib.otf2r_stream_open(owner.reader, ref, limit, out, message, _MESSAGE_BYTES) != 0:
            raise FormatError(ffi.string(message).decode(errors="replace"))
        self.handle = out[0]
        # a location of fewer records than a batch gets columns of its size, not a batch's
        # (4 MB, mapped and unmapped per location); a record of more events than one (a
        # Metric) may end the chunk early, which only makes one more chunk
        headroom = lib.OTF2R_HEADROOM
        self.capacity = BATCH_SIZE if limit >= BATCH_SIZE else max(2 * headroom, limit + headroom + 1)
        self.gap_capacity = GAPS_PER_CHUNK if limit >= GAPS_PER_CHUNK else limit + 2
        # one buffer per chunk: the int64 rows, the gaps (at and records), the kinds
        # (otf2r_columns_place points the columns there)
        self.gaps_from = 8 * len(_ROWS) * self.capacity
        self.kinds_from = self.gaps_from + 16 * self.gap_capacity
        self.size = self.kinds_from + self.capacity

    def read(self, into: _Chunk | None = None) -> tuple[_Chunk, int]:
        """The next chunk of at most `BATCH_SIZE` events (in the arrays of the chunk ``into``
        when given, which then no longer holds its events) and the stream's state."""
        if self.handle is None:
            raise FormatError("the OTF2 reader was closed before this location's events were read")
        buffer = np.empty(self.size, np.uint8) if into is None else into.buffer
        c, state, capacity, gap_capacity = self.owner.columns, self.owner.state, self.capacity, self.gap_capacity
        self.lib.otf2r_columns_place(c, self.ffi.from_buffer(buffer), capacity, gap_capacity)
        code = self.lib.otf2r_stream_read(self.handle, c, state)
        if code != 0:
            raise MemoryError("out of memory while reading OTF2 events") if code == 1 else \
                RuntimeError(f"native OTF2 reader error {code}")
        n, g = c.count, c.gap_count
        time, *columns = buffer[:self.gaps_from].view(np.int64).reshape(len(_ROWS), capacity)[:, :n]
        gaps = buffer[self.gaps_from:self.kinds_from].view(np.int64).reshape(2, gap_capacity)
        batch = EventBatch(time, buffer[self.kinds_from:self.kinds_from + n], *columns)   # the order of _ROWS
        return _Chunk(batch, gaps[0, :g], gaps[1, :g], buffer), state[0]

    def chunks(self) -> Iterator[_Chunk]:
        """Every chunk of the stream (a second pass: the first found no fallback)."""
        try:
            while True:
                chunk, state = self.read()
                if state == self.lib.OTF2R_FALLBACK:
                    raise FormatError("the event file changed while it was read")
                yield chunk
                if state == self.lib.OTF2R_END:
                    return
        finally:
            self.close()

    def close(self) -> None:
        if self.handle is not None:
            self.lib.otf2r_stream_close(self.handle)
            self.handle = None
            self.owner._open.remove(self)


class _Filler:
    """Inserts the reference's events of skipped records at the gaps, in record order."""

    def __init__(self, columns: dict[str, np.ndarray], starts: np.ndarray) -> None:
        self.columns = columns
        self.starts = starts
        self.record = 0           # the next skipped record

    def fill(self, chunk: _Chunk) -> EventBatch:
        if not len(chunk.gap_at):
            return chunk.batch
        ends = self.record + np.cumsum(chunk.gap_records)
        if ends[-1] >= len(self.starts):
            raise FormatError("the event file changed while it was read")
        events = self.starts[ends] - self.starts[ends - chunk.gap_records]
        first, last = self.starts[self.record], self.starts[ends[-1]]
        self.record = int(ends[-1])
        at = np.repeat(chunk.gap_at, events)
        return EventBatch(**{name: np.insert(getattr(chunk.batch, name), at, self.columns[name][first:last])
                             for name in _ALL})


def _batches(chunks: Iterator[_Chunk], filler: _Filler | None) -> Iterator[EventBatch]:
    """The chunks' events, with those of the skipped records, in batches of at most `BATCH_SIZE`."""
    for chunk in chunks:
        batch = chunk.batch if filler is None else filler.fill(chunk)
        if len(batch) <= BATCH_SIZE:
            yield batch
            continue
        for start in range(0, len(batch), BATCH_SIZE):
            yield batch[start:start + BATCH_SIZE]


_C_TYPES = {"Q": "uint64_t", "L": "uint64_t", "q": "int64_t", "l": "int64_t", "B": "uint8_t"}


def _table_arrays(tables: Tables) -> dict[str, np.ndarray]:
    """The reference tables as the C arrays of `otf2r_tables` (metrics sorted by reference)."""
    metric_refs = sorted(tables.metrics)
    layouts = [tables.metrics[ref] for ref in metric_refs]
    type_start = np.zeros(len(layouts) + 1, np.int64)
    type_start[1:] = np.cumsum([len(types) for _, types in layouts], dtype=np.int64)
    arrays = {
        "region_refs": tables.region_refs, "region_index": tables.region_index,
        "comm_refs": tables.comm_refs, "comm_index": tables.comm_index, "comm_size": tables.comm_size,
        "comm_offset": tables.comm_offset, "comm_members": tables.comm_members,
        "metric_refs": np.array(metric_refs, np.uint64),
        "metric_first": np.array([first for first, _ in layouts], np.int64),
        "metric_type_start": type_start,
        "metric_types": np.frombuffer(b"".join(types for _, types in layouts) or b"\0", np.uint8),
    }
    return {name: np.ascontiguousarray(values, dtype=np.uint8 if name == "metric_types" else
                                       np.uint64 if name.endswith("_refs") else np.int64)
            for name, values in arrays.items()}


def otf2_reader_address(handle: Any) -> int:
    """The address of the OTF2_Reader behind the `otf2` package's handle."""
    return ctypes.cast(handle, ctypes.c_void_p).value or 0
