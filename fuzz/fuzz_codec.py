#!/usr/bin/env python3
"""Differential fuzzing of the node block decoder: the C decoder (ccgformat._native.codec)
against the Python reference (ccgformat.archive.codec) on raw node block payloads, each
read as a NODES, a PREDICTED_NODES (spec 5.7), a CODED_NODES (5.8) and a CODED_SOFT_NODES
payload (5.9).

Both must refuse an input with CorruptArchiveError, or both must decode it to the same
values; anything else (a disagreement, another exception, a crash) is a finding.
``--seeds DIR`` writes every node block payload of spec/vectors as seeds.

    python fuzz/fuzz_codec.py --seeds /tmp/ccg-nodes
    python fuzz/fuzz_codec.py /tmp/ccg-nodes -max_total_time=600 -use_value_profile=1
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def write_seeds(target: Path) -> None:
    from ccgformat.archive.layout import NODE_KINDS
    from ccgformat.archive.reader import Archive
    from ccgformat.errors import UnsupportedVersionError

    target.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "spec" / "vectors").glob("*.ccg")):
        try:
            archive = Archive(path)
        except UnsupportedVersionError:  # unknown_must_understand: refused, no payloads to seed
            continue
        with archive:
            for k, entry in enumerate(e for e in archive.directory
                                      if e.kind in NODE_KINDS):
                (target / f"{path.stem}_{k}").write_bytes(archive.payload(entry))
    print(f"{len(list(target.iterdir()))} seeds in {target}")


def compare(python, native) -> None:
    """Every value a NodeBlock consumer reads must agree."""
    import numpy as np

    assert native.first == python.first and len(native) == len(python)
    for name in ("kind", "child_start", "children", "duration_start", "durations", "key_start", "key",
                 "soft_start", "soft"):
        assert np.array_equal(np.asarray(getattr(native, name)), np.asarray(getattr(python, name))), name
    assert native.events.tolist() == list(python.events) and native.total.tolist() == list(python.total)
    assert native.child_events[:] == list(python.child_events)
    for i in range(len(python)):
        assert native.metric_sums(i) == python.metric_sums(i), i
    for name in ("ids", "events", "total"):
        assert getattr(native.imports, name).tolist() == getattr(python.imports, name).tolist(), name
    for node in python.imports.ids.tolist():
        assert native.imports.sums(node) == python.imports.sums(node), node


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        write_seeds(Path(sys.argv[2]))
        return
    import atheris

    with atheris.instrument_imports(include=["ccgformat"]):
        from ccgformat.archive.codec import decode_nodes
        from ccgformat._native.codec import decode_native
    from ccgformat.archive.layout import NODE_KINDS, block_coding
    from ccgformat.errors import CorruptArchiveError

    def one_input(data: bytes) -> None:
        for kind in sorted(NODE_KINDS):
            coding = block_coding(kind)
            try:
                python = decode_nodes(data, "x", 0, **coding)
            except CorruptArchiveError:
                python = None
            try:
                native = decode_native(data, "x", 0, **coding)
            except CorruptArchiveError:
                native = None
            assert (python is None) == (native is None), ("verdicts differ", kind, python is None)
            if python is not None:
                compare(python, native)

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
