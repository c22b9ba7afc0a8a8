"""Wild variants of the corpus traces (issue 13): each converts or fails with a clear
`FormatError`; whatever converts, every command accepts (tests/wild.py makes them)."""

from __future__ import annotations

import pytest

import ccgformat
from ccgformat.errors import FormatError, InputTraceError

from .corpus import corpus_path
from .query_support import CORPUS
from .wild import (BADLY_NESTED, BYTE_VARIANTS, ccg, ccg_ok, event_count, event_variant, every_command,
                   export_and_back, files_of, trace_of, writable_copy)

SAME, CONVERTS, FAILS = "same events", "converts", "FormatError"
OTF2 = ("otf2-pingpong", "otf2-pingpong-papi", "otf2-stencil")
OTF1 = ("otf-hello", "otf-philosophers")
EPILOG = ("epilog-le", "epilog-be", "epilog-rank1")
PAJE = tuple(name for name in sorted(CORPUS) if name.startswith("paje-") and name != "paje-native")  # native: slow

#: variant -> (traces, outcome): the events of the unchanged trace, other events, or a FormatError.
BYTE_OUTCOMES = {
    "otf2 .evt + newline": (OTF2, SAME),
    "otf2 .evt + bytes": (OTF2, SAME),
    "otf2 .def + bytes": (OTF2[:2], SAME),
    "otf2 anchor + newline": (OTF2[:2], SAME),
    "otf1 + newline": (OTF1, SAME),
    "otf1 .events + bytes": (OTF1, FAILS),
    "otf1 .z unterminated": (OTF1, SAME),
    "otf1 .z flush every 64 B": (OTF1, SAME),
    "otf1 .z terminated": (OTF1, SAME),
    "otf1 .z cut in a block": (OTF1, FAILS),
    "otf1 .z unterminated + newline": (OTF1, FAILS),
    "otf1 .z terminated + bytes": (OTF1, FAILS),
    "otf1 one event file empty": (OTF1, CONVERTS),
    "otf1 only counters": (OTF1, CONVERTS),
    "otf1 equal time stamps": (OTF1, CONVERTS),
    "otf1 one record per stream": (OTF1, CONVERTS),
    "otf1 Leave of another function": (OTF1, FAILS),
    "epilog + newline": (EPILOG, FAILS),
    "epilog + two zero bytes": (EPILOG, SAME),
    "epilog gzip": (EPILOG, SAME),
    "epilog gzip + newline": (EPILOG, FAILS),
    "epilog gzip + zero padding": (EPILOG, SAME),
    "epilog gzip cut short": (EPILOG, FAILS),
    "paje CRLF": (PAJE, SAME),
    "paje CR": (PAJE, SAME),
    "paje BOM": (PAJE, SAME),
    "paje BOM + CRLF": (PAJE, SAME),
}
assert set(BYTE_OUTCOMES) == set(BYTE_VARIANTS)


def _cases(outcomes: dict) -> list:
    return [pytest.param(variant, trace, outcome, id=f"{variant}-{trace}")
            for variant, (traces, outcome) in outcomes.items() for trace in traces]


#: What a variant read as SAME must share with the original besides the events (the
#: extensions may differ: EPILOG keeps a trailing type-0 record as a definition).
DEFINITION_PARTS = ("regions", "system_tree", "locations", "communicators", "metrics", "strings", "timer_resolution")


@pytest.mark.parametrize("variant, trace, outcome", _cases(BYTE_OUTCOMES))
def test_byte_variant(variant, trace, outcome, tmp_path):
    source = corpus_path(*CORPUS[trace])
    copy = writable_copy(source, tmp_path)
    unchanged = files_of(copy)
    BYTE_VARIANTS[variant](copy)
    assert files_of(copy) != unchanged
    target = tmp_path / "variant.ccg"
    if outcome == FAILS:
        with pytest.raises(FormatError) as caught:
            ccgformat.convert(copy, target)
        error = caught.value
        assert error.path is not None and str(copy.parent) in error.path
        assert error.line is not None or error.offset is not None  # the file and the position
        assert ccg("convert", copy, target) == (1, "", f"ccg: {error}\n")
        assert not target.exists()
        return
    ccg_ok("convert", copy, target, "-q")
    if outcome == CONVERTS:
        every_command(target)
        assert all(isinstance(count, int) for count in export_and_back(target, tmp_path).values())
        return
    (original, events), (changed, changed_events) = trace_of(source), trace_of(copy)
    assert changed_events.keys() == events.keys() and all(changed_events[i].equals(events[i]) for i in events)
    assert all(getattr(changed, part) == getattr(original, part) for part in DEFINITION_PARTS)
    assert every_command(target) == sum(len(batch) for batch in events.values())
    assert all(isinstance(count, int) for count in export_and_back(target, tmp_path).values())


EVENT_TRACES = ("otf2-pingpong-papi", "otf-hello", "otf-philosophers", "paje-java", "epilog-le")
WITH_METRICS_AND_GENERIC = ("otf2-pingpong-papi", "otf-hello", "otf-philosophers", "paje-variables")
EVENT_CASES = {
    "empty location": (EVENT_TRACES, None),
    "only metrics": (WITH_METRICS_AND_GENERIC, None),
    "only GENERIC": (WITH_METRICS_AND_GENERIC, None),
    "duplicate timestamps": (EVENT_TRACES, None),
    "single event": (EVENT_TRACES, None),
    "call left open": (EVENT_TRACES, "still open at the end"),
    "LEAVE without ENTER": (EVENT_TRACES, "with no region open"),
}
assert set(BADLY_NESTED) == {name for name, (_, reason) in EVENT_CASES.items() if reason}
#: Exports refused for a documented reason (docs/formats/otf2.md, Export: "metric events
#: that do not form a complete record"): the single event is one member of a PAPI Metric.
EXPORT_REFUSALS = {("single event", "otf2-pingpong-papi"): {"otf2": "the events end inside an OTF2 metric record"}}


@pytest.mark.parametrize("variant, trace, refusal", _cases(EVENT_CASES))
def test_event_variant(variant, trace, refusal, tmp_path):
    source = event_variant(corpus_path(*CORPUS[trace]), variant, tmp_path / "variant.npz")
    target = tmp_path / "variant.ccg"
    repair: tuple[str, ...] = ()
    if refusal:
        with pytest.raises(InputTraceError, match=refusal) as caught:
            ccgformat.convert(source, target)
        assert caught.value.path == str(source) and str(caught.value).startswith(f"{source}: location ")
        assert ccg("convert", source, target) == (1, "", f"ccg: {caught.value}\n")
        assert not target.exists()
        repair = ("--repair",)
    code, _, err = ccg("convert", source, target, "-q", *repair)
    assert code == 0, err
    assert ("repaired: location" in err) == bool(refusal)
    assert every_command(target) == event_count(target)
    refusals = EXPORT_REFUSALS.get((variant, trace), {})
    for fmt, result in export_and_back(target, tmp_path).items():
        assert isinstance(result, int) if fmt not in refusals else refusals[fmt] in str(result), (fmt, result)
