"""OTF2 export in C (export_otf2.c): a location's prepared batch handed to the OTF2 event
writer without Python per record; ccgformat/formats/otf2/fast.py prepares it."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..model import COLUMNS, EventBatch
from . import load

ffi, lib = load()

__all__ = ["RECORDS", "Otf2Batch", "Otf2Records"]

#: The fields of `ccg_otf2_records`: the OTF2 event record each writes, and its C type.
RECORDS = {
    "enter": ("Enter", "ccg_otf2_region_fn"), "leave": ("Leave", "ccg_otf2_region_fn"),
    "send": ("MpiSend", "ccg_otf2_p2p_fn"), "recv": ("MpiRecv", "ccg_otf2_p2p_fn"),
    "isend": ("MpiIsend", "ccg_otf2_ip2p_fn"), "irecv": ("MpiIrecv", "ccg_otf2_ip2p_fn"),
    "irecv_request": ("MpiIrecvRequest", "ccg_otf2_request_fn"),
    "isend_complete": ("MpiIsendComplete", "ccg_otf2_request_fn"),
    "collective_begin": ("MpiCollectiveBegin", "ccg_otf2_plain_fn"),
    "collective_end": ("MpiCollectiveEnd", "ccg_otf2_coll_end_fn"),
    "metric": ("Metric", "ccg_otf2_metric_fn"),
}


def _pointer(array: np.ndarray, ctype: str = "int64_t *") -> Any:
    return ffi.cast(ctype, ffi.from_buffer(array))


class Otf2Batch:
    """A batch as C reads it: its columns, the rows C writes and their OTF2 references."""

    def __init__(self, batch: EventBatch, ok: np.ndarray, target: np.ndarray, comm: np.ndarray,
                 metric_type: np.ndarray):
        self.arrays = {name: np.ascontiguousarray(getattr(batch, name), np.int64) for name in ("time",) + COLUMNS}
        self.kind = np.ascontiguousarray(batch.kind, np.uint8)
        self.ok = np.ascontiguousarray(ok, np.uint8)
        self.refs = [np.ascontiguousarray(a, np.int64) for a in (target, comm, metric_type)]
        self.struct = s = ffi.new("ccg_otf2_batch *")
        for name, array in self.arrays.items():
            setattr(s.columns, name, _pointer(array))
        s.columns.kind = _pointer(self.kind, "uint8_t *")
        s.count = len(batch)
        s.ok = _pointer(self.ok, "uint8_t *")
        s.target, s.comm, s.metric_type = (_pointer(a) for a in self.refs)


class Otf2Records:
    """The event writer functions C calls, given by address per record name."""

    def __init__(self, addresses: Mapping[str, int]):
        self.struct = ffi.new("ccg_otf2_records *")
        for field, (record, ctype) in RECORDS.items():
            setattr(self.struct, field, ffi.cast(ctype, addresses[record]))
        self.error = ffi.new("int *")

    def write(self, writer: int, batch: Otf2Batch, index: int) -> tuple[int, int]:
        """Write rows of ``batch`` from ``index`` on with the event writer at address
        ``writer``: the first row not written, and the library's error code there (0: none)."""
        index = lib.ccg_otf2_write(self.struct, ffi.cast("void *", writer), batch.struct, index, self.error)
        return index, self.error[0]
