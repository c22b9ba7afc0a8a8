"""Query benchmark: the cached summary profile, timeline and message matching of
ccgformat.query on synthetic archives and the largest corpus traces, next to the baseline
a user would write - every event loaded with `Archive.events` into numpy, the profile
computed from those arrays - measured in the same process.

Every configuration runs in a fresh interpreter (first queries are cold: open, block
decoding and the node tables included). The 10M-event archives take minutes to build
with the Python builder; they are built once and kept in bench-out/.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

import synth
from bench_builder import PARAM_SETS, TRACES
from benchkit import Column, benchmark, child_task, fmt_float, fmt_int, fmt_rate, peak_rss_mb, run_child
from ccgformat import EventKind, Params

#: Where built archives are kept between runs ($CCG_BENCH_OUT, else bench-out/ in the checkout).
CACHE = Path(os.environ.get("CCG_BENCH_OUT", Path(__file__).resolve().parent.parent / "bench-out"))
#: Nested windows of the dissertation's Table 5.2: fractions of the trace, around its middle.
FRACTIONS = (1, 3, 30, 300)
TIMELINE_WIDTH = 1000
#: Corpus traces (relative to the corpus folder), the largest of their formats.
CORPUS = {
    "otf-out (96 loc)": "otf/otf-vis/otf_traces/out/out.otf",
    "chrome-rocprof": "chrome-json/otf2_cli_chrome_trace_converter/tests/data/memcpy-host-device.rocprofiler.json.gz",
    "paje-native": "paje/pajeng/traces/native_sample.trace",
    "otf2-stencil (32 loc)": "otf2/TraceR/examples/stencil4d-otf/traces-32/traces.otf2",
}
PROFILE_TARGET = 10.0     # first full profile at least this many times faster than the baseline
SMALL_WINDOW_MS = 1.0     # successive 1/30 and 1/300 windows
TIMELINE_WARM_MS = 50.0


# --------------------------------------------------------------------------- archives

@child_task("query_build")
def build_child(spec: dict[str, Any]) -> dict[str, Any]:
    import ccgformat
    definitions, events = synth.synthesize(spec["locations"], spec["events_per_location"], pattern="spmd",
                                           **TRACES["jittered"])
    path = Path(spec["path"])
    t0 = time.perf_counter()
    ccgformat.write_trace(path, definitions, ((loc, events(loc)) for loc in range(spec["locations"])),
                          Params(**PARAM_SETS[spec["params"]]))
    return {"build_seconds": time.perf_counter() - t0}


def _current(path: Path) -> bool:
    """Whether a cached archive exists and has the index members of the current format
    (one written by an older ccgformat is rebuilt)."""
    import ccgformat
    from ccgformat.archive.layout import SUMMARY_MINOR_VERSION
    if not path.exists():
        return False
    try:
        with ccgformat.open(path) as archive:
            return archive.version >= (1, SUMMARY_MINOR_VERSION)
    except ccgformat.CcgError:
        return False


def _archives(options: argparse.Namespace) -> list[dict[str, Any]]:
    """The synthetic archives (built when missing) and the corpus traces (converted)."""
    import ccgformat
    from corpus_root import corpus_root
    CACHE.mkdir(exist_ok=True)
    per_location = options.events_per_location * (1 if options.quick or options.skip_10m else 10)
    out = []
    for params in ("lossless", "lossy"):
        name = f"jittered-{options.locations * per_location // 1000}k-{params}"
        path = CACHE / f"query-{name}.ccg"
        if not _current(path):
            print(f"  building {path.name} ...", flush=True)
            run_child("query_build", {"locations": options.locations, "events_per_location": per_location,
                                      "params": params, "path": str(path)})
        out.append({"trace": name, "path": str(path), "synthetic": True})
    root = corpus_root()
    for name, relative in CORPUS.items():
        source = root / relative
        if not source.exists():
            continue
        path = CACHE / f"query-corpus-{name.split()[0]}.ccg"
        if not _current(path):
            ccgformat.convert(source, path)
        out.append({"trace": name, "path": str(path), "synthetic": False})
    return out


# --------------------------------------------------------------------------- baseline

def baseline_profile(archive: Any) -> dict[int, tuple[int, int, int]]:
    """What a user would write: load every event, then per location match ENTER with LEAVE
    by depth, inclusive = leave - enter, exclusive = inclusive minus the direct callees'
    (the parent found by a search among the enclosing level's enters); per region calls,
    inclusive, exclusive, min, max; sends per location pair."""
    locations, times, kinds, refs, sizes = [], [], [], [], []
    for location, batch in archive.events():
        locations.append(location)
        times.append(batch.time)
        kinds.append(batch.kind)
        refs.append(batch.ref)
        sizes.append(batch.size)
    location, time_, kind, ref, size = (np.concatenate(x) for x in (locations, times, kinds, refs, sizes))
    order = np.argsort(location, kind="stable")  # per location, in time order
    location, time_, kind, ref, size = location[order], time_[order], kind[order], ref[order], size[order]
    regions = int(ref[kind <= 1].max()) + 1 if (kind <= 1).any() else 0
    calls = np.zeros(regions, np.int64)
    inclusive = np.zeros(regions, np.int64)
    exclusive = np.zeros(regions, np.int64)
    low = np.full(regions, np.iinfo(np.int64).max)
    high = np.full(regions, -1)
    for loc in np.unique(location):
        sel = location == loc
        k, t, r = kind[sel], time_[sel], ref[sel]
        call = k <= 1
        k, t, r = k[call], t[call], r[call]
        step = np.where(k == EventKind.ENTER, 1, -1)
        depth = np.cumsum(step) - (step == 1)  # an enter's own level, a leave's level
        enters, leaves = np.flatnonzero(k == EventKind.ENTER), np.flatnonzero(k == EventKind.LEAVE)
        enter_order = np.lexsort((enters, depth[enters]))
        leave_order = np.lexsort((leaves, depth[leaves]))
        e_pos, l_pos = enters[enter_order], leaves[leave_order]
        incl = t[l_pos] - t[e_pos]
        level = depth[e_pos]
        # parent: the last enter one level up before this enter
        parent = np.full(len(e_pos), -1)
        for d in np.unique(level[level > 0]).tolist():
            mine = np.flatnonzero(level == d)
            up = np.flatnonzero(level == d - 1)
            parent[mine] = up[np.searchsorted(e_pos[up], e_pos[mine]) - 1]
        callee = np.zeros(len(e_pos), np.int64)
        has = parent >= 0
        np.add.at(callee, parent[has], incl[has])
        region = r[e_pos]
        np.add.at(calls, region, 1)
        np.add.at(inclusive, region, incl)
        np.add.at(exclusive, region, incl - callee)
        np.minimum.at(low, region, incl)
        np.maximum.at(high, region, incl)
    sends = np.isin(kind, (EventKind.SEND, EventKind.ISEND))
    pairs = np.unique(np.stack([location[sends], ref[sends]]), axis=1, return_counts=True)
    return {int(i): (int(calls[i]), int(inclusive[i]), int(exclusive[i])) for i in np.flatnonzero(calls)} | \
        {"pairs": len(pairs[1])}


# --------------------------------------------------------------------------- the measurements

def _ms(seconds: float) -> float:
    return seconds * 1000


@child_task("query_run")
def query_child(spec: dict[str, Any]) -> dict[str, Any]:
    import ccgformat
    from ccgformat.query import profile, timeline
    path, repeat = spec["path"], spec["repeat"]
    ccgformat.open(path).close()

    with ccgformat.open(path) as archive:  # the baseline, cold
        t0 = time.perf_counter()
        base = baseline_profile(archive)
        baseline_s = time.perf_counter() - t0
        events = archive.stats.events
    gc.collect()

    with ccgformat.open(path) as archive:
        first, last = archive.time_range
        t0 = time.perf_counter()
        full = profile(archive)
        first_s = time.perf_counter() - t0
        got = {row.region: (row.calls, row.inclusive, row.exclusive) for row in full.regions}
        agrees = got == {k: v for k, v in base.items() if k != "pairs"}
        span = last + 1 - first
        middle = first + span // 3
        windows = [(middle - span // (2 * f), middle + span // (2 * f)) if f > 1 else (first, last + 1)
                   for f in FRACTIONS]
        initial = []
        for a, b in windows:  # zooming in, the memo filled by the larger windows before
            t0 = time.perf_counter()
            profile(archive, a, b)
            initial.append(_ms(time.perf_counter() - t0))
        successive = []
        for a, b in windows:
            samples = []
            for _ in range(max(repeat, 9)):
                t0 = time.perf_counter()
                profile(archive, a, b)
                samples.append(_ms(time.perf_counter() - t0))
            successive.append(statistics.median(samples))

        t0 = time.perf_counter()
        timeline(archive, first, last + 1, TIMELINE_WIDTH)
        timeline_cold = _ms(time.perf_counter() - t0)
        samples = []
        for _ in range(max(repeat, 7)):
            t0 = time.perf_counter()
            timeline(archive, first, last + 1, TIMELINE_WIDTH)
            samples.append(_ms(time.perf_counter() - t0))
        timeline_warm = statistics.median(samples)

    return {"events": events, "baseline_s": baseline_s, "first_s": first_s, "speedup": baseline_s / first_s,
            "agrees": agrees, "initial_ms": initial, "successive_ms": successive, "timeline_cold_ms": timeline_cold,
            "timeline_warm_ms": timeline_warm}


@child_task("query_messages")
def messages_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Message matching on a freshly opened archive, in a process of its own (peak RSS
    is the matching's, node tables included)."""
    import ccgformat
    from ccgformat.query import messages
    from ccgformat.query.tables import tables_for
    with ccgformat.open(spec["path"]) as archive:
        peak_before = peak_rss_mb()
        t0 = time.perf_counter()
        tables_for(archive.pool)  # decoding every node block: the part shared with the other queries
        tables_s = time.perf_counter() - t0
        matched = messages(archive)
        match_s = time.perf_counter() - t0
        peak_after = peak_rss_mb()
    return {"messages": len(matched), "message_events": matched.events, "match_s": match_s, "tables_s": tables_s,
            "messages_per_s": len(matched) / match_s if match_s > 0 else None,
            "messages_per_s_warm": len(matched) / (match_s - tables_s) if match_s > tables_s else None,
            "peak_pending": matched.peak_pending, "peak_rss_mb": peak_after, "peak_rss_before_mb": peak_before}


def _targets(entry: dict[str, Any]) -> str:
    fails = []
    if entry["synthetic"] and entry["speedup"] < PROFILE_TARGET:
        fails.append("profile")
    if max(entry["successive_ms"][2:]) >= SMALL_WINDOW_MS:
        fails.append("windows")
    if entry["timeline_warm_ms"] >= TIMELINE_WARM_MS:
        fails.append("timeline")
    return "PASS" if not fails else "FAIL " + ",".join(fails)


@benchmark("query", "profile / timeline / message matching on the compressed graph vs loading all events", [
    ("Full-trace profile, first query (cold), vs Archive.events + numpy (same process)", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("events", lambda e: fmt_int(e["events"])),
        Column("baseline s", lambda e: fmt_float(e["baseline_s"], 3)),
        Column("profile s", lambda e: fmt_float(e["first_s"], 3)),
        Column("speedup", lambda e: f"{e['speedup']:.1f}x"),
        Column("same result", lambda e: "yes" if e["agrees"] else "NO"),
        Column("targets", _targets, "<"),
    ]),
    ("Nested windows 1, 1/3, 1/30, 1/300 (ms): initial while zooming in / successive (median)", [
        Column("trace", lambda e: e["trace"], "<"),
        *[Column(f"1/{f} init", (lambda i: lambda e: fmt_float(e["initial_ms"][i], 3))(i)) for i, f in enumerate(FRACTIONS)],
        *[Column(f"1/{f} succ", (lambda i: lambda e: fmt_float(e["successive_ms"][i], 3))(i)) for i, f in enumerate(FRACTIONS)],
    ]),
    (f"Timeline of {TIMELINE_WIDTH} columns over the whole trace (ms) and message matching", [
        Column("trace", lambda e: e["trace"], "<"),
        Column("timeline cold", lambda e: fmt_float(e["timeline_cold_ms"], 1)),
        Column("timeline warm", lambda e: fmt_float(e["timeline_warm_ms"], 1)),
        Column("messages", lambda e: fmt_int(e["messages"])),
        Column("match s", lambda e: fmt_float(e["match_s"], 3)),
        Column("of it tables s", lambda e: fmt_float(e["tables_s"], 3)),
        Column("msgs/s", lambda e: fmt_rate(e["messages_per_s"]) if e["messages_per_s"] else "-"),
        Column("msgs/s w/o tables", lambda e: fmt_rate(e["messages_per_s_warm"]) if e["messages_per_s_warm"] else "-"),
        Column("peak pending", lambda e: fmt_int(e["peak_pending"])),
        Column("peak RSS MB", lambda e: fmt_float(e["peak_rss_mb"], 0)),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    entries = []
    for archive in _archives(options):
        print(f"  query benchmark on {archive['trace']} ...", flush=True)
        result = run_child("query_run", {"path": archive["path"], "repeat": options.repeat})
        matched = run_child("query_messages", {"path": archive["path"]})
        entries.append({**archive, **result, **matched})
    return entries
