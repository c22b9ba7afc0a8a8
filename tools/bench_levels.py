"""The zstd size/speed curve the default levels were chosen from (issue 17).

Every trace (the synthetic families and each corpus trace) is written once at level 19;
its blocks' raw payloads are then compressed again at every level of `LEVELS` and as the
writer's default does (``default``: DEFAULT_NODES_LEVEL, the most compressible blocks at
19 too). Per level the table gives the NODES bytes and compression seconds (one thread,
median of the repeats), and the file size with the NODES blocks at that level and the
other blocks at 19 (the default's split), relative to the file at level 19 throughout.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import synth
from benchkit import Column, benchmark, fmt_float, fmt_int, run_repeated
from corpus_root import corpus_root

import ccgformat
from ccgformat.archive import DEFAULT_LEVEL, DEFAULT_NODES_LEVEL, SectionKind
from ccgformat.archive.blocks import read_block, unpack_payload
from ccgformat.archive.compression import STRONG_RATIO, Level
from ccgformat.archive.layout import BLOCK_OVERHEAD
from ccgformat.errors import CcgError

LEVELS = (3, 9, 12, 13, 14, 15, 16, 17, 19)
#: the synthetic families: name -> synth.synthesize keyword arguments
FAMILIES: dict[str, dict[str, Any]] = {
    "spmd regular": {"jitter": 0.0, "seed": 1},
    "spmd jittered 0.2": {"jitter": 0.2, "seed": 1},
    "ring regular": {"pattern": "ring", "jitter": 0.0, "seed": 1},
    "ring jittered 1": {"pattern": "ring", "jitter": 1.0, "seed": 1},
}


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
    nodes = [raw for kind, raw, _ in blocks if kind == SectionKind.NODES]
    nodes_19 = sum(size for kind, _, size in blocks if kind == SectionKind.NODES)
    rows = []
    for level in (*LEVELS, "default"):
        compress = (Level(DEFAULT_NODES_LEVEL, DEFAULT_LEVEL) if level == "default" else Level(level)).compress
        stored = [compress(raw) for raw in nodes]
        seconds = run_repeated(lambda: _timed(compress, nodes), repeat)
        nodes_bytes = sum(BLOCK_OVERHEAD + len(s) for s in stored)
        rows.append({"trace": name, "level": level, "raw_nodes_bytes": sum(map(len, nodes)),
                     "nodes_bytes": nodes_bytes, "nodes_seconds": seconds.as_dict(),
                     "file_bytes": file_19 - nodes_19 + nodes_bytes, "file_19_bytes": file_19,
                     "vs_19": (file_19 - nodes_19 + nodes_bytes) / file_19})
    return rows


def _timed(compress: Callable[[bytes], bytes], payloads: list[bytes]) -> float:
    t0 = time.perf_counter()
    for raw in payloads:
        compress(raw)
    return time.perf_counter() - t0


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
        (f"zstd levels (NODES s: one thread, median (min-max); file: NODES at the level, the rest at 19, / the "
         f"file at 19; default: NODES at {DEFAULT_NODES_LEVEL}, those it shrinks more than "
         f"{STRONG_RATIO} times at {DEFAULT_LEVEL} if smaller)", [
            Column("trace", lambda e: e["trace"], "<"),
            Column("level", lambda e: str(e["level"])),
            Column("raw NODES", lambda e: fmt_int(e["raw_nodes_bytes"])),
            Column("NODES bytes", lambda e: fmt_int(e["nodes_bytes"])),
            Column("NODES s", lambda e: f"{e['nodes_seconds']['median']:.3f}"),
            Column("file bytes", lambda e: fmt_int(e["file_bytes"])),
            Column("vs 19", lambda e: fmt_float(e["vs_19"], 4)),
        ]),
    ])
def levels_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ccg-levels-") as folder:
        for name, arguments in FAMILIES.items():
            definitions, events = synth.synthesize(options.locations, options.events_per_location, **arguments)
            path = Path(folder) / "synthetic.ccg"
            ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(options.locations)),
                                  level=19)
            entries += _curve(f"synth {name}", path, options.repeat)
            print(f"  levels: synth {name}", file=sys.stderr, flush=True)
        for name, source in _corpus_traces():
            path = Path(folder) / "corpus.ccg"
            try:
                ccgformat.convert(source, path, level=19)
            except CcgError as error:  # the corpus holds a trace made to fail
                print(f"  levels: {name} left out: {error}", file=sys.stderr, flush=True)
                continue
            entries += _curve(name, path, options.repeat)
    return entries

