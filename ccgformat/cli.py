"""The `ccg` command line. Thin over the public API.

Exit status: 0 on success, 1 on a corrupt or invalid input (any `CcgError`, printed as
``ccg: <message>`` without a traceback, or an unreadable file), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from typing import Any, Callable, Iterable, Sequence, TextIO

from ._version import __version__
from .archive import Archive, exporter_for, exporters, open_archive
from .archive.verify import kind_name, verify
from .archive.writer import DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_LEVEL
from .errors import CcgError, FormatError, ParameterError
from .formats import ConvertProgress, ConvertReport, convert, formats
from .model import COLUMNS, KIND_FIELDS, Event, EventKind
from .params import Params

CSV_HEADER = ("location", "time", "kind") + COLUMNS
_USED = {kind: fields.hard + fields.soft for kind, fields in KIND_FIELDS.items()}


class UsageError(Exception):
    """A command line that parses but asks for something impossible (exit status 2)."""


# --------------------------------------------------------------------------- parser

def _bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{value} is outside {span}")
        return value
    parse.__name__ = "integer"
    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1e6")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccg", description="Archive parallel-program traces as compressed Complete Call Graphs.",
        epilog="Exit status: 0 success, 1 corrupt or invalid input, 2 usage error. "
               "Run 'ccg COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"ccg {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    defaults = Params()
    p = commands.add_parser(
        "convert", help="convert a trace to a .ccg archive",
        description="Convert a trace to a .ccg archive. The input format is detected from the file's "
                    "content, never its name. A .ccg input is rebuilt from its events with the new "
                    "parameters (bounds then apply to the events it holds). Options not given keep "
                    "the library defaults (lossless).",
        epilog="Known input formats: " + ", ".join(f"{f.name} ({f.description})" for f in formats()))
    p.add_argument("source", metavar="SRC", help="input trace")
    p.add_argument("target", metavar="DST", help="output archive (written atomically)")
    p.add_argument("--from", dest="fmt", choices=[f.name for f in formats()],
                   help="input format, instead of detecting it")
    p.add_argument("--abs", dest="abs_dev", type=_bounded_int(0), default=defaults.abs_dev, metavar="TICKS",
                   help="absolute bound on timestamp deviation in ticks (default %(default)s)")
    p.add_argument("--rel", dest="rel_dev", type=_fraction, default=defaults.rel_dev, metavar="FRACTION",
                   help="relative bound on duration deviation (default %(default)s); time is exact "
                        "unless both --abs and --rel are non-zero")
    p.add_argument("--rel-size", type=_fraction, default=defaults.rel_size, metavar="F",
                   help="relative bound on message and collective sizes (default %(default)s)")
    p.add_argument("--rel-metric", type=_fraction, default=defaults.rel_metric, metavar="F",
                   help="relative bound on integer metric increments (default %(default)s)")
    p.add_argument("--branching", type=_bounded_int(2, 65535), default=defaults.branching, metavar="B",
                   help="bounded branching factor b (default %(default)s)")
    p.add_argument("--search-length", type=_bounded_int(1), default=defaults.search_length, metavar="L",
                   help="S-list search length L (default %(default)s)")
    p.add_argument("--level", type=_bounded_int(1, 22), default=DEFAULT_LEVEL, metavar="Z",
                   help="zstd level 1..22 (default %(default)s)")
    p.add_argument("--checkpoint-interval", type=_bounded_int(1), default=DEFAULT_CHECKPOINT_INTERVAL,
                   metavar="K", help="snapshot/summary checkpoint every K events (default %(default)s)")
    p.add_argument("--repair", action="store_true",
                   help="close regions left open at a location's end and drop LEAVEs that match no "
                        "open region, instead of failing; each change is printed on stderr")
    p.add_argument("--quiet", "-q", action="store_true", help="print neither progress nor the result line")
    p.set_defaults(run=cmd_convert)

    p = commands.add_parser("info", help="describe an archive",
                            description="Sizes, compression, parameters, provenance and sections of an archive.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=cmd_info)

    p = commands.add_parser(
        "verify", help="check an archive's integrity",
        description="Read every block and check every structural invariant (checksums, node "
                    "encoding, references, roots, indexes). Exit status 0 when sound, 1 otherwise; "
                    "the first bad block is named with its kind and byte offset.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=cmd_verify)

    p = commands.add_parser(
        "cat", help="print events",
        description="Print events in global time order (ties by location), streaming. The window is "
                    "START <= time < STOP. text: location, time, kind and the kind's fields, with "
                    "region names for ENTER/LEAVE; csv: all columns, empty where the kind does not use "
                    "them; jsonl: one object per event with the kind's fields.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--location", type=_bounded_int(0), action="append", metavar="ID",
                   help="only this location (repeatable; default all)")
    p.add_argument("--start", type=int, metavar="T", help="first time (inclusive)")
    p.add_argument("--stop", "--end", dest="stop", type=int, metavar="T", help="stop time (exclusive)")
    p.add_argument("--format", choices=("text", "csv", "jsonl"), default="text", help="default %(default)s")
    p.set_defaults(run=cmd_cat)

    p = commands.add_parser(
        "export", help="write an archive's trace in another format",
        description="Write the archive's events and definitions in another trace format, for tools "
                    "that cannot read .ccg. The format comes from --to, else from DST's suffix. DST is "
                    "written atomically.",
        epilog="Output formats: " + ", ".join(f"{e.name} ({e.description}; {', '.join(e.suffixes)})"
                                               for e in exporters()))
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("target", metavar="DST", help="output file (or folder, for OTF2)")
    p.add_argument("--to", choices=[e.name for e in exporters()], help="output format")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(run=cmd_export)

    window = argparse.ArgumentParser(add_help=False)
    window.add_argument("archive", metavar="ARCHIVE")
    window.add_argument("--start", type=int, metavar="T", help="window start in ticks (inclusive)")
    window.add_argument("--stop", type=int, metavar="T", help="window stop in ticks (exclusive)")
    window.add_argument("--location", type=_bounded_int(0), action="append", metavar="ID",
                        help="only this location (repeatable; default all)")
    p = commands.add_parser(
        "profile", parents=[window], help="per-region summary of a time window",
        description="Calls, inclusive and exclusive time, min/max/mean call duration per region and "
                    "region group, messages per location pair, collectives per operation and metric "
                    "changes, for START <= time < STOP, summed over the chosen locations. Computed on "
                    "the compressed graph. A call counts where it is entered; times count the part "
                    "inside the window.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=cmd_profile)

    p = commands.add_parser(
        "messages", parents=[window], help="matched point-to-point messages and collectives",
        description="Match sends with receives (FIFO per sender, receiver, communicator and tag) and "
                    "collectives per communicator; list those with a send or receive in the window, "
                    "and every unmatched event.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--matrix", action="store_true", help="print the communication matrix (counts) instead")
    p.set_defaults(run=cmd_messages)

    p = commands.add_parser(
        "timeline", parents=[window], help="render a timeline of region groups (or regions)",
        description="Per pixel column the exclusive-time share of each region group (rows: locations "
                    "or call levels), blended into colours; written as a PNG and/or JSON.")
    p.add_argument("--width", type=_bounded_int(1, 100000), default=1200, metavar="W",
                   help="pixel columns (default %(default)s)")
    p.add_argument("--by", choices=("location", "depth"), default="location", help="rows (default %(default)s)")
    p.add_argument("--color-by", choices=("group", "region"), default="group",
                   help="colour classes: region groups, or the regions with the most exclusive time "
                        "(default %(default)s)")
    p.add_argument("--row-height", type=_bounded_int(1, 1000), default=16, metavar="PX",
                   help="pixels per row in the PNG (default %(default)s)")
    p.add_argument("--png", metavar="FILE", help="write the image to FILE")
    p.add_argument("--json", action="store_true", help="print the per-column exclusive times as JSON")
    p.set_defaults(run=cmd_timeline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version (0) or a usage error (2)
        return exit.code if isinstance(exit.code, int) else 2
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("ccg: error: a command is required (convert, info, verify, cat, export, profile, messages, timeline)", file=sys.stderr)
        return 2
    try:
        return args.run(args)
    except UsageError as error:
        print(f"ccg {args.command}: error: {error}", file=sys.stderr)
        return 2
    except CcgError as error:
        print(f"ccg: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"ccg: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ccg: interrupted", file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- convert

def cmd_convert(args: argparse.Namespace) -> int:
    try:
        params = Params(abs_dev=args.abs_dev, rel_dev=args.rel_dev, rel_size=args.rel_size,
                        rel_metric=args.rel_metric, branching=args.branching, search_length=args.search_length)
    except ParameterError as error:
        raise UsageError(str(error)) from None
    if os.path.exists(args.target) and os.path.exists(args.source) and os.path.samefile(args.source, args.target):
        raise UsageError("DST is the input file; conversion never modifies its input")
    show = not args.quiet and sys.stderr.isatty()
    progress = _Progress(sys.stderr) if show else None
    try:
        report = convert(args.source, args.target, params, fmt=args.fmt, repair=args.repair, level=args.level,
                         checkpoint_interval=args.checkpoint_interval, progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    if report.repairs:
        with open_archive(args.target) as archive:
            names = [region.name for region in archive.definitions.regions]
        for repair in report.repairs:
            name = repr(names[repair.region]) if 0 <= repair.region < len(names) else None
            print(f"ccg convert: repaired: {repair.describe(name)}", file=sys.stderr)
    if not args.quiet:
        print(_convert_line(report))
    return 0


class _Progress:
    """One self-overwriting line on a terminal: a bar of the locations finished, the
    location being read and the events so far."""

    BAR = 24

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.width = 0

    def __call__(self, p: ConvertProgress) -> None:
        filled = self.BAR * p.locations_done // p.locations
        bar = "#" * filled + "-" * (self.BAR - filled)
        self._show(f"ccg convert [{bar}] {p.locations_done}/{p.locations} locations; location "
                   f"{p.location}: {p.location_events:,} events ({p.events:,} in all)")

    def _show(self, text: str) -> None:
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _convert_line(r: ConvertReport) -> str:
    per_event = f"{r.bytes_per_event:.3f}" if r.bytes_per_event is not None else "-"
    return (f"{r.target}: {r.format} -> ccg, {r.locations} locations, {r.events:,} events, "
            f"nodes {r.N:,} -> {r.n:,} (R_nodes {r.r_nodes:.2f}), {r.file_bytes:,} bytes, "
            f"{per_event} bytes/event")


# --------------------------------------------------------------------------- info

def _format_version(archive: Archive) -> str:
    major, minor = archive.version
    return f"{major}.{minor}"


def info_document(archive: Archive) -> dict[str, Any]:
    """Everything `ccg info` shows, as JSON-ready data."""
    stats = archive.stats
    parameters = archive.parameters
    definitions = archive.definitions
    start, end = archive.time_range
    sections: dict[str, dict[str, int]] = {}
    for entry in archive.directory:
        row = sections.setdefault(kind_name(entry.kind), {"blocks": 0, "stored_bytes": 0, "raw_bytes": 0})
        row["blocks"] += 1
        row["stored_bytes"] += entry.length
        row["raw_bytes"] += entry.raw_length
    keys = ("abs_dev", "rel_dev", "rel_size", "rel_metric", "branching", "search_length", "zstd_level",
            "checkpoint_interval", "nodes_per_block")
    return {
        "path": archive.path,
        "format_version": _format_version(archive),
        "locations": len(archive.locations),
        "events": stats.events,
        "time_range": [start, end],
        "timer_resolution": definitions.timer_resolution,
        "duration_seconds": (end - start) / definitions.timer_resolution if definitions.timer_resolution else None,
        "N": stats.N,
        "n": stats.n,
        "R_nodes": stats.r_nodes,
        "R_memory": stats.r_memory,
        "file_bytes": stats.file_bytes,
        "bytes_per_event": stats.bytes_per_event if stats.events else None,
        "parameters": {key: parameters.get(key) for key in keys},
        "converter": parameters.get("converter"),
        "provenance": parameters.get("provenance", definitions.provenance),
        "sections": sections,
    }


def cmd_info(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        document = info_document(archive)
    if args.json:
        print(json.dumps(document, indent=None, sort_keys=False))
        return 0
    p = document["parameters"]
    start, end = document["time_range"]
    seconds = document["duration_seconds"]
    per_event = document["bytes_per_event"]
    lines = [
        ("archive", document["path"]),
        ("format version", document["format_version"]),
        ("locations", f"{document['locations']:,}"),
        ("events", f"{document['events']:,}"),
        ("time range", f"{start} .. {end} ticks" + (f" ({seconds:.6g} s)" if seconds is not None else "")),
        ("timer resolution", f"{document['timer_resolution']:,} ticks/s"),
        ("nodes N -> n", f"{document['N']:,} -> {document['n']:,}"),
        ("R_nodes", f"{document['R_nodes']:.2f}"),
        ("R_memory", f"{document['R_memory']:.2f}"),
        ("file bytes", f"{document['file_bytes']:,}"),
        ("bytes/event", f"{per_event:.3f}" if per_event is not None else "-"),
        ("parameters", f"abs={p['abs_dev']} rel={p['rel_dev']} rel_size={p['rel_size']} "
                       f"rel_metric={p['rel_metric']} b={p['branching']} L={p['search_length']} "
                       f"zstd={p['zstd_level']} checkpoint_interval={p['checkpoint_interval']}"),
        ("converter", str(document["converter"])),
        ("provenance", ", ".join(f"{k}={v}" for k, v in sorted(document["provenance"].items())) or "-"),
    ]
    out = [f"{name:<18}{value}" for name, value in lines]
    out.append(f"{'sections':<18}{'blocks':>8}{'stored bytes':>15}{'raw bytes':>15}")
    for name, row in document["sections"].items():
        out.append(f"  {name:<16}{row['blocks']:>8,}{row['stored_bytes']:>15,}{row['raw_bytes']:>15,}")
    print("\n".join(out))
    return 0


# --------------------------------------------------------------------------- verify

def cmd_verify(args: argparse.Namespace) -> int:
    problems = verify(args.archive)
    if args.json:
        print(json.dumps({"path": args.archive, "ok": not problems,
                          "problems": [p.to_dict() for p in problems]}))
        return 1 if problems else 0
    if not problems:
        with open_archive(args.archive) as archive:
            blocks = len(archive.directory)
            events = sum(root.events for root in archive.roots.values())
            print(f"ok: {args.archive}: {blocks} blocks, {len(archive.locations)} locations, "
                  f"{events:,} events, all checks passed")
        return 0
    first = problems[0]
    where = (f"at byte {first.offset}" if first.kind is None
             else f"in the {first.kind_name} block at byte {first.offset}")
    count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
    print(f"FAILED: {args.archive}: {count}; first {where}: {first.reason}")
    for problem in problems:
        print(f"  {problem}")
    return 1


# --------------------------------------------------------------------------- export

def cmd_export(args: argparse.Namespace) -> int:
    try:
        exporter = exporter_for(args.target, args.to)
    except FormatError as error:
        raise UsageError(f"{error.reason}: {args.target}") from None
    with open_archive(args.archive) as archive:
        target = archive.export(args.target, exporter.name)
    if not args.quiet:
        print(f"wrote {target}")
    return 0


# --------------------------------------------------------------------------- cat

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
        out = sys.stdout
        try:
            out.write(write.header())
            # small batches: several writes, so that a reader going away is noticed early
            for locations, batch in archive.events(args.start, args.stop, locations=chosen, batch_size=1024):
                out.write(write.rows(locations.tolist(), batch.rows()))
            out.flush()
        except BrokenPipeError:
            _silence_stdout()
    return 0


# --------------------------------------------------------------------------- queries

def _chosen_locations(archive: Archive, wanted: list[int] | None) -> list[int] | None:
    if not wanted:
        return None
    missing = sorted(set(wanted) - set(archive.locations))
    if missing:
        raise UsageError(f"no location {missing[0]} in {archive.path}")
    return sorted(set(wanted))


def _window(archive: Archive, args: argparse.Namespace) -> tuple[int | None, int | None]:
    if args.start is not None and args.stop is not None and args.start > args.stop:
        raise UsageError(f"--start {args.start} is after --stop {args.stop}")
    return args.start, args.stop


def _table(header: list[str], rows: list[list[str]], left: int = 0) -> list[str]:
    """Lines of a text table: columns as wide as their widest cell and two spaces apart,
    the first ``left`` columns aligned left, the others right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    return ["  ".join(cell.ljust(width) if i < left else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(line, widths))).rstrip() for line in [header, *rows]]


def cmd_profile(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        result = archive.profile(start, stop, _chosen_locations(archive, args.location))
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    out = _table(["region", "group", "calls", "inclusive", "exclusive", "mean"],
                 [[row.name, row.group, f"{row.calls:,}", f"{row.inclusive:,}", f"{row.exclusive:,}",
                   f"{row.mean:,.1f}" if row.mean is not None else "-"]
                  for row in sorted(result.regions, key=lambda r: -r.exclusive)], left=2)
    if result.messages:
        out += [""] + _table(["sender", "receiver", "sent", "bytes", "received", "bytes"],
                             [[f"{v:,}" for v in (m.sender, m.receiver, m.sent, m.sent_bytes, m.received,
                                                  m.received_bytes)] for m in result.messages])
    if result.collectives:
        out += [""] + _table(["operation", "count", "bytes sent", "bytes received"],
                             [[f"{v:,}" for v in (c.operation, c.count, c.bytes_sent, c.bytes_received)]
                              for c in result.collectives])
    out += [f"metric {name}: change {value}" for name, value in result.metrics.items()]
    print("\n".join(out))
    return 0


def cmd_messages(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        result = archive.messages(start, stop, _chosen_locations(archive, args.location))
    if args.matrix:
        counts, _ = result.matrix()
        print(json.dumps(counts.tolist()) if args.json else "\n".join(" ".join(f"{c:>8}" for c in row)
                                                                        for row in counts.tolist()))
        return 0
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    out = [f"{'sender':>8}{'send time':>20}{'receiver':>10}{'recv time':>20}{'comm':>6}{'tag':>8}{'size':>12}"]
    out += [f"{m['sender']:>8}{m['send_time']:>20}{m['receiver']:>10}{m['recv_time']:>20}{m['comm']:>6}"
            f"{m['tag']:>8}{m['size']:>12}" for m in result.rows()]
    out.append(f"{len(result):,} messages, {len(result.unmatched):,} unmatched events, "
               f"{len(result.collectives):,} collectives "
               f"({sum(not c.complete for c in result.collectives):,} incomplete)")
    out += [f"unmatched {u.kind} at location {u.location}, time {u.time}: peer {u.peer}, comm {u.comm}, "
            f"tag {u.tag}" for u in result.unmatched]
    print("\n".join(out))
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    if not args.png and not args.json:
        raise UsageError("say where the timeline goes: --png FILE and/or --json")
    with open_archive(args.archive) as archive:
        first, last = archive.time_range
        start = first if args.start is None else args.start
        stop = last + 1 if args.stop is None else args.stop
        if stop <= start:
            raise UsageError(f"the window {start}..{stop} is empty")
        result = archive.timeline(start, stop, args.width, _chosen_locations(archive, args.location), args.by,
                                  args.color_by)
    if args.png:
        result.save_png(args.png, args.row_height)
    if args.json:
        print(json.dumps(result.to_json()))
    return 0


def _silence_stdout() -> None:
    """The reader went away (``| head``): drop what is left without a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


class _TextWriter:
    def __init__(self, regions: list[str]):
        self.regions = regions

    def header(self) -> str:
        return ""

    def region(self, ref: int) -> str:
        return self.regions[ref] if 0 <= ref < len(self.regions) else f"<region {ref}>"

    def rows(self, locations: Iterable[int], events: Iterable[Event]) -> str:
        lines = []
        for location, event in zip(locations, events):
            kind = EventKind(event.kind)
            if kind in (EventKind.ENTER, EventKind.LEAVE):
                detail = self.region(event.ref)
            else:
                detail = " ".join(f"{name}={getattr(event, name)}" for name in _USED[kind])
            lines.append(f"{location} {event.time} {kind.name} {detail}".rstrip() + "\n")
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

    def rows(self, locations: Iterable[int], events: Iterable[Event]) -> str:
        for location, event in zip(locations, events):
            kind = EventKind(event.kind)
            used = _USED[kind]
            self.writer.writerow([location, event.time, kind.name]
                                 + [getattr(event, name) if name in used else "" for name in COLUMNS])
        return self._take()


class _JsonWriter:
    def header(self) -> str:
        return ""

    def rows(self, locations: Iterable[int], events: Iterable[Event]) -> str:
        lines = []
        for location, event in zip(locations, events):
            kind = EventKind(event.kind)
            record: dict[str, Any] = {"location": location, "time": event.time, "kind": kind.name}
            for name in _USED[kind]:
                record[name] = getattr(event, name)
            lines.append(json.dumps(record) + "\n")
        return "".join(lines)


if __name__ == "__main__":
    sys.exit(main())
