"""Names and helpers the Chrome reader and writer share."""

from __future__ import annotations

import json
import re
from typing import Any

#: Name of this format in `Definitions.extensions`.
EXTENSION = "chrome"
#: Category of exported events that carry one model event exactly, and the top-level key
#: holding the exporter's timer.
OWN = "ccgformat"
#: Kinds of the GENERIC records the reader writes: extra fields of the next event, a flow
#: step that became messages, a whole event kept as it is.
FIELDS, FLOW, WHOLE = "chrome:fields", "chrome:flow", "chrome:event"
#: The texts a ccgformat GENERIC event carries for its ``ref`` and ``value`` columns.
GENERIC_TEXT = {"ref": "record", "value": "fields"}
INT64_MIN, INT64_MAX, UINT64_END = -(1 << 63), (1 << 63) - 1, 1 << 64
_INTEGER = re.compile(r"[+-]?\d{1,30}")

Key = tuple[Any, Any]          # (pid, tid), each an int, a string or None


def compact(value: Any) -> str:
    """JSON text without spaces."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def identifier(value: Any) -> int | str | None:
    """A pid or tid: integers (also given as decimal text) or other text; None if absent."""
    if type(value) is int or value is None:
        return value
    if isinstance(value, str):
        return int(value) if _INTEGER.fullmatch(value) else value
    raise ValueError(f"must be an integer or a string, not {compact(value)[:40]}")
