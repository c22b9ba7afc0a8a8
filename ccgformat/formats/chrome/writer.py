"""The event model to Chrome Trace Event JSON (the mapping is in the package docstring).

Each location is read twice. The first reading (`_first_reading`) decides whether its
calls can be complete ``X`` events, spools when each call ends and counts the messages
of each channel (`calls.py`, `flows.py`); the second writes its events. So memory
follows the call depth and the number of channels, never the trace's length. Batches of
calls and ccgformat instants go through the native core when it is in use (`fast.py`);
the tokens of `tokens.py` are the reference and take everything else.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Iterable

from ...archive import Archive, ExportProgress
from ...atomic import atomic_output
from ...model import Definitions, EventBatch
from ..sink import Utf8Sink
from .calls import CallScan, EndReader, EndSpool
from .clock import Clock
from .common import OWN, compact
from .fast import FastPath
from .flows import FlowCounts, FlowIds
from .lines import LineWriter, begin_fields, end_fields, flow_fields
from .nesting import ENTER, POINT
from .placement import Placement
from .tokens import Token, Tokenizer

__all__ = ["READ_BATCH", "write"]

#: Events per batch of each reading (a batch's columns and tokens are what is held).
READ_BATCH = 1 << 16


def write(archive: Archive, target: Path, progress: ExportProgress | None = None) -> None:
    """Write ``archive`` as Chrome Trace Event JSON (gzip-compressed when the target's name
    ends with ``.gz``); ``progress`` hears of each batch of events once written."""
    definitions = archive.definitions
    placement = Placement(definitions)
    clock = Clock(definitions.timer_resolution, definitions.clock_offset)
    fast = FastPath.create(definitions, placement, clock)
    spool = EndSpool(target.resolve().parent)
    try:
        calls, ids = _first_reading(archive, placement, spool, fast)
        compress = target.name.lower().endswith(".gz")
        with atomic_output(target) as temporary, open(temporary, "wb") as raw:
            binary = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if compress else raw
            out = Utf8Sink(binary)
            out.write('{"traceEvents":[\n')
            writer = LineWriter(out, clock)
            for event in placement.metadata:
                writer.event({k: v for k, v in event.items() if k not in ("pid", "tid")},
                             (event.get("pid"), event.get("tid")))
            for location in archive.locations:
                complete, first = calls[location]
                second = _SecondReading(writer, definitions, placement, fast, location, complete,
                                        spool.reader(first), ids)
                second.run(archive.location(location).events(batch_size=READ_BATCH), progress)
            out.write("\n],\n")
            document = {k: v for k, v in placement.document.items() if k not in ("traceEvents", OWN)}
            unit = document.pop("displayTimeUnit", None)
            if unit not in ("ms", "ns"):
                unit = "ns" if definitions.timer_resolution > 10 ** 6 else "ms"
            for name, value in document.items():
                out.write(f"{compact(name)}:{compact(value)},\n")
            own = {"timer_resolution": definitions.timer_resolution, "clock_offset": definitions.clock_offset}
            out.write(f'"displayTimeUnit":"{unit}",\n"{OWN}":{compact(own)}}}\n')
            out.flush()
            binary.flush()   # a gzip file's bytes: one sync flush before its end (as closing a text stream gave)
            if compress:
                binary.close()
    finally:
        spool.close()


def _first_reading(archive: Archive, placement: Placement, spool: EndSpool,
                   fast: FastPath | None) -> tuple[dict[int, tuple[bool, int]], FlowIds]:
    """Per location, whether its calls can be complete events and the number of its
    first call in the spool; and the flow ids of the messages."""
    counts = FlowCounts()
    calls: dict[int, tuple[bool, int]] = {}
    first = 0
    for location in archive.locations:
        tokenizer = Tokenizer(archive.definitions, placement)
        scan = CallScan(spool, first)
        for batch in archive.location(location).events(batch_size=READ_BATCH):
            if fast is not None and tokenizer.clean and fast.takes(batch):
                fast.scan(scan, batch)
                counts.add_batch(location, batch)
            else:
                _scan_tokens(scan, counts, location, tokenizer.feed(batch))
        _scan_tokens(scan, counts, location, tokenizer.finish())
        calls[location] = (scan.complete, first)
        first += scan.calls
    return calls, counts.ids()


def _scan_tokens(scan: CallScan, counts: FlowCounts, location: int, tokens: list[Token]) -> None:
    scan.tokens(tokens)
    for token, item in tokens:
        if token == POINT and item.message is not None:
            counts.add(location, item.message)


class _SecondReading:
    """Writes one location's events."""

    def __init__(self, writer: LineWriter, definitions: Definitions, placement: Placement, fast: FastPath | None,
                 location: int, complete: bool, ends: EndReader, ids: FlowIds):
        self.writer = writer
        self.definitions = definitions
        self.fast = fast
        self.tokenizer = Tokenizer(definitions, placement)
        self.location = location
        self.place = placement.places[location]
        self.complete = complete
        self.ends = ends
        self.ids = ids

    def run(self, batches: Iterable[EventBatch], progress: ExportProgress | None) -> None:
        fast = self.fast
        for batch in batches:
            if fast is not None and self.tokenizer.clean and fast.takes(batch):
                fast.write(self.writer, batch, self.location, self.complete, self.ends,
                           self.ids.batch(self.location, batch))
            else:
                self.tokens(self.tokenizer.feed(batch))
            if progress is not None:
                progress(len(batch))
        self.tokens(self.tokenizer.finish())

    def tokens(self, tokens: list[Token]) -> None:
        """Write tokens (the reference)."""
        writer, regions, place = self.writer, self.definitions.regions, self.place
        ends = iter(self.ends.take(sum(token == ENTER for token, _ in tokens)).tolist() if self.complete else ())
        for token, item in tokens:
            if token == POINT:
                flow = self.ids.next(self.location, item.message) if item.message is not None else None
                writer.event(flow_fields(item, flow), place, item.time)
            elif token == ENTER:
                fields = begin_fields(regions[item.region], self.complete)
                fields.update(item.pre or {})
                writer.event(fields, place, item.start, next(ends) if self.complete else None)
            elif not self.complete:
                writer.event({**end_fields(regions[item.region]), **(item.post or {})}, place, item.time)
