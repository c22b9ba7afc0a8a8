"""`ccg profile`, `ccg messages` and `ccg timeline`: JSON other tools can consume, the
text forms, the PNG, and usage errors (exit status 2)."""

from __future__ import annotations

import json

import pytest

import ccgformat
from ccgformat import Event, EventKind as K
from ccgformat.cli import main

from . import query_oracle as oracle


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    rank0 = [Event(0, K.ENTER, 0), Event(10, K.ENTER, 1), Event(12, K.SEND, 1, 0, 3, 0, 64), Event(20, K.LEAVE, 1),
             Event(30, K.ENTER, 1), Event(35, K.LEAVE, 1), Event(40, K.LEAVE, 0)]
    rank1 = [Event(5, K.ENTER, 0), Event(18, K.RECV, 0, 0, 3, 0, 64), Event(50, K.LEAVE, 0)]
    path = tmp_path_factory.mktemp("qcli") / "t.ccg"
    ccgformat.save_graph(oracle.build({0: rank0, 1: rank1}), path)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_profile_json(capsys, archive):
    code, out, _ = run(capsys, "profile", archive, "--json")
    assert code == 0
    document = json.loads(out)
    rows = {row["region"]: row for row in document["regions"]}
    assert (rows["r0"]["id"], rows["r0"]["calls"], rows["r0"]["inclusive"], rows["r0"]["exclusive"]) == (0, 2, 85, 70)
    assert (rows["r1"]["calls"], rows["r1"]["inclusive"], rows["r1"]["exclusive"], rows["r1"]["min"],
            rows["r1"]["max"], rows["r1"]["mean"]) == (2, 15, 15, 5, 10, 7.5)
    assert document["messages"] == [{"sender": 0, "receiver": 1, "sent": 1, "sent_bytes": 64, "received": 1,
                                     "received_bytes": 64}]


def test_profile_window_and_location(capsys, archive):
    code, out, _ = run(capsys, "profile", archive, "--start", 15, "--stop", 32, "--location", 0, "--json")
    assert code == 0
    rows = {row["id"]: row for row in json.loads(out)["regions"]}
    # r1 [10, 20) contributes 5 ticks but is not counted; r1 [30, 35) is counted with 2 ticks
    assert (rows[1]["calls"], rows[1]["inclusive"], rows[1]["min"], rows[1]["mean"]) == (1, 7, 2, 2.0)
    assert rows[0]["calls"] == 0 and rows[0]["exclusive"] == 17 - 7 and rows[0]["mean"] is None
    code, out, _ = run(capsys, "profile", archive)
    assert code == 0 and "r0" in out and "sender" in out


def test_messages(capsys, archive):
    code, out, _ = run(capsys, "messages", archive, "--json")
    assert code == 0
    document = json.loads(out)
    assert [(m["sender"], m["send_time"], m["receiver"], m["recv_time"]) for m in document["messages"]] == \
        [(0, 12, 1, 18)]
    assert document["unmatched"] == []
    code, out, _ = run(capsys, "messages", archive, "--matrix", "--json")
    assert code == 0 and json.loads(out)[0][1] == 1
    code, out, _ = run(capsys, "messages", archive)
    assert code == 0 and "1 messages, 0 unmatched" in out


def test_timeline_png_and_json(capsys, archive, tmp_path):
    target = tmp_path / "t.png"
    code, out, _ = run(capsys, "timeline", archive, "--width", 25, "--png", target, "--json")
    assert code == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    document = json.loads(out)
    # a row per defined location: ranks 0 and 1, and rank 2, defined without events
    assert document["width"] == 25 and len(document["exclusive"]) == 3


def test_timeline_coloured_by_region(capsys, archive):
    """--color-by region: the classes are regions (by exclusive time), not groups."""
    code, out, _ = run(capsys, "timeline", archive, "--width", 5, "--json", "--color-by", "region")
    assert code == 0
    with ccgformat.open(archive) as opened:
        ranked = sorted(opened.profile().regions, key=lambda row: (-row.exclusive, row.region))
    assert json.loads(out)["groups"][:len(ranked)] == [row.name for row in ranked]


@pytest.mark.parametrize("argv", [
    ["profile", "{a}", "--start", "9", "--stop", "3"],
    ["profile", "{a}", "--location", "9"],
    ["timeline", "{a}"],
    ["timeline", "{a}", "--json", "--start", "5", "--stop", "5"],
    ["timeline", "{a}", "--json", "--color-by", "colour"],
    ["messages", "{a}", "--location", "4"],
])
def test_usage_errors(capsys, archive, argv):
    code, _, err = run(capsys, *[arg.format(a=archive) for arg in argv])
    assert code == 2 and "error" in err


def test_corrupt_archive_exit_status(capsys, tmp_path):
    bad = tmp_path / "bad.ccg"
    bad.write_bytes(b"not an archive at all, just some bytes to fill the header")
    assert run(capsys, "profile", bad)[0] == 1


def test_profile_text_columns_stay_apart_for_large_numbers(capsys, tmp_path):
    """Columns are as wide as their widest cell: 10**15-tick times do not run together."""
    big = 10 ** 15
    events = [Event(0, K.ENTER, 0), Event(big, K.ENTER, 1), Event(3 * big, K.LEAVE, 1), Event(7 * big, K.LEAVE, 0)]
    path = tmp_path / "big.ccg"
    ccgformat.save_graph(oracle.build({0: events}), path)
    code, out, _ = run(capsys, "profile", path)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["region", "group", "calls", "inclusive", "exclusive", "mean"]
    cells = {row.split()[0]: row.split()[2:] for row in rows if row}
    assert cells["r0"] == ["1", f"{7 * big:,}", f"{5 * big:,}", f"{7 * big:,.1f}"]
    assert cells["r1"] == ["1", f"{2 * big:,}", f"{2 * big:,}", f"{2 * big:,.1f}"]
