"""Where the trace corpus is, for the tools and tests: ``$CCG_CORPUS``, else
``../shared/traces``; and the corpus traces they use, by name."""

from __future__ import annotations

import os
from pathlib import Path


def corpus_root() -> Path:
    return Path(os.environ.get("CCG_CORPUS", Path(__file__).resolve().parent.parent.parent / "shared" / "traces"))


#: Every corpus trace the importers read, by a short name: its path inside the corpus (all
#: but OTF's read_from_buffer, whose definitions are missing on purpose).
CORPUS_TRACES: dict[str, tuple[str, ...]] = {
    "chrome-rocprof": ("chrome-json", "otf2_cli_chrome_trace_converter", "tests", "data",
                       "memcpy-host-device.rocprofiler.json.gz"),
    "epilog-le": ("epilog", "GENERATED-by-scalasca-1.4-elg_rw", "ref_merged_le.elg"),
    "epilog-be": ("epilog", "GENERATED-by-scalasca-1.4-elg_rw", "ref_merged_be.elg"),
    "otf-hello": ("otf", "otf-vis", "otf_traces", "hello", "hello_world.otf"),
    "otf-out": ("otf", "otf-vis", "otf_traces", "out", "out.otf"),
    "otf-philosophers": ("otf", "otf-vis", "otf_traces", "philosophers", "philosophers.otf"),
    "otf2-stencil": ("otf2", "TraceR", "examples", "stencil4d-otf", "traces-32", "traces.otf2"),
    "otf2-pingpong": ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2", "traces.otf2"),
    "otf2-pingpong-papi": ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2-papi", "traces.otf2"),
    "paje-java": ("paje", "paje", "Traces", "JavaTest.trace"),
    "paje-links": ("paje", "pajeng", "traces", "links.trace"),
    "paje-native": ("paje", "pajeng", "traces", "native_sample.trace"),
    "paje-states": ("paje", "pajeng", "traces", "states.trace"),
    "paje-variables": ("paje", "pajeng", "traces", "variables.trace"),
    "paje-events": ("paje", "pajeng", "traces", "events.trace"),
    "paje-containers": ("paje", "pajeng", "traces", "containers.trace"),
    "paje-multiple-files": ("paje", "pajeng", "traces", "multiple_files", "root.trace"),
    "epilog-rank1": ("epilog", "GENERATED-by-scalasca-1.4-elg_rw", "ref_local_rank1_le.elg"),
}
