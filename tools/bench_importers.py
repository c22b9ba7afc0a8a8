"""Every importer at many locations (issue 14: "every importer handles 10^6 locations").

For each input format, a trace of one call per location (two events; Paje adds a
container creation) is written by the writers of tests/test_formats_many_locations.py -
our exporters or test writers that follow each format's specification - at the requested
location count and at 1,000 locations, and converted in a fresh process per run
(time and peak RSS). The per-location ratio is the time per location at N over the time
per location at 1,000 in the same run: 1 means the importer costs the same per location
at both sizes, above 1 that something grows faster than the locations.

OTF2 is measured by the scale benchmark (20,000 ranks read from an OTF2 archive). OTF v1
is measured in both layouts VampirTrace leaves: every process in one stream (as
``otfmerge`` writes it) and a stream per process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import TOOLS, Column, benchmark, fmt_float, fmt_int, fmt_stat, run_child

#: the formats measured, by their writer's name in WRITERS
FORMATS = ("chrome", "paje", "epilog", "otf1", "otf1-streams")
#: the twin each format is also converted at, for the per-location ratio
TWIN_LOCATIONS = 1000
DEFAULT_LOCATIONS = 100_000


def _per_location_us(entry: dict[str, Any]) -> float:
    return 1e6 * entry["convert_seconds"]["median"] / entry["locations"]


@benchmark("import-locations", "every importer at many locations: convert time and peak RSS, per-location ratio", [
    ("Conversion of one call per location (seconds: median (min-max) of the runs, each in a fresh process; "
     "us/location = median / locations; ratio = us/location at N / us/location at 1,000 in the same run; "
     "peak RSS in MiB)", [
        Column("format", lambda e: e["format"], "<"),
        Column("locations", lambda e: fmt_int(e["locations"])),
        Column("events", lambda e: fmt_int(e["events"])),
        Column("seconds", lambda e: fmt_stat(e["convert_seconds"], lambda x: f"{x:.2f}")),
        Column("us/location", lambda e: fmt_float(_per_location_us(e), 1)),
        Column("ratio", lambda e: fmt_float(e.get("ratio"), 2) if "ratio" in e else "-"),
        Column("peak RSS", lambda e: fmt_float(e["peak_rss_mb"], 0)),
    ]),
])
def run(options: argparse.Namespace) -> list[dict[str, Any]]:
    sys.path.insert(0, str(TOOLS.parent))  # the writers live with the tests (they import pytest)
    from tests.test_formats_many_locations import WRITERS
    locations = options.import_locations
    entries = []
    with tempfile.TemporaryDirectory() as folder:
        for fmt in FORMATS:
            twin = None
            for count in (TWIN_LOCATIONS, locations):
                place = Path(folder, f"{fmt}-{count}")
                place.mkdir()
                t0 = time.perf_counter()
                source = WRITERS[fmt](place, count)
                written = time.perf_counter() - t0
                entry = run_child("convert", {"source": str(source), "repeat": options.repeat})
                entry["format"] = fmt
                if twin is not None:
                    entry["ratio"] = _per_location_us(entry) / _per_location_us(twin)
                twin = entry
                entries.append(entry)
                print(f"  import-locations {fmt} x {count:,}: written in {written:.1f} s, converted in "
                      f"{entry['convert_seconds']['median']:.2f} s", file=sys.stderr, flush=True)
    return entries
