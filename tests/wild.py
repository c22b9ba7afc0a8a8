"""The `ccg` command line run in-process on an archive (every command, every export and
back), and the wild variants of corpus traces: byte-level edits of a writable copy
(trailing bytes, line ends, byte order marks, zlib streams) and event-level edits
written as numpy zip traces (empty locations, only metrics, bad nesting...)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import shutil
import sys
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from ccgformat.archive import exporters
from ccgformat.cli import main
from ccgformat.formats import read
from ccgformat.model import COLUMNS, Definitions, EventBatch, EventKind

from .corpus import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import synth  # noqa: E402

#: The read-only commands every archive must accept (arguments after the archive).
COMMANDS = (("verify",), ("info",), ("info", "--json"), ("cat", "--format", "text"), ("cat", "--format", "jsonl"),
            ("cat", "--format", "csv"), ("profile",), ("profile", "--json"), ("messages",), ("messages", "--json"),
            ("messages", "--matrix"), ("timeline", "--width", "7", "--json"), ("timeline", "--width", "7", "--png"))


def ccg(*argv: object) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``ccg ARGV`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def ccg_ok(*argv: object) -> str:
    code, out, err = ccg(*argv)
    assert code == 0, f"ccg {' '.join(map(str, argv))} exited {code}: {err}"
    return out


def every_command(archive: Path) -> int:
    """Run every command on ``archive``, check that each exits 0 and that their outputs
    agree on the events; returns the event count."""
    png = archive.with_suffix(".png")
    outputs = {" ".join(command): ccg_ok(command[0], archive, *command[1:], *([png] if command[-1] == "--png" else []))
               for command in COMMANDS}
    assert outputs["verify"].startswith("ok: ")
    info = json.loads(outputs["info --json"])
    events = info["events"]
    rows = outputs["cat --format csv"].splitlines()[1:]
    assert len(rows) == events == len(outputs["cat --format jsonl"].splitlines()) \
        == len(outputs["cat --format text"].splitlines())
    enters = sum(row.split(",")[2] == "ENTER" for row in rows)
    assert sum(region["calls"] for region in json.loads(outputs["profile --json"])["regions"]) == enters
    json.loads(outputs["messages --json"])
    timeline = json.loads(outputs["timeline --width 7 --json"])
    assert timeline["width"] == 7 and png.read_bytes().startswith(b"\x89PNG")
    return events


def export_and_back(archive: Path, folder: Path) -> dict[str, int | str]:
    """Export ``archive`` to every format and convert each export back; each archive
    that comes back must pass `every_command`. Returns per format the events that came
    back, or the message of the export's failure (exit status 1)."""
    results: dict[str, int | str] = {}
    for exporter in exporters():
        target = folder / f"export-{exporter.name}{exporter.suffixes[0]}"
        code, _, err = ccg("export", archive, target, "--to", exporter.name, "-q")
        assert code in (0, 1), err
        if code:
            results[exporter.name] = err.strip()
            continue
        back = folder / f"back-{exporter.name}.ccg"
        ccg_ok("convert", target, back, "-q")
        results[exporter.name] = every_command(back)
    return results


def trace_of(source: Path) -> tuple[Definitions, dict[int, EventBatch]]:
    """The definitions and every location's events (one batch) as the importer reads them."""
    definitions, streams = read(source)
    return definitions, {location: EventBatch.concat(list(batches)) for location, batches in streams}


def event_count(source: Path) -> int:
    return sum(len(batch) for batch in trace_of(source)[1].values())


# --------------------------------------------------------------------------- byte-level variants

def writable_copy(source: Path, folder: Path) -> Path:
    """A writable copy of a corpus trace (with its folder for OTF2 and OTF v1); the
    copy's input path."""
    target = folder / "trace"
    if source.suffix in (".otf2", ".otf"):
        shutil.copytree(source.parent, target)
    else:
        target.mkdir()
        shutil.copy(source, target / source.name)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target / source.name


def files_of(path: Path) -> dict[str, bytes]:
    """The content of every file next to (or under) a trace's input path, by name."""
    folder = path.parent
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _append(paths: list[Path], data: bytes) -> None:
    assert paths
    for path in paths:
        with open(path, "ab") as handle:
            handle.write(data)


def _otf1_files(master: Path) -> list[Path]:
    """The definition, event and marker files of an OTF v1 trace (all but the master)."""
    stub = master.name[:-len(".otf")]
    return sorted(p for p in master.parent.iterdir() if p.name.startswith(stub + ".") and p != master)


def _otf_zlib(data: bytes, flush_every: int | None = None, final: bool = False) -> bytes:
    """``data`` as the OTF library compresses it: a zlib stream with a full flush after
    every ``flush_every`` bytes (or once), without a final block unless ``final``."""
    compressor = zlib.compressobj(4)
    step = flush_every or max(len(data), 1)
    out = b"".join(compressor.compress(data[i:i + step]) + compressor.flush(zlib.Z_FULL_FLUSH)
                   for i in range(0, len(data), step))
    return out + compressor.flush() if final else out


def _half(data: bytes) -> bytes:
    return data[:len(data) // 2]


def _otf1_compress(master: Path, encode: Callable[[bytes], bytes]) -> None:
    for path in _otf1_files(master):
        path.with_name(path.name + ".z").write_bytes(encode(path.read_bytes()))
        path.unlink()


def _rewrite(path: Path, change: Callable[[bytes], bytes]) -> None:
    path.write_bytes(change(path.read_bytes()))


_OTF1_TIME = re.compile(rb"[0-9a-f]+")    # a line holding only a time stamp (short form)
_OTF1_LEAVE = re.compile(rb"L([0-9a-f]+)")  # a Leave naming its function


def _otf1_events(master: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    """Rewrite the lines of every event file of an OTF v1 trace."""
    for path in _otf1_files(master):
        if path.suffix == ".events":
            path.write_bytes(b"\n".join(change(path.read_bytes().split(b"\n"))))


def _otf1_kept(lines: list[bytes], record: Callable[[bytes], bool]) -> list[bytes]:
    """Time stamp and process lines, and the records ``record`` accepts."""
    return [line for line in lines if _OTF1_TIME.fullmatch(line) or line.startswith(b"*") or record(line)]


def _otf1_same_time(lines: list[bytes]) -> list[bytes]:
    first = next(line for line in lines if _OTF1_TIME.fullmatch(line))
    return [first if _OTF1_TIME.fullmatch(line) else line for line in lines]


def _otf1_first_record(lines: list[bytes]) -> list[bytes]:
    records = [i for i, line in enumerate(lines) if line and not _OTF1_TIME.fullmatch(line) and line[:1] != b"*"]
    return lines[:records[0] + 1] if records else lines


def _otf1_wrong_leave(lines: list[bytes]) -> list[bytes]:
    """The first Leave that names a function names the next function id instead."""
    for i, line in enumerate(lines):
        match = _OTF1_LEAVE.fullmatch(line)
        if match:
            return lines[:i] + [b"L%x" % (int(match.group(1), 16) + 1)] + lines[i + 1:]
    return lines


BOM = b"\xef\xbb\xbf"

#: Byte-level variants: name -> edit of the copy (given its input path).
BYTE_VARIANTS: dict[str, Callable[[Path], None]] = {
    "otf2 .evt + newline": lambda a: _append(sorted((a.parent / a.stem).glob("*.evt")), b"\n"),
    "otf2 .evt + bytes": lambda a: _append(sorted((a.parent / a.stem).glob("*.evt")), b"\x00wild bytes"),
    "otf2 .def + bytes": lambda a: _append([a.with_suffix(".def"), *sorted((a.parent / a.stem).glob("*.def"))],
                                           b"\x00wild bytes"),
    "otf2 anchor + newline": lambda a: _append([a], b"\n"),
    "otf1 + newline": lambda m: _append([m, *_otf1_files(m)], b"\n"),
    "otf1 .events + bytes": lambda m: _append([p for p in _otf1_files(m) if p.suffix == ".events"], b"\x00wild"),
    "otf1 .z unterminated": lambda m: _otf1_compress(m, _otf_zlib),
    "otf1 .z flush every 64 B": lambda m: _otf1_compress(m, lambda d: _otf_zlib(d, 64)),
    "otf1 .z terminated": lambda m: _otf1_compress(m, lambda d: _otf_zlib(d, final=True)),
    "otf1 .z cut in a block": lambda m: _otf1_compress(m, lambda d: _half(_otf_zlib(d, final=True))),
    "otf1 .z unterminated + newline": lambda m: _otf1_compress(m, lambda d: _otf_zlib(d) + b"\n"),
    "otf1 .z terminated + bytes": lambda m: _otf1_compress(m, lambda d: _otf_zlib(d, final=True) + b"wild"),
    "otf1 one event file empty": lambda m: next(p for p in _otf1_files(m) if p.suffix == ".events").write_bytes(b""),
    "otf1 only counters": lambda m: _otf1_events(m, lambda lines: _otf1_kept(lines, lambda r: r.startswith(b"CNT"))),
    "otf1 equal time stamps": lambda m: _otf1_events(m, _otf1_same_time),
    "otf1 one record per stream": lambda m: _otf1_events(m, _otf1_first_record),
    "otf1 Leave of another function": lambda m: _otf1_events(m, _otf1_wrong_leave),
    "epilog + newline": lambda e: _append([e], b"\n"),
    "epilog + two zero bytes": lambda e: _append([e], b"\x00\x00"),
    "epilog gzip": lambda e: _rewrite(e, gzip.compress),
    "epilog gzip + newline": lambda e: _rewrite(e, lambda d: gzip.compress(d) + b"\n"),
    "epilog gzip + zero padding": lambda e: _rewrite(e, lambda d: gzip.compress(d) + bytes(512)),
    "epilog gzip cut short": lambda e: _rewrite(e, lambda d: gzip.compress(d)[:-9]),
    "paje CRLF": lambda p: _rewrite(p, lambda d: d.replace(b"\n", b"\r\n")),
    "paje CR": lambda p: _rewrite(p, lambda d: d.replace(b"\n", b"\r")),
    "paje BOM": lambda p: _rewrite(p, lambda d: BOM + d),
    "paje BOM + CRLF": lambda p: _rewrite(p, lambda d: BOM + d.replace(b"\n", b"\r\n")),
}


# --------------------------------------------------------------------------- event-level variants

CALLS = (EventKind.ENTER, EventKind.LEAVE)


def _keep(batch: EventBatch, mask: np.ndarray) -> EventBatch:
    return EventBatch(**{name: getattr(batch, name)[mask].copy() for name in ("time", "kind") + COLUMNS})


def _first_location(events: dict[int, EventBatch], kinds: tuple[int, ...]) -> int:
    """The first location with an event of one of ``kinds``; LookupError if none."""
    for location in sorted(events):
        if np.isin(events[location].kind, kinds).any():
            return location
    raise LookupError(f"no location has events of kind {kinds}")


def _only(kind: EventKind) -> Callable[[dict[int, EventBatch]], None]:
    """The first location with events of ``kind`` and others keeps only the former."""
    def edit(events: dict[int, EventBatch]) -> None:
        mixed = [location for location in sorted(events)
                 if 0 < np.count_nonzero(events[location].kind == kind) < len(events[location])]
        location = mixed[0]
        events[location] = _keep(events[location], events[location].kind == kind)
    return edit


def _empty_location(events: dict[int, EventBatch]) -> None:
    location = _first_location(events, CALLS)
    events[location] = _keep(events[location], np.zeros(len(events[location]), bool))


def _same_time(events: dict[int, EventBatch]) -> None:
    location = _first_location(events, CALLS)
    events[location].time[:] = events[location].time[0]


def _single_event(events: dict[int, EventBatch]) -> None:
    """The whole trace is one event: the first that is neither a call nor GENERIC."""
    kinds = tuple(k for k in EventKind if k not in CALLS and k != EventKind.GENERIC)
    location = _first_location(events, kinds)
    first = int(np.flatnonzero(np.isin(events[location].kind, kinds))[0])
    for other in events:
        events[other] = _keep(events[other], np.arange(len(events[other])) == first if other == location
                              else np.zeros(len(events[other]), bool))


def _drop(kind: EventKind, which: int) -> Callable[[dict[int, EventBatch]], None]:
    """Drop the ``which``-th event of ``kind`` (Python index: -1 is the last)."""
    def edit(events: dict[int, EventBatch]) -> None:
        location = _first_location(events, (kind,))
        found = np.flatnonzero(events[location].kind == kind)
        events[location] = _keep(events[location], np.arange(len(events[location])) != found[which])
    return edit


#: Event-level variants: name -> in-place edit of the per-location events.
EVENT_VARIANTS: dict[str, Callable[[dict[int, EventBatch]], None]] = {
    "empty location": _empty_location,
    "only metrics": _only(EventKind.METRIC),
    "only GENERIC": _only(EventKind.GENERIC),
    "duplicate timestamps": _same_time,
    "single event": _single_event,
    "call left open": _drop(EventKind.LEAVE, -1),
    "LEAVE without ENTER": _drop(EventKind.ENTER, 0),
}

#: Event-level variants whose calls do not nest: refused unless converted with --repair.
BADLY_NESTED = ("call left open", "LEAVE without ENTER")


def event_variant(source: Path, variant: str, target: Path) -> Path:
    """Write the corpus trace ``source`` with the event-level ``variant`` applied as a
    numpy zip trace (same definitions) at ``target``."""
    definitions, events = trace_of(source)
    before = {location: batch.time.copy() for location, batch in events.items()}
    EVENT_VARIANTS[variant](events)
    assert any(not np.array_equal(before[location], batch.time) for location, batch in events.items())
    synth.write_npz(target, definitions, lambda location: iter([events.get(location, EventBatch.empty())]))
    return target
