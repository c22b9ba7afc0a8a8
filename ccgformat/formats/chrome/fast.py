"""The native fast path of the Chrome export (ccgformat/_native/export_chrome.c): batches
of calls and ccgformat instants - every kind but METRIC and GENERIC, with references
inside the definitions - are scanned and written in C when the native core is in use,
from pieces of text rendered here once. Any other batch, and any batch while a record,
flow or counter of the tokenizer is open, goes through the reference (tokens.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import backends
from ...errors import FormatError
from ...model import COLUMNS, KIND_FIELDS, PEER_KINDS, Definitions, EventBatch, EventKind
from .calls import CallScan, EndReader
from .clock import Clock
from .common import OWN, compact
from .lines import LineWriter, begin_fields, end_fields, place_fields
from .placement import Placement
from .tokens import MESSAGES, SENDS

__all__ = ["FastPath"]

#: The kinds C writes: all but METRIC (counters) and GENERIC (records, texts).
_KINDS = [kind for kind in EventKind if kind not in (EventKind.METRIC, EventKind.GENERIC)]
_TIME_BYTES = 41      # CCG_FIXED_BYTES
_NUMBER_BYTES = 20    # CCG_INT_BYTES


def _head(fields: dict[str, Any], closing: int) -> bytes:
    """The text of ``fields`` without its last ``closing`` closing braces."""
    return compact(fields)[:-closing].encode()


def _field(kind: EventKind, name: str) -> tuple[int, bytes]:
    """Where a field of an instant's args comes from (a column, or -1: the peer's place)
    and its key's text."""
    if name == "ref" and kind in PEER_KINDS:
        return -1, b',"peer":'
    return COLUMNS.index(name), ("," + compact(name) + ":").encode()


def _numerator(clock: Clock) -> int:
    """The clock's numerator where it rounds (unused where it scales exactly)."""
    return 1 if clock.scale else clock.numerator


def _kind_pieces() -> dict[str, list]:
    """Per kind: the start of its instant and of its flow event (up to its args' first
    field), what follows a flow's id, and its args' fields (kinds C does not write: none)."""
    pieces: dict[str, list] = {"instant": [], "flow": [], "flow_end": [], "fields": []}
    for kind in EventKind:
        name = kind.name
        pieces["instant"].append(_head({"ph": "i", "s": "t", "name": name, "cat": OWN, "args": {"kind": name}}, 2))
        pieces["flow"].append(_head({"ph": "s" if kind in SENDS else "f", "name": "message", "cat": OWN,
                                     "args": {"kind": name}}, 2))
        pieces["flow_end"].append(b"" if kind in SENDS else b',"bp":"e"')
        pieces["fields"].append([_field(kind, name) for name in KIND_FIELDS[kind].hard + KIND_FIELDS[kind].soft]
                                if kind in _KINDS else [])
    return pieces


class FastPath:
    """The pieces of text of one export and the C writer that joins them."""

    def __init__(self, definitions: Definitions, placement: Placement, clock: Clock):
        from ..._native.export_chrome import ChromeLines

        regions = definitions.regions
        self.regions = len(regions)
        self.places = [(("," + compact(place_fields(place))[1:-1]) if place_fields(place) else "").encode()
                       for place in placement.places]
        peers = [compact(list(place)).encode() for place in placement.places]
        calls = {"complete_begin": [_head(begin_fields(region, True), 1) for region in regions],
                 "begin": [_head(begin_fields(region, False), 1) for region in regions],
                 "end": [_head(end_fields(region), 1) for region in regions]}
        kinds = _kind_pieces()
        value_bytes = max(_NUMBER_BYTES, max(map(len, peers), default=0))
        longest = max([len(text) for texts in calls.values() for text in texts] + [
            max(len(kinds["instant"][kind]), len(kinds["flow"][kind])) + len(kinds["flow_end"][kind])
            + len(',"id":') + _NUMBER_BYTES + sum(len(key) + value_bytes for _, key in kinds["fields"][kind]) + 1
            for kind in _KINDS])
        # a separator, the longest start, the place, ts and dur, the closing brace
        line_bytes = 2 + longest + max(map(len, self.places), default=0) + 2 * (len(',"dur":') + _TIME_BYTES) + 1
        clock_fields = {"offset": clock.offset, "scale": clock.scale, "numerator": _numerator(clock),
                        "denominator": clock.resolution, "digits": clock.digits, "half_even": True, "strip": True}
        self.lines = ChromeLines(clock_fields, peer=peers, line_bytes=line_bytes, **calls, **kinds)
        self.common = np.zeros(256, bool)
        self.common[_KINDS] = True
        self.peer_kinds = np.zeros(256, bool)
        self.peer_kinds[list(MESSAGES)] = True

    @classmethod
    def create(cls, definitions: Definitions, placement: Placement, clock: Clock) -> FastPath | None:
        """The fast path, or None under the Python backend or when C cannot write this
        trace's text exactly (a clock beyond 128 bits, names UTF-8 cannot hold)."""
        if not backends.native():
            return None
        from ..._native.export_text import clock_fits

        if not clock_fits(clock.scale, _numerator(clock), clock.digits):
            return None
        try:
            return cls(definitions, placement, clock)
        except UnicodeEncodeError:
            return None

    def takes(self, batch: EventBatch) -> bool:
        """Whether C writes this batch: only kinds it writes, references in the tables."""
        kind, ref = batch.kind, batch.ref
        if not self.common[kind].all():
            return False
        for chosen, count in ((kind <= EventKind.LEAVE, self.regions), (self.peer_kinds[kind], len(self.places))):
            refs = ref[chosen]
            if len(refs) and (refs.min() < 0 or refs.max() >= count):
                return False
        return True

    def scan(self, scan: CallScan, batch: EventBatch) -> None:
        """The first reading of a batch (`CallScan.tokens` for its tokens)."""
        from ..._native.export_chrome import ScanState
        from ..._native.export_chrome import scan as scan_natively

        first = scan.calls
        state = ScanState(*scan.state(int(np.count_nonzero(batch.kind == EventKind.ENTER))))
        result = scan_natively(state, batch, first)
        if isinstance(result, int):
            raise FormatError(f"LEAVE at {int(batch.time[result])} with no region open")
        scan.restore(state.scalars(), state.open_calls())
        scan.spool_ends(first, *result)

    def write(self, writer: LineWriter, batch: EventBatch, location: int, complete: bool, ends: EndReader,
              flow: np.ndarray) -> None:
        """The second reading of a batch: its lines."""
        calls = np.count_nonzero(batch.kind == EventKind.ENTER) if complete else 0
        for chunk in self.lines.lines(batch, self.places[location], complete, ends.take(calls), flow, writer.first):
            writer.lines(chunk)
