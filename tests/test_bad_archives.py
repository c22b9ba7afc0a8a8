"""Damaged archives: a clear CcgError subclass, never another exception, a crash or a hang.

The files in tests/data/bad are written by tools/regen_vectors.py; their README's table
says what each must raise and is parsed here, so the two cannot drift. The exhaustive
tests damage a small archive at every byte and cut it at every length.
"""

from __future__ import annotations

import os
import re
import signal
import traceback
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest
import zstandard

import ccgformat as ccg
from ccgformat import errors
from ccgformat.archive.blocks import crc32c, frame_block
from ccgformat.archive.bundle import bundle_dictionary
from ccgformat.archive.layout import (BLOCK_CRC, BLOCK_HEADER, END_MAGIC, FILE_HEADER, TRAILER, BlockFlags,
                                      SectionKind)
from ccgformat.archive.sections import decode_directory, encode_directory
from ccgformat.archive.verify import verify
from ccgformat.model import Definitions, Event, EventBatch, EventKind, Location, Metric, Region

BAD = Path(__file__).resolve().parent / "data" / "bad"
VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<how>.+) \| (?:`(?P<error>\w+)`|(?P<fine>reads fine|reads as "
                 r"`(?P<like>\w+\.ccg)`)|(?P<verified>reads; `ccg verify` reports it)) \| (?P<offset>\d+|-) \|$")
K = EventKind


def readme_rows() -> list[dict[str, Any]]:
    readme = BAD / "README.md"
    if not readme.is_file():
        return []
    rows = []
    for line in readme.read_text().splitlines():
        if line.startswith("| `"):
            match = ROW.match(line)
            assert match, f"tests/data/bad/README.md: malformed row {line!r}"
            rows.append(match.groupdict())
    return rows


def read_everything(path: Path | str, *, max_events: int | None = None) -> tuple[Definitions, dict[int, Any], Any]:
    """Open an archive and touch everything a reader offers; returns what it read: the
    definitions, per location its events and the answers of a few random-access calls
    (``max_events`` caps how many events of a location are read), and the model and the
    metric integrals at every level of the tables."""
    with ccg.open(path) as archive:
        definitions = archive.definitions
        definitions.extensions  # an EXTENSION_TABLE (1.4) is decoded when first used
        archive.params
        archive.parameters
        archive.stats
        archive.time_range
        result = {}
        for location in archive.locations:
            walker = archive.location(location)
            count = len(walker)
            stop = count if max_events is None else min(count, max_events)
            events = [e for batch in walker.events(0, stop) for e in batch.rows()]
            probes: list[Any] = []
            for i in sorted({0, stop // 2, stop - 1}) if stop else ():
                time = events[i].time
                probes.append((walker.event(i), walker.find(time), walker.call_stack(time)))
            probes.append((walker.find(-(1 << 62)), walker.find(1 << 62), walker.call_stack(0)))
            probes.append(archive.checkpoints(SectionKind.SNAPSHOTS, location))
            probes.append(archive.checkpoints(SectionKind.SUMMARY, location))
            result[location] = (events, probes)
        tables = archive.aggregation_tables
        models = [archive.aggregate(1 << k).values.tolist() for k in range(len(tables.levels))] if tables else []
        metric_tables = archive.metric_tables
        models += [archive.metric_integrals(1 << k).values.tolist()
                   for k in range(len(metric_tables.levels))] if metric_tables else []
        return definitions, result, models


# --------------------------------------------------------------------------- tests/data/bad

def test_the_bad_folder_matches_its_readme():
    assert BAD.is_dir(), f"{BAD} is missing: run `python tools/regen_vectors.py`"
    rows = readme_rows()
    assert rows, "tests/data/bad/README.md has no table: run `python tools/regen_vectors.py`"
    listed = [row["file"] for row in rows]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(path.name for path in BAD.glob("*.ccg"))
    required = {"truncated_footer.ccg", "offset_past_end.ccg", "huge_length.ccg", "crc_mismatch.ccg",
                "unknown_major.ccg", "unknown_must_understand.ccg", "unknown_optional.ccg", "bad_magic.ccg",
                "raw_length_lie.ccg", "zstd_bomb.ccg"}
    assert required <= set(listed)


@pytest.mark.parametrize("row", readme_rows(), ids=lambda row: row["file"])
def test_bad_archive_raises_what_the_readme_says(row):
    path = BAD / row["file"]
    assert path.is_file(), f"{path} is missing: run `python tools/regen_vectors.py`"
    if row["fine"]:  # reads as every_kind.ccg, or as the vector named
        assert read_everything(path) == read_everything(VECTORS / (row["like"] or "every_kind.ccg"))
        return
    if row["verified"]:  # the reader reads through the damage, `ccg verify` reports it
        read_everything(path)
        problems = [problem for problem in verify(path) if problem.offset == int(row["offset"])]
        assert problems, f"{row['file']}: `ccg verify` reports no problem at byte {row['offset']}"
        assert f"at byte {row['offset']}:" in str(problems[0])
        return
    expected = getattr(errors, row["error"])
    assert issubclass(expected, errors.CcgError)
    with pytest.raises(errors.CcgError) as caught:
        read_everything(path)
    assert type(caught.value) is expected, f"{row['file']}: {caught.value!r}"
    assert str(path) in str(caught.value)
    if row["offset"] != "-":
        offset = int(row["offset"])
        assert caught.value.offset == offset
        assert f"at byte {offset}:" in str(caught.value)


# --------------------------------------------------------------------------- exhaustive damage

class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def small_trace() -> tuple[Definitions, dict[int, list[Event]]]:
    """Two locations sharing sub-trees, with calls, messages, metric samples and a marker."""
    definitions = Definitions(regions=[Region("main"), Region("f"), Region("g")], locations=[Location("p")],
                              metrics=[Metric("ops")])
    trace = {}
    for location in range(2):
        time = 100 * location
        events = [Event(time, K.ENTER, 0)]
        for i in range(3):
            events += [Event(time + 2, K.ENTER, 1), Event(time + 3, K.METRIC, ref=0, value=-10 * (i + 1)),
                       Event(time + 9, K.LEAVE, 1), Event(time + 10, K.ENTER, 2),
                       Event(time + 11, K.SEND, ref=0, tag=i % 2, size=64), Event(time + 13, K.LEAVE, 2)]
            time += 14
        events += [Event(time + 1, K.MARKER, ref=1), Event(time + 5, K.LEAVE, 0)]
        trace[location] = events
    return definitions, trace


@pytest.fixture(scope="module")
def small_archive(tmp_path_factory) -> tuple[bytes, Any]:
    """A ~1.5 KB archive with several node blocks (some importing from earlier ones) and
    what reading it gives."""
    definitions, trace = small_trace()
    path = tmp_path_factory.mktemp("small") / "small.ccg"
    ccg.write_trace(path, definitions, ((loc, [EventBatch.from_events(ev)]) for loc, ev in trace.items()),
                    ccg.Params(branching=3), level=1, checkpoint_interval=64, nodes_per_block=4)
    with ccg.open(path) as archive:
        assert sum(e.kind == SectionKind.NODES for e in archive.sections) >= 3
        assert archive.stats.n < archive.stats.N
    content = read_everything(path)
    assert content[0] == definitions
    assert {loc: events for loc, (events, _) in content[1].items()} == trace
    return path.read_bytes(), content


#: A damaged variant of a file: a label, byte patches (offset, new bytes) and the length
#: to cut the file to (None: keep it).
Case = tuple[str, list[tuple[int, bytes]], "int | None"]


def run_cases(path: Path, base: bytes, cases: Iterator[Case], expected: Any) -> tuple[int, int, list[str]]:
    """Read every damaged variant of ``base``. Returns how many raised a CcgError, how
    many read without error, and the findings: any other exception, a hang, or (when
    ``expected`` is given) a read without error that differs from it. Each variant is
    made in place and undone afterwards, which keeps a case cheap."""
    findings: list[str] = []
    failed = fine = 0
    path.write_bytes(base)
    descriptor = os.open(path, os.O_RDWR)
    try:
        for label, patches, length in cases:
            for offset, chunk in patches:
                os.pwrite(descriptor, chunk, offset)
            if length is not None:
                os.ftruncate(descriptor, length)
            try:
                with deadline(5):
                    result = read_everything(path, max_events=None if expected is not None else 1000)
            except errors.CcgError:
                failed += 1
                continue
            except Exception as error:  # anything else is a finding
                findings.append(f"{label}: {type(error).__name__}: {error}\n{traceback.format_exc(limit=-4)}")
                continue
            finally:
                for offset, chunk in patches:
                    os.pwrite(descriptor, base[offset:offset + len(chunk)], offset)
                if length is not None:
                    os.pwrite(descriptor, base[length:], length)
            fine += 1
            if expected is not None and result != expected:
                findings.append(f"{label}: read without error, but not what was written")
    finally:
        os.close(descriptor)
    return failed, fine, findings


def test_every_byte_flip_and_truncation(small_archive, tmp_path):
    """Flip every byte (xor 0xFF) and cut at every length: a CcgError or the original
    content, never anything else."""
    data, content = small_archive
    assert 500 <= len(data) <= 2000, len(data)

    def cases() -> Iterator[Case]:
        for position in range(len(data)):
            yield f"byte {position} flipped", [(position, bytes([data[position] ^ 0xFF]))], None
        for length in range(len(data)):
            yield f"cut to {length} bytes", [], length

    failed, fine, findings = run_cases(tmp_path / "damaged.ccg", data, cases(), content)
    assert not findings, f"{len(findings)} findings, the first ones:\n" + "\n".join(findings[:5])
    # every block is sealed by its CRC32C: only the minor version (bytes 10, 11) may change
    assert (fine, failed) == (2, 2 * len(data) - 2)


def unsealed(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """The same archive with every block stored without zstd, and per block (footer
    included) the span of the bytes its CRC32C covers."""
    footer_length, _ = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    footer_offset = len(data) - TRAILER.size - footer_length
    _, _, length = BLOCK_HEADER.unpack_from(data, footer_offset)
    start = footer_offset + BLOCK_HEADER.size
    out = bytearray(data[:FILE_HEADER.size])
    spans, entries = [], []
    for entry in decode_directory(data[start:start + length], "", footer_offset):
        stored = data[entry.offset + BLOCK_HEADER.size:entry.offset + BLOCK_HEADER.size + entry.length]
        dictionary = bundle_dictionary() if entry.kind == SectionKind.DICTIONARY_BUNDLE else None
        raw = zstandard.ZstdDecompressor(dict_data=dictionary).decompress(stored) if entry.flags & BlockFlags.ZSTD \
            else stored
        flags = entry.flags & ~BlockFlags.ZSTD
        entries.append(replace(entry, flags=flags, offset=len(out), length=len(raw)))
        spans.append((len(out), len(out) + BLOCK_HEADER.size + len(raw)))
        out += frame_block(entry.kind, flags, raw)
    footer = frame_block(SectionKind.FOOTER, int(BlockFlags.MUST_UNDERSTAND), encode_directory(entries))
    spans.append((len(out), len(out) + len(footer) - BLOCK_CRC.size))
    out += footer + TRAILER.pack(len(footer), END_MAGIC)
    return bytes(out), spans


def test_every_byte_flip_behind_valid_checksums(small_archive, tmp_path):
    """The decoders behind the CRC: store every block without zstd, then flip every byte
    (xor 0xFF, and xor 0x01 for small changes of numbers) and re-seal the block it lies
    in with a valid CRC32C. Values may then change undetectably, but reading must end in
    a CcgError or succeed: no other exception, no hang."""
    data, content = small_archive
    plain, spans = unsealed(data)
    path = tmp_path / "plain.ccg"
    path.write_bytes(plain)
    assert read_everything(path) == content

    def cases() -> Iterator[Case]:
        for position in range(len(plain)):
            span = next(((start, end) for start, end in spans if start <= position < end), None)
            for mask in (0xFF, 0x01):
                patches = [(position, bytes([plain[position] ^ mask]))]
                if span is not None:
                    start, end = span
                    sealed = plain[start:position] + patches[0][1] + plain[position + 1:end]
                    patches.append((end, BLOCK_CRC.pack(crc32c(sealed))))
                yield f"byte {position} ^ {mask:#x}, re-sealed", patches, None

    failed, fine, findings = run_cases(path, plain, cases(), None)
    assert not findings, f"{len(findings)} findings, the first ones:\n" + "\n".join(findings[:5])
    assert failed > fine > 0
