#!/usr/bin/env python3
"""How the bundle dictionary 2 (spec/format.md 2.8) was made; run once, then frozen.

The dictionary is history that zstd's matches may refer to: the raw payloads of the
bundles (spec 2.5) of three small archives, converted from inputs the test suite writes
from the format specifications (never from the corpus), then the whole bundle dictionary
1. Its order puts what a small EPILOG or OTF file repeats nearest the frame:

1. `tests/test_formats_epilog.every_record_run`, a merged EPILOG file with every record,
   big-endian;
2. `tests/test_formats_epilog.per_rank_file`, a per-rank EPILOG file with two OFFSET
   records;
3. `tests/test_formats_otf1.write_trace` of two processes calling a function and sending
   one message, short records;
4. `ccgformat/archive/bundle_dictionary_1.jsonl`.

The format fixes the file by size and SHA-256: this script documents where its bytes came
from. Run again after the importers change, it writes a different file, which would be a
new dictionary, never a replacement of this one.

    python tools/bundle_dictionary.py OUTPUT
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ccgformat  # noqa: E402
from ccgformat.archive.bundle import bundle_dictionary  # noqa: E402
from tests.test_formats_epilog import every_record_run, per_rank_file  # noqa: E402
from tests.test_formats_otf1 import GROUP, write_trace as write_otf  # noqa: E402


def bundle_payload(path: Path) -> bytes:
    """The raw payload of the one bundle of a small archive."""
    with ccgformat.open(path) as archive:
        (entry,) = archive.directory
        return archive.payload(entry)


def otf_calls(function: int, peer: int) -> list[tuple]:
    return [(100, "Enter", {"function": function, "scl": 0}, [], []),
            (150, "SendMsg", {"receiver": peer, "length": 8, "tag": 1, "communicator": GROUP}, [], []),
            (200, "Leave", {"function": function}, [], [])]


def samples(folder: Path) -> list[bytes]:
    """The bundles of the three sample archives, in dictionary order."""
    sources = [every_record_run().file(">").write(folder / "merged.elg"),
               per_rank_file([(0.0, 0.5), (10.0, 0.7)], [1, 2, 3]).write(folder / "rank.elg")]
    (folder / "otf").mkdir()
    sources.append(write_otf(folder / "otf", {
        "processes": {1: 0, 2: 0}, "functions": 3, "events": {1: otf_calls(1, 2), 2: otf_calls(2, 1)},
        "markers": [(120, 1, "x")], "long": False, "one_stream": False, "compression": None}))
    payloads = []
    for i, source in enumerate(sources):
        target = folder / f"{i}.ccg"
        ccgformat.convert(source, target)
        payloads.append(bundle_payload(target))
    return payloads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = b"\n".join(samples(Path(folder)) + [bundle_dictionary().as_bytes()])
    args.output.write_bytes(data)
    print(f"wrote {len(data):,} bytes to {args.output}")


if __name__ == "__main__":
    main()
