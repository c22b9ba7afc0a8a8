"""An archive's events as Arrow record batches: one row per event, made column by column
from the archive's `EventBatch` batches (numpy masks and views, no Python step per event).

Columns (null where the event's kind has no such property):

============== ======================= ==================================================
column         type                    value
============== ======================= ==================================================
location       int64                   the location (process or thread) id
location_name  dictionary<int32, str>  its name in the definitions
time           int64                   timestamp in ticks (schema metadata: the resolution)
kind           dictionary<int8, str>   ENTER, LEAVE, SEND, RECV, ... (`EventKind` names)
region         dictionary<int32, str>  ENTER, LEAVE: the region's name
peer           int64                   SEND, RECV, ISEND, IRECV: the other location
tag            int64                   point-to-point: the tag; COLL_END: the root
communicator   int64                   point-to-point, COLL_END: the communicator id
size           int64                   point-to-point: bytes; COLL_END: bytes sent
metric         dictionary<int32, str>  METRIC: the metric's name
value          float64                 METRIC: the sample (int64, uint64 or double metric)
request        int64                   ISEND, IRECV, IRECV_REQUEST, REQUEST_COMPLETE
recv_size      int64                   COLL_END: bytes received
ref            int64                   COLL_END: the operation; MARKER, GENERIC: the
                                       string (definitions ``strings``) of their type
data           int64                   MARKER, GENERIC: the string of their value
============== ======================= ==================================================

The schema metadata holds ``ccgformat.timer_resolution`` (ticks per second),
``ccgformat.clock_offset``, ``ccgformat.provenance`` (JSON), ``ccgformat.converter``,
``ccgformat.format_version`` and ``ccgformat.source`` (the archive's path).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from ..model import KIND_FIELDS, PEER_KINDS, Definitions, EventBatch, EventKind, entity_columns
from ..extras import require

if TYPE_CHECKING:
    import pyarrow as pa

    from ..archive import Archive

__all__ = ["COLUMN_NAMES", "event_batches", "event_table", "kind_mask"]

#: the columns in order with their types: int64, float64, names (dictionary<int32, str>) or
#: kinds (dictionary<int8, str>)
_COLUMNS = (("location", "int64"), ("location_name", "names"), ("time", "int64"), ("kind", "kinds"),
            ("region", "names"), ("peer", "int64"), ("tag", "int64"), ("communicator", "int64"), ("size", "int64"),
            ("metric", "names"), ("value", "float64"), ("request", "int64"), ("recv_size", "int64"),
            ("ref", "int64"), ("data", "int64"))
COLUMN_NAMES = tuple(name for name, _ in _COLUMNS)

_KINDS = len(EventKind)


def kind_mask(kinds: set[EventKind] | frozenset[EventKind]) -> np.ndarray:
    """A lookup by kind code: True for ``kinds``."""
    table = np.zeros(_KINDS, dtype=bool)
    table[[int(kind) for kind in kinds]] = True
    return table


def _using(column: str) -> np.ndarray:
    """A lookup by kind code: True for the kinds that use the model column ``column``."""
    return kind_mask({kind for kind, fields in KIND_FIELDS.items() if column in fields.hard + fields.soft})


_REGION = kind_mask({EventKind.ENTER, EventKind.LEAVE})
_PEER = kind_mask(PEER_KINDS)
_METRIC = kind_mask({EventKind.METRIC})
_OTHER_REF = kind_mask({EventKind.COLL_END, EventKind.MARKER, EventKind.GENERIC})
_DATA = kind_mask({EventKind.MARKER, EventKind.GENERIC})
_TAG, _COMM, _SIZE, _REQUEST, _RECV_SIZE = (_using(c) for c in ("tag", "comm", "size", "request", "recv_size"))
#: metric value types as codes of `_metric_values`
_VALUE_TYPES = {"int64": 0, "uint64": 1, "double": 2}


class _Dictionaries:
    """What every batch of one archive shares: the dictionaries of names and the metrics'
    value types."""

    def __init__(self, pa: Any, definitions: Definitions):
        self.pa = pa
        self.kinds = pa.array([kind.name for kind in EventKind], pa.string())
        self.locations = pa.array(entity_columns(definitions.locations)[1], pa.string())
        self.regions = pa.array([region.name for region in definitions.regions], pa.string())
        self.metrics = pa.array([metric.name for metric in definitions.metrics], pa.string())
        self.value_types = np.array([_VALUE_TYPES[metric.value_type] for metric in definitions.metrics], np.int8)

    def names(self, codes: np.ndarray, used: np.ndarray, dictionary: pa.Array) -> pa.DictionaryArray:
        """Dictionary-encoded names of ``codes`` where ``used`` and the code names an entry,
        else null."""
        valid = used & (codes >= 0) & (codes < len(dictionary))
        indices = self.pa.array(np.where(valid, codes, 0).astype(np.int32), mask=~valid)
        return self.pa.DictionaryArray.from_arrays(indices, dictionary)

    def metric_values(self, kind: np.ndarray, ref: np.ndarray, raw: np.ndarray) -> pa.Array:
        """METRIC samples as float64, each read as its metric's value type, else null."""
        used = _METRIC[kind] & (ref >= 0) & (ref < len(self.value_types))
        types = np.zeros(len(kind), np.int8)
        types[used] = self.value_types[ref[used]]
        values = raw.astype(np.float64)
        unsigned = types == 1
        values[unsigned] = raw[unsigned].view(np.uint64).astype(np.float64)
        double = types == 2
        values[double] = raw[double].view(np.float64)
        return self.pa.array(values, mask=~used)


def schema(pa: Any, archive: Archive) -> pa.Schema:
    """The events table's schema with the archive's timer and provenance as metadata."""
    definitions = archive.definitions
    major, minor = archive.version
    types = {"int64": pa.int64(), "float64": pa.float64(), "names": pa.dictionary(pa.int32(), pa.string()),
             "kinds": pa.dictionary(pa.int8(), pa.string())}
    metadata = {"ccgformat.timer_resolution": str(definitions.timer_resolution),
                "ccgformat.clock_offset": str(definitions.clock_offset),
                "ccgformat.provenance": json.dumps(archive.parameters.get("provenance", definitions.provenance)),
                "ccgformat.converter": str(archive.parameters.get("converter", "")),
                "ccgformat.format_version": f"{major}.{minor}",
                "ccgformat.source": str(archive.path)}
    return pa.schema([pa.field(name, types[kind]) for name, kind in _COLUMNS], metadata=metadata)


def _record_batch(shared: _Dictionaries, table_schema: pa.Schema, locations: np.ndarray,
                  batch: EventBatch) -> pa.RecordBatch:
    pa = shared.pa
    kind = batch.kind.astype(np.intp)

    def where(used: np.ndarray, column: np.ndarray) -> pa.Array:
        return pa.array(column, mask=~used[kind])

    location = locations.astype(np.int64, copy=False)
    columns = [
        pa.array(location),
        shared.names(location, np.ones(len(kind), bool), shared.locations),
        pa.array(batch.time),
        pa.DictionaryArray.from_arrays(pa.array(batch.kind.astype(np.int8)), shared.kinds),
        shared.names(batch.ref, _REGION[kind], shared.regions),
        where(_PEER, batch.ref),
        where(_TAG, batch.tag),
        where(_COMM, batch.comm),
        where(_SIZE, batch.size),
        shared.names(batch.ref, _METRIC[kind], shared.metrics),
        shared.metric_values(kind, batch.ref, batch.value),
        where(_REQUEST, batch.request),
        where(_RECV_SIZE, batch.recv_size),
        where(_OTHER_REF, batch.ref),
        where(_DATA, batch.value),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=table_schema)


def event_batches(archive: Archive, start: int | None = None, stop: int | None = None,
                  locations: list[int] | None = None, batch_size: int = 65536) -> pa.RecordBatchReader:
    """The events with ``start <= time < stop`` of ``locations`` (default all) in global time
    order (ties by location), streamed as record batches of at most ``batch_size`` rows:
    one batch of the archive's events is held at a time."""
    pa = require("pyarrow", "Archive.to_arrow_batches")
    shared = _Dictionaries(pa, archive.definitions)
    table_schema = schema(pa, archive)

    def batches() -> Iterator[pa.RecordBatch]:
        for owners, batch in archive.events(start, stop, locations=locations, batch_size=batch_size):
            yield _record_batch(shared, table_schema, owners, batch)

    return pa.RecordBatchReader.from_batches(table_schema, batches())


def event_table(archive: Archive, start: int | None = None, stop: int | None = None,
                locations: list[int] | None = None) -> pa.Table:
    """The events with ``start <= time < stop`` of ``locations`` (default all) as one Arrow
    table, in global time order (ties by location)."""
    require("pyarrow", "Archive.to_arrow")
    return event_batches(archive, start, stop, locations).read_all()
