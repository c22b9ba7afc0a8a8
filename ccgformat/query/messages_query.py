"""Send/receive and collective matching (dissertation 3.4.5, 3.4.6, 4.5.5), streamed.

The message events of the chosen locations are traversed as one stream in global order
(time, then location, then position; `messages_events`), a window at a time. Point-to-point
messages pair first in, first out per channel (sender, receiver, communicator, tag) as in
4.33, non-blocking ones take their completion and post times from their requests, Paje
links pair by their key (`messages_match`, `messages_links`); collectives are the k-th
COLL_END on a communicator of every location (`messages_collectives`). What does not
match is reported, never dropped.

`iter_messages` gives the matched messages in chunks as they complete, in memory set by
the messages in flight, not by the trace's length; the unmatched events, collectives and
``peak_pending`` follow the last chunk. `messages` holds the whole answer, sorted by send
time: O(messages) by nature.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TextIO

import numpy as np

from .. import backends
from ..archive.queries import run_query
from ..graph.graph import ChosenRoots, chosen_roots
from ..model import EventBatch, EventKind
from .messages_collectives import Collective, Collectives
from .messages_events import WINDOW, message_windows
from .messages_links import PAJE_HINT, LinkIds
from .messages_match import MESSAGE_COLUMNS, PointToPoint, Table, kind_mask, take

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MESSAGE_COLUMNS", "Collective", "MessageStream", "Messages", "Unmatched", "iter_messages", "messages",
           "stream_kinds"]

_WANTED = tuple(int(k) for k in (EventKind.SEND, EventKind.RECV, EventKind.ISEND, EventKind.IRECV,
                                  EventKind.IRECV_REQUEST, EventKind.REQUEST_COMPLETE, EventKind.COLL_BEGIN,
                                  EventKind.COLL_END))
_IS_WANTED = kind_mask(_WANTED)
#: before each value of a message row as `json.dumps` writes it, and after the last
_ROW_PREFIX = ["{" * (not i) + ", " * bool(i) + f'"{name}": ' for i, name in enumerate(MESSAGE_COLUMNS)]
_ROW_SUFFIX = "}"


@dataclass(frozen=True)
class Unmatched:
    """A send or receive without a peer: where, when, and its matching properties."""

    location: int
    time: int
    kind: str
    peer: int
    comm: int
    tag: int
    size: int


@dataclass
class Messages:
    """Matched messages as columns (``-1`` where a time does not apply: ``send_done`` of a
    blocking send, ``recv_posted`` of a blocking receive), the unmatched events, the
    collectives, and the most events that waited for a peer at any time."""

    columns: dict[str, np.ndarray]
    unmatched: list[Unmatched]
    collectives: list[Collective]
    peak_pending: int = 0
    locations: int = 0
    events: int = field(default=0)  #: message events traversed

    def __len__(self) -> int:
        return len(self.columns["sender"])

    def __getattr__(self, name: str) -> np.ndarray:
        columns = self.__dict__.get("columns", {})
        if name in columns:
            return columns[name]
        raise AttributeError(name)

    def matrix(self, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The communication matrix: message counts and bytes, [sender, receiver]."""
        sender, receiver = self.columns["sender"], self.columns["receiver"]
        n = size if size is not None else max(self.locations, int(max(sender.max(initial=-1),
                                                                        receiver.max(initial=-1))) + 1)
        counts = np.zeros((n, n), np.int64)
        volume = np.zeros((n, n), np.int64)
        np.add.at(counts, (sender, receiver), 1)
        np.add.at(volume, (sender, receiver), self.columns["size"])
        return counts, volume

    def to_pandas(self, table: str = "messages") -> pd.DataFrame:
        """One table as a pandas DataFrame: ``messages`` (the columns), ``unmatched`` or
        ``collectives`` (a row per participant) (`ccgformat.interop.results`; extra
        ``pandas``)."""
        return run_query("messages_to_pandas", self, table)

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter (`ccgformat.interop.html`)."""
        return run_query("repr_html", self)

    def rows(self) -> Iterator[dict[str, int]]:
        lists = [self.columns[name].tolist() for name in MESSAGE_COLUMNS]
        return (dict(zip(MESSAGE_COLUMNS, row)) for row in zip(*lists))

    def to_json(self) -> dict[str, Any]:
        return {"messages": list(self.rows()), **self._rest()}

    def _rest(self) -> dict[str, Any]:
        return _rest_json(self.unmatched, self.collectives, self.peak_pending)

    def write_json(self, out: TextIO, rows_per_write: int = 65536) -> None:
        """Write ``json.dumps(self.to_json())`` to ``out``, the messages a slice of rows at
        a time, so that their text is never held whole."""
        slices = ({name: column[first:first + rows_per_write] for name, column in self.columns.items()}
                  for first in range(0, len(self), rows_per_write))
        _write_json(out, slices, self._rest)


def _rest_json(unmatched: list[Unmatched], collectives: list[Collective], peak_pending: int) -> dict[str, Any]:
    """The JSON of an answer but its messages."""
    return {"unmatched": [u.__dict__ for u in unmatched],
            "collectives": [{"comm": c.comm, "index": c.index, "operation": c.operation,
                             "participants": [list(p) for p in c.participants], "complete": c.complete}
                            for c in collectives],
            "peak_pending": peak_pending}


def _write_json(out: TextIO, chunks: Iterable[dict[str, np.ndarray]], rest: Any) -> None:
    """``{"messages": [...], ...rest()}`` as `json.dumps` writes it, the messages a chunk
    of columns at a time; ``rest`` is called once they are written."""
    out.write('{"messages": [')
    separator = ""
    for chunk in chunks:
        if len(chunk["sender"]):
            out.write(separator + rows_text([chunk[name] for name in MESSAGE_COLUMNS]))
            separator = ", "
    out.write("], " + json.dumps(rest())[1:] + "\n")


def rows_text(columns: list[np.ndarray]) -> str:
    """The messages of `MESSAGE_COLUMNS` as `json.dumps` writes their rows, ", " between
    them, with the active backend."""
    if backends.native():
        from .._native import messages as native
        return native.format_rows(columns, _ROW_PREFIX, _ROW_SUFFIX, ", ")
    return rows_text_reference(columns)


def rows_text_reference(columns: list[np.ndarray]) -> str:
    """`rows_text` by %-formatting each row."""
    template = "".join(prefix + "%d" for prefix in _ROW_PREFIX) + _ROW_SUFFIX
    return ", ".join(map(template.__mod__, zip(*(column.tolist() for column in columns))))


class MessageStream:
    """The matched messages of `iter_messages`, an iterator of `Messages` chunks holding
    only messages, in the order in which the stream's events complete them (the later end,
    or the request giving the last of their times). Once it is exhausted, ``unmatched``,
    ``collectives``, ``peak_pending`` and ``events`` hold the rest of the answer.

    ``walked``: the stream's windows, their events already walked (those of `stream_kinds`
    of every chosen location in stream order, each window with its events' locations;
    logical time walks them once for itself and matching, a parallel query gathers them
    from the ranks). With ``places`` the chunks also hold ``send_seq`` and ``recv_seq``,
    each end's place in the stream."""

    def __init__(self, source: Any, start: int | None, stop: int | None, locations: Iterable[int] | None,
                 window: int, ahead: bool, walked: Iterator[tuple[np.ndarray, EventBatch]] | None = None,
                 places: bool = False):
        self.locations = len(source.definitions.locations)
        self.unmatched: list[Unmatched] = []
        self.collectives: list[Collective] = []
        self.peak_pending = 0
        self.events = 0
        chosen = chosen_roots(source, locations)
        self._largest = max(chosen.locations, default=-1)
        self._names = MESSAGE_COLUMNS + (("send_seq", "recv_seq") if places else ())
        if walked is not None:
            windows = walked
        else:
            windows = message_windows(source, chosen, stream_kinds(source), window, ahead)
        self._tables = self._matched(source, chosen, start, stop, windows)

    def __iter__(self) -> Iterator[Messages]:
        return self

    def __next__(self) -> Messages:
        table = next(self._tables)
        return Messages({name: table[name] for name in self._names}, [], [], locations=self.locations)

    def collect(self) -> Messages:
        """The whole answer (the messages still to come), sorted by send time, then sender."""
        parts = list(self._tables)
        names = MESSAGE_COLUMNS + ("send_seq",)
        every = {name: np.concatenate([part[name] for part in parts]) if parts else np.zeros(0, np.int64)
                 for name in names}
        every = take(every, np.lexsort((every["send_seq"], every["sender"], every["send_time"])))
        return Messages({name: every[name] for name in MESSAGE_COLUMNS}, self.unmatched, self.collectives,
                        self.peak_pending, self.locations, self.events)

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """`Messages.matrix` of the messages still to come, summed chunk by chunk."""
        size = max(self.locations, self._largest + 1)  # both ends of a message are chosen locations
        counts = np.zeros((size, size), np.int64)
        volume = np.zeros((size, size), np.int64)
        largest = -1
        for chunk in self:
            sender, receiver = chunk.columns["sender"], chunk.columns["receiver"]
            np.add.at(counts, (sender, receiver), 1)
            np.add.at(volume, (sender, receiver), chunk.columns["size"])
            largest = max(largest, int(sender.max(initial=-1)), int(receiver.max(initial=-1)))
        n = max(self.locations, largest + 1)
        return counts[:n, :n], volume[:n, :n]

    def write_json(self, out: TextIO) -> None:
        """Write the JSON of `Messages.write_json` (the messages in this stream's order) as
        the messages complete."""
        _write_json(out, (chunk.columns for chunk in self),
                    lambda: _rest_json(self.unmatched, self.collectives, self.peak_pending))

    def _matched(self, source: Any, chosen: ChosenRoots, start: int | None, stop: int | None,
                 windows: Iterator[tuple[np.ndarray, EventBatch]]) -> Iterator[Table]:
        lo = -(1 << 63) if start is None else start
        hi = (1 << 63) - 1 if stop is None else stop

        def inside(times: np.ndarray) -> np.ndarray:
            return (times >= lo) & (times < hi)

        strings = source.definitions.strings
        links = LinkIds(strings, getattr(source, "path", None)) if PAJE_HINT in strings else None
        rows = _Rows(chosen.locations)
        matching = PointToPoint(rows.known, inside)
        collectives = Collectives(len(chosen.locations))
        seen = 0
        for locations, batch in windows:
            events = _columns(locations, batch, rows.of(locations), seen,
                              links.window(locations, batch) if links else None)
            seen += len(batch)
            self.events += int(np.count_nonzero(_IS_WANTED[events["kind"]]))
            collectives.window(events)
            done = matching.window(events)
            yield take(done, inside(done["send_time"]) | inside(done["recv_time"]))
        done, unmatched = matching.finish()
        yield take(done, inside(done["send_time"]) | inside(done["recv_time"]))
        unmatched = take(unmatched, inside(unmatched["time"]))
        unmatched = take(unmatched, np.lexsort((unmatched["seq"], unmatched["row"])))
        self.unmatched = [Unmatched(*row[:2], EventKind(row[2]).name, *row[3:])
                          for row in zip(*(unmatched[name].tolist()
                                           for name in ("location", "time", "kind", "ref", "comm", "tag", "size")))]
        self.collectives = collectives.finish(source.definitions.communicators, inside)
        self.peak_pending = matching.peak


def stream_kinds(source: Any) -> tuple[int, ...]:
    """The kinds of the events message matching reads from ``source``: its message events,
    and the GENERIC events when they may be Paje link hints (`messages_links`)."""
    return _WANTED + ((int(EventKind.GENERIC),) if PAJE_HINT in source.definitions.strings else ())


class _Rows:
    """The chosen locations' places in the query's order."""

    def __init__(self, locations: list[int]):
        chosen = np.asarray(locations, np.int64)
        self.order = np.argsort(chosen, kind="stable")
        self.sorted = chosen[self.order]

    def _at(self, locations: np.ndarray) -> np.ndarray:
        return np.minimum(np.searchsorted(self.sorted, locations), max(len(self.sorted) - 1, 0))

    def of(self, locations: np.ndarray) -> np.ndarray:
        """The row of each of these (chosen) locations."""
        return self.order[self._at(locations)] if len(self.sorted) else np.zeros(len(locations), np.int64)

    def known(self, locations: np.ndarray) -> np.ndarray:
        """Whether each of these location ids is chosen."""
        if not len(self.sorted):
            return np.zeros(len(locations), bool)
        return self.sorted[self._at(locations)] == locations


def _columns(locations: np.ndarray, batch: EventBatch, rows: np.ndarray, seen: int,
             link: np.ndarray | None) -> Table:
    """One window's events as the matching's int64 columns, ``seq`` their place in the stream."""
    n = len(batch)
    return {"location": locations.astype(np.int64), "row": rows, "seq": np.arange(seen, seen + n, dtype=np.int64),
            "time": batch.time, "kind": batch.kind.astype(np.int64), "ref": batch.ref, "comm": batch.comm,
            "tag": batch.tag, "request": batch.request, "size": batch.size, "recv_size": batch.recv_size,
            "link": np.full(n, -1, np.int64) if link is None else link}


def iter_messages(source: Any, start: int | None = None, stop: int | None = None,
                  locations: Iterable[int] | None = None, window: int = WINDOW, ahead: bool = False) -> MessageStream:
    """Match the messages of a `Graph` or `Archive` as a stream of chunks (`MessageStream`),
    ``window`` message events at a time. Matching always runs from the beginning (a
    message's peer may lie anywhere); the stream keeps the messages with a send or receive
    in ``[start, stop)`` and the unmatched events and collectives in it. With
    ``locations``, events whose peer is not among them stay unmatched. With ``ahead``, the
    walks run in a thread of their own (`messages_events.message_windows`), their merge by
    time and the matching in the caller's: faster on two cores, but
    nothing else may read ``source`` until the stream is exhausted or closed."""
    return MessageStream(source, start, stop, locations, window, ahead)


def messages(source: Any, start: int | None = None, stop: int | None = None,
             locations: Iterable[int] | None = None, window: int = WINDOW) -> Messages:
    """`iter_messages`, the whole answer held at once (`MessageStream.collect`; the walk
    runs ahead): the messages sorted by send time, then sender."""
    return iter_messages(source, start, stop, locations, window, ahead=True).collect()
