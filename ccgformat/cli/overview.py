"""`ccg overview`: the optimal spatiotemporal aggregation of a window (papers 000 and 002)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from ..archive import open_archive
from .common import UsageError, add_output, answer_output, bounded_int

if TYPE_CHECKING:
    from ..query import Overview


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1")
    return value


def add_overview(p: argparse.ArgumentParser) -> None:
    """The ``overview`` command's options."""
    p.description = ("Split [START, STOP) into T slices, take each location's exclusive time per state "
                     "and slice, and find the partition into (hierarchy node x interval of slices) parts that "
                     "maximizes p * gain - (1 - p) * loss (papers 000 and 002). Without --p the default p of "
                     "the quality curve is used. Prints a summary, or JSON; draws PNG or SVG pictures.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--slices", type=bounded_int(1, 1000), default=30, metavar="T",
                   help="time slices (default %(default)s)")
    p.add_argument("--p", type=_ratio, metavar="P", help="gain/loss ratio in [0, 1] (default: the curve's default)")
    p.add_argument("--states", choices=("region", "group"), default="region", help="states (default %(default)s)")
    p.add_argument("--start", type=int, metavar="T", help="window start in ticks (inclusive)")
    p.add_argument("--stop", type=int, metavar="T", help="window stop in ticks (exclusive)")
    p.add_argument("--kind", choices=("spatiotemporal", "spatial", "temporal"), default="spatiotemporal",
                   help="aggregate space and time, space only (a treemap) or time only (default %(default)s)")
    p.add_argument("--normalize", action="store_true", help="divide gain and loss by those of the whole window")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--png", metavar="FILE",
                   help="draw the overview (a treemap with --kind spatial) as PNG (needs the plot extra: matplotlib)")
    p.add_argument("--svg", metavar="FILE", help="draw it as SVG")
    p.add_argument("--curve", action="store_true",
                   help="list the distinct optima as p goes from 0 to 1 with gain, loss and part count "
                        "(with --png/--svg, draw the quality curves instead)")
    add_output(p)
    p.set_defaults(run=cmd_overview)


def cmd_overview(args: argparse.Namespace) -> int:
    if args.start is not None and args.stop is not None and args.start >= args.stop:
        raise UsageError(f"the window {args.start}..{args.stop} is empty")
    with open_archive(args.archive) as archive:
        result = archive.overview(args.slices, args.p, args.states, args.start, args.stop, args.normalize,
                                  args.kind)
    what = "curve" if args.curve else "overview"
    for path, format in ((args.svg, "svg"), (args.png, "png")):
        if path:
            result.save(path, what, format)
    with answer_output(args) as out:
        print(_answer(result, args), file=out)
    return 0


def _answer(result: Overview, args: argparse.Namespace) -> str:
    """What `ccg overview` prints for ``result``: its quality curve with
    ``--curve``, else its partition; as JSON with ``--json``."""
    if args.curve:
        rows = result.quality_curve().to_json()
        if args.json:
            return json.dumps({"p": result.p, "curve": rows})
        return "\n".join([f"{'p from':>12} {'p to':>12} {'gain':>14} {'loss':>14} {'parts':>10}",
                          *(f"{r['p_low']:>12.6g} {r['p_high']:>12.6g} {r['gain']:>14.6g} {r['loss']:>14.6g} "
                            f"{r['parts']:>10,}" for r in rows),
                          f"default p: {result.p:.6g}" if args.p is None else f"chosen p: {result.p:.6g}"])
    if args.json:
        return json.dumps(result.to_json())
    part = result.partition
    return (f"{result.kind} aggregation of {len(result.model.locations):,} locations x {args.slices} slices, "
            f"{len(result.model.states)} states\n"
            f"p {result.p:.6g}{' (default)' if args.p is None else ''}: {len(part):,} parts, pIC {part.pic:.6g}, "
            f"gain {part.gain:.6g}, loss {part.loss:.6g}{' (normalized)' if args.normalize else ''}")
