"""`ccg info` and `ccg verify`: describe an archive, check its integrity."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..archive import Archive, open_archive
from ..archive.verify import kind_name, verify
from .common import add_mpi, add_output, answer_output, mpi_world
from .progress import TerminalProgress


def add_info(p: argparse.ArgumentParser) -> None:
    """The ``info`` command's options."""
    p.description = "Sizes, compression, parameters, provenance and sections of an archive."
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_output(p)
    p.set_defaults(run=cmd_info)


def add_verify(p: argparse.ArgumentParser) -> None:
    """The ``verify`` command's options."""
    p.description = ("Read every block and check every structural invariant (checksums, node "
                     "encoding, references, roots, indexes). Exit status 0 when sound, 1 otherwise; "
                     "the first bad block is named with its kind and byte offset.")
    p.add_argument("archive", metavar="ARCHIVE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", "-q", action="store_true", help="show no progress on a terminal")
    add_output(p)
    add_mpi(p)
    p.set_defaults(run=cmd_verify)


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
    # the blocks, and the members of BUNDLE blocks, whose stored bytes are the bundle's
    for entry in archive.directory + [entry for entry in archive.sections if entry.member >= 0]:
        row = sections.setdefault(kind_name(entry.kind), {"blocks": 0, "stored_bytes": 0, "raw_bytes": 0})
        row["blocks"] += 1
        row["stored_bytes"] += entry.length if entry.member < 0 else 0
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
        "parameters": {**{key: parameters.get(key) for key in keys},
                       # absent in files before them: 0
                       "leaf_window": archive.params.leaf_window,
                       "representatives": archive.params.representatives},
        "converter": parameters.get("converter"),
        "provenance": parameters.get("provenance", definitions.provenance),
        "sections": sections,
    }


def cmd_info(args: argparse.Namespace) -> int:
    with open_archive(args.archive) as archive:
        document = info_document(archive)
    with answer_output(args) as out:
        print(json.dumps(document, indent=None, sort_keys=False) if args.json else info_text(document), file=out)
    return 0


def info_text(document: dict[str, Any]) -> str:
    """What `ccg info` prints for `info_document`'s ``document``."""
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
                       f"leaf_window={p['leaf_window']} representatives={p['representatives']} "
                       f"zstd={p['zstd_level']} checkpoint_interval={p['checkpoint_interval']}"),
        ("converter", str(document["converter"])),
        ("provenance", ", ".join(f"{k}={v}" for k, v in sorted(document["provenance"].items())) or "-"),
    ]
    out = [f"{name:<18}{value}" for name, value in lines]
    out.append(f"{'sections':<18}{'blocks':>8}{'stored bytes':>15}{'raw bytes':>15}")
    for name, row in document["sections"].items():
        out.append(f"  {name:<16}{row['blocks']:>8,}{row['stored_bytes']:>15,}{row['raw_bytes']:>15,}")
    return "\n".join(out)


def cmd_verify(args: argparse.Namespace) -> int:
    world = mpi_world(args)
    if world is not None:
        from ..parallel.queries import verify as verify_on_ranks

        problems = verify_on_ranks(world, args.archive)
        if world.rank != 0:
            return 1 if world.broadcast(None) else 0
        world.broadcast(bool(problems))
    else:
        with TerminalProgress("ccg verify", unit="B", scale=True, quiet=args.quiet) as progress:
            problems = verify(args.archive, progress.reach if progress.shown else None)
    if args.json:
        report = json.dumps({"path": args.archive, "ok": not problems, "problems": [p.to_dict() for p in problems]})
    elif not problems:
        with open_archive(args.archive) as archive:
            blocks = len(archive.directory)
            events = sum(root.events for root in archive.roots.values())
            report = (f"ok: {args.archive}: {blocks} blocks, {len(archive.locations)} locations, "
                      f"{events:,} events, all checks passed")
    else:
        first = problems[0]
        where = (f"at byte {first.offset}" if first.kind is None
                 else f"in the {first.kind_name} block at byte {first.offset}")
        count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
        report = "\n".join([f"FAILED: {args.archive}: {count}; first {where}: {first.reason}",
                            *(f"  {problem}" for problem in problems)])
    with answer_output(args) as out:  # the report, whatever it found
        print(report, file=out)
    return 1 if problems else 0
