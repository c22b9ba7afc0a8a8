"""`ccg convert` and `ccg export`: a trace into an archive, and an archive into another
format."""

from __future__ import annotations

import argparse
import json
import sys

from ..archive import exporter_for, exporters, open_archive
from ..errors import FormatError, ParameterError
from ..formats import ConvertReport, convert, formats
from ..params import Params
from ..query.logical_schemes import SCHEMES
from .common import UsageError, add_mpi, add_writes, bounded_int, fraction, mpi_world, same_file, writes
from .progress import TerminalProgress


def add_convert(p: argparse.ArgumentParser) -> None:
    """The ``convert`` command's options."""
    defaults = Params()
    p.description = ("Convert a trace to a .ccg archive. The input format is detected from the file's "
                     "content, never its name. A .ccg input is rebuilt from its events with the new "
                     "parameters (bounds then apply to the events it holds). Options not given keep "
                     "the library defaults (lossless).")
    p.epilog = "Known input formats: " + ", ".join(f"{f.name} ({f.description})" for f in formats())
    p.add_argument("source", metavar="SRC", help="input trace")
    p.add_argument("target", metavar="DST", help="output archive (written atomically)")
    p.add_argument("--from", dest="fmt", choices=[f.name for f in formats()],
                   help="input format, instead of detecting it")
    p.add_argument("--abs", dest="abs_dev", type=bounded_int(0), default=defaults.abs_dev, metavar="TICKS",
                   help="absolute bound on timestamp deviation in ticks (default %(default)s)")
    p.add_argument("--rel", dest="rel_dev", type=fraction, default=defaults.rel_dev, metavar="FRACTION",
                   help="relative bound on duration deviation (default %(default)s); time is exact "
                        "unless both --abs and --rel are non-zero")
    p.add_argument("--rel-size", type=fraction, default=defaults.rel_size, metavar="F",
                   help="relative bound on message and collective sizes (default %(default)s)")
    p.add_argument("--rel-metric", type=fraction, default=defaults.rel_metric, metavar="F",
                   help="relative bound on integer metric increments (default %(default)s)")
    p.add_argument("--branching", type=bounded_int(2, 65535), default=defaults.branching, metavar="B",
                   help="bounded branching factor b (default %(default)s)")
    p.add_argument("--search-length", type=bounded_int(1), default=defaults.search_length, metavar="L",
                   help="S-list search length L (default %(default)s)")
    p.add_argument("--leaf-window", type=bounded_int(0), default=defaults.leaf_window, metavar="W",
                   help="exact time: share a leaf call whose durations rarely repeat with an equal node only when "
                        "that node was made or last shared at most W nodes ago (0: always; default %(default)s)")
    p.add_argument("--representatives", type=bounded_int(0), default=defaults.representatives, metavar="R",
                   help="with deviation bounds: a call whose S-list holds R nodes, none within the bounds, is "
                        "stored, and later calls of its kind too, instead of searched (0: always searched; "
                        "default %(default)s)")
    p.add_argument("--epoch-nodes", type=bounded_int(0), default=defaults.epoch_nodes, metavar="E",
                   help="bounded memory: once E nodes were stored since the replacement index last started "
                        "empty, it starts empty again, so that it holds E nodes at most and sharing reaches no "
                        "node of an earlier epoch (0: never; default %(default)s)")
    add_writes(p)
    p.add_argument("--repair", action="store_true",
                   help="close regions left open at a location's end and drop LEAVEs that match no "
                        "open region, instead of failing; each change is printed on stderr")
    p.add_argument("--quiet", "-q", action="store_true", help="print neither progress nor the result line")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_mpi(p, "run on the ranks of 'mpirun -n P ccg convert ... --mpi' (the mpi extra: mpi4py): each converts a "
               "share of the locations, rank 0 merges the parts and prints the result")
    p.set_defaults(run=cmd_convert)


def add_export(p: argparse.ArgumentParser) -> None:
    """The ``export`` command's options."""
    p.description = ("Write the archive's events and definitions in another trace format, for tools "
                     "that cannot read .ccg. The format comes from --to, else from DST's suffix. DST is "
                     "written atomically.")
    p.epilog = ("Output formats: " + ", ".join(f"{e.name} ({e.description}; {', '.join(e.suffixes)})"
                for e in exporters()))
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("target", metavar="DST", help="output file (or folder, for OTF2)")
    p.add_argument("--to", choices=[e.name for e in exporters()], help="output format")
    p.add_argument("--logical", choices=SCHEMES, metavar="SCHEME",
                   help="OTF2 only: the events carry their logical step, phase and lateness by SCHEME "
                        f"({' or '.join(SCHEMES)}) as attributes, as Ravel saves them")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument("--json", action="store_true", help="print the file written and its format as one JSON object")
    p.set_defaults(run=cmd_export)


def cmd_convert(args: argparse.Namespace) -> int:
    try:
        params = Params(abs_dev=args.abs_dev, rel_dev=args.rel_dev, rel_size=args.rel_size,
                        rel_metric=args.rel_metric, branching=args.branching, search_length=args.search_length,
                        leaf_window=args.leaf_window, representatives=args.representatives,
                        epoch_nodes=args.epoch_nodes)
    except ParameterError as error:
        raise UsageError(str(error)) from None
    if same_file(args.source, args.target):
        raise UsageError("DST is the input file; conversion never modifies its input")
    options = dict(fmt=args.fmt, repair=args.repair, **writes(args))
    world = mpi_world(args)
    if world is not None:
        from ..parallel import convert as convert_on_ranks

        report = convert_on_ranks(args.source, args.target, params, world=world, **options)  # type: ignore[arg-type]
        if world.rank != 0:
            return 0
    else:
        with TerminalProgress("ccg convert", quiet=args.quiet) as progress:
            report = convert(args.source, args.target, params, progress=progress.conversion if progress.shown else None,
                             **options)  # type: ignore[arg-type]
    if report.repairs:
        with open_archive(args.target) as archive:
            names = [region.name for region in archive.definitions.regions]
        for repair in report.repairs:
            name = repr(names[repair.region]) if 0 <= repair.region < len(names) else None
            print(f"ccg convert: repaired: {repair.describe(name)}", file=sys.stderr)
    if args.json:
        print(json.dumps(_convert_document(report)))
    elif not args.quiet:
        print(_convert_line(report))
    return 0


def _convert_line(r: ConvertReport) -> str:
    per_event = f"{r.bytes_per_event:.3f}" if r.bytes_per_event is not None else "-"
    return (f"{r.target}: {r.format} -> ccg, {r.locations} locations, {r.events:,} events, "
            f"nodes {r.N:,} -> {r.n:,} (R_nodes {r.r_nodes:.2f}), {r.file_bytes:,} bytes, "
            f"{per_event} bytes/event" + (" (lossless: smaller than with the bounds, which it meets)"
                                            if r.lossless_kept else ""))


def _convert_document(r: ConvertReport) -> dict[str, object]:
    """What the result line says, as JSON-ready data."""
    return {"source": r.source, "target": r.target, "format": r.format, "locations": r.locations,
            "events": r.events, "N": r.N, "n": r.n, "R_nodes": r.r_nodes, "file_bytes": r.file_bytes,
            "bytes_per_event": r.bytes_per_event, "lossless_kept": r.lossless_kept,
            "repairs": [{"location": x.location, "region": x.region, "time": x.time, "action": x.action}
                        for x in r.repairs]}


def cmd_export(args: argparse.Namespace) -> int:
    try:
        exporter = exporter_for(args.target, args.to)
    except FormatError as error:
        raise UsageError(f"{error.reason}: {args.target}") from None
    if args.logical and "logical" not in exporter.options:
        raise UsageError(f"--logical is for the OTF2 export, not {exporter.name}")
    with open_archive(args.archive) as archive, \
            TerminalProgress("ccg export", total=archive.stats.events, quiet=args.quiet) as progress:
        target = archive.export(args.target, exporter.name, progress=progress.add if progress.shown else None,
                                logical=args.logical)
    if args.json:
        print(json.dumps({"target": str(target), "format": exporter.name}))
    elif not args.quiet:
        print(f"wrote {target}")
    return 0
