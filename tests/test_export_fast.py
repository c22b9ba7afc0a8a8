"""The exporters' native fast paths against their Python reference: the Chrome, Paje and
OTF2 exports of an archive are the same bytes under the native backend (C writes the
common kinds) and the Python one (every event in Python), on hypothesis-generated traces
of every event kind with names that need quoting and escaping, at timer resolutions that
write exactly and that round, on generated Paje files (hints, container changes), and on
every corpus trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive import write_trace
from ccgformat.formats import channels as channels_module
from ccgformat.formats.chrome import fast as chrome_fast
from ccgformat.formats.chrome.calls import CallScan, EndSpool
from ccgformat.formats.chrome.nesting import LEAVE
from ccgformat.formats.chrome.tokens import Leave
from ccgformat.formats.otf2 import fast as otf2_fast
from ccgformat.formats.paje import fast as paje_fast
from ccgformat.model import Definitions, Event, EventBatch, EventKind, Location, Metric, Region, SystemTreeNode

from .corpus import corpus_root, require_module
from .test_backend_differential import backend
from .test_chrome_calls import as_batch, call_ends, scanned, sequences, timed
from .test_chrome_viewers import corpus_traces
from .test_formats_paje import paje_files
from .traces import traces

try:
    from ccgformat._native import load
    load()
except ImportError as error:  # pragma: no cover - a machine without a C compiler
    pytest.skip(f"the native extension is not built: {error}", allow_module_level=True)

K = EventKind
#: target name -> export format
TARGETS = {"out.json": "chrome", "out.json.gz": "chrome", "out.trace": "paje", "out.otf2": "otf2"}
#: text that JSON escapes, Paje quotes or replaces, and UTF-8 encodes in several bytes
NAMES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | st.sampled_from(
    ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "# hash", "", " ", "\x00\x1f", "Zürich ✓", "\u2028"])


def files(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file of a folder by its path inside."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def same_output(native: dict[str, bytes], python: dict[str, bytes]) -> bool:
    """Equal files; an OTF2 anchor file may differ in its 8-byte random trace id alone."""
    if native.keys() != python.keys():
        return False
    for name, data in native.items():
        other = python[name]
        if name.endswith("traces.otf2") and len(data) == len(other):
            differ = [i for i in range(len(data)) if data[i] != other[i]]
            if differ and differ[-1] - differ[0] >= 8:
                return False
        elif data != other:
            return False
    return True


class Counting:
    """Counts the calls of the fast paths' writing methods (so that a test knows C wrote)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.calls = {"chrome": 0, "paje": 0, "otf2": 0}
        for name, cls, method in (("chrome", chrome_fast.FastPath, "write"), ("paje", paje_fast.FastPath, "write"),
                                  ("otf2", otf2_fast.FastPath, "write")):
            monkeypatch.setattr(cls, method, self._counted(name, getattr(cls, method)))

    def _counted(self, name, method):
        def counted(*args, **kwargs):
            self.calls[name] += 1
            return method(*args, **kwargs)
        return counted


def export_both(archive: Path, folder: Path) -> dict[str, tuple[dict[str, bytes], dict[str, bytes]]]:
    """Every target written under both backends: name -> (native files, python files)."""
    out = {}
    for target, to in TARGETS.items():
        written = []
        for name in ("native", "python"):
            path = folder / name / target
            path.parent.mkdir(exist_ok=True)
            with backend(name), ccgformat.open(archive) as opened:
                opened.export(path, to=to)
            written.append(files(path))
        out[target] = (written[0], written[1])
    return out


def assert_same(archive: Path, folder: Path) -> None:
    for target, (native, python) in export_both(archive, folder).items():
        assert same_output(native, python), f"{target}: the fast path's bytes differ from the reference's"


# --------------------------------------------------------------------------- generated traces

def named_definitions(names: list[str], resolution: int, offset: int) -> Definitions:
    """Definitions for `traces` (regions 0-3, locations, metrics and strings 0-2) whose
    names are ``names`` (cycled)."""
    name = (names * 20)[:20].__getitem__
    return Definitions(
        regions=[Region(name(0), group=name(1)), Region(name(2), "function", "mpi", "MPI"), Region(name(3)),
                 Region(name(3), group=name(4))],
        system_tree=[SystemTreeNode(name(5), "machine"), SystemTreeNode(name(6), "node", 0)],
        locations=[Location(name(7), "process", 1), Location(name(8), "thread", 1), Location(name(9), "thread")],
        metrics=[Metric(name(10)), Metric(name(11), "C", "absolute", "double"),
                 Metric(name(12), "B", value_type="uint64")],
        strings=[name(13), '{"args":{"x":1},"ph":"i"}', name(14)], timer_resolution=resolution, clock_offset=offset)


def plain_location(start: int) -> list[Event]:
    """Calls and messages only: a location every export writes in C."""
    events, time = [], start
    for i in range(30):
        events += [Event(time, K.ENTER, i % 4), Event(time + 2, K.SEND, 1, 0, i % 3, 0, 64),
                   Event(time + 3, K.RECV, 1, 0, i % 3, 0, 64), Event(time + 5, K.LEAVE, i % 4)]
        time += 7 + i % 3
    return events


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=traces(), names=st.lists(NAMES, min_size=1, max_size=6),
       resolution=st.sampled_from([1, 3, 7, 1000, 10 ** 6, 10 ** 9, 1 << 20, 3 * 10 ** 8, 10 ** 15 + 1]),
       offset=st.integers(-10 ** 15, 10 ** 15), shift=st.sampled_from([0, 0, 1 << 40, 1 << 61]))
def test_generated_traces_export_to_the_reference_bytes(tmp_path_factory, monkeypatch, trace, names, resolution,
                                                        offset, shift):
    folder = tmp_path_factory.mktemp("fast")
    trace = {location: [e._replace(time=e.time + shift) for e in events] for location, events in trace.items()}
    trace[max(trace) + 1] = plain_location(shift)
    definitions = named_definitions(names, resolution, offset)
    definitions.locations.extend(Location(f"plain {i}") for i in range(len(trace) - len(definitions.locations)))
    archive = folder / "t.ccg"
    write_trace(archive, definitions, [(loc, [EventBatch.from_events(evs)]) for loc, evs in sorted(trace.items())])
    counting = Counting(monkeypatch)
    assert_same(archive, folder)
    assert min(counting.calls.values()) > 0, counting.calls


@pytest.mark.parametrize("resolution, unit", [(1 << 20, 1 << 12), (3 << 40, 3 << 24), (3 << 40, 3 << 26)])
def test_timestamps_rounded_at_exact_ties(tmp_path, resolution, unit):
    """Timers that divide no power of ten: Chrome rounds half to even, Paje half up. At an
    odd multiple of ``unit`` ticks a timestamp lies halfway between two written values
    (Chrome at 2**20 Hz and at 3 * 2**40 Hz with 3 * 2**26; Paje at 3 * 2**40 Hz with 3 * 2**24)."""
    events = []
    for j in range(8):
        start = (2 * j + 1) * unit * 4 - unit      # odd multiples of the unit, before and after 0
        events += [Event(start, K.ENTER, 0), Event(start + 2 * unit, K.LEAVE, 0)]
    definitions = Definitions(regions=[Region("r")], locations=[Location("l")], timer_resolution=resolution,
                              clock_offset=unit * 20)
    write_trace(tmp_path / "t.ccg", definitions, [(0, [EventBatch.from_events(events)])])
    assert_same(tmp_path / "t.ccg", tmp_path)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=paje_files())
def test_generated_paje_files_export_to_the_reference_bytes(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("fast-paje")
    (folder / "in.trace").write_text(text)
    ccgformat.convert(folder / "in.trace", folder / "t.ccg")
    assert_same(folder / "t.ccg", folder)


# --------------------------------------------------------------------------- the corpus

@pytest.fixture(scope="module")
def otf2_module():
    return require_module("otf2", "OTF2 export needs the otf2 package")


@pytest.mark.parametrize("trace", corpus_traces())
def test_corpus_exports_to_the_reference_bytes(tmp_path, otf2_module, trace):
    ccgformat.convert(corpus_root() / trace, tmp_path / "t.ccg")
    assert_same(tmp_path / "t.ccg", tmp_path)


# --------------------------------------------------------------------------- the pieces

@settings(max_examples=200, deadline=None)
@given(sequences(), st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=1, max_size=7),
       st.lists(st.integers(0, 200), max_size=4))
def test_native_scan_leaves_the_same_state(trees, gaps, cuts):
    from ccgformat._native.export_chrome import ScanState, scan as scan_natively

    tokens = [(token, Leave(item.region, item.time) if token == LEAVE else item)
              for token, item in timed(trees, gaps)]       # no end fields: C never sees them
    reference_spool, native_spool = EndSpool(), EndSpool()
    try:
        reference = scanned(tokens, cuts, reference_spool)
        native = CallScan(native_spool, 0)
        batch = as_batch(tokens)
        edges = sorted({0, len(tokens), *(c % (len(tokens) + 1) for c in cuts)})
        for a, b in zip(edges, edges[1:]):
            piece = batch[a:b]
            first = native.calls
            state = ScanState(*native.state(int(np.count_nonzero(piece.kind == EventKind.ENTER))))
            result = scan_natively(state, piece, first)
            assert not isinstance(result, int)
            native.restore(state.scalars(), state.open_calls())
            native.spool_ends(first, *result)
        assert vars(native) | {"spool": None} == vars(reference) | {"spool": None}
        assert native_spool.reader(0).take(native.calls).tolist() == call_ends(tokens)
    finally:
        reference_spool.close()
        native_spool.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.integers(-2, 2) | st.sampled_from([-(1 << 63), (1 << 63) - 1])] * 4), max_size=300))
def test_native_channel_ranks_are_the_sorted_ones(rows):
    from ccgformat._native.export_channels import channel_ranks as ranks_in_c

    columns = [np.array([row[i] for row in rows], np.int64) for i in range(4)]
    assert all(np.array_equal(a, b) for a, b in zip(ranks_in_c(columns), channels_module._sorted_ranks(columns)))
