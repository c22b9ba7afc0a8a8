"""The npz importer reads the event columns numpy writes without numpy's header parser;
any other member layout is still read by numpy, and damaged members are refused."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ccgformat.errors import FormatError
from ccgformat.formats import read
from ccgformat.formats.npz import _ERRORS, _member_bytes
from ccgformat.model import COLUMNS, Definitions, EventKind, Location, Region

NAMES = ("time", "kind") + COLUMNS


def _npy(values: np.ndarray, trailing: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, values)
    return buffer.getvalue() + trailing


def _write(path: Path, columns: dict[str, bytes]) -> Path:
    definitions = Definitions(regions=[Region("r")], locations=[Location("p")])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("definitions_json.npy", _npy(np.array(json.dumps(definitions.to_dict()))))
        for name, data in columns.items():
            archive.writestr(f"loc0_{name}.npy", data)
    return path


def _columns(**override: np.ndarray) -> dict[str, np.ndarray]:
    columns = {name: np.zeros(2, np.int64) for name in NAMES}
    columns["time"] = np.array([5, 9], np.int64)
    columns["kind"] = np.array([EventKind.ENTER, EventKind.LEAVE], np.uint8)
    return {**columns, **override}


def _events(path: Path) -> list[tuple]:
    _, streams = read(path)
    return [tuple(event) for _, batches in streams for batch in batches for event in batch.rows()]


@pytest.mark.parametrize("layout", ["native", "big-endian", "int32", "fortran 2-D"])
def test_every_integer_layout_reads_the_same(layout: str, tmp_path: Path) -> None:
    columns = _columns()
    if layout == "big-endian":
        columns = {name: values.astype(values.dtype.newbyteorder(">")) for name, values in columns.items()}
    elif layout == "int32":
        columns = {name: values.astype(np.int32) for name, values in columns.items()}
    elif layout == "fortran 2-D":   # refused by the importer's own check, as before
        columns["ref"] = np.asfortranarray(np.zeros((2, 2), np.int64))
    path = _write(tmp_path / "t.npz", {name: _npy(values) for name, values in columns.items()})
    if layout == "fortran 2-D":
        with pytest.raises(FormatError, match="'loc0_ref' is not a 1-D integer array"):
            _events(path)
        return
    assert [(time, kind) for time, kind, *_ in _events(path)] == [(5, EventKind.ENTER), (9, EventKind.LEAVE)]


def test_writable_columns(tmp_path: Path) -> None:
    """Columns come back as ordinary writable arrays, as numpy's reader gives them."""
    path = _write(tmp_path / "t.npz", {name: _npy(values) for name, values in _columns().items()})
    _, streams = read(path)
    batch = next(iter(next(iter(streams))[1]))
    assert batch.time.flags.writeable and batch.ref.flags.writeable


@pytest.mark.parametrize("damage", ["cut", "trailing"])
def test_member_data_not_matching_its_header(damage: str, tmp_path: Path) -> None:
    """Cut data is refused naming the member; trailing bytes are left to numpy, which
    reads the announced values as it always did."""
    data = {name: _npy(values) for name, values in _columns().items()}
    data["ref"] = data["ref"][:-3] if damage == "cut" else data["ref"] + b"\0" * 8
    path = _write(tmp_path / "t.npz", data)
    if damage == "cut":
        with pytest.raises(FormatError, match="member 'loc0_ref' cannot be read"):
            _events(path)
    else:
        assert len(_events(path)) == 2


@pytest.mark.parametrize("definitions_first", [True, False])
def test_detected_whether_or_not_the_definitions_come_first(definitions_first: bool, tmp_path: Path) -> None:
    """`sniff` answers from the first local header when it names the definitions and from
    the central directory otherwise; both find the file an npz trace."""
    from ccgformat.formats import detect
    source = _write(tmp_path / "a.npz", {name: _npy(values) for name, values in _columns().items()})
    with zipfile.ZipFile(source) as archive:
        members = archive.namelist()
    order = members if definitions_first else members[1:] + members[:1]
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(tmp_path / "b.npz", "w") as new:
        for member in order:
            new.writestr(member, old.read(member))
    assert detect(tmp_path / "b.npz") == "npz"
    assert _events(tmp_path / "b.npz") == _events(source)


def test_a_cut_file_whose_first_member_is_the_definitions_is_refused_on_reading(tmp_path: Path) -> None:
    """The first local header is enough to call a file npz; reading it finds the damage."""
    from ccgformat.formats import detect
    source = _write(tmp_path / "a.npz", {name: _npy(values) for name, values in _columns().items()})
    (tmp_path / "cut.npz").write_bytes(source.read_bytes()[:200])
    assert detect(tmp_path / "cut.npz") == "npz"
    with pytest.raises(FormatError):
        read(tmp_path / "cut.npz")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=5), st.sampled_from([zipfile.ZIP_STORED,
                                                                                   zipfile.ZIP_DEFLATED]))
def test_member_bytes_match_the_zip_module(contents: list[bytes], method: int) -> None:
    """The importer's own member reader (two reads and one zlib call) gives what the
    zip module reads, and with a member's first byte changed fails when the zip module
    does (a CRC or deflate error)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for i, content in enumerate(contents):
            archive.writestr(f"m{i}.npy", content)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.npz"
        path.write_bytes(buffer.getvalue())
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                assert _member_bytes(archive, info.filename) == archive.read(info.filename)
        data = bytearray(buffer.getvalue())
        with zipfile.ZipFile(path) as archive:
            info = archive.infolist()[0]
            start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        if info.compress_size:
            data[start] ^= 0xFF
            path.write_bytes(bytes(data))
            with zipfile.ZipFile(path) as archive:
                try:
                    expected: bytes | None = archive.read(info.filename)
                except _ERRORS:
                    expected = None
                if expected is None:
                    with pytest.raises(_ERRORS):
                        _member_bytes(archive, info.filename)
                else:
                    assert _member_bytes(archive, info.filename) == expected
