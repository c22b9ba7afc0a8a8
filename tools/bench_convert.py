"""Conversion time of the archive benchmark's traces: each written as OTF2, converted to
.ccg end to end at the default zstd levels and at level 19, next to the plain ``otf2``
Python iteration over the same file, all in one child process (the same-run baseline);
and the size of ``xz -9e`` of the OTF2 files, the original the archive replaces.

The targets (issue 17): conversion at the default levels >= 15 times faster than the
iteration, and its file within 2% of level 19's.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from bench_formats import _iterate_otf2
from corpus_size import original_files, xz_bytes
from benchkit import Column, Stat, child_task, fmt_float, fmt_int, fmt_stat, run_repeated

#: the level the default is measured against
REFERENCE_LEVEL = 19
#: otf2 iteration / conversion at the default levels, at least (median)
SPEEDUP_TARGET = 15.0
#: default file size / level 19 file size, at most
SIZE_TARGET = 1.02


@child_task("archive_convert")
def archive_convert_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Write the trace of ``spec`` (as `bench_archive` synthesizes it) as OTF2 to
    ``spec["otf2_path"]``, then time ``repeat`` conversions at the default levels and at
    level 19 (alternating, so that both see the same load, after one untimed conversion
    that loads what the first would) and ``baseline_repeat`` plain otf2 iterations."""
    import ccgformat
    from bench_archive import _synthesize
    from bench_builder import PARAM_SETS
    from ccgformat.formats.otf2.export import ARCHIVE_NAME, write_events

    source, folder = Path(spec["otf2_path"]), Path(spec["otf2_path"]).parent
    definitions, events = _synthesize(spec)
    write_events(definitions, events, source)
    originals = original_files(source / f"{ARCHIVE_NAME}.otf2")
    params = ccgformat.Params(**PARAM_SETS[spec["params"]])
    seconds: dict[str, list[float]] = {"default": [], "19": []}
    cpu: dict[str, list[float]] = {"default": [], "19": [], "iterate": []}
    reports: dict[str, Any] = {}
    ccgformat.convert(source, folder / "convert-default.ccg", params)
    for _ in range(spec["repeat"]):
        for name, level in (("default", None), ("19", REFERENCE_LEVEL)):
            t0, c0 = time.perf_counter(), time.process_time()
            reports[name] = ccgformat.convert(source, folder / f"convert-{name}.ccg", params, level=level)
            seconds[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)

    def iterate_once() -> float:
        c0 = time.process_time()
        wall = _iterate_otf2(source)
        cpu["iterate"].append(time.process_time() - c0)
        return wall

    iterate = run_repeated(iterate_once, spec["baseline_repeat"])
    original, xz = sum(f.stat().st_size for f in originals), xz_bytes(originals)
    shutil.rmtree(source)
    for name in seconds:
        (folder / f"convert-{name}.ccg").unlink()
    default, reference = Stat(seconds["default"]), Stat(seconds["19"])
    return {
        "convert_events": reports["default"].events,
        "convert_default_seconds": default.as_dict(), "convert_19_seconds": reference.as_dict(),
        "convert_default_bytes": reports["default"].file_bytes, "convert_19_bytes": reports["19"].file_bytes,
        "iterate_seconds": iterate.as_dict(),
        "speedup": iterate.median / default.median, "speedup_worst": iterate.median / default.max,
        "speedup_19": iterate.median / reference.median,
        "size_vs_19": reports["default"].file_bytes / reports["19"].file_bytes,
        "original_bytes": original, "xz_bytes": xz, "size_vs_xz": reports["default"].file_bytes / xz,
        # CPU seconds of the process (every thread): what a loaded machine changes least
        **{f"cpu_{name}_seconds": Stat(values).as_dict() for name, values in cpu.items()},
        "cpu_speedup": Stat(cpu["iterate"]).median / Stat(cpu["default"]).median,
    }


def _seconds(key: str) -> Any:
    return lambda e: fmt_stat(e[key], lambda x: f"{x:.3f}")


def _status(e: dict[str, Any]) -> str:
    ok = e["speedup"] >= SPEEDUP_TARGET and e["size_vs_19"] <= SIZE_TARGET
    return "PASS" if ok else "FAIL"


CONVERT_TABLE = (
    f"OTF2 -> .ccg conversion (seconds: median (min-max) of the runs, default levels and level {REFERENCE_LEVEL} "
    "alternating; iterate: the plain otf2 Python iteration of the same file in the same process; x iterate = "
    "iterate median / convert median, worst = / convert max; OTF2 bytes: the converted files, xz -9e bytes: "
    "xz -9e of them concatenated; CPU: process CPU seconds, all threads, medians; "
    "targets: default >= "
    f"{SPEEDUP_TARGET:g}x iterate and <= {SIZE_TARGET:g} x the level {REFERENCE_LEVEL} bytes)", [
        Column("trace/params", lambda e: f"{e['trace']}/{e['params']}", "<"),
        Column("events", lambda e: fmt_int(e["convert_events"])),
        Column("default s", _seconds("convert_default_seconds")),
        Column(f"level {REFERENCE_LEVEL} s", _seconds("convert_19_seconds")),
        Column("iterate s", _seconds("iterate_seconds")),
        Column("x iterate", lambda e: fmt_float(e["speedup"], 1)),
        Column("worst", lambda e: fmt_float(e["speedup_worst"], 1)),
        Column(f"x iterate {REFERENCE_LEVEL}", lambda e: fmt_float(e["speedup_19"], 1)),
        Column("default bytes", lambda e: fmt_int(e["convert_default_bytes"])),
        Column(f"level {REFERENCE_LEVEL} bytes", lambda e: fmt_int(e["convert_19_bytes"])),
        Column("size vs 19", lambda e: f"{e['size_vs_19']:.4f}"),
        Column("OTF2 bytes", lambda e: fmt_int(e["original_bytes"])),
        Column("xz -9e bytes", lambda e: fmt_int(e["xz_bytes"])),
        Column("default / xz", lambda e: f"{e['size_vs_xz']:.3f}"),
        Column("CPU s default", lambda e: f"{e['cpu_default_seconds']['median']:.3f}"),
        Column("CPU s 19", lambda e: f"{e['cpu_19_seconds']['median']:.3f}"),
        Column("CPU x iterate", lambda e: fmt_float(e["cpu_speedup"], 1)),
        Column("target", _status),
    ],
    lambda e: "convert_default_seconds" in e)
