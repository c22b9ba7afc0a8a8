"""`ccg cat`: print events as text, CSV or JSON lines."""

from __future__ import annotations

import argparse
import csv
import io
import json
from typing import Any

from ..archive import open_archive
from ..model import COLUMNS, KIND_FIELDS, EventBatch, EventKind
from .common import UsageError, add_output, answer_output, bounded_int

CSV_HEADER = ("location", "time", "kind") + COLUMNS
_USED = {kind: fields.hard + fields.soft for kind, fields in KIND_FIELDS.items()}


def add_cat(p: argparse.ArgumentParser) -> None:
    """The ``cat`` command's options."""
    p.description = ("Print events in global time order (ties by location), streaming. The window is "
                     "START <= time < STOP. text: location, time, kind and the kind's fields, with "
                     "region names for ENTER/LEAVE; csv: all columns, empty where the kind does not use "
                     "them; jsonl: one object per event with the kind's fields.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--location", type=bounded_int(0), action="append", metavar="ID",
                   help="only this location (repeatable; default all)")
    p.add_argument("--start", type=int, metavar="T", help="first time (inclusive)")
    p.add_argument("--stop", "--end", dest="stop", type=int, metavar="T", help="stop time (exclusive)")
    p.add_argument("--format", choices=("text", "csv", "jsonl"), default="text", help="default %(default)s")
    p.add_argument("--json", dest="format", action="store_const", const="jsonl", help="the same as --format jsonl")
    add_output(p)
    p.set_defaults(run=cmd_cat)


def cmd_cat(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        known = archive.locations
        chosen = None
        if args.location:
            missing = sorted(set(args.location) - set(known))
            if missing:
                span = f"{known[0]}..{known[-1]}" if known else "none"
                raise UsageError(f"no location {missing[0]} in {args.archive} (its locations: {span})")
            chosen = sorted(set(args.location))
        regions = [region.name for region in archive.definitions.regions]
        write = {"text": _TextWriter(regions), "csv": _CsvWriter(), "jsonl": _JsonWriter()}[args.format]
        with answer_output(args) as out:
            out.write(write.header())
            # small batches: several writes, so that a reader going away (`main` then ends
            # quietly) is noticed early
            for locations, batch in archive.events(args.start, args.stop, locations=chosen, batch_size=1024):
                out.write(write.rows(locations.tolist(), batch))
    return 0


def _kind(code: int) -> tuple[str, tuple[str, ...]]:
    """The name of an event kind and the columns it uses (`EventKind` raises for an
    unknown code)."""
    found = _KINDS.get(code)
    if found is None:
        kind = EventKind(code)
        found = _KINDS[code] = (kind.name, _USED[kind])
    return found


_KINDS: dict[int, tuple[str, tuple[str, ...]]] = {}


def _columns(batch: EventBatch) -> tuple[list[int], list[int], dict[str, list[int]]]:
    """A batch's times, kinds and other columns as lists: one conversion per batch, not
    an object per event."""
    return batch.time.tolist(), batch.kind.tolist(), {name: getattr(batch, name).tolist() for name in COLUMNS}


class _TextWriter:
    def __init__(self, regions: list[str]):
        self.regions = regions

    def header(self) -> str:
        return ""

    def region(self, ref: int) -> str:
        return self.regions[ref] if 0 <= ref < len(self.regions) else f"<region {ref}>"

    def rows(self, locations: list[int], batch: EventBatch) -> str:
        times, kinds, columns = _columns(batch)
        refs = columns["ref"]
        lines = []
        for i, (location, time, code) in enumerate(zip(locations, times, kinds)):
            name, used = _kind(code)
            if code <= EventKind.LEAVE:
                detail = self.region(refs[i])
            else:
                detail = " ".join(f"{field}={columns[field][i]}" for field in used)
            lines.append(f"{location} {time} {name} {detail}".rstrip() + "\n")
        return "".join(lines)


class _CsvWriter:
    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer, lineterminator="\n")

    def _take(self) -> str:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return text

    def header(self) -> str:
        self.writer.writerow(CSV_HEADER)
        return self._take()

    def rows(self, locations: list[int], batch: EventBatch) -> str:
        times, kinds, columns = _columns(batch)
        for i, (location, time, code) in enumerate(zip(locations, times, kinds)):
            name, used = _kind(code)
            self.writer.writerow([location, time, name]
                                 + [columns[field][i] if field in used else "" for field in COLUMNS])
        return self._take()


class _JsonWriter:
    def header(self) -> str:
        return ""

    def rows(self, locations: list[int], batch: EventBatch) -> str:
        times, kinds, columns = _columns(batch)
        lines = []
        for i, (location, time, code) in enumerate(zip(locations, times, kinds)):
            name, used = _kind(code)
            record: dict[str, Any] = {"location": location, "time": time, "kind": name}
            for field in used:
                record[field] = columns[field][i]
            lines.append(json.dumps(record) + "\n")
        return "".join(lines)
