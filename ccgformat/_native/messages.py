"""Message matching helpers in C (messages.c): `pair_fifo` gives the pairs of
`ccgformat.query.messages_match.pair_fifo_reference`, `format_rows` the text of
`ccgformat.query.messages_query.rows_text_reference`."""

from __future__ import annotations

import numpy as np

from . import failure, load

ffi, lib = load()


def _pointers(columns: list[np.ndarray]) -> tuple[list[np.ndarray], object]:
    """Contiguous int64 copies of ``columns`` (where needed) and a C array of pointers to them."""
    arrays = [np.ascontiguousarray(column, dtype=np.int64) for column in columns]
    return arrays, ffi.new("const int64_t *[]", [ffi.cast("const int64_t *", ffi.from_buffer(a)) for a in arrays])


def pair_fifo(keys_a: list[np.ndarray], keys_b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the pairs (k-th a, k-th b) of every key, a increasing."""
    na, nb = len(keys_a[0]), len(keys_b[0])
    if not na or not nb:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    arrays, keys = _pointers([np.concatenate([a, b]) for a, b in zip(keys_a, keys_b)])
    side = np.concatenate([np.zeros(na, np.uint8), np.ones(nb, np.uint8)])
    partner = np.empty(na + nb, np.int64)
    code = lib.ccg_pair_fifo(na + nb, len(arrays), keys, ffi.cast("const uint8_t *", ffi.from_buffer(side)),
                             ffi.cast("int64_t *", ffi.from_buffer(partner)))
    if code:
        raise failure(code, "the message matching ran out of memory")
    ia = np.flatnonzero(partner[:na] >= 0)
    return ia, partner[ia] - na


def format_rows(columns: list[np.ndarray], prefix: list[str], suffix: str, separator: str) -> str:
    """Per row ``prefix[0]`` value0 ``prefix[1]`` value1 ... ``suffix``, joined by ``separator``."""
    n = len(columns[0])
    if not n:
        return ""
    arrays, values = _pointers(columns)
    texts = [ffi.new("char[]", text.encode("ascii")) for text in prefix]
    capacity = n * (sum(map(len, prefix)) + 20 * len(prefix) + len(suffix) + len(separator))
    out = np.empty(capacity, np.uint8)
    written = lib.ccg_format_rows(n, len(arrays), values, ffi.new("const char *[]", texts),
                                  suffix.encode("ascii"), separator.encode("ascii"),
                                  ffi.cast("char *", ffi.from_buffer(out)), capacity)
    if written < 0:
        raise MemoryError("the message rows outgrew their buffer")
    return str(memoryview(out)[:written], "ascii")
