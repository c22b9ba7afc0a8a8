"""The zstd size/speed curve the default node compression was chosen from (issue 17).

Every trace (the synthetic families, lossless and lossy, and each corpus trace) is written
once at level 19; its node blocks' raw payloads (NODES, PREDICTED_NODES, CODED_NODES) are then
compressed again at every setting of `SETTINGS` - plain levels, and level 19's parameters
with a shorter search (search_log, target_length) - and as the writer's default does.
Per setting the table gives the node bytes, the compression CPU seconds (one thread,
median of the repeats) and their ratio to plain 19's in the same run, and the file size
with the node blocks so compressed and the other blocks at 19, relative to the file at 19.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import synth
from bench_builder import PARAM_SETS
from benchkit import Column, benchmark, fmt_float, fmt_int, run_repeated
from corpus_root import corpus_root

import ccgformat
from ccgformat.archive import DEFAULT_LEVEL, DEFAULT_NODES_SEARCH, SectionKind
from ccgformat.archive.blocks import read_block, unpack_payload
from ccgformat.archive.compression import STRONG_RATIO, Level
from ccgformat.archive.layout import BLOCK_OVERHEAD, NODE_KINDS
from ccgformat.errors import CcgError

#: the settings of the curve: label -> how the node blocks are compressed (plain 19 first:
#: the baseline of the time ratios)
SETTINGS: dict[str, Level] = {
    "19": Level(19),
    **{str(level): Level(level) for level in (3, 9, 12, 15, 16, 17)},
    **{f"19 s{log} t{length}": Level(19, (log, length))
       for log, length in ((2, 64), (3, 16), (3, 32), (4, 16), (4, 32), (4, 64))},
    "default": Level(DEFAULT_LEVEL, DEFAULT_NODES_SEARCH),
}
#: the synthetic families: name -> synth.synthesize keyword arguments
FAMILIES: dict[str, dict[str, Any]] = {
    "spmd regular": {"jitter": 0.0, "seed": 1},
    "spmd jittered 0.2": {"jitter": 0.2, "seed": 1},
    "ring regular": {"pattern": "ring", "jitter": 0.0, "seed": 1},
    "ring jittered 1": {"pattern": "ring", "jitter": 1.0, "seed": 1},
}
#: the parameter sets the synthetic families are written with (bench_builder.PARAM_SETS)
FAMILY_PARAMS = ("lossless", "lossy")


def _payloads(path: Path) -> list[tuple[SectionKind, bytes, int]]:
    """(kind, raw payload, stored bytes incl. framing) of every block of an archive."""
    data = path.read_bytes()
    blocks = []
    with ccgformat.open(path) as archive:
        for entry in archive.directory:
            _, flags, stored = read_block(data, entry.offset, str(path))
            raw = unpack_payload(flags, stored, entry.raw_length, str(path), entry.offset)
            blocks.append((SectionKind(entry.kind), raw, BLOCK_OVERHEAD + len(stored)))
    return blocks


def _curve(name: str, path: Path, repeat: int) -> list[dict[str, Any]]:
    blocks = _payloads(path)
    file_19 = path.stat().st_size
    nodes = [raw for kind, raw, _ in blocks if kind in NODE_KINDS]
    nodes_19 = sum(size for kind, _, size in blocks if kind in NODE_KINDS)
    rows = []
    for label, level in SETTINGS.items():
        stored = [level.compress(raw) for raw in nodes]
        seconds = run_repeated(lambda: _cpu_seconds(level.compress, nodes), repeat)
        nodes_bytes = sum(BLOCK_OVERHEAD + len(s) for s in stored)
        rows.append({"trace": name, "level": label, "raw_nodes_bytes": sum(map(len, nodes)),
                     "nodes_bytes": nodes_bytes, "nodes_seconds": seconds.as_dict(),
                     "seconds_vs_19": seconds.median / rows[0]["nodes_seconds"]["median"] if rows else 1.0,
                     "file_bytes": file_19 - nodes_19 + nodes_bytes, "file_19_bytes": file_19,
                     "vs_19": (file_19 - nodes_19 + nodes_bytes) / file_19})
    return rows


def _cpu_seconds(compress: Callable[[bytes], bytes], payloads: list[bytes]) -> float:
    """CPU seconds of this thread (the machine's load changes them less than wall time)."""
    t0 = time.thread_time()
    for raw in payloads:
        compress(raw)
    return time.thread_time() - t0


def _corpus_traces() -> list[tuple[str, Path]]:
    from bench_formats import INTERNAL_FORMATS
    from ccgformat.formats import detect
    root = corpus_root()
    found, seen = [], set()
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        try:
            fmt = detect(path)
        except (CcgError, OSError):
            continue
        anchor = path.parent if path.suffix == ".otf2" else path  # an OTF2 folder and its anchor file
        if fmt not in INTERNAL_FORMATS and anchor not in seen:
            seen.add(anchor)
            found.append((str(path.relative_to(root)), path))
    return found


@benchmark(
    "levels",
    "zstd size/speed curve: NODES bytes and seconds per level, file size with NODES at that level vs level 19",
    [
        (f"zstd settings of the node blocks (s L t T: level 19's parameters with search_log L, target_length T; "
         f"NODES s: CPU of one thread, median; s/19: over plain 19's; file: node blocks so, the rest at 19, / the "
         f"file at 19; default: 19 s{DEFAULT_NODES_SEARCH[0]} t{DEFAULT_NODES_SEARCH[1]}, those it shrinks "
         f"more than {STRONG_RATIO} times at plain {DEFAULT_LEVEL} if smaller)", [
            Column("trace", lambda e: e["trace"], "<"),
            Column("level", lambda e: str(e["level"])),
            Column("raw NODES", lambda e: fmt_int(e["raw_nodes_bytes"])),
            Column("NODES bytes", lambda e: fmt_int(e["nodes_bytes"])),
            Column("NODES s", lambda e: f"{e['nodes_seconds']['median']:.3f}"),
            Column("s/19", lambda e: fmt_float(e["seconds_vs_19"], 3)),
            Column("file bytes", lambda e: fmt_int(e["file_bytes"])),
            Column("vs 19", lambda e: fmt_float(e["vs_19"], 4)),
        ]),
    ])
def levels_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ccg-levels-") as folder:
        for (name, arguments), params in itertools.product(FAMILIES.items(), FAMILY_PARAMS):
            definitions, events = synth.synthesize(options.locations, options.events_per_location, **arguments)
            path = Path(folder) / "synthetic.ccg"
            ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(options.locations)),
                                  ccgformat.Params(**PARAM_SETS[params]), level=19)
            entries += _curve(f"synth {name} {params}", path, options.repeat)
            print(f"  levels: synth {name} {params}", file=sys.stderr, flush=True)
        for name, source in _corpus_traces():
            path = Path(folder) / "corpus.ccg"
            try:
                ccgformat.convert(source, path, level=19)
            except CcgError as error:  # the corpus holds a trace made to fail
                print(f"  levels: {name} left out: {error}", file=sys.stderr, flush=True)
                continue
            entries += _curve(name, path, options.repeat)
    return entries

