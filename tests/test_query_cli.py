"""`ccg profile`, `ccg messages` and `ccg timeline`: JSON other tools can consume, the
text forms, the PNG, and usage errors (exit status 2); ``-o FILE`` of every command that
prints an answer."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

import ccgformat
from ccgformat import Event, EventKind as K
from ccgformat.archive.layout import NODE_KINDS
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


ANSWERS = [["profile"], ["profile", "--json"], ["messages"], ["messages", "--json"], ["messages", "--matrix"],
           ["aggregate", "--slices", "4"], ["aggregate", "--slices", "4", "--states", "group", "--json"],
           ["calltree"], ["calltree", "--per-location", "--json"], ["cat"], ["cat", "--format", "csv"],
           ["info"], ["info", "--json"], ["verify"], ["verify", "--json"], ["timeline", "--width", "5", "--json"],
           ["overview", "--slices", "4"], ["overview", "--slices", "4", "--curve"], ["topology", "--json"],
           ["topology"], ["logical"], ["logical", "--json"]]


@pytest.mark.parametrize("argv", ANSWERS, ids=" ".join)
def test_output_file_holds_what_standard_output_gets(capsys, archive, tmp_path, argv):
    """``-o FILE`` writes the command's answer to FILE, byte for byte what it prints
    without, and prints nothing."""
    code, printed, _ = run(capsys, argv[0], archive, *argv[1:])
    assert code == 0 and printed
    target = tmp_path / "answer.txt"
    code, out, _ = run(capsys, argv[0], archive, *argv[1:], "-o", target)
    assert (code, out) == (0, "")
    assert target.read_text(encoding="utf-8") == printed
    assert [path.name for path in tmp_path.iterdir()] == ["answer.txt"]  # no temporary left


def _damaged_node_block(tmp_path):
    """An archive in the block layout whose last node block fails its CRC (read when the
    events reach it, after a command began its answer)."""
    trace = {location: [event for call in range(400) for event in (
        Event(100 * call + location, K.ENTER, call % 4), Event(100 * call + 37 + call % 11, K.LEAVE, call % 4))]
        for location in range(4)}
    path = tmp_path / "damaged.ccg"
    ccgformat.save_graph(oracle.build(trace), path, nodes_per_block=64)
    with ccgformat.open(path) as opened:
        last = max((entry for entry in opened.sections if entry.kind in NODE_KINDS), key=lambda entry: entry.offset)
    data = bytearray(path.read_bytes())
    data[last.offset + 12 + last.length // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def test_a_failing_command_leaves_the_output_file_as_it_was(capsys, tmp_path):
    damaged = _damaged_node_block(tmp_path)
    code, out, err = run(capsys, "cat", damaged, "--format", "csv")
    assert code == 1 and out.startswith("location,time,kind") and "CRC32C" in err  # failed mid-answer
    target = tmp_path / "events.csv"
    target.write_text("an earlier answer\n")
    code, out, err = run(capsys, "cat", damaged, "--format", "csv", "-o", target)
    assert (code, out) == (1, "") and "CRC32C" in err
    assert target.read_text() == "an earlier answer\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["damaged.ccg", "events.csv"]  # no temporary left
    code, _, _ = run(capsys, "cat", damaged, "--format", "csv", "-o", tmp_path / "new.csv")
    assert code == 1 and not (tmp_path / "new.csv").exists()


def test_verify_writes_the_report_of_what_it_found(capsys, tmp_path):
    """A verify that finds problems exits with status 1 and still writes its report."""
    damaged = _damaged_node_block(tmp_path)
    code, printed, _ = run(capsys, "verify", damaged, "--json")
    assert code == 1 and json.loads(printed)["ok"] is False
    code, out, _ = run(capsys, "verify", damaged, "--json", "-o", tmp_path / "report.json")
    assert (code, out) == (1, "")
    assert (tmp_path / "report.json").read_text() == printed


@pytest.mark.parametrize("argv", [["timeline", "--width", "5", "--svg", "t.svg"],
                                  ["logical", "--svg", "t.svg"]], ids=lambda argv: argv[0])
def test_output_file_of_a_picture_only_run_is_refused(capsys, archive, tmp_path, argv):
    """A timeline or logical run that draws instead of printing has no answer for -o: usage error, no file."""
    code, _, err = run(capsys, argv[0], archive, *[str(tmp_path / a) if a.endswith(".svg") else a for a in argv[1:]],
                       "-o", tmp_path / "answer.json")
    assert code == 2 and "--json" in err
    assert list(tmp_path.iterdir()) == []


def test_output_into_a_fifo_writes_into_it(capsys, archive, tmp_path):
    """-o naming a FIFO (as /dev/stdout may be a pipe) writes the answer into it, which
    stays a FIFO: an answer is a stream, not a file to replace."""
    code, printed, _ = run(capsys, "profile", archive, "--json")
    fifo = tmp_path / "answer"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    code, out, _ = run(capsys, "profile", archive, "--json", "-o", fifo)
    if code != 0:  # nothing opened the FIFO for writing: let the reader go
        os.close(os.open(fifo, os.O_WRONLY))
    reader.join(timeout=60)
    assert (code, out, received) == (0, "", [printed])
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_output_file_that_is_the_archive_is_refused(capsys, archive):
    before = archive.read_bytes()
    code, _, err = run(capsys, "profile", archive, "-o", archive)
    assert code == 2 and "never modified" in err
    assert archive.read_bytes() == before


def test_output_file_in_a_missing_folder_is_an_error(capsys, archive, tmp_path):
    code, _, err = run(capsys, "profile", archive, "-o", tmp_path / "missing" / "p.txt")
    assert code == 1 and "missing" in err
