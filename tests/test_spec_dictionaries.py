"""The fixed byte blobs of the format (spec/format.md 1, "Fixed byte blobs"): the bundle
dictionaries and the LZMA2 stream prefix ship in spec/dictionaries/, the package carries
byte-identical copies, and both match the size and SHA-256 the spec states for each."""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files
from pathlib import Path

import pytest

SPEC = Path(__file__).resolve().parent.parent / "spec"
PACKAGE = files("ccgformat.archive")
#: a blob named in the spec: the file, then its size in bytes and its SHA-256
STATED = re.compile(r"\[`dictionaries/(?P<name>[\w.]+)`\]\(dictionaries/\)[^`]*?(?P<size>[\d,]+) bytes, "
                    r"SHA-256\s+`(?P<sha>[0-9a-f]{64})`")


def stated() -> dict[str, tuple[int, str]]:
    """Per blob the spec names in spec/dictionaries/: its stated size and SHA-256."""
    text = (SPEC / "format.md").read_text()
    return {m["name"]: (int(m["size"].replace(",", "")), m["sha"]) for m in STATED.finditer(text)}


def test_the_spec_states_every_blob_it_ships():
    shipped = sorted(path.name for path in (SPEC / "dictionaries").iterdir())
    assert shipped == sorted(stated())
    # the four blobs of the format: the dictionaries 1, 2, 3 (2.6, 2.8) and the prefix (2.9)
    assert len(shipped) == 4


@pytest.mark.parametrize("name", sorted(stated()))
def test_a_shipped_blob_is_what_the_spec_states_and_what_the_package_reads(name):
    size, sha = stated()[name]
    data = (SPEC / "dictionaries" / name).read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (size, sha)
    assert PACKAGE.joinpath(name).read_bytes() == data


def test_the_package_has_no_blob_the_spec_does_not_ship():
    packaged = sorted(entry.name for entry in PACKAGE.iterdir() if entry.name.startswith("bundle_dictionary_"))
    assert packaged == sorted(stated())
