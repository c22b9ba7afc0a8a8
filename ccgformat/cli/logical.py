"""`ccg logical`: the communication events in logical time, with lateness (paper 003)."""

from __future__ import annotations

import argparse

import numpy as np

from ..archive import open_archive
from ..query.logical_schemes import SCHEMES
from ..query.logical_clusters import CLUSTERS
from ..query.logical_picture import Picturable
from ..query.logical_spool import streamed_logical
from .common import UsageError, add_output, answer_output, bounded_int
from .queries import text_table


def add_logical(p: argparse.ArgumentParser) -> None:
    """The ``logical`` command's options."""
    p.description = ("Order the point-to-point (and, by Ravel's scheme, collective) events by logical steps "
                     "derived from happened-before: Lamport's clock, or Ravel's scheme (phases, sends of an "
                     "exchange on one step, aggregate non-messaging events). Lateness: how much later an "
                     "event's call exits than the earliest of its phase at its step. Prints a summary per "
                     "location, or JSON; draws the logical timeline as SVG or PNG.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--scheme", choices=SCHEMES, default="ravel", help="logical clock (default %(default)s)")
    p.add_argument("--clusters", type=bounded_int(1, 1000), default=CLUSTERS, metavar="K",
                   help="at most K clusters of locations per phase (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--png", metavar="FILE", help="draw the logical timeline as PNG (needs the plot extra: matplotlib)")
    p.add_argument("--svg", metavar="FILE", help="draw it as SVG")
    p.add_argument("--width", type=bounded_int(1, 100000), default=1000, metavar="W",
                   help="the picture's most step columns: more steps share a column (default %(default)s)")
    p.add_argument("--rows", type=bounded_int(1, 100000), default=800, metavar="N",
                   help="the picture's most rows: with more locations, rows show each phase's locations "
                        "ordered by cluster (default %(default)s)")
    add_output(p)
    p.set_defaults(run=cmd_logical)


def cmd_logical(args: argparse.Namespace) -> int:
    if args.output and (args.png or args.svg) and not args.json:
        raise UsageError("--output holds the printed answer, which a picture replaces: add --json")
    with open_archive(args.archive) as archive, streamed_logical(archive, args.scheme, args.clusters) as result:
        for path in (args.svg, args.png):
            if path:
                result.save(path, args.width, args.rows)
        if args.json or not (args.png or args.svg):
            with answer_output(args) as out:
                if args.json:
                    result.write_json(out)
                else:
                    print(summary_text(result), file=out)
    return 0


def summary_text(result: Picturable) -> str:
    """Per location its events, steps and lateness in seconds; then the totals."""
    seconds = 1.0 / result.timer_resolution
    rows = []
    events = 0
    latest: tuple[int, int, int, int] | None = None  # lateness, location, event, step
    for location, mine in result.location_columns():
        late, step = mine["lateness"], mine["step"]
        events += len(late)
        rows.append([result.names[location], f"{len(late):,}", f"{int(step[0])}-{int(step[-1])}",
                     f"{late.mean() * seconds:.6f}", f"{late.max() * seconds:.6f}"])
        at = int(np.argmax(late))
        if latest is None or late[at] > latest[0]:
            latest = (int(late[at]), location, int(mine["event"][at]), int(step[at]))
    out = text_table(["location", "events", "steps", "mean lateness s", "max lateness s"], rows, left=1)
    out.append(f"{events:,} communication events in {result.steps:,} steps, {result.phases:,} phases "
               f"({result.scheme} scheme)")
    if latest is not None:
        late, location, event, step = latest
        out.append(f"latest: {result.names[location]}, event {event}, step {step}, {late * seconds:.6f} s late")
    return "\n".join(out)
