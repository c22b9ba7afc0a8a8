"""Pieces every format reader uses: the batch size, string interning, and cutting a
location's columns into `EventBatch`es."""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

import numpy as np

from ..model import EventBatch

__all__ = ["BATCH_SIZE", "StringTable", "batches"]

#: Events per `EventBatch` the readers hand on (the last batch of a location may be shorter).
BATCH_SIZE = 65536


class StringTable:
    """Interns texts into a `Definitions.strings` list: each distinct text is appended
    once, and calling the table with a text returns its index in the list."""

    def __init__(self, strings: list[str]) -> None:
        self.strings = strings
        self.index = {text: i for i, text in enumerate(strings)}

    def __call__(self, text: str) -> int:
        index = self.index.get(text)
        if index is None:
            index = self.index[text] = len(self.strings)
            self.strings.append(text)
        return index

    def json(self, value: Any, *, ensure_ascii: bool) -> int:
        """Interns ``value`` as compact JSON (no spaces). ``ensure_ascii`` has no default:
        the readers store different texts (OTF2 escapes non-ASCII characters, OTF1 and
        Chrome keep them), so every call site says which it writes."""
        return self(json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii))


def batches(columns: Mapping[str, np.ndarray], size: int = BATCH_SIZE) -> Iterator[EventBatch]:
    """The events of ``columns`` in batches of at most ``size``. ``columns`` maps
    ``time``, ``kind`` and any of `COLUMNS` (missing ones are zero) to arrays of one
    length; each batch is `EventBatch.from_columns` of a slice of every array."""
    time, kind = columns["time"], columns["kind"]
    rest = {name: values for name, values in columns.items() if name not in ("time", "kind")}
    for start in range(0, len(time), size):
        stop = start + size
        yield EventBatch.from_columns(time[start:stop], kind[start:stop],
                                      **{name: values[start:stop] for name, values in rest.items()})
