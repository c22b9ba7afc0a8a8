"""`ccg profile`, `ccg messages`, `ccg timeline`, `ccg aggregate` and `ccg calltree`: the
queries over a time window."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, Callable, Sequence, TextIO

from ..archive import Archive, open_archive
from ..query import Profile
from ..query.messages_query import MessageStream
from ..query.timeline_query import HEIGHT
from .common import (MPI_HELP, UsageError, add_mpi, add_output, answer_output, bounded_int, chosen_locations,
                     location_name, mpi_world)

if TYPE_CHECKING:
    from ..query import CallTree


def _window_options(p: argparse.ArgumentParser) -> None:
    """The archive and window options every query command has, first."""
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--start", type=int, metavar="T", help="window start in ticks (inclusive)")
    p.add_argument("--stop", type=int, metavar="T", help="window stop in ticks (exclusive)")
    p.add_argument("--location", type=bounded_int(0), action="append", metavar="ID",
                   help="only this location (repeatable; default all)")


def add_profile(p: argparse.ArgumentParser) -> None:
    """The ``profile`` command's options."""
    p.description = ("Calls, inclusive and exclusive time, min/max/mean call duration per region and "
                     "region group, messages per location pair, collectives per operation and metric "
                     "changes, for START <= time < STOP, summed over the chosen locations. Computed on "
                     "the compressed graph. A call counts where it is entered; times count the part "
                     "inside the window.")
    _window_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_output(p)
    add_mpi(p)
    p.set_defaults(run=cmd_profile)


def add_messages(p: argparse.ArgumentParser) -> None:
    """The ``messages`` command's options."""
    p.description = ("Match sends with receives (FIFO per sender, receiver, communicator and tag) and "
                     "collectives per communicator; list those with a send or receive in the window, "
                     "and every unmatched event.")
    _window_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--matrix", action="store_true", help="print the communication matrix (counts) instead")
    add_output(p)
    add_mpi(p)
    p.set_defaults(run=cmd_messages)


def add_timeline(p: argparse.ArgumentParser) -> None:
    """The ``timeline`` command's options."""
    p.description = ("Per pixel column the exclusive-time share of each region group (rows: locations "
                     "or call levels), blended into colours; drawn as SVG or PNG (with a title, row labels, a "
                     "time axis in seconds and a legend) and/or printed as JSON.")
    _window_options(p)
    p.add_argument("--width", type=bounded_int(1, 100000), default=1200, metavar="W",
                   help="pixel columns (default %(default)s)")
    p.add_argument("--by", choices=("location", "depth"), default="location", help="rows (default %(default)s)")
    p.add_argument("--color-by", choices=("group", "region"), default="group",
                   help="colour classes: region groups, or the regions with the most exclusive time "
                        "(default %(default)s)")
    p.add_argument("--rows", type=bounded_int(1, 100000), default=HEIGHT, metavar="N",
                   help="by location, at most N rows: with more locations, consecutive ones share a row, "
                        "their times summed and blended (default %(default)s)")
    p.add_argument("--row-height", type=bounded_int(1, 1000), metavar="PX",
                   help="pixels per row in the picture (default 16, fewer when the rows would be taller "
                        "than 800 pixels)")
    p.add_argument("--png", metavar="FILE", help="draw the timeline as PNG (needs the plot extra: matplotlib)")
    p.add_argument("--svg", metavar="FILE", help="draw it as SVG")
    p.add_argument("--json", action="store_true", help="print the per-column exclusive times as JSON")
    add_output(p)
    p.set_defaults(run=cmd_timeline)


def add_aggregate(p: argparse.ArgumentParser) -> None:
    """The ``aggregate`` command's options."""
    p.description = ("Split START <= time < STOP (default: the whole trace) into T slices, bound k at "
                     "START + floor(k*(STOP-START)/T), and give per location and slice the exclusive time "
                     "in ticks of each state (region or region group) as the innermost open region.")
    _window_options(p)
    p.add_argument("--slices", type=bounded_int(1, 1000000), required=True, metavar="T", help="time slices")
    p.add_argument("--states", choices=("region", "group", "metric"), default="region",
                   help="states: regions, region groups, or the metrics' integrals per slice (spec 4.11; "
                        "default %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_output(p)
    add_mpi(p, MPI_HELP + " (region and group states)")
    p.set_defaults(run=cmd_aggregate)


def add_calltree(p: argparse.ArgumentParser) -> None:
    """The ``calltree`` command's options."""
    p.description = ("The call tree of START <= time < STOP: per call path (the regions open from the "
                     "location's root down to a call; recursion makes longer paths) the calls and the "
                     "inclusive and exclusive seconds, summed over the chosen locations or per location. "
                     "Computed on the compressed graph. A call counts where it is entered; times count the "
                     "part inside the window.")
    _window_options(p)
    p.add_argument("--per-location", action="store_true", help="a tree per location instead of their sum")
    p.add_argument("--json", action="store_true", help="print one JSON object (times in ticks)")
    add_output(p)
    p.set_defaults(run=cmd_calltree)


def _window(archive: Archive, args: argparse.Namespace) -> tuple[int | None, int | None]:
    if args.start is not None and args.stop is not None and args.start > args.stop:
        raise UsageError(f"--start {args.start} is after --stop {args.stop}")
    return args.start, args.stop


def text_table(header: list[str], rows: list[list[str]], left: int = 0) -> list[str]:
    """Lines of a text table: columns as wide as their widest cell and two spaces apart,
    the first ``left`` columns aligned left, the others right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    return ["  ".join(cell.ljust(width) if i < left else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(line, widths))).rstrip() for line in [header, *rows]]


def cmd_profile(args: argparse.Namespace) -> int:
    world = mpi_world(args)
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        if world is None:
            result = archive.profile(start, stop, chosen_locations(archive, args.location))
        else:
            from ..parallel import queries

            found = queries.profile(world, archive, start, stop, chosen_locations(archive, args.location))
            if found is None:
                return 0  # another rank than 0: rank 0 prints
            result = found
    with answer_output(args) as out:
        print(json.dumps(result.to_json()) if args.json else profile_text(result), file=out)
    return 0


def profile_text(result: Profile) -> str:
    """What `ccg profile` prints for ``result``: the regions by exclusive time, the
    messages per location pair, the collectives per operation and the metrics' changes."""
    out = text_table(["region", "group", "calls", "inclusive", "exclusive", "mean"],
                 [[row.name, row.group, f"{row.calls:,}", f"{row.inclusive:,}", f"{row.exclusive:,}",
                   f"{row.mean:,.1f}" if row.mean is not None else "-"]
                  for row in sorted(result.regions, key=lambda r: -r.exclusive)], left=2)
    if result.messages:
        out += [""] + text_table(["sender", "receiver", "sent", "bytes", "received", "bytes"],
                             [[f"{v:,}" for v in (m.sender, m.receiver, m.sent, m.sent_bytes, m.received,
                                                  m.received_bytes)] for m in result.messages])
    if result.collectives:
        out += [""] + text_table(["operation", "count", "bytes sent", "bytes received"],
                             [[f"{v:,}" for v in (c.operation, c.count, c.bytes_sent, c.bytes_received)]
                              for c in result.collectives])
    out += [f"metric {name}: change {value}" for name, value in result.metrics.items()]
    return "\n".join(out)


def cmd_messages(args: argparse.Namespace) -> int:
    world = mpi_world(args)
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        if world is None:
            # nothing else reads the archive meanwhile: its walk may run ahead in a thread
            stream = archive.iter_messages(start, stop, chosen_locations(archive, args.location), ahead=True)
        else:
            from ..parallel import queries

            found = queries.messages(world, archive, start, stop, chosen_locations(archive, args.location))
            if found is None:
                return 0  # another rank than 0: rank 0 prints
            stream = found
        with answer_output(args) as out:
            if args.matrix:
                counts, _ = stream.matrix()
                print(json.dumps(counts.tolist()) if args.json else "\n".join(" ".join(f"{c:>8}" for c in row)
                                                                                for row in counts.tolist()), file=out)
            elif args.json:
                stream.write_json(out)
            else:
                _print_messages(stream, out)
    return 0


def _print_messages(stream: MessageStream, out: TextIO) -> None:
    """The messages as a table, written to ``out`` as they complete, then the counts and
    the unmatched events."""
    print(f"{'sender':>8}{'send time':>20}{'receiver':>10}{'recv time':>20}{'comm':>6}{'tag':>8}{'size':>12}",
          file=out)
    matched = 0
    for chunk in stream:
        matched += len(chunk)
        lines = [f"{m['sender']:>8}{m['send_time']:>20}{m['receiver']:>10}{m['recv_time']:>20}{m['comm']:>6}"
                 f"{m['tag']:>8}{m['size']:>12}" for m in chunk.rows()]
        if lines:
            print("\n".join(lines), file=out)
    summary = [f"{matched:,} messages, {len(stream.unmatched):,} unmatched events, "
               f"{len(stream.collectives):,} collectives "
               f"({sum(not c.complete for c in stream.collectives):,} incomplete)"]
    summary += [f"unmatched {u.kind} at location {u.location}, time {u.time}: peer {u.peer}, comm {u.comm}, "
                f"tag {u.tag}" for u in stream.unmatched]
    print("\n".join(summary), file=out)


def cmd_timeline(args: argparse.Namespace) -> int:
    if not args.png and not args.svg and not args.json:
        raise UsageError("say where the timeline goes: --svg FILE, --png FILE and/or --json")
    if args.output and not args.json:
        raise UsageError("--output holds the --json answer: add --json")
    with open_archive(args.archive) as archive:
        first, last = archive.time_range
        start = first if args.start is None else args.start
        stop = last + 1 if args.stop is None else args.stop
        if stop <= start:
            raise UsageError(f"the window {start}..{stop} is empty")
        result = archive.timeline(start, stop, args.width, chosen_locations(archive, args.location), args.by,
                                  args.color_by, args.rows)
    if args.png or args.svg:
        drawing = result.drawing(args.row_height)
        for path, format in ((args.svg, "svg"), (args.png, "png")):
            if path:
                drawing.save(path, format)
    if args.json:
        with answer_output(args) as out:
            print(json.dumps(result.to_json()), file=out)
    return 0


def cmd_aggregate(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        if start is not None and stop is not None and stop <= start:
            raise UsageError(f"the window {start}..{stop} is empty")
        chosen = chosen_locations(archive, args.location)
        world = mpi_world(args)
        if world is not None:
            if args.states == "metric":
                raise UsageError("--mpi answers region and group states; run --states metric without it")
            from ..parallel import queries

            found = queries.aggregate(world, archive, args.slices, start, stop, args.states, chosen)
            if found is None:
                return 0  # another rank than 0: rank 0 prints
            model, states, show = found, found.states, (lambda v: f"{int(v):,}")
        elif args.states == "metric":
            model = archive.metric_integrals(args.slices, start, stop, locations=chosen)
            states, show = model.names, (lambda v: f"{v:,.6g}")
        else:
            model = archive.aggregate(args.slices, start, stop, args.states, chosen)
            states, show = model.states, (lambda v: f"{int(v):,}")
        names = [location_name(archive, location) for location in model.locations.tolist()]
    with answer_output(args) as out:
        if args.json:
            print(json.dumps({"bounds": model.bounds.tolist(), "states": list(states), "locations": names,
                              "values": model.values.tolist()}), file=out)
        else:
            print(aggregate_text(model, states, show, args.states), file=out)
    return 0


def aggregate_text(model: Any, states: Sequence[str], show: Callable[[float], str], kind: str) -> str:
    """What `ccg aggregate` prints of ``model`` (an `AggregateModel` or `MetricIntegrals`
    of ``kind`` states): the states by their total over every location and slice (``show``
    writes a value) with their first 8 slices, then the model's extent."""
    totals = model.values.sum(axis=(0, 1))
    order = sorted(range(len(states)), key=lambda x: -abs(totals[x]))
    header = ["state", "ticks" if kind != "metric" else "integral",
              *(f"slice {t}" for t in range(min(model.values.shape[1], 8)))]
    rows = [[states[x], show(totals[x]), *(show(v) for v in model.values[:, :8, x].sum(axis=0))] for x in order]
    extent = (f"{len(model.locations):,} locations, {len(model.bounds) - 1:,} slices from {model.bounds[0]} to "
              f"{model.bounds[-1]}")
    return "\n".join([*text_table(header, rows, left=1), extent])


def cmd_calltree(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        start, stop = _window(archive, args)
        result = archive.calltree(start, stop, chosen_locations(archive, args.location))
        names = {location: location_name(archive, location) for location in result.locations}
    with answer_output(args) as out:
        print(json.dumps(result.to_json(args.per_location)) if args.json else
              calltree_text(result, args.per_location, names), file=out)
    return 0


def calltree_text(result: CallTree, per_location: bool, names: dict[int, str]) -> str:
    """What `ccg calltree` prints: the call tree of every location summed, or one per
    location (``per_location``) under its name."""
    rows = result.rows(per_location)
    if not per_location:
        return "\n".join(_tree_lines(rows, result.timer_resolution))
    by_location: dict[int, list[dict[str, Any]]] = {location: [] for location in result.locations}
    for row in rows:
        by_location[row["location"]].append(row)
    sections = [[f"location {location} ({names[location]})", *_tree_lines(located, result.timer_resolution)]
                for location, located in by_location.items()]
    return "\n\n".join("\n".join(section) for section in sections)


def _tree_lines(rows: list[dict[str, Any]], ticks_per_second: int) -> list[str]:
    """A call tree's rows (depth first) as a text table, each path's region indented by
    its depth."""
    return text_table(["call path", "inclusive s", "exclusive s", "calls"],
                  [["  " * (len(row["path"]) - 1) + row["path"][-1], f"{row['inclusive'] / ticks_per_second:.6f}",
                    f"{row['exclusive'] / ticks_per_second:.6f}", f"{row['calls']:,}"] for row in rows], left=1)
