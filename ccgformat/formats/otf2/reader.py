"""Reading an OTF2 archive: the global definitions, then every location's events.

Events are read by the native core (`native`) when it is in use, with the records it
skips read by the Python reference (`callbacks` + `columns`); by the reference otherwise
and for every location the native reader leaves to it.

Whatever the number of locations, at most a location's definition reader and an event
reader or two (the native reader's second pass) are open at once: each location's local
definitions are read just before its events, and every reader is closed after its
location (the library holds a chunk buffer and a file per open reader)."""

from __future__ import annotations

import contextlib
import ctypes
import gc
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ... import backends
from ...errors import CcgError, FormatError
from ...model import Definitions, EventBatch
from ..common import StringTable, batches
from .anchor import find_anchor
from .binding import Binding, load
from .callbacks import EventReader
from .chunks import announced_records, holds_no_records
from .columns import to_columns
from .definitions import read_definitions
from .native import PROTOTYPES, LocationBatches, NativeEvents, otf2_reader_address

__all__ = ["read"]


def read(path: Path) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    """The definitions and the per-location event batches of an OTF2 archive."""
    anchor = find_anchor(Path(path))
    binding = load(str(anchor))
    _otf2 = binding._otf2
    errors = (_otf2.Error, TypeError, KeyError, ValueError)
    try:
        handle = _otf2.Reader_Open(str(anchor))
        if not handle:
            raise _otf2.Error("the library cannot open it")
    except errors as error:
        raise FormatError(f"not a readable OTF2 anchor file: {error}", path=str(anchor)) from None
    try:
        _otf2.Reader_SetSerialCollectiveCallbacks(handle)
        try:
            with _collection_paused():     # the definitions are acyclic: 100,000 lists for 20,000 locations
                definitions, tables = read_definitions(handle, binding, str(anchor.with_suffix(".def")))
        except errors as error:
            raise FormatError(f"cannot read the global definitions: {error}",
                              path=str(anchor.with_suffix(".def"))) from None
        chunk_size = _otf2.Reader_GetChunkSize(handle)[0]
        events_folder = anchor.with_suffix("")
        local_definitions = _open_files(binding, handle, tables.locations)
        strings = StringTable(definitions.strings)
        reader = EventReader(binding, tables, strings)
    except BaseException as error:
        _otf2.Reader_Close(handle)
        if isinstance(error, (CcgError, KeyboardInterrupt)):
            raise
        if isinstance(error, errors):
            raise FormatError(f"cannot read the OTF2 archive: {error}", path=str(anchor)) from None
        raise

    def streams() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        sparse_readers: list[EventReader] = []

        def sparse(ref: int, event_file: str, records: int | None) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
            """The reference's events of the records the native reader skips."""
            if not sparse_readers:
                sparse_readers.append(EventReader(binding, tables, strings, skip=PROTOTYPES))
            events = sparse_readers[0]
            try:
                events.read(handle, ref, event_file, records)
                columns = to_columns(events, event_file)
            except FormatError:
                return None      # the reference reads the location and reports the error
            return columns, np.array(events.starts + [len(events.time)], np.int64)

        native: NativeEvents | None = None
        pending: LocationBatches | None = None
        try:
            if backends.native():
                native = NativeEvents.create(binding, otf2_reader_address(handle), tables, sparse)
            for index, ref in enumerate(tables.locations):
                if pending is not None:
                    pending.detach()
                if local_definitions:
                    _read_local_definitions(binding, handle, ref, events_folder)
                event_file = str(events_folder / f"{ref}.evt")
                records = announced_records(event_file, chunk_size)
                pending = native.location(ref, event_file, records) if native is not None else None
                if pending is not None:
                    yield index, pending
                    continue
                reader.read(handle, ref, event_file, records)
                yield index, batches(to_columns(reader, event_file))
            if pending is not None:
                pending.detach()
        finally:
            if native is not None:
                native.close()
            for events in [reader, *sparse_readers]:
                events.close()
            try:
                if local_definitions:
                    _otf2.Reader_CloseDefFiles(handle)
                _otf2.Reader_CloseEvtFiles(handle)
            finally:
                _otf2.Reader_Close(handle)

    return definitions, streams()


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off (as it was before, after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _open_files(binding: Binding, handle: Any, refs: list[int]) -> bool:
    """Select every location and open the event files and, when the archive has them,
    the local definition files (as the OTF2 reading protocol asks); whether it has them.
    No reader is opened here: `_read_local_definitions` and the event readers open one
    location's at a time."""
    _otf2 = binding._otf2
    select = binding.cdll.OTF2_Reader_SelectLocation
    select.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    select.restype = ctypes.c_int
    address = ctypes.cast(handle, ctypes.c_void_p)
    for ref in refs:
        if select(address, ref) != 0:
            raise FormatError(f"the OTF2 library cannot select location {ref}")
    try:
        _otf2.Reader_OpenDefFiles(handle)
        local_definitions = True
    except _otf2.Error:
        local_definitions = False   # an archive without local definition files
    _otf2.Reader_OpenEvtFiles(handle)
    return local_definitions


def _read_local_definitions(binding: Binding, handle: Any, ref: int, folder: Path) -> None:
    """Read location ``ref``'s local definitions (mappings, clock offsets, which the
    library keeps for the location's event readers) and close its definition reader."""
    _otf2 = binding._otf2
    if holds_no_records(str(folder / f"{ref}.def")):
        return
    reader = _otf2.Reader_GetDefReader(handle, ref)
    if not reader:
        return
    try:
        _otf2.Reader_ReadAllLocalDefinitions(handle, reader)
    except _otf2.Error as error:
        raise FormatError(f"cannot read the local definitions: {error}", path=str(folder / f"{ref}.def")) from None
    finally:
        _otf2.Reader_CloseDefReader(handle, reader)
