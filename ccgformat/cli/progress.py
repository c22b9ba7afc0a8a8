"""Progress on stderr for the long commands (`convert`, `export`, `verify`): one tqdm bar
with the work done, its rate and the time left, shown only on a terminal and never with
``--quiet``; when stderr is a pipe or a file nothing is written to it."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..formats import ConvertProgress


class TerminalProgress:
    """A tqdm bar on ``stream`` (stderr), or nothing when ``stream`` is not a terminal or
    ``quiet``. Use as a context manager: the bar is cleared when the work ends."""

    def __init__(self, label: str, *, unit: str = "ev", total: int | None = None, quiet: bool = False,
                 stream: TextIO | None = None, scale: bool = False):
        stream = sys.stderr if stream is None else stream
        self.bar: Any = None
        if not quiet and stream.isatty():
            from tqdm import tqdm  # imported when a bar is shown: start-up stays lean
            self.bar = tqdm(desc=label, total=total, unit=unit, unit_scale=True, unit_divisor=1024 if scale else 1000,
                            file=stream, leave=False, dynamic_ncols=True, smoothing=0.1)

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if self.bar is not None:
            if kind is None:  # the last state drawn (tqdm may have skipped it), then cleared
                self.bar.refresh()
            self.bar.close()

    @property
    def shown(self) -> bool:
        return self.bar is not None

    def add(self, done: int) -> None:
        """``done`` more units of work finished (`Archive.export`'s progress)."""
        if self.bar is not None:
            self.bar.update(done)

    def reach(self, done: int, total: int) -> None:
        """``done`` of ``total`` units finished (`verify`'s progress)."""
        if self.bar is not None:
            self.bar.total = total
            self.bar.update(done - self.bar.n)

    def conversion(self, p: ConvertProgress) -> None:
        """`convert`'s progress: events read so far; while the total is unknown it is
        estimated from the locations finished (their mean length times the locations)."""
        if self.bar is None:
            return
        if p.locations_done:
            done_events = p.events - p.location_events  # the events of the finished locations
            self.bar.total = max(p.events, done_events * p.locations // p.locations_done)
        self.bar.set_postfix_str(f"location {p.locations_done + 1}/{p.locations}", refresh=False)
        self.bar.update(p.events - self.bar.n)
