"""Reading an OTF2 archive: the global definitions, then every location's events.

Events are read by the native core (`native`) when it is in use, with the records it
skips read by the Python reference (`callbacks` + `columns`); by the reference otherwise
and for every location the native reader leaves to it.

Whatever the number of locations, at most a location's definition reader and an event
reader or two (the native reader's second pass) are open at once: each location's local
definitions are read just before its events, and every reader is closed after its
location (the library holds a chunk buffer and a file per open reader).

The locations are read through one OTF2 reader per `LOCATIONS_PER_READER` of them, each
selecting only its own: the library finds a location by a linear search in the ones its
reader selected, so one reader for all of them is quadratic (20,000 locations: 0.5 s;
10^6: hours)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np

from ... import backends
from ...errors import CcgError, FormatError
from ...bulkstep import collector_paused
from ...model import Definitions, EventBatch
from ..common import StringTable, batches
from .anchor import find_anchor
from .binding import Binding, load
from .callbacks import EventReader
from .chunks import DefinitionFile, announced_records, definition_file
from .columns import to_columns
from .definitions import read_definitions
from .native import PROTOTYPES, LocationBatches, NativeEvents, otf2_reader_address

__all__ = ["LOCATIONS_PER_READER", "read"]

#: Chosen locations: their indexes, or a function of the number of locations giving them.
Chosen = Union[Sequence[int], Callable[[int], Sequence[int]]]

#: Locations selected in one OTF2 reader.
LOCATIONS_PER_READER = 1024


def read(path: Path, locations: Chosen | None = None
         ) -> tuple[Definitions, Iterator[tuple[int, Iterator[EventBatch]]]]:
    """The definitions and the per-location event batches of an OTF2 archive: of every
    location, or of ``locations`` (indexes into the definitions' locations, or a function
    of their number giving them; read in increasing order, the others' event files never
    opened: `ccgformat.parallel` splits a conversion this way)."""
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
            with collector_paused():     # the definitions are acyclic: 100,000 lists for 20,000 locations
                definitions, tables = read_definitions(handle, binding, str(anchor.with_suffix(".def")))
        except errors as error:
            raise FormatError(f"cannot read the global definitions: {error}",
                              path=str(anchor.with_suffix(".def"))) from None
        chunk_size = _otf2.Reader_GetChunkSize(handle)[0]
        prefix = str(anchor.with_suffix("")) + os.sep
        strings = StringTable(definitions.strings)
    except BaseException as error:
        _otf2.Reader_Close(handle)
        if isinstance(error, (CcgError, KeyboardInterrupt)):
            raise
        if isinstance(error, errors):
            raise FormatError(f"cannot read the OTF2 archive: {error}", path=str(anchor)) from None
        raise

    count = len(tables.locations)
    if callable(locations):
        locations = locations(count)
    chosen = range(count) if locations is None else sorted(set(locations))
    if chosen and not 0 <= chosen[0] <= chosen[-1] < len(tables.locations):
        _otf2.Reader_Close(handle)
        raise ValueError(f"locations outside 0..{count - 1}")
    refs = [tables.locations[index] for index in chosen]

    def streams() -> Iterator[tuple[int, Iterator[EventBatch]]]:
        # the reference's event readers, made when first needed (their callbacks cost 10-20 ms):
        # [0] reads whole locations, [1] the records the native reader skips
        readers: list[EventReader | None] = [None, None]

        def reference(which: int) -> EventReader:
            if readers[which] is None:
                readers[which] = EventReader(binding, tables, strings, skip=PROTOTYPES if which else ())
            return readers[which]
        batch = _Batch(binding, handle, refs[:LOCATIONS_PER_READER])

        def sparse(ref: int, event_file: str, records: int | None) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
            """The reference's events of the records the native reader skips."""
            events = reference(1)
            try:
                events.read(batch.handle, ref, event_file, records)
                columns = to_columns(events, event_file)
            except FormatError:
                return None      # the reference reads the location and reports the error
            return columns, np.array(events.starts + [len(events.time)], np.int64)

        native: NativeEvents | None = None
        pending: LocationBatches | None = None
        try:
            if backends.native():
                native = NativeEvents.create(binding, otf2_reader_address(batch.handle), tables, sparse)
            for order, (index, ref) in enumerate(zip(chosen, refs)):
                if pending is not None:
                    pending.detach()
                    pending = None
                if order and order % LOCATIONS_PER_READER == 0:
                    batch.close()
                    batch = _Batch(binding, _open(binding, anchor), refs[order:order + LOCATIONS_PER_READER])
                    if native is not None:
                        native.attach(otf2_reader_address(batch.handle))
                if batch.local_definitions:
                    _read_local_definitions(binding, batch.handle, ref, prefix)
                event_file = f"{prefix}{ref}.evt"
                records = announced_records(event_file, chunk_size)
                pending = native.location(ref, event_file, records) if native is not None else None
                if pending is not None:
                    yield index, pending
                    continue
                reader = reference(0)
                reader.read(batch.handle, ref, event_file, records)
                yield index, batches(to_columns(reader, event_file))
            if pending is not None:
                pending.detach()
        finally:
            if native is not None:
                native.close()
            for events in readers:
                if events is not None:
                    events.close()
            batch.close()

    return definitions, streams()



def _open(binding: Binding, anchor: Path) -> Any:
    """Another OTF2 reader of the archive (one whose anchor has been read before)."""
    _otf2 = binding._otf2
    handle = _otf2.Reader_Open(str(anchor))
    if not handle:
        raise FormatError("the OTF2 library cannot open the anchor file again", path=str(anchor))
    _otf2.Reader_SetSerialCollectiveCallbacks(handle)
    return handle


class _Batch:
    """An OTF2 reader with locations ``refs`` selected and their event files and, when the
    archive has them, local definition files open (as the OTF2 reading protocol asks). No
    location reader is opened here: `_read_local_definitions` and the event readers open
    one location's at a time. `close` closes the files and the reader (once)."""

    def __init__(self, binding: Binding, handle: Any, refs: list[int]) -> None:
        self.binding, self.handle = binding, handle
        _otf2 = binding._otf2
        try:
            select = binding.cdll.OTF2_Reader_SelectLocation
            select.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
            select.restype = ctypes.c_int
            address = ctypes.cast(handle, ctypes.c_void_p)
            for ref in refs:
                if select(address, ref) != 0:
                    raise FormatError(f"the OTF2 library cannot select location {ref}")
            try:
                _otf2.Reader_OpenDefFiles(handle)
                self.local_definitions = True
            except _otf2.Error:
                self.local_definitions = False   # an archive without local definition files
            _otf2.Reader_OpenEvtFiles(handle)
        except BaseException as error:
            _otf2.Reader_Close(handle)
            if isinstance(error, _otf2.Error):
                raise FormatError(f"cannot open the event files: {error}") from None
            raise

    def close(self) -> None:
        _otf2, handle = self.binding._otf2, self.handle
        if handle is None:
            return
        self.handle = None
        try:
            if self.local_definitions:
                _otf2.Reader_CloseDefFiles(handle)
            _otf2.Reader_CloseEvtFiles(handle)
        finally:
            _otf2.Reader_Close(handle)


def _read_local_definitions(binding: Binding, handle: Any, ref: int, prefix: str) -> None:
    """Read location ``ref``'s local definitions (mappings, clock offsets, which the
    library keeps for the location's event readers) and close its definition reader."""
    _otf2 = binding._otf2
    path = f"{prefix}{ref}.def"
    held = definition_file(path)
    if held is DefinitionFile.NO_RECORDS:
        return
    if held is DefinitionFile.CUT_SHORT:
        raise FormatError("the local definition file is cut short: it does not begin with a whole chunk header "
                          "and the end of the file", path=path)
    reader = _otf2.Reader_GetDefReader(handle, ref)
    if not reader:
        return
    try:
        _otf2.Reader_ReadAllLocalDefinitions(handle, reader)
    except _otf2.Error as error:
        raise FormatError(f"cannot read the local definitions: {error}", path=path) from None
    finally:
        _otf2.Reader_CloseDefReader(handle, reader)
