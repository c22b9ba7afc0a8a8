"""Every command on every readable corpus trace: convert, verify, info, cat, profile,
messages, timeline, export to every format and back (issue 13)."""

from __future__ import annotations

import json

import pytest

from .corpus import corpus_path
from .query_support import CORPUS
from .wild import ccg, ccg_ok, event_count, every_command, export_and_back

#: OTF's read_from_buffer test trace: its global definitions are missing on purpose.
MISSING_DEFINITIONS = ("otf", "ompi", "ompi", "contrib", "vt", "vt", "extlib", "otf", "tests", "read_from_buffer",
                       "hello_world.otf")


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_command_accepts_every_corpus_trace(name, tmp_path):
    source = corpus_path(*CORPUS[name])
    archive = tmp_path / "trace.ccg"
    ccg_ok("convert", source, archive, "-q")
    events = every_command(archive)
    assert events == event_count(source)
    back = export_and_back(archive, tmp_path)
    assert all(isinstance(count, int) for count in back.values()), back
    source_format = json.loads(ccg_ok("info", archive, "--json"))["provenance"]["source_format"]
    assert back.get(source_format, events) == events  # an export to the trace's own format keeps every event


def test_the_trace_without_its_definitions_fails_as_documented(tmp_path):
    """docs/formats/otf1.md: a missing ``NAME.0.def`` is a FormatError naming it."""
    source = corpus_path(*MISSING_DEFINITIONS)
    code, out, err = ccg("convert", source, tmp_path / "trace.ccg")
    assert code == 1 and out == ""
    assert err.startswith("ccg: ") and str(source.with_name("hello_world.0.def")) in err
    assert not (tmp_path / "trace.ccg").exists()
