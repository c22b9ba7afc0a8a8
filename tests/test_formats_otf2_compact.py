"""``extensions["otf2"]`` version 2 (formats/otf2/compact.py) leaves out the region names
and the region roles and paradigms the model holds, and the exporter puts them back: on
the corpus, the compact calls restore exactly the calls the C library reads (which
test_formats_otf2_globaldefs checks against the `otf2` package); generated regions
restore whatever their names, shared names and enum values; a version 1 extension (every
field kept) exports the same archive; a gap the model cannot fill is a FormatError."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.errors import FormatError
from ccgformat.model import Definitions, Location, Region

from .corpus import corpus_path, require_module

otf2 = require_module("otf2", "the otf2 package is not installed")
_otf2 = require_module("_otf2", "the otf2 package is not installed")

from ccgformat.formats.otf2.binding import load  # noqa: E402
from ccgformat.formats.otf2.compact import compact_calls, restore_calls  # noqa: E402
from ccgformat.formats.otf2.export import write_events  # noqa: E402
from ccgformat.formats.otf2.globaldefs import read_global_definitions  # noqa: E402
from ccgformat.formats.otf2.reader import read  # noqa: E402

CORPUS = (
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2"),
    ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2-papi"),
    ("otf2", "TraceR", "examples", "stencil4d-otf", "traces-32"),
)
U32 = 0xFFFFFFFF


def _library_calls(anchor: Path) -> list[list[Any]]:
    """The global definitions as the C library reads them (every field)."""
    handle = _otf2.Reader_Open(str(anchor))
    try:
        return read_global_definitions(load(str(anchor)), handle, str(anchor.with_suffix(".def"))).calls
    finally:
        _otf2.Reader_Close(handle)


@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_corpus_extension_restores_every_call(parts: tuple[str, ...]) -> None:
    anchor = corpus_path(*parts) / "traces.otf2"
    definitions, streams = read(anchor)
    list(streams)
    extension = definitions.extensions["otf2"]
    calls = _library_calls(anchor)
    assert extension["version"] == 2
    assert restore_calls(extension["definitions"], definitions.regions, load(str(anchor))) == calls
    # what version 2 leaves out, by its definition: the text of every String that names a region ...
    region_calls = [args for kind, args in calls if kind == "Region"]
    named = {args[1] for args in region_calls}
    left_out = {args[0] for kind, args in extension["definitions"] if kind == "String" and len(args) == 1}
    assert left_out == named and len(named) == len(definitions.regions) > 5
    # ... and every role and paradigm the model names (the corpus has no unnamed value)
    assert all(args[4] is None and args[5] is None for kind, args in extension["definitions"] if kind == "Region")


def test_version_1_extension_exports_the_same_archive(tmp_path: Path) -> None:
    source = corpus_path(*CORPUS[1]) / "traces.otf2"
    archive = tmp_path / "trace.ccg"
    ccgformat.convert(source, archive)
    with ccgformat.open(archive) as opened:
        opened.export(tmp_path / "v2", to="otf2")
        full = copy.deepcopy(opened.definitions.extensions)
        full["otf2"].update(version=1, definitions=_library_calls(source))
        write_events(replace(opened.definitions, extensions=full), lambda i: opened.location(i).events(),
                     tmp_path / "v1")
    assert _library_calls(tmp_path / "v1" / "traces.otf2") == _library_calls(tmp_path / "v2" / "traces.otf2") \
        == _library_calls(source)


#: role and paradigm values: named ones of the library's enums and numbers without a name
_ENUM_VALUES = st.integers(min_value=0, max_value=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["main", "MPI_Send", "", "x y"]), _ENUM_VALUES, _ENUM_VALUES),
                min_size=1, max_size=12),
       st.lists(st.sampled_from(["main", "other", ""]), max_size=3))
def test_generated_regions_restore(regions: list[tuple[str, int, int]], others: list[str]) -> None:
    """Regions sharing names or string references, roles and paradigms with and without
    an enum name, and strings that name no region: compact then restore is the identity,
    and a role or paradigm is left out exactly when its model name gives it back."""
    binding = load("generated")
    enums = binding.otf2.enums
    texts = sorted({name for name, _, _ in regions})
    strings = {text: ref for ref, text in enumerate(texts)}
    calls = [["String", [ref, text]] for text, ref in strings.items()]
    calls += [["String", [len(texts) + i, text]] for i, text in enumerate(others)]
    model = []
    for i, (name, role, paradigm) in enumerate(regions):
        calls.append(["Region", [i, strings[name], strings[name], 0, role, paradigm, 0, U32, 0, 0]])
        model.append(Region(name, _lower_name(enums.RegionRole, role), _lower_name(enums.Paradigm, paradigm)))
    compact = compact_calls(calls, model, binding)
    assert restore_calls(compact, model, binding) == calls
    for (kind, args), (_, original) in zip(compact, calls):
        if kind == "Region":
            for position, enum in ((4, enums.RegionRole), (5, enums.Paradigm)):
                assert (args[position] is None) == _named(enum, original[position])
        elif args[0] < len(texts):
            assert args == [args[0]]          # every string naming a region
        else:
            assert args == original           # strings naming none keep their text


def _members(enum: Any) -> dict[int, str]:
    """Value -> name of the members of a `_otf2` enum (its upper-case class attributes)."""
    return {getattr(enum, name).value: name for name in dir(enum) if name.isupper()}


def _named(enum: Any, value: int) -> bool:
    return value in _members(enum)


def _lower_name(enum: Any, value: int) -> str:
    """The model's name of an enum value (docs/formats/otf2.md: lower case, else the number)."""
    return _members(enum)[value].lower() if _named(enum, value) else str(value)


@pytest.mark.parametrize("calls, problem", [
    ([["String", [0]], ["String", [1, "main"]], ["Region", [0, 1, 1, 0, None, None, 0, U32, 0, 0]]],
     "String 0 has no text and names no region"),
    ([["String", [1, "main"]]], "has 0 Region definitions; the definitions have 1 regions"),
], ids=["string", "regions"])
def test_gaps_the_model_cannot_fill_are_format_errors(tmp_path: Path, calls: list[list[Any]], problem: str) -> None:
    definitions = Definitions(
        regions=[Region("main")], locations=[Location("thread 0")],
        extensions={"otf2": {"version": 2, "archive": {"creator": "test"}, "clock_properties": [1000, 0, 0, 0],
                             "definitions": calls, "regions": [0], "locations": [0], "communicators": [],
                             "metrics": []}})
    with pytest.raises(FormatError, match=problem):
        write_events(definitions, lambda i: [], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()
