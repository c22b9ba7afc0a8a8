#!/usr/bin/env python3
"""Fuzz the whole .ccg reader with atheris (libFuzzer for Python).

Every input is an archive. The harness opens it and reads everything a user can: the
metadata (definitions, parameters, stats, time range, checkpoints), every location's
length, ``event(i)`` and ``find(t)`` at a few places and its first events, the merged
events of all locations, and `verify`. A `CcgError` is the expected answer to bad
input; any other exception, a crash, a hang or a runaway allocation is a finding
(the msgpack rule, shared/DESIGN.md).

CRC32C stops almost every random mutation at the first block, so each input is read
twice: as it is, and *resealed*, with the CRC of every block found by scanning from the
header recomputed, which lets mutations reach the decompressors, the JSON sections and
the node block decoder. ``--seeds DIR`` writes the seed corpus: spec/vectors/*.ccg and
tests/data/bad/*.ccg, plus a copy of each readable one with every block stored
uncompressed, so that mutations hit raw payload bytes.

    python fuzz/fuzz_reader.py --seeds /tmp/ccg-corpus
    CCGFORMAT_BACKEND=native python fuzz/fuzz_reader.py /tmp/ccg-corpus -max_total_time=1800
    python fuzz/fuzz_reader.py --replay /tmp/ccg-corpus     # every input once, without atheris
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CCGFORMAT_BACKEND", "native")

#: events read per location and from the merged stream (bounds the work per input)
MAX_EVENTS = 2000


def reseal(data: bytes) -> bytes:
    """``data`` with the CRC of every block met by scanning from offset 16 recomputed."""
    from ccgformat.archive.blocks import crc32c
    from ccgformat.archive.layout import BLOCK_CRC, BLOCK_HEADER, FILE_HEADER

    out = bytearray(data)
    position = FILE_HEADER.size
    while position + BLOCK_HEADER.size + BLOCK_CRC.size <= len(out):
        _, _, length = BLOCK_HEADER.unpack_from(out, position)
        end = position + BLOCK_HEADER.size + length
        if end + BLOCK_CRC.size > len(out):
            break
        BLOCK_CRC.pack_into(out, end, crc32c(bytes(out[position:end])))
        position = end + BLOCK_CRC.size
    return bytes(out)


def unpacked(path: Path) -> bytes:
    """The archive at ``path`` rewritten with every block stored uncompressed."""
    from ccgformat.archive.blocks import frame_block
    from ccgformat.archive.layout import FILE_HEADER, TRAILER, END_MAGIC, BlockFlags, SectionKind
    from ccgformat.archive.reader import Archive
    from ccgformat.archive.sections import DirectoryEntry, encode_directory

    with Archive(path) as archive:
        out = bytearray(bytes(archive._map[:FILE_HEADER.size]))
        entries = []
        for entry in archive.directory:
            raw = archive.payload(entry)
            flags = entry.flags & ~BlockFlags.ZSTD
            entries.append(DirectoryEntry(entry.kind, flags, len(out), len(raw), len(raw), entry.first, entry.count))
            out += frame_block(entry.kind, flags, raw)
    footer = frame_block(SectionKind.FOOTER, BlockFlags.MUST_UNDERSTAND, encode_directory(entries))
    return bytes(out + footer + TRAILER.pack(len(footer), END_MAGIC))


def write_seeds(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "spec" / "vectors").glob("*.ccg")) + sorted((ROOT / "tests" / "data" / "bad").glob("*.ccg")):
        (target / path.name).write_bytes(path.read_bytes())
        try:
            (target / f"raw_{path.name}").write_bytes(unpacked(path))
        except Exception:  # a damaged seed: its original is enough
            pass
    print(f"{len(list(target.iterdir()))} seeds in {target}")


def read_everything(path: str) -> None:
    """Everything a user can read from an archive (cf. tests/test_bad_archives.py)."""
    import ccgformat as ccg
    from ccgformat.archive.layout import SectionKind
    from ccgformat.archive.verify import verify

    with ccg.open(path) as archive:
        archive.definitions, archive.params, archive.parameters
        archive.stats, archive.time_range, archive.version
        archive.aggregate(7)  # the aggregation tables, and the graph for the pieces between their cells
        for location in archive.locations:
            for kind in (SectionKind.SNAPSHOTS, SectionKind.SUMMARY):
                archive.checkpoints(kind, location)
            walker = archive.location(location)
            count = len(walker)
            for i in sorted({0, count // 3, count // 2, count - 1}):
                if 0 <= i < count:
                    event = walker.event(i)
                    walker.find(event.time)
                    walker.find(event.time + 1)
            read = 0
            for batch in walker.events():
                read += len(batch)
                if read >= MAX_EVENTS:
                    break
        read = 0
        for _, batch in archive.events(batch_size=256):
            read += len(batch)
            if read >= MAX_EVENTS:
                break
    verify(path)


def check(data: bytes, path: str) -> None:
    """One input: read it as it is and resealed; only CcgError may come out."""
    from ccgformat.errors import CcgError

    sealed = reseal(data)
    for variant in (data,) if sealed == data else (data, sealed):
        with open(path, "wb") as file:
            file.write(variant)
        try:
            read_everything(path)
        except CcgError:
            pass


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        write_seeds(Path(sys.argv[2]))
        return
    handle, path = tempfile.mkstemp(suffix=".ccg", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.close(handle)
    if len(sys.argv) >= 3 and sys.argv[1] == "--replay":  # without atheris, e.g. under AddressSanitizer
        files = [f for name in sys.argv[2:] for f in (sorted(Path(name).iterdir()) if Path(name).is_dir() else [Path(name)])]
        for file in files:
            check(file.read_bytes(), path)
        print(f"replayed {len(files)} inputs")
        return
    import atheris

    with atheris.instrument_imports(include=["ccgformat"]):
        import ccgformat
        from ccgformat.archive import verify  # noqa: F401
    print(f"ccgformat backend: {ccgformat.backend}", file=sys.stderr)
    atheris.Setup(sys.argv, lambda data: check(data, path))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
