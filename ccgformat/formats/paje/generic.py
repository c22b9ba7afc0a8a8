"""A Paje layout for archives that did not come from Paje (no ``extensions["paje"]``).

Every location becomes a container of type ``Location`` directly under the root, named
after its path in the system tree and created at the first timestamp. Regions become
values of one state type (ENTER/LEAVE -> push/set and pop), metrics variable types,
marker types event types, and point-to-point messages links under the root: the k-th
message from a location to another on a communicator and tag is matched with the k-th
receive there (MPI's non-overtaking order). Unmatched messages and all other events
(collectives, requests, generic records) become events of the type ``Other events``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ...archive import Archive
from ...model import Definitions, Event, EventBatch, EventKind
from ..channels import channel_ranks, message_sides
from .syntax import REFERENCE_HEADER, parse_header

__all__ = ["OTHER", "LinkKeys", "describe", "schema"]

LOCATION, STATE, LINK, OTHER = "L", "S", "LINK", "X"
_SENDS = (EventKind.SEND, EventKind.ISEND)
_OTHERS = (EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE, EventKind.COLL_BEGIN, EventKind.COLL_END,
           EventKind.GENERIC)
_COLOR = "0.5 0.5 0.5"

MessageKey = tuple[int, int, int, int]  # sender, receiver, communicator, tag


class LinkKeys:
    """Link fields of messages, numbering the matched ones of each sender, receiver,
    communicator and tag in order: a message at a time (`fields`) or a batch's at once
    (`numbers`)."""

    def __init__(self, matched: dict[MessageKey, int]):
        self.matched = matched
        self.counts: dict[bool, Counter[MessageKey]] = {True: Counter(), False: Counter()}

    def fields(self, location: int, event: Event, number: int | None = None) -> dict[str, str] | None:
        """Type, Container, Value and Key of a message's link, None when it has no partner;
        ``number``: its number in its channel, when `numbers` gave it."""
        sending = event.kind in _SENDS
        key = (location, event.ref, event.comm, event.tag) if sending else (event.ref, location, event.comm, event.tag)
        if number is None:
            number = self.counts[sending][key]
            self.counts[sending][key] += 1
        if number >= self.matched.get(key, 0):
            return None
        return {"Type": LINK, "Container": "0", "Value": f"comm {event.comm} tag {event.tag}",
                "Key": "-".join(str(part) for part in (*key, number))}

    def numbers(self, locations: np.ndarray, batch: EventBatch) -> tuple[np.ndarray, np.ndarray]:
        """For each event of a merged batch (at ``locations``), the number `fields` would
        give a message in its channel and whether it has a partner (0 and False for other
        events), counting them as `fields` does."""
        numbers = np.zeros(len(batch), np.int64)
        matched = np.zeros(len(batch), bool)
        for sending, where, columns in message_sides(batch, locations):
            channels, channel, rank = channel_ranks(columns)
            counts = self.counts[sending]
            base = np.array([counts[key] for key in channels], np.int64)
            limit = np.array([self.matched.get(key, 0) for key in channels], np.int64)
            for key, total in zip(channels, np.bincount(channel, minlength=len(channels)).tolist()):
                counts[key] += total
            numbers[where] = base[channel] + rank
            matched[where] = numbers[where] < limit[channel]
        return numbers, matched


def describe(event: Event, strings: list[str]) -> str:
    """An event without a Paje counterpart as the value of an ``Other events`` event."""
    if event.kind == EventKind.GENERIC and 0 <= event.ref < len(strings) and 0 <= event.value < len(strings):
        return f"{strings[event.ref]} {strings[event.value]}"
    return event.describe().split(" ", 1)[1]


def schema(archive: Archive) -> tuple[dict[str, Any], LinkKeys]:
    """The layout (shaped like ``extensions["paje"]``) and link numbering of an archive."""
    definitions = archive.definitions
    eventdefs = parse_header(REFERENCE_HEADER)
    index = {definition.name: i for i, definition in enumerate(eventdefs)}
    start, sends, receives, markers, others = _scan(archive)
    matched = {key: min(count, receives[key]) for key, count in sends.items() if receives[key]}
    others = others or sum(matched.values()) < max(sum(sends.values()), sum(receives.values()))

    def record(event: str, **values: str | None) -> list[Any]:
        definition = eventdefs[index[event]]
        return [index[event], [values.get(name) for name, _ in definition.fields]]

    header = [record("PajeDefineContainerType", Alias=LOCATION, Type="0", Name="Location"),
              record("PajeDefineStateType", Alias=STATE, Type=LOCATION, Name="State")]
    header += [record("PajeDefineEventType", Alias=f"E{ref}", Type=LOCATION, Name=definitions.strings[ref],
                      Color=_COLOR) for ref in markers]
    if others:
        header.append(record("PajeDefineEventType", Alias=OTHER, Type=LOCATION, Name="Other events", Color=_COLOR))
    header += [record("PajeDefineVariableType", Alias=f"V{i}", Type=LOCATION, Name=metric.name, Color=_COLOR)
               for i, metric in enumerate(definitions.metrics)]
    if matched:
        header.append(record("PajeDefineLinkType", Alias=LINK, Type="0", StartContainerType=LOCATION,
                             EndContainerType=LOCATION, Name="Messages"))
    containers: list[dict[str, Any]] = [{"ref": "0", "create": None, "destroy": None}]
    for i in range(len(definitions.locations)):
        create = record("PajeCreateContainer", Time=None, Alias=f"L{i}", Container="0", Type=LOCATION,
                        Name=_path(definitions, i))
        containers.append({"ref": f"L{i}", "create": create, "destroy": None})
    layout = {
        "eventdefs": [definition.to_json() for definition in eventdefs],
        "header": header,
        "containers": containers,
        "lifecycle": [[i + 1, 0, start] for i in range(len(definitions.locations))],
        "locations": list(range(1, len(definitions.locations) + 1)),
        "regions": [[STATE, region.name] for region in definitions.regions],
        "metrics": [f"V{i}" for i in range(len(definitions.metrics))],
        "links": [],
        "event_types": {definitions.strings[ref]: f"E{ref}" for ref in markers},
    }
    return layout, LinkKeys(matched)


def _scan(archive: Archive) -> tuple[int, Counter[MessageKey], Counter[MessageKey], list[int], bool]:
    """First timestamp, messages sent and received, marker types used, other events seen."""
    start: int | None = None
    sends: Counter[MessageKey] = Counter()
    receives: Counter[MessageKey] = Counter()
    markers: set[int] = set()
    others = False
    for location in archive.locations:
        for batch in archive.location(location).events():
            if not len(batch):
                continue
            start = int(batch.time[0]) if start is None else min(start, int(batch.time[0]))
            for sending, _, columns in message_sides(batch, np.full(len(batch), location, np.int64)):
                channels, channel, _ = channel_ranks(columns)
                counter = sends if sending else receives
                counter.update(dict(zip(channels, np.bincount(channel, minlength=len(channels)).tolist())))
            markers.update(batch.ref[batch.kind == EventKind.MARKER].tolist())
            others = others or bool(np.isin(batch.kind, _OTHERS).any())
    return start or 0, sends, receives, sorted(markers), others


def _path(definitions: Definitions, location: int) -> str:
    """A location's name preceded by the names of its system tree ancestors."""
    names = [definitions.locations[location].name]
    node = definitions.locations[location].parent
    tree = definitions.system_tree
    while node is not None and 0 <= node < len(tree) and len(names) <= len(tree):
        names.append(tree[node].name)
        node = tree[node].parent
    return "/".join(reversed(names))

