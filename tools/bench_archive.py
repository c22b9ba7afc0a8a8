"""Archive benchmark: sizes next to Parquet, open time, warm and cold random access,
sequential iteration and writing, on synthetic archives."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import synth
from bench_convert import CONVERT_TABLE
from benchkit import (Column, benchmark, child_task, fmt_float, fmt_int, fmt_rate, fmt_stat, peak_rss_mb,
                      rate, rss_now_mb, run_child, run_repeated)
from ccgformat import Params
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.model import COLUMNS, EventBatch
from bench_builder import (LARGE_FACTOR, PARAM_SETS, RANDOM_ACCESSES, RANDOM_SEED, TRACES, check_location,
                           config_name, mb_cell, per_call_us)


# --------------------------------------------------------------------------- archive benchmark

#: zstd level of every compressed artefact of the archive benchmark (.ccg blocks, Parquet, raw).
ARCHIVE_LEVEL = 19
#: Every open-time sample is the median of this many fresh opens.
OPEN_SAMPLES = 25
#: Random event(i) / find(t) calls on a fresh Archive each, per repeat.
COLD_CALLS = 30
#: The traces of the archive benchmark: the SPMD kinds of `TRACES` and tools/synth.py's
#: ring family of issue 17 -> synthesize() arguments.
ARCHIVE_TRACES: dict[str, dict[str, Any]] = {
    **{kind: {"pattern": "spmd", **args} for kind, args in TRACES.items()},
    "ring-regular": {"pattern": "ring", "jitter": 0.0, "seed": 1},
    "ring-jittered": {"pattern": "ring", "jitter": 1.0, "seed": 1},
}
#: Size targets: (trace kind, parameter set) -> minimum parquet_bytes / ccg_bytes.
SIZE_TARGETS: dict[tuple[str, str], float] = {
    ("regular", "lossless"): 10.0,
    ("ring-regular", "lossless"): 10.0,
    ("jittered", "lossless"): 1.25,
    ("ring-jittered", "lossless"): 1.25,
    ("jittered", "lossy"): 10.0,
}
OPEN_TARGET_MS = 10.0
WARM_TARGET_US = 100.0
COLD_TARGET_MS = 5.0
#: The Parquet columns besides location, time and kind (all int64).
PARQUET_INT64 = COLUMNS


def _short_count(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def _archive_traces(options: argparse.Namespace) -> list[dict[str, Any]]:
    """The traces of the archive benchmark: name, kind (an `ARCHIVE_TRACES` key) and size."""
    small = options.events_per_location
    traces = [{"trace": kind, "kind": kind, "locations": options.locations, "events_per_location": small}
              for kind in ARCHIVE_TRACES]
    if not options.skip_10m:
        large = LARGE_FACTOR * small
        traces.append({"trace": f"jittered-{_short_count(options.locations * large)}", "kind": "jittered",
                       "locations": options.locations, "events_per_location": large})
    return traces


def _synthesize(spec: dict[str, Any]):
    return synth.synthesize(spec["locations"], spec["events_per_location"], **ARCHIVE_TRACES[spec["kind"]])


def write_parquet(path: Path, events: EventBatch, offsets: np.ndarray) -> float:
    """Write the events of every location (location i: ``offsets[i]:offsets[i + 1]``) as
    the Parquet reference file (zstd 19; columns location (int32), time delta-coded per
    location (int64, each location's first time absolute), kind (uint8), the others
    int64); returns the seconds `pyarrow.parquet.write_table` took."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    counts = np.diff(offsets)
    times = events.time.astype(np.int64)
    delta = np.empty_like(times)
    delta[:1] = times[:1]
    np.subtract(times[1:], times[:-1], out=delta[1:])
    starts = offsets[:-1][counts > 0]
    delta[starts] = times[starts]
    columns = {
        "location": pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), counts)),
        "time": pa.array(delta),
        "kind": pa.array(events.kind.astype(np.uint8)),
    }
    del delta
    for name in PARQUET_INT64:
        columns[name] = pa.array(getattr(events, name).astype(np.int64))
    table = pa.table(columns)
    del columns
    t0 = time.perf_counter()
    pq.write_table(table, path, compression="zstd", compression_level=ARCHIVE_LEVEL)
    return time.perf_counter() - t0


def section_sizes(archive: Any) -> dict[str, dict[str, int]]:
    """Blocks, bytes on disk and raw bytes of every section kind of an open archive, the
    members of a BUNDLE block counted as blocks of their own whose bytes on disk are the
    BUNDLE's; FOOTER holds the rest of the file (directory, header, trailer)."""
    from ccgformat.archive.layout import BLOCK_OVERHEAD, SectionKind

    known = {int(k) for k in SectionKind}
    sections: dict[str, dict[str, int]] = {}
    for entry in [*archive.directory, *(e for e in archive.sections if e.member >= 0)]:
        name = SectionKind(entry.kind).name if entry.kind in known else str(entry.kind)
        part = sections.setdefault(name, {"blocks": 0, "bytes": 0, "raw_bytes": 0})
        part["blocks"] += 1
        part["bytes"] += BLOCK_OVERHEAD + entry.length if entry.member < 0 else 0
        part["raw_bytes"] += entry.raw_length
    listed = sum(part["bytes"] for part in sections.values())
    sections["FOOTER"] = {"blocks": 1, "bytes": archive.stats.file_bytes - listed, "raw_bytes": 0}
    return sections


def _lognormal_pmf(base: float, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The integer values of ``rint(base * exp(sigma * Z))`` and their probabilities."""
    from math import erf, sqrt
    g = np.arange(max(1, int(base * np.exp(-8 * sigma))), int(base * np.exp(8 * sigma)) + 2)
    edges = np.append(g - 0.5, g[-1] + 0.5)
    cdf = np.array([0.5 * (1 + erf(np.log(x / base) / (sigma * sqrt(2)))) if x > 0 else 0.0 for x in edges])
    p = np.diff(cdf)
    return g[p > 0], p[p > 0] / p.sum()


def _gap_bits(g: np.ndarray, p: np.ndarray, rel_dev: float) -> float:
    """The bits a gap of values ``g`` with probabilities ``p`` needs at least when it may be
    rebuilt within ``rel_dev``: ``H(X) - E[log2 floor(2 rel X / (1 - rel)) + 1]`` (0 for
    rel_dev = 0: the entropy)."""
    cover = np.log2(np.floor(2 * rel_dev * g / (1 - rel_dev)) + 1)
    nonzero = p > 0
    return max(0.0, float(-(p[nonzero] * np.log2(p[nonzero])).sum() - (p * cover).sum()))


def _with_idle(g: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of a gap plus the ring pattern's uniform idle time."""
    low, high = synth.RING_IDLE
    span = np.full(high - low + 1, 1.0 / (high - low + 1))
    values = np.arange(int(g[0]), int(g[-1]) + 1)
    dense = np.zeros(len(values))
    dense[g - g[0]] = p
    return np.arange(int(g[0]) + low, int(g[-1]) + high + 1), np.convolve(dense, span)


def floor_bytes(spec: dict[str, Any], rel_dev: float) -> float:
    """A lower bound on the size of ANY encoding of the synthetic trace whose timestamps
    keep every gap within ``rel_dev`` of the original (dissertation 3.6; 0: lossless) and
    whose metric samples are exact (rel_metric = 0): the information its randomness adds.
    Each gap is drawn independently, so with X that gap and X' its reconstruction,
    H(X) <= H(X') + H(X | X'), and given X' the gap is one of at most
    ``floor(2 rel X / (1 - rel)) + 1`` integers (`_gap_bits`), H(X) computed exactly over
    integer bins: spmd gaps are ``rint(base * exp(jitter * Z))``, each iteration's exact
    counter increment adds ``h(FP_OPS * exp(jitter * Z))`` bits; ring gaps are a uniform
    idle time plus ``rint(work * exp(sigma * jitter * Z))`` for compute, send and receive
    (a fixed work for the kernels). Structure, message sizes and everything else the
    trace repeats count as free."""
    from math import e, log2, pi
    args = ARCHIVE_TRACES[spec["kind"]]
    jitter = args["jitter"]
    if not jitter:
        return 0.0
    iterations = (spec["events_per_location"] - 2) // synth.iteration_length(args["pattern"])
    bits = 0.0
    if args["pattern"] == "ring":
        idle = np.arange(synth.RING_IDLE[0], synth.RING_IDLE[1] + 1)
        uniform = np.full(len(idle), 1.0 / len(idle))
        kernel_a = _gap_bits(*_with_idle(np.array([synth._RING_KERNEL_A]), np.ones(1)), rel_dev)
        kernel_b = _gap_bits(*_with_idle(np.array([synth._RING_KERNEL_B]), np.ones(1)), rel_dev)
        per_iteration = 8 * _gap_bits(idle, uniform, rel_dev) + (2 * kernel_a + kernel_b) / 3
        for work, sigma in (synth._RING_COMPUTE, synth._RING_SEND, synth._RING_RECV):
            per_iteration += _gap_bits(*_with_idle(*_lognormal_pmf(work, sigma * jitter)), rel_dev)
        bits = iterations * per_iteration
    else:
        base = synth.base_gaps(spec["events_per_location"])
        for value, count in zip(*np.unique(base[base > 0], return_counts=True)):
            bits += count * _gap_bits(*_lognormal_pmf(value, jitter), rel_dev)
        bits += iterations * (log2(synth.FP_OPS_PER_ITERATION) + 0.5 * log2(2 * pi * e * jitter ** 2))
    return spec["locations"] * bits / 8


@child_task("archive_reference")
def archive_reference_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The comparison files of one trace: Parquet (zstd 19, per-location delta time) and
    plain zstd 19 of the raw columns (every column, all locations, as tools/synth.py's .npz
    holds them: absolute int64 times, uint8 kinds, int64 others)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    definitions, events = _synthesize(spec)
    t0 = time.perf_counter()
    data = [EventBatch.concat(list(events(location))) for location in range(spec["locations"])]
    generate_seconds = time.perf_counter() - t0
    count = sum(len(batch) for batch in data)

    path = Path(spec["parquet_path"])
    offsets = np.cumsum([0] + [len(b) for b in data])
    parquet_seconds = write_parquet(path, EventBatch.concat(data), offsets)
    rows = pq.ParquetFile(path).metadata.num_rows
    assert rows == count, (rows, count)

    # plain zstd of the raw columns, streamed column by column (one frame)
    compressor = zstandard.ZstdCompressor(level=ARCHIVE_LEVEL).compressobj()
    raw_bytes = zstd_bytes = 0
    t0 = time.perf_counter()
    for name in ("time", "kind") + COLUMNS:
        for batch in data:
            chunk = np.ascontiguousarray(getattr(batch, name)).tobytes()
            raw_bytes += len(chunk)
            zstd_bytes += len(compressor.compress(chunk))
    zstd_bytes += len(compressor.flush())
    zstd_seconds = time.perf_counter() - t0
    return {
        "events": count,
        "generate_seconds": generate_seconds,
        "parquet_bytes": path.stat().st_size,
        "parquet_seconds": parquet_seconds,
        "parquet_row_groups": pq.ParquetFile(path).metadata.num_row_groups,
        "raw_bytes": raw_bytes,
        "zstd_raw_bytes": zstd_bytes,
        "zstd_raw_seconds": zstd_seconds,
        "pyarrow": pa.__version__,
    }


@child_task("archive_write")
def archive_write_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One streaming `write_trace` of a (trace, params) configuration. The synthetic events
    are generated on the fly (a few % of the time), so peak RSS is the writer's own."""
    import ccgformat

    definitions, events = _synthesize(spec)
    params = Params(**PARAM_SETS[spec["params"]])
    gc.collect()
    rss_before = rss_now_mb()
    peak_before = peak_rss_mb()
    t0 = time.perf_counter()
    graph = ccgformat.write_trace(spec["path"], definitions,
                                  ((location, events(location)) for location in range(spec["locations"])),
                                  params, level=ARCHIVE_LEVEL)
    seconds = time.perf_counter() - t0
    peak_after = peak_rss_mb()
    count = sum(root.events for root in graph.roots.values())
    return {"write_seconds": seconds, "write_events_per_s": count / seconds if seconds > 0 else None,
            "write_events": count, "write_rss_before_mb": rss_before, "write_maxrss_before_mb": peak_before,
            "write_peak_rss_mb": peak_after}


class _Probe:
    """Wall time spent in the reader's block functions, by temporarily wrapping the names
    `ccgformat.archive.reader` calls them by (instrumentation only; the package is unchanged)."""

    NAMES = ("read_block", "unpack_payload", "decode_block")

    def __init__(self) -> None:
        from ccgformat.archive import reader
        self._reader = reader
        self._saved = {name: getattr(reader, name) for name in self.NAMES}
        self.reset()

    def reset(self) -> None:
        self.seconds = {name: 0.0 for name in self.NAMES}
        self.calls = {name: 0 for name in self.NAMES}

    def __enter__(self) -> _Probe:
        for name, fn in self._saved.items():
            setattr(self._reader, name, self._timed(name, fn))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, fn in self._saved.items():
            setattr(self._reader, name, fn)

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += clock() - t0
                self.calls[name] += 1
        return timed


@child_task("archive_read")
def archive_read_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Open, random access (warm and cold), sequential iteration and sizes of one archive."""
    import ccgformat

    path, repeat, location = spec["path"], spec["repeat"], 0
    params = Params(**PARAM_SETS[spec["params"]])
    ccgformat.open(path).close()  # imports and page cache

    # sizes
    archive = ccgformat.open(path)
    stats = archive.stats
    sections = section_sizes(archive)
    node_blocks = sum(sections.get(kind.name, {}).get("blocks", 0) for kind in NODE_KINDS)
    archive.close()

    # open: every sample is the median of OPEN_SAMPLES opens of a fresh Archive
    def open_once() -> float:
        samples = []
        for _ in range(OPEN_SAMPLES):
            t0 = time.perf_counter()
            opened = ccgformat.open(path)
            samples.append(time.perf_counter() - t0)
            opened.close()
        return statistics.median(samples) * 1000

    open_ms = run_repeated(open_once, repeat)

    # warm random access on one Archive, after a warm-up pass over the same calls
    archive = ccgformat.open(path)
    walker = archive.location(location)
    count = len(walker)
    root = archive.roots[location]
    rng = np.random.default_rng(RANDOM_SEED)
    indices = rng.integers(0, count, RANDOM_ACCESSES).tolist()
    times = rng.integers(root.start, root.end + 1, RANDOM_ACCESSES).tolist()
    for i in indices:
        walker.event(i)
    for t in times:
        walker.find(t)
    event_us = run_repeated(per_call_us(walker.event, indices), repeat)
    find_us = run_repeated(per_call_us(walker.find, times), repeat)
    probe = _Probe()
    with probe:  # block decodes during one more warm pass: LRU cache misses
        for i in indices:
            walker.event(i)
        for t in times:
            walker.find(t)
    warm_decodes = probe.calls["decode_block"]
    archive.close()
    del walker, archive

    # cold random access: a fresh Archive for every call (location lookup included)
    cold_indices = rng.integers(0, count, COLD_CALLS).tolist()
    cold_times = rng.integers(root.start, root.end + 1, COLD_CALLS).tolist()
    cold_event = lambda a, i: a.location(location).event(i)
    cold_find = lambda a, t: a.location(location).find(t)

    def cold_ms(call: Callable[[Any, int], Any], args: list[int]) -> Callable[[], float]:
        def sample() -> float:
            calls = []
            for arg in args:
                opened = ccgformat.open(path)
                t0 = time.perf_counter_ns()
                call(opened, arg)
                calls.append(time.perf_counter_ns() - t0)
                opened.close()
            return statistics.median(calls) / 1e6
        return sample

    event_cold_ms = run_repeated(cold_ms(cold_event, cold_indices), repeat)
    find_cold_ms = run_repeated(cold_ms(cold_find, cold_times), repeat)

    # where the cold time goes: one instrumented pass (mean ms per call)
    def breakdown(call: Callable[[Any, int], Any], args: list[int]) -> dict[str, float]:
        totals = {"total_ms": 0.0, "read_block_ms": 0.0, "zstd_ms": 0.0, "decode_nodes_ms": 0.0,
                  "blocks": 0.0}
        with _Probe() as probe:
            for arg in args:
                opened = ccgformat.open(path)
                probe.reset()
                t0 = time.perf_counter()
                call(opened, arg)
                totals["total_ms"] += (time.perf_counter() - t0) * 1000
                totals["read_block_ms"] += probe.seconds["read_block"] * 1000
                totals["zstd_ms"] += probe.seconds["unpack_payload"] * 1000
                totals["decode_nodes_ms"] += probe.seconds["decode_block"] * 1000
                totals["blocks"] += probe.calls["decode_block"]
                opened.close()
        means = {key: value / len(args) for key, value in totals.items()}
        means["other_ms"] = means["total_ms"] - means["read_block_ms"] - means["zstd_ms"] - means["decode_nodes_ms"]
        return means

    cold_event_breakdown = breakdown(cold_event, cold_indices)
    cold_find_breakdown = breakdown(cold_find, cold_times)

    # sequential iteration over the location, on a fresh Archive each time
    def walk_once() -> float:
        opened = ccgformat.open(path)
        w = opened.location(location)
        t0 = time.perf_counter()
        seen = 0
        for batch in w.events():
            seen += len(batch)
        elapsed = time.perf_counter() - t0
        opened.close()
        assert seen == count, (seen, count)
        return elapsed

    walk_seconds = run_repeated(walk_once, repeat)

    # the location read back against the synthetic input
    _, events = _synthesize(spec)
    with ccgformat.open(path) as opened:
        check = check_location(opened, params, EventBatch.concat(list(events(location))))

    return {
        "ccg_bytes": stats.file_bytes,
        "ccg_bytes_per_event": stats.bytes_per_event,
        "events": stats.events,
        "N": stats.N,
        "n": stats.n,
        "r_nodes": stats.r_nodes,
        "r_memory": stats.r_memory,
        "sections": sections,
        "node_blocks": node_blocks,
        "open_ms": open_ms.as_dict(),
        "walk_location": location,
        "walk_events": count,
        "event_us": event_us.as_dict(),
        "find_us": find_us.as_dict(),
        "warm_block_decodes": warm_decodes,
        "warm_calls": 2 * RANDOM_ACCESSES,
        "event_cold_ms": event_cold_ms.as_dict(),
        "find_cold_ms": find_cold_ms.as_dict(),
        "cold_calls": COLD_CALLS,
        "event_cold_breakdown": cold_event_breakdown,
        "find_cold_breakdown": cold_find_breakdown,
        "walk_events_per_s": rate(count, walk_seconds).as_dict(),
        "check": check,
    }


def _archive_targets(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """PASS/FAIL of every target that applies to an entry: name -> target, value, pass."""
    targets: dict[str, dict[str, Any]] = {}
    need = SIZE_TARGETS.get((entry["kind"], entry["params"]))
    if need is not None:
        targets["size"] = {"target": f"parquet/ccg >= {need:g}", "min": need, "value": entry["ratio"],
                           "pass": entry["ratio"] >= need}
    open_ms = entry["open_ms"]["median"]
    targets["open"] = {"target": f"open < {OPEN_TARGET_MS:g} ms", "value": open_ms,
                       "pass": open_ms < OPEN_TARGET_MS}
    warm = max(entry["event_us"]["median"], entry["find_us"]["median"])
    targets["warm"] = {"target": f"event/find warm < {WARM_TARGET_US:g} us", "value": warm,
                       "pass": warm < WARM_TARGET_US}
    cold = max(entry["event_cold_ms"]["median"], entry["find_cold_ms"]["median"])
    targets["cold"] = {"target": f"event/find cold < {COLD_TARGET_MS:g} ms", "value": cold,
                       "pass": cold < COLD_TARGET_MS}
    return targets


def _status(name: str) -> Callable[[dict[str, Any]], str]:
    def cell(e: dict[str, Any]) -> str:
        target = e["targets"].get(name)
        return "-" if target is None else ("PASS" if target["pass"] else "FAIL")
    return cell


def _ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def _us(x: float) -> str:
    return f"{x:.1f}"


def _section_bytes(kind: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_int(e["sections"].get(kind, {}).get("bytes"))


def _breakdown(key: str, field_: str, digits: int = 2) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt_float(e[key][field_], digits)


@benchmark(
    "archive",
    ".ccg archives vs Parquet: size, open, random and sequential access, writer time and memory",
    [
        ("Size (bytes; ratio = parquet/ccg; targets: regular lossless >= 10x, jittered lossless >= 1.25x, "
         "jittered lossy >= 10x; floor = the information the jitter adds within the bounds, a lower bound "
         "for any encoding; best ratio = parquet/floor)", [
            Column("trace/params", config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("ccg bytes", lambda e: fmt_int(e["ccg_bytes"])),
            Column("ccg B/ev", lambda e: f"{e['ccg_bytes_per_event']:.4f}"),
            Column("parquet bytes", lambda e: fmt_int(e["parquet_bytes"])),
            Column("parquet B/ev", lambda e: f"{e['parquet_bytes_per_event']:.4f}"),
            Column("zstd raw bytes", lambda e: fmt_int(e["zstd_raw_bytes"])),
            Column("ratio", lambda e: f"{e['ratio']:.2f}"),
            Column("floor bytes", lambda e: fmt_int(round(e["floor_bytes"])) if e.get("floor_bytes") else "-"),
            Column("best ratio", lambda e: f"{e['floor_ratio']:.2f}" if e.get("floor_ratio") else "-"),
            Column("target", lambda e: f">= {e['targets']['size']['min']:g}x" if "size" in e["targets"] else "-"),
            Column("size", _status("size")),
            Column("R_nodes", lambda e: fmt_float(e["r_nodes"])),
        ]),
        ("Sections of the .ccg (bytes incl. block framing; FOOTER includes file header and trailer)", [
            Column("trace/params", config_name, "<"),
            Column("NODES", _section_bytes("NODES")),
            Column("PREDICTED_NODES", _section_bytes("PREDICTED_NODES")),
            Column("CODED_NODES", _section_bytes("CODED_NODES")),
            Column("CODED_SOFT_NODES", _section_bytes("CODED_SOFT_NODES")),
            Column("blocks", lambda e: fmt_int(e["node_blocks"])),
            Column("SNAPSHOTS", _section_bytes("SNAPSHOTS")),
            Column("SUMMARY", _section_bytes("SUMMARY")),
            Column("DEFINITIONS", _section_bytes("DEFINITIONS")),
            Column("PARAMETERS", _section_bytes("PARAMETERS")),
            Column("ROOTS", _section_bytes("ROOTS")),
            Column("ROOT_TABLE", _section_bytes("ROOT_TABLE")),
            Column("LOCATION_TABLE", _section_bytes("LOCATION_TABLE")),
            Column("CHECKPOINT_TABLE", _section_bytes("CHECKPOINT_TABLE")),
            Column("FOOTER", _section_bytes("FOOTER")),
        ]),
        (f"Access on location 0 (open: median of {OPEN_SAMPLES} fresh opens per repeat; warm: median us "
         f"per call over {RANDOM_ACCESSES} random calls after a warm-up pass; cold: median ms per call, "
         f"fresh Archive per call, {COLD_CALLS} calls; walk: sequential events() on a fresh Archive; "
         f"targets: open < {OPEN_TARGET_MS:g} ms, warm < {WARM_TARGET_US:g} us, cold < {COLD_TARGET_MS:g} ms)", [
            Column("trace/params", config_name, "<"),
            Column("open ms", lambda e: fmt_stat(e["open_ms"], _ms)),
            Column("event(i) us", lambda e: fmt_stat(e["event_us"], _us)),
            Column("find(t) us", lambda e: fmt_stat(e["find_us"], _us)),
            Column("event(i) cold ms", lambda e: fmt_stat(e["event_cold_ms"], _ms)),
            Column("find(t) cold ms", lambda e: fmt_stat(e["find_cold_ms"], _ms)),
            Column("walk ev/s", lambda e: fmt_stat(e["walk_events_per_s"])),
            Column("open", _status("open")),
            Column("warm", _status("warm")),
            Column("cold", _status("cold")),
            Column("check", lambda e: e["check"], "<"),
        ]),
        ("Cold calls broken down (mean ms per call; blocks = node blocks decoded per call; "
         "warm decodes = node blocks decoded in one warm pass of 2x1000 calls, i.e. LRU misses)", [
            Column("trace/params", config_name, "<"),
            Column("event ms", _breakdown("event_cold_breakdown", "total_ms")),
            Column("blocks", _breakdown("event_cold_breakdown", "blocks", 1)),
            Column("read+crc", _breakdown("event_cold_breakdown", "read_block_ms")),
            Column("zstd", _breakdown("event_cold_breakdown", "zstd_ms")),
            Column("decode_nodes", _breakdown("event_cold_breakdown", "decode_nodes_ms")),
            Column("other", _breakdown("event_cold_breakdown", "other_ms")),
            Column("find ms", _breakdown("find_cold_breakdown", "total_ms")),
            Column("blocks", _breakdown("find_cold_breakdown", "blocks", 1)),
            Column("decode_nodes", _breakdown("find_cold_breakdown", "decode_nodes_ms")),
            Column("warm decodes", lambda e: fmt_int(e["warm_block_decodes"])),
        ]),
        ("Writing (one streaming write_trace per configuration, synthetic events generated on the fly; "
         "memory in MiB of the writer's child process; Parquet and raw zstd times for comparison)", [
            Column("trace/params", config_name, "<"),
            Column("events", lambda e: fmt_int(e["events"])),
            Column("write s", lambda e: fmt_float(e["write_seconds"], 1)),
            Column("write ev/s", lambda e: fmt_rate(e["write_events_per_s"])),
            Column("rss_before_mb", mb_cell("write_rss_before_mb")),
            Column("peak_rss_mb", mb_cell("write_peak_rss_mb")),
            Column("generate s", lambda e: fmt_float(e["generate_seconds"], 2)),
            Column("parquet s", lambda e: fmt_float(e["parquet_seconds"], 1)),
            Column("zstd raw s", lambda e: fmt_float(e["zstd_raw_seconds"], 1)),
        ]),
        CONVERT_TABLE,
    ])
def archive_benchmark(options: argparse.Namespace) -> list[dict[str, Any]]:
    """Per trace one reference child (Parquet, raw zstd); per (trace, params) one write
    child (the single build) and one read child on the archive it left in the run's
    temporary folder."""
    entries = []
    with tempfile.TemporaryDirectory(prefix="ccg-bench-") as folder:
        for trace in _archive_traces(options):
            t0 = time.perf_counter()
            reference = run_child("archive_reference",
                                  {**trace, "parquet_path": str(Path(folder) / f"{trace['trace']}.parquet")})
            print(f"  archive {trace['trace']}: {reference['events']:,} events, Parquet "
                  f"{reference['parquet_bytes']:,} bytes ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
            for params in PARAM_SETS:
                spec = {**trace, "params": params, "repeat": options.repeat,
                        "path": str(Path(folder) / f"{trace['trace']}-{params}.ccg")}
                t0 = time.perf_counter()
                written = run_child("archive_write", spec)
                read = run_child("archive_read", spec)
                assert read["events"] == reference["events"] == written["write_events"], (
                    read["events"], reference["events"], written["write_events"])
                entry = {
                    "trace": trace["trace"], "kind": trace["kind"], "params": params,
                    "trace_args": ARCHIVE_TRACES[trace["kind"]], "params_args": PARAM_SETS[params],
                    "zstd_level": ARCHIVE_LEVEL, "locations": trace["locations"],
                    "events_per_location_requested": trace["events_per_location"], "repeat": options.repeat,
                    **reference, **written, **read,
                    "parquet_bytes_per_event": reference["parquet_bytes"] / reference["events"],
                    "ratio": reference["parquet_bytes"] / read["ccg_bytes"],
                    "zstd_raw_ratio": reference["zstd_raw_bytes"] / read["ccg_bytes"],
                }
                # the smallest any encoding within the bounds can be, and the ratio it would give
                entry["floor_bytes"] = floor_bytes(trace, PARAM_SETS[params].get("rel_dev", 0.0))
                entry["floor_ratio"] = reference["parquet_bytes"] / entry["floor_bytes"] \
                    if entry["floor_bytes"] else None
                entry["targets"] = _archive_targets(entry)
                if trace["events_per_location"] == options.events_per_location:  # not the large trace
                    entry.update(run_child("archive_convert", {
                        **spec, "baseline_repeat": options.baseline_repeat,
                        "otf2_path": str(Path(folder) / f"{trace['trace']}-{params}.otf2")}))
                entries.append(entry)
                failed = [name for name, target in entry["targets"].items() if not target["pass"]]
                print(f"  archive {trace['trace']}/{params}: {entry['ccg_bytes']:,} bytes, "
                      f"ratio {entry['ratio']:.2f}, write {entry['write_seconds']:.1f} s, "
                      f"targets {'FAIL ' + ', '.join(failed) if failed else 'PASS'} "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    return entries
