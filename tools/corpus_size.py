"""Archive size against ``xz -9e`` for every trace of the real corpus (issue 14): the table
the corpus-size benchmark prints and the test that no archive is larger.

A trace's *original files* are what its tool wrote: the OTF2 anchor, its ``.def`` file
and its folder of local files; an OTF v1 trace's ``NAME.*`` files; else the one file.
Their ``xz -9e`` size is that of their contents concatenated in sorted path order."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from benchkit import Column, benchmark, fmt_int
from corpus_root import CORPUS_TRACES, corpus_root

#: the corpus traces, by name: their path inside the corpus
TRACES = CORPUS_TRACES


def original_files(source: Path) -> list[Path]:
    """The files a trace consists of, sorted (see the module docstring)."""
    if source.suffix == ".otf2":
        local = source.with_suffix("")
        files = [source, source.with_suffix(".def")] + (sorted(local.rglob("*")) if local.is_dir() else [])
    elif source.suffix == ".otf":
        files = list(source.parent.glob(source.stem + ".*"))
    else:
        files = [source]
    return sorted(f for f in files if f.is_file())


def xz_bytes(files: list[Path]) -> int:
    """Size of ``xz -9e`` of the files' contents, concatenated."""
    data = b"".join(f.read_bytes() for f in files)
    return len(subprocess.run(["xz", "-9e", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout)


def section_bytes(path: Path) -> dict[str, int]:
    """Bytes on disk per section kind of an archive (framing included); ``framing`` is the
    header, the footer block and the trailer."""
    import ccgformat
    from ccgformat.archive.layout import BLOCK_OVERHEAD, COMPACT_MAJOR_VERSION, SectionKind

    known = {int(k) for k in SectionKind}
    sections: dict[str, int] = {}
    with ccgformat.open(path) as archive:
        # in the compact layout (spec 2.7) the one bundle is the body, without block framing
        overhead = 0 if archive.version[0] == COMPACT_MAJOR_VERSION else BLOCK_OVERHEAD
        for entry in archive.directory:
            name = SectionKind(entry.kind).name if entry.kind in known else str(entry.kind)
            sections[name] = sections.get(name, 0) + overhead + entry.length
    sections["framing"] = path.stat().st_size - sum(sections.values())
    return sections


def measure(name: str, folder: Path) -> dict[str, Any]:
    """One row of the table: the trace's original bytes, xz -9e bytes, archive bytes and
    the archive's bytes per section (converted with the default, lossless parameters)."""
    import ccgformat

    source = corpus_root().joinpath(*TRACES[name])
    files = original_files(source)
    archive = folder / f"{name}.ccg"
    ccgformat.convert(source, archive)
    return {"trace": name, "original": sum(f.stat().st_size for f in files), "xz": xz_bytes(files),
            "ccg": archive.stat().st_size, "sections": section_bytes(archive)}


def measure_all(names: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows of every corpus trace present (all of TRACES unless ``names`` are given)."""
    if shutil.which("xz") is None:
        raise RuntimeError("xz is not installed (Debian package xz-utils)")
    with tempfile.TemporaryDirectory() as folder:
        return [measure(name, Path(folder)) for name in (names or sorted(TRACES))
                if corpus_root().joinpath(*TRACES[name]).exists()]


#: the section columns of the table, in file order
SECTIONS = ("NODES", "CHECKPOINT_TABLE", "DEFINITIONS", "EXTENSION_TABLE", "LOCATION_TABLE", "PARAMETERS",
            "DICTIONARY_BUNDLE", "ROOT_TABLE", "framing")


@benchmark("corpus-size", "archive bytes of every corpus trace against xz -9e of its original files, per section", [
    ("Corpus traces (bytes; original: the trace's files; xz: xz -9e of them; framing: header, footer, trailer)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("original", lambda e: fmt_int(e["original"])),
        Column("xz -9e", lambda e: fmt_int(e["xz"])),
        Column("ccg", lambda e: fmt_int(e["ccg"])),
        Column("ccg/xz", lambda e: f"{e['ccg'] / e['xz']:.2f}"),
        *[Column(kind, lambda e, kind=kind: fmt_int(e["sections"].get(kind, 0))) for kind in SECTIONS],
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    return measure_all()
