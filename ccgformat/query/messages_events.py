"""The message events of the chosen locations in one stream, in global order: by time,
then location, then position in the location (`archive.time_order.merge_by_time`). This is the
traversal of the matching (dissertation 4.5.5), cut into windows of consecutive events.

Two ways to get them, the same events either way:
- **selected** from the node tables (`select_many`): only the sub-trees holding message
  events are expanded, for all locations at once. Used when the tables are cheap (not a
  large graph, `streaming.streams`) and the events are few (`SELECT_EVENTS`): they are held
  whole.
- **walked**: every location's events in batches (`streaming.kept_events`), its message
  events kept, the locations merged by time. Memory: one walk batch per location (at most
  `WALK_EVENTS` events over all of them; two when the walks run ahead) and one window,
  whatever the trace's length.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..ahead import read_ahead_each
from ..archive.time_order import merge_by_time
from ..graph.graph import ChosenRoots
from ..model import COLUMNS, EventBatch, EventKind
from . import streaming
from .select import select_many
from .tables import NodeTables, tables_for

__all__ = ["SELECT_EVENTS", "WALK_EVENTS", "WINDOW", "message_windows"]

#: events per window of the merged stream (the matching's working columns: about 300 bytes an event)
WINDOW = 1 << 16
#: at most this many message events are selected from the node tables at once; more are walked
SELECT_EVENTS = 1 << 18
#: the walks' batches together hold about this many events (each at most `streaming.WALK_BATCH`)
WALK_EVENTS = 1 << 20
#: a walk batch has at least this many events, however many locations there are
MIN_WALK_BATCH = 256

_NAMES = ("time", "kind") + COLUMNS


def message_windows(source: Any, chosen: ChosenRoots, kinds: tuple[int, ...], window: int = WINDOW,
                    ahead: bool = False) -> Iterator[tuple[np.ndarray, EventBatch]]:
    """The events of ``kinds`` of the ``chosen`` locations in global order, ``window`` at
    a time, each batch paired with its events' locations. With ``ahead``, the events are
    read in a thread of their own (`ahead`): the selection, or the walks, whose merge by
    time stays in the caller's thread when their batches are full (at most 16 locations)."""
    if not streaming.streams(source):
        t = tables_for(source.pool)
        wanted = np.isin(t.kind, kinds).astype(np.int64)
        if int(t.bottom_up(wanted)[chosen.root].sum()) <= SELECT_EVENTS:
            windows = merge_by_time((), window, [_selected(t, chosen, kinds)])
            yield from streaming.read_ahead(windows) if ahead else windows
            return
    batch = max(MIN_WALK_BATCH, min(streaming.WALK_BATCH, WALK_EVENTS // max(1, len(chosen.locations))))
    walked = [(location, _walked(source, location, kinds, batch))
              for location, events in zip(chosen.locations, chosen.events.tolist()) if events]
    if not ahead or batch < streaming.WALK_BATCH:
        # with many locations the batches are small: handing each one over between the
        # threads would cost more than the merge, which then runs ahead with the walks
        windows = merge_by_time(walked, window)
        yield from streaming.read_ahead(windows) if ahead else windows
        return
    # the merge asks next for the location whose buffered events end first
    each, stop = read_ahead_each([walk for _, walk in walked], lambda batch: int(batch.time[-1]))
    try:
        yield from merge_by_time(((location, walk) for (location, _), walk in zip(walked, each)), window)
    finally:
        stop()


def _selected(t: NodeTables, chosen: ChosenRoots, kinds: tuple[int, ...]) -> tuple[np.ndarray, EventBatch]:
    """Every event of ``kinds`` below the chosen roots, location by location in event order,
    with its location: its columns from the atomic nodes' stored properties (spec/records.md
    key order)."""
    tag, _, times, nodes = select_many(t, chosen.root, chosen.start, kinds)
    kind = t.kind[nodes]
    generic = kind == EventKind.GENERIC
    request_only = np.isin(kind, (EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE))
    zero = np.zeros(len(nodes), np.int64)
    batch = EventBatch(
        time=times, kind=kind.astype(np.uint8), ref=np.where(request_only, 0, t.key0[nodes]),
        comm=np.where(generic, 0, t.key1[nodes]), tag=t.key2[nodes],
        request=np.where(request_only, t.key0[nodes],
                         np.where(np.isin(kind, (EventKind.ISEND, EventKind.IRECV)), t.key3[nodes], zero)),
        size=t.soft0[nodes], recv_size=np.where(kind == EventKind.COLL_END, t.soft1[nodes], zero),
        value=np.where(generic, t.key1[nodes], zero))
    return np.asarray(chosen.locations, np.int64)[tag], batch


def _walked(source: Any, location: int, kinds: tuple[int, ...], batch_size: int) -> Iterator[EventBatch]:
    """The events of ``kinds`` of one location, from its events walked ``batch_size`` at a time."""
    for batch, keep in streaming.kept_events(source, location, kinds, batch_size):
        yield EventBatch(**{name: getattr(batch, name)[keep] for name in _NAMES})
