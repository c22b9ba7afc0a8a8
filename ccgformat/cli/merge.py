"""`ccg merge`: archives of disjoint locations or of consecutive time segments joined
into one (`ccgformat.merge`, docs/merge.md)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from ..archive import MergeProgress, MergeReport, merge
from .common import add_writes, writes
from .progress import TerminalProgress


def add_merge(p: argparse.ArgumentParser) -> None:
    """The ``merge`` command's options."""
    p.description = ("Merge .ccg archives into one: archives of disjoint locations (per-rank or per-node "
                     "conversions) give the union of their locations, archives holding the same location "
                     "give its events one segment after another (they must not overlap in time). "
                     "Definitions are matched by name and structure; a conflict is an error naming both "
                     "files. OUT is written atomically; the inputs are never modified. Node blocks copied from an "
                     "input keep its gap coding.")
    p.add_argument("sources", metavar="ARCHIVE", nargs="+", help="archives to merge")
    p.add_argument("-o", "--output", dest="target", metavar="OUT", required=True, help="the merged archive")
    add_writes(p)
    p.add_argument("--quiet", "-q", action="store_true", help="print neither progress nor the result line")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(run=cmd_merge)


def cmd_merge(args: argparse.Namespace) -> int:
    with TerminalProgress("ccg merge", quiet=args.quiet) as progress:
        def shown(p: MergeProgress) -> None:
            progress.reach(p.events, p.total)

        report = merge(args.sources, args.target, progress=shown if progress.shown else None,
                       **writes(args))
    if args.json:
        print(json.dumps(dataclasses.asdict(report)))
    elif not args.quiet:
        print(_merge_line(report))
    return 0


def _merge_line(r: MergeReport) -> str:
    how = "time segments" if r.segmented else "locations"
    return (f"{r.target}: {len(r.sources)} archives merged by {how} ({r.way}), {r.locations} locations, "
            f"{r.events:,} events, "
            f"{r.nodes:,} nodes, {r.file_bytes:,} bytes" + ("" if r.extensions_kept else
                                                           " (format extensions dropped: the archives disagree)"))
