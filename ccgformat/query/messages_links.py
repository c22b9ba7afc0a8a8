"""Paje links: a SEND or RECV that ends a Paje link pairs by the link's value and key, not
by its order. The Paje importer keeps them in the GENERIC ``paje:fields`` event right
before each link end on its location (`formats/paje`). They are read window by window of
the merged message stream, each location's last event carried to the next window.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from ..model import EventBatch, EventKind

__all__ = ["PAJE_HINT", "LinkIds"]

PAJE_HINT = "paje:fields"
_ENDS = (int(EventKind.SEND), int(EventKind.RECV))


class LinkIds:
    """Per event of the merged stream, the id of the Paje link (value, key) named by the
    hint right before it on its location, else -1. A hint followed by an event that is not
    a JSON object with an object ``f``, or a link end's hint without ``Key``, raises
    `CorruptArchiveError`: its links would otherwise pair by order instead of by key."""

    def __init__(self, strings: list[str], path: str | None):
        self.strings = strings
        self.path = path
        self.hint = strings.index(PAJE_HINT)
        self.fields: dict[int, dict[str, Any] | None] = {}  # hint text -> its fields
        self.ids: dict[tuple[str, str], int] = {}           # (value, key) -> link id
        self.last: dict[int, tuple[int, int]] = {}          # location -> (text, time) of its last event, a hint

    def window(self, locations: np.ndarray, batch: EventBatch) -> np.ndarray:
        """The link ids of one window's events."""
        n = len(batch)
        link = np.full(n, -1, np.int64)
        hint = (batch.kind == EventKind.GENERIC) & (batch.ref == self.hint)
        order = np.lexsort((np.arange(n), locations))  # each location's events together, in order
        owner = locations[order]
        first = np.ones(n, bool)
        first[1:] = owner[1:] != owner[:-1]
        # (event, the hint before it): within the window, or carried from the last one
        follows_hint = ~first[1:] & hint[order[:-1]]
        pairs = [(e, int(batch.value[h]), int(locations[h]), int(batch.time[h]))
                 for e, h in zip(order[1:][follows_hint].tolist(), order[:-1][follows_hint].tolist())]
        for e in order[first].tolist():
            carried = self.last.get(int(locations[e]))
            if carried is not None:
                pairs.append((e, carried[0], int(locations[e]), carried[1]))
        for event, text, location, time in pairs:
            link[event] = self._link(text, int(batch.kind[event]) in _ENDS, location, time)
        last = order[np.append(first[1:], True)]
        for e, is_hint in zip(last.tolist(), hint[last].tolist()):
            if is_hint:
                self.last[int(locations[e])] = (int(batch.value[e]), int(batch.time[e]))
            else:
                self.last.pop(int(locations[e]), None)
        return link

    def _link(self, text: int, link_end: bool, location: int, time: int) -> int:
        """The link id that the hint ``strings[text]`` gives the event after it (-1 when it
        names no key)."""
        if text not in self.fields:
            self.fields[text] = _hint_fields(self.strings, text)
        fields = self.fields[text]
        if fields is None or (link_end and "Key" not in fields):
            what = "is not a JSON object with an object 'f'" if fields is None else "has no 'Key'"
            raise CorruptArchiveError(
                f"location {location}, time {time}: the {PAJE_HINT!r} hint (string {text}) "
                f"{what}{' before a link end' if link_end else ''}", path=self.path)
        if "Key" not in fields:
            return -1
        return self.ids.setdefault((str(fields.get("Value")), str(fields["Key"])), len(self.ids))


def _hint_fields(strings: list[str], index: int) -> dict[str, Any] | None:
    """The ``f`` object of the hint text ``strings[index]`` ({} when it has none), or None
    when the text is not a hint."""
    if not 0 <= index < len(strings):
        return None
    try:
        document = json.loads(strings[index])
    except ValueError:
        return None
    fields = document.get("f", {}) if isinstance(document, dict) else None
    return fields if isinstance(fields, dict) else None
