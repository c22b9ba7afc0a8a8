"""The first reading of a location's calls: whether complete ``X`` events can carry them,
and when each call ends, kept on disk for the second reading.

`nesting.nest` orders the calls and instants of a re-imported thread by start time,
longer first, then file order, and nests each call in the innermost open call that
contains it. ``X`` events re-import to the archive's order exactly when, with the calls
in the archive's (well-nested, time-ordered) order, these local rules hold - so they are
checked while reading, one event at a time, in memory set by the call depth:

- an instant is not written right after calls that ended at its own time (the importer
  would put it inside them);
- a call that follows, at the same start, an instant or an ended call must have length
  zero (else, being longer, it would be read first);
- a call that follows calls ended at its own start must not have length zero (it would
  be read inside the last of them);
- no call carries fields for its end (an ``X`` event has one set of fields).

Calls are numbered in order of their begin; the end of each is written to an `EndSpool`
at its number, so the second reading gets the ends in the order it writes the begins.
"""

from __future__ import annotations

import os
import tempfile
from typing import Iterable

import numpy as np

from ...errors import FormatError
from .nesting import ENTER, LEAVE
from .tokens import Token

__all__ = ["CallScan", "EndReader", "EndSpool", "MUST_BE_EMPTY", "MUST_LAST"]

#: What a call's end must satisfy (see the module docstring), as bits.
MUST_BE_EMPTY, MUST_LAST = 1, 2
_END = np.dtype("<i8")


class EndSpool:
    """A temporary file of call end times, indexed by call number (8 bytes a call), in
    ``folder`` (an export's: beside its target, not in a temporary folder that may be
    held in memory); deleted when closed."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.file = tempfile.TemporaryFile(prefix=".ccg-chrome-ends-", dir=folder)
        self.fd = self.file.fileno()

    def close(self) -> None:
        self.file.close()

    def put(self, first: int, ends: np.ndarray, numbers: np.ndarray, late: np.ndarray) -> None:
        """Write ``ends`` for the calls numbered from ``first`` on, then ``late[i]`` for
        call ``numbers[i]`` (calls begun earlier)."""
        if len(ends):
            _write_all(self.fd, np.ascontiguousarray(ends, _END).tobytes(), first * _END.itemsize)
        for number, end in zip(numbers.tolist(), late.tolist()):
            _write_all(self.fd, np.array([end], _END).tobytes(), number * _END.itemsize)

    def reader(self, first: int) -> EndReader:
        """The ends from call ``first`` on, in order."""
        return EndReader(self.fd, first)


class EndReader:
    """Reads call ends from a spool in order, a run at a time."""

    def __init__(self, fd: int, first: int):
        self.fd = fd
        self.next = first

    def take(self, count: int) -> np.ndarray:
        """The ends of the next ``count`` calls."""
        data = os.pread(self.fd, count * _END.itemsize, self.next * _END.itemsize)
        if len(data) != count * _END.itemsize:
            raise OSError("the spool of call ends is shorter than written")
        self.next += count
        return np.frombuffer(data, _END)


def _write_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


class CallScan:
    """Checks a location's calls for complete events and spools their ends (the state
    the native scan shares: `state` and `stack`)."""

    def __init__(self, spool: EndSpool, first: int):
        self.spool = spool
        self.first = first        #: the number of the location's first call in the spool
        self.calls = 0            #: calls begun so far
        self.complete = True
        self.stack: list[tuple[int, int, int]] = []   #: open calls: number, start, what the end must satisfy
        self.entry: int | None = None   #: start of the latest call or instant
        self.entry_open = False         #: whether that was a call still open
        self.ended: int | None = None   #: end of the latest call ended since then

    def tokens(self, tokens: Iterable[Token]) -> None:
        """Take a batch's tokens; their calls' ends are spooled at the batch's end."""
        first = self.calls
        ends: list[int] = []
        numbers: list[int] = []
        late: list[int] = []
        for token, item in tokens:
            if token == LEAVE:
                if not self.stack:
                    raise FormatError(f"LEAVE at {item.time} with no region open")
                number, end = self._leave(item.time, item.post is not None)
                if number >= first:
                    ends[number - first] = end
                else:
                    numbers.append(number)
                    late.append(end)
            else:
                start = item.start if token == ENTER else item.time
                self._entry(start, token == ENTER)
                if token == ENTER:
                    ends.append(-1)
        self.spool_ends(first, np.array(ends, _END), np.array(numbers, _END), np.array(late, _END))

    def spool_ends(self, first: int, ends: np.ndarray, numbers: np.ndarray, late: np.ndarray) -> None:
        """Spool the ends of a batch's calls (numbered from ``first``, -1 for those still
        open) and of calls begun before that it ended (``numbers`` and ``late``)."""
        self.spool.put(self.first + first, ends, numbers + self.first, late)

    def state(self, room: int) -> tuple[dict[str, int], np.ndarray]:
        """The scalars and the open calls (rows number, start, must; with room for
        ``room`` more) as the native scan reads them (`ccg_chrome_scan`)."""
        scalars = {"calls": self.calls, "complete": int(self.complete), "has_entry": int(self.entry is not None),
                   "entry": self.entry or 0, "entry_open": int(self.entry_open),
                   "has_ended": int(self.ended is not None), "ended": self.ended or 0, "depth": len(self.stack)}
        stack = np.zeros((3, len(self.stack) + room), _END)
        if self.stack:
            stack[:, :len(self.stack)] = np.array(self.stack, _END).T
        return scalars, stack

    def restore(self, scalars: dict[str, int], open_calls: np.ndarray) -> None:
        """Take the state a native scan left (see `state`)."""
        self.calls, self.complete = scalars["calls"], bool(scalars["complete"])
        self.entry = scalars["entry"] if scalars["has_entry"] else None
        self.entry_open = bool(scalars["entry_open"])
        self.ended = scalars["ended"] if scalars["has_ended"] else None
        self.stack = [tuple(call) for call in open_calls.T.tolist()]

    def _entry(self, start: int, call: bool) -> None:
        after_end = self.ended is not None and self.ended == start
        if call:
            must = MUST_LAST if after_end else 0
            if self.entry == start and not self.entry_open:
                must |= MUST_BE_EMPTY
            if must == MUST_BE_EMPTY | MUST_LAST:
                self.complete = False
            self.stack.append((self.calls, start, must))
            self.calls += 1
        elif after_end:
            self.complete = False
        self.entry, self.entry_open, self.ended = start, call, None

    def _leave(self, end: int, post: bool) -> tuple[int, int]:
        number, start, must = self.stack.pop()
        if post or (must & MUST_BE_EMPTY and end != start) or (must & MUST_LAST and end == start):
            self.complete = False
        self.entry_open, self.ended = False, end
        return number, end
