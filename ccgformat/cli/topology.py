"""`ccg topology`: the platform's containers with their metrics over a window, and the
links and messages between them (paper 001)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..analysis.graphviz import LAYOUTS, NEATO_NODES
from ..analysis.topology_tree import AGGREGATES
from ..archive import open_archive
from ..atomic import atomic_output
from .common import UsageError, add_output, answer_output, bounded_int


def add_topology(p: argparse.ArgumentParser) -> None:
    """The ``topology`` command's options."""
    p.description = ("The topology graph of paper 001: per container (hierarchy node) the time-weighted mean "
                     "of every metric over START <= time < STOP (default: the whole trace), summed (or averaged, "
                     "or the maximum) over its sub-tree, and edges between the containers that exchanged "
                     "messages or Paje links (counts and bytes within the window). With --depth D the nodes "
                     "are the containers of depth D (the root is 0) and the leaves above it. Prints a table, "
                     "or JSON; writes Graphviz DOT and SVG (Graphviz lays the graph out).")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--start", type=int, metavar="T", help="window start in ticks (inclusive)")
    p.add_argument("--stop", type=int, metavar="T", help="window stop in ticks (exclusive)")
    p.add_argument("--depth", type=bounded_int(0), metavar="D", help="cut the hierarchy at depth D (default: leaves)")
    p.add_argument("--aggregate", choices=AGGREGATES, default="sum",
                   help="a node's value from its leaves' (default %(default)s)")
    p.add_argument("--within", metavar="PATH", help="only the sub-tree of this container (its path, as printed)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--dot", metavar="FILE", help="write the graph as Graphviz DOT")
    p.add_argument("--svg", metavar="FILE", help="draw the graph as SVG (needs Graphviz)")
    p.add_argument("--size", metavar="METRIC", help="node area from this metric (default: power, bandwidth)")
    p.add_argument("--fill", metavar="METRIC", help="with --size, fill nodes up to this metric's share of it")
    p.add_argument("--title", metavar="TEXT", help="the picture's title (default: the archive's file name)")
    p.add_argument("--layout", choices=LAYOUTS, help="the Graphviz layout program (default: twopi for a tree, "
                                                   f"neato up to {NEATO_NODES} nodes, else sfdp)")
    add_output(p)
    p.set_defaults(run=cmd_topology)


def cmd_topology(args: argparse.Namespace) -> int:
    if args.start is not None and args.stop is not None and args.start >= args.stop:
        raise UsageError(f"the window {args.start}..{args.stop} is empty")
    if args.fill is not None and args.size is None:
        raise UsageError("--fill needs --size")
    with open_archive(args.archive) as archive:
        result = archive.topology(args.start, args.stop, args.depth, args.aggregate, args.within)
    title = args.title or f"Topology of {Path(args.archive).name}"
    if args.dot:
        with atomic_output(args.dot) as temporary:
            Path(temporary).write_text(result.to_dot(title, args.size, args.fill), encoding="utf-8")
    if args.svg:
        result.save_svg(args.svg, title, args.size, args.fill, args.layout)
    with answer_output(args) as out:
        if args.json:
            result.write_json(out)
            return 0
        print(f"{len(result.names):,} containers, {len(result.edges.first):,} edges; window {result.start}.."
              f"{result.stop} ({(result.stop - result.start) / result.resolution:.6g} s), {result.aggregate} of "
              f"time-weighted means", file=out)
        for node, path in enumerate(result.paths):
            metrics = "  ".join(f"{name} {value:.6g}" for name, value in
                                zip(result.metrics, result.values[node].tolist()) if not math.isnan(value))
            print(f"{path}  {metrics}".rstrip(), file=out)
    return 0
