#!/usr/bin/env python3
"""How the bundle dictionaries 2 and 3 (spec/format.md 2.8) were made; each run once,
then frozen.

A dictionary is history that the compressor may refer to: the raw payloads of the bundles
(spec 2.5) of small archives, converted from inputs the test suite writes from the format
specifications (never from the corpus). Dictionary 2, for zstd, holds three of them, then
the whole bundle dictionary 1; its order puts what a small EPILOG or OTF file repeats
nearest the frame:

1. `tests/test_formats_epilog.every_record_run`, a merged EPILOG file with every record,
   big-endian;
2. `tests/test_formats_epilog.per_rank_file`, a per-rank EPILOG file with two OFFSET
   records;
3. `tests/test_formats_otf1.write_trace` of two processes calling a function and sending
   one message, short records;
4. `ccgformat/archive/bundle_dictionary_1.jsonl`.

Dictionary 3, the history of the primed LZMA2 codec (spec 2.9), is dictionary 2, then,
each after a newline, the bundles of

5. `tests/test_formats_paje.old_convention_trace`, a Paje trace with the field names of
   the original Paje documentation (ContainerType, EntityType, ...), which neither
   dictionary before holds;
6. `tests/test_formats_otf1.write_trace` of two processes with counter samples, key-value
   attributes and markers of two texts, records the OTF sample of 3 lacks.

With it the script writes the stream prefix, the bytes that code dictionary 3 up to its
sync flush (`bundle_dictionary_3.lzma2`, `ccgformat.archive.primed_lzma`).

The format fixes each file by size and SHA-256: this script documents where its bytes
came from. Run again after the importers change, it writes a different file, which would
be a new dictionary, never a replacement of one.

    python tools/bundle_dictionary.py 2 OUTPUT
    python tools/bundle_dictionary.py 3 OUTPUT PREFIX_OUTPUT
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
from ccgformat.archive.primed_lzma import code_dictionary  # noqa: E402
from tests.test_formats_epilog import every_record_run, per_rank_file  # noqa: E402
from tests.test_formats_otf1 import COUNTER, GROUP, write_trace as write_otf  # noqa: E402
from tests.test_formats_paje import old_convention_trace  # noqa: E402


def bundle_payload(path: Path) -> bytes:
    """The raw payload of the one bundle of a small archive."""
    with ccgformat.open(path) as archive:
        (entry,) = archive.directory
        return archive.payload(entry)


def converted_bundles(sources: list[Path], folder: Path, stem: str) -> list[bytes]:
    """The bundle payloads of the archives converted from ``sources``, in their order."""
    payloads = []
    for i, source in enumerate(sources):
        target = folder / f"{stem}{i}.ccg"
        ccgformat.convert(source, target)
        payloads.append(bundle_payload(target))
    return payloads


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
    return converted_bundles(sources, folder, "sample")


def otf_counted_calls(function: int, start: int) -> list[tuple]:
    """A process of the OTF sample of dictionary 3: main and ``function`` with key-value
    attributes, the counter sampled inside."""
    return [(start, "Enter", {"function": 1, "scl": 0}, [3], []),
            (start + 10, "Counter", {"counter": COUNTER, "value": 0}, [], []),
            (start + 40, "Enter", {"function": function, "scl": 0}, [1 << 62 | start], []),
            (start + 50, "Counter", {"counter": COUNTER, "value": 5 + start}, [], []),
            (start + 90, "Leave", {"function": function}, [], []),
            (start + 95, "Counter", {"counter": COUNTER, "value": 42 + start}, [], []),
            (start + 120, "Leave", {"function": 1}, [], [])]


def later_samples(folder: Path) -> list[bytes]:
    """The bundles of the two sample archives dictionary 3 adds (5 and 6 above)."""
    paje = folder / "old.trace"
    paje.write_text(old_convention_trace())
    (folder / "counted").mkdir()
    otf = write_otf(folder / "counted", {
        "processes": {1: 0, 2: 0}, "functions": 3, "events": {1: otf_counted_calls(2, 0), 2: otf_counted_calls(3, 7)},
        "markers": [(30, 1, "a marker"), (60, 2, "another marker, longer")], "long": False, "one_stream": False,
        "compression": None})
    return converted_bundles([paje, otf], folder, "later")


def dictionary(number: int, folder: Path) -> bytes:
    """The bytes of bundle dictionary ``number`` (2 or 3), made afresh."""
    second = b"\n".join(samples(folder) + [bundle_dictionary().as_bytes()])
    return second if number == 2 else b"\n".join([second] + later_samples(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("number", type=int, choices=(2, 3))
    parser.add_argument("output", type=Path)
    parser.add_argument("prefix_output", type=Path, nargs="?", help="dictionary 3: where its stream prefix goes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = dictionary(args.number, Path(folder))
    args.output.write_bytes(data)
    print(f"wrote {len(data):,} bytes to {args.output}")
    if args.number == 3:
        if args.prefix_output is None:
            parser.error("dictionary 3 needs PREFIX_OUTPUT")
        prefix = code_dictionary(data)
        args.prefix_output.write_bytes(prefix)
        print(f"wrote {len(prefix):,} bytes to {args.prefix_output}")


if __name__ == "__main__":
    main()
