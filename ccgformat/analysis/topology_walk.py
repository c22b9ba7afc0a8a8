"""One walk of every location for the topology graph (paper 001): the metric integrals
over the window (`metric_integrals.sample_integrals`), where each location's metrics end
(`metric_ends.run_ends`) and the message ends that make its edges, from the same events.

A trace of short locations has no cheaper way to its metrics than walking them whole
(`metric_integrals.WHOLE_WALK_EVENTS`), and its message matching walks them again; here
each event is read once. The edges need only blocking SENDs and RECVs paired as
`Archive.iter_messages` pairs them - the k-th send and the k-th receive of one (sender,
receiver, communicator, tag, Paje link), a Paje link named by the ``paje:fields`` hint
right before its end (`query/messages_links`) - so those ends are kept, compactly, and
paired at the end (`messages_match.pair_fifo`). A trace with non-blocking messages
(requests to pair) leaves its edges to the matching: `WalkedTopology.ends` is None.
"""

from __future__ import annotations

import json
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.graph import source_root_columns
from ..model import EventBatch, EventKind
from ..query.messages_links import PAJE_HINT
from ..query.metric_ends import MetricEnds, run_ends
from ..query.metric_integrals import batch_samples, sample_integrals, walked_batches
from ..query.streaming import read_ahead, streams

__all__ = ["LinkEnds", "WalkedTopology", "walk_topology"]

_BLOCKING = (int(EventKind.SEND), int(EventKind.RECV))
_REQUESTS = (int(EventKind.ISEND), int(EventKind.IRECV), int(EventKind.IRECV_REQUEST),
             int(EventKind.REQUEST_COMPLETE))
_DECODER = json.JSONDecoder()
_END_COLUMNS = ("location", "peer", "comm", "tag", "link", "time", "size", "sending")


@dataclass(frozen=True, eq=False)
class LinkEnds:
    """The blocking message ends of a trace in walk order (locations increasing, each in
    time order): per end its ``location``, ``peer`` (the event's ``ref``), ``comm``,
    ``tag``, Paje ``link`` id (-1: none), ``time``, ``size`` and whether it is
    ``sending`` (1) or receiving (0)."""

    location: np.ndarray
    peer: np.ndarray
    comm: np.ndarray
    tag: np.ndarray
    link: np.ndarray
    time: np.ndarray
    size: np.ndarray
    sending: np.ndarray


@dataclass(frozen=True, eq=False)
class WalkedTopology:
    """What one walk gives the topology: ``integrals[r, m]`` of location ``locations[r]``
    and defined metric ``m`` over ``[start, stop)`` (spec 4.11), its `MetricEnds`, and the
    `LinkEnds` (None when the trace has non-blocking messages)."""

    locations: np.ndarray
    integrals: np.ndarray
    metric_ends: MetricEnds
    ends: LinkEnds | None


class _LinkNames:
    """Paje link ids: the (Value, Key) of the hint text before a link end, numbered as met."""

    def __init__(self, strings: list[str], path: str | None):
        self.strings = strings
        self.path = path
        self.hint = strings.index(PAJE_HINT) if PAJE_HINT in strings else -1
        self.ids: dict[tuple[str, str], int] = {}
        self.of_text: dict[int, int] = {}  # hint text -> link id (-1: no key)

    def links(self, location: np.ndarray, time: np.ndarray, texts: np.ndarray) -> np.ndarray:
        """The link ids of the ends whose hint texts are ``texts`` (-1: no hint); a hint
        before an end must be a JSON object whose object ``f`` has a ``Key``."""
        hinted = np.flatnonzero(texts >= 0)
        distinct, which = np.unique(texts[hinted], return_inverse=True)
        for text in distinct.tolist():
            if text not in self.of_text:
                fields = self._fields(text)
                self.of_text[text] = -2 if fields is None else -1 if "Key" not in fields else \
                    self.ids.setdefault((str(fields.get("Value")), str(fields["Key"])), len(self.ids))
        link = np.full(len(texts), -1, np.int64)
        link[hinted] = np.array([self.of_text[text] for text in distinct.tolist()], np.int64)[which.ravel()]
        wrong = np.flatnonzero((link == -2) | ((link == -1) & (texts >= 0)))
        if len(wrong):
            e = int(wrong[0])
            what = "is not a JSON object with an object 'f'" if link[e] == -2 else "has no 'Key'"
            raise CorruptArchiveError(f"location {int(location[e])}, time {int(time[e])}: the {PAJE_HINT!r} hint "
                                      f"(string {int(texts[e])}) {what} before a link end", path=self.path)
        return link

    def _fields(self, text: int) -> dict[str, Any] | None:
        """The ``f`` object of the hint text ``strings[text]`` ({} without one; None:
        not a hint)."""
        if not 0 <= text < len(self.strings):
            return None
        string = self.strings[text]
        try:  # json.loads without its wrapping, for the compact texts the importer writes
            document, end = _DECODER.raw_decode(string)
        except ValueError:
            end = -1
        if end != len(string):  # (spaces around it, or not JSON)
            try:
                document = json.loads(string)
            except ValueError:
                return None
        fields = document.get("f", {}) if isinstance(document, dict) else None
        return fields if isinstance(fields, dict) else None


def _run_ends(names: _LinkNames, run: np.ndarray, offsets: np.ndarray, batch: EventBatch) -> dict[str, np.ndarray]:
    """The blocking ends of one walked run, with their links (the hint right before an end
    on its location names its link)."""
    ends = np.flatnonzero(np.isin(batch.kind, _BLOCKING))
    owner = np.searchsorted(offsets, ends, "right") - 1
    before = ends - 1
    hinted = (before >= offsets[owner]) & (names.hint >= 0)
    hinted[hinted] = (batch.kind[before[hinted]] == EventKind.GENERIC) & (batch.ref[before[hinted]] == names.hint)
    texts = np.where(hinted, batch.value[np.maximum(before, 0)], -1)
    location = run[owner]
    return {"location": location, "peer": batch.ref[ends], "comm": batch.comm[ends], "tag": batch.tag[ends],
            "link": names.links(location, batch.time[ends], texts),
            "time": batch.time[ends], "size": batch.size[ends],
            "sending": (batch.kind[ends] == EventKind.SEND).astype(np.int64)}


def walk_topology(archive: Any, start: int, stop: int) -> WalkedTopology | None:
    """The `WalkedTopology` of every location with events over ``[start, stop)``; None
    for a streamed graph (`streaming.streams`: few long locations, read by their own
    means)."""
    if streams(archive):
        return None
    known, _, _, _, events = source_root_columns(archive)
    locations = np.sort(known[events > 0])
    metrics = len(archive.definitions.metrics)
    path = getattr(archive, "path", None)
    integrals = np.zeros((len(locations), metrics))
    sampled = np.zeros((len(locations), metrics), bool)
    last = np.zeros((len(locations), metrics), np.int64)
    names = _LinkNames(archive.definitions.strings, path)
    parts: list[dict[str, np.ndarray]] | None = []
    bounds = np.array([start, stop], np.int64)
    with closing(read_ahead(walked_batches(archive, locations), 1)) as passes:  # (stopped on an error too)
        for run, offsets, batch, run_stops in passes:
            rows = np.searchsorted(locations, run)
            if metrics:
                samples = batch_samples(offsets, batch, run_stops)
                integrals[rows] = sample_integrals(archive, samples, bounds)[:, 0, :]
                sampled[rows], last[rows] = run_ends(run, samples, metrics, path)
            if parts is not None and np.isin(batch.kind, _REQUESTS).any():
                parts = None  # requests to pair: the matching's work
            elif parts is not None:
                parts.append(_run_ends(names, run, offsets, batch))
    ends = None if parts is None else LinkEnds(*(np.concatenate([part[name] for part in parts])
                                                 if parts else np.zeros(0, np.int64) for name in _END_COLUMNS))
    return WalkedTopology(locations, integrals, MetricEnds(locations, sampled, last), ends)
