"""Progress on stderr: a tqdm bar for `convert`, `export` and `verify` on a terminal
(a pseudo-terminal here), and not a byte of it on a pipe or with ``--quiet``."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CCG = [sys.executable, "-m", "ccgformat.cli"]
LOCATIONS = 4
EVENTS = 30_000  # per location: several batches each, so the bar moves


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    folder = tmp_path_factory.mktemp("progress")
    source = folder / "trace.npz"
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth.py"), str(source), "--locations", str(LOCATIONS),
                    "--events-per-location", str(EVENTS), "--jitter", "0.2", "--pattern", "ring"], check=True,
                   capture_output=True)
    archive = folder / "trace.ccg"
    subprocess.run(CCG + ["convert", str(source), str(archive), "--quiet"], check=True, cwd=ROOT)
    return {"npz": source, "ccg": archive, "folder": folder}


def on_terminal(arguments: list[str]) -> tuple[int, bytes, bytes]:
    """Run ``ccg ARGUMENTS`` with stderr on a pseudo-terminal of 100 columns: the status,
    stdout and everything written to the terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(CCG + arguments, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL,
                               cwd=ROOT)
    os.close(follower)
    written = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        written.append(chunk)
    stdout, _ = process.communicate(timeout=120)
    os.close(leader)
    return process.returncode, stdout, b"".join(written)


def frames(written: bytes) -> list[str]:
    """The bar's successive states (tqdm redraws its line after a carriage return)."""
    return [frame.strip() for frame in written.decode("utf-8", "replace").split("\r") if frame.strip()]


def commands(trace: dict, name: str) -> list[list[str]]:
    folder: Path = trace["folder"]
    return {"convert": [["convert", str(trace["npz"]), str(folder / f"{name}.ccg")]],
            "export": [["export", str(trace["ccg"]), str(folder / f"{name}.{suffix}")]
                       for suffix in ("otf2", "trace", "json")],
            "verify": [["verify", str(trace["ccg"])]]}[name]


@pytest.mark.parametrize("name", ["convert", "export", "verify"])
def test_a_terminal_shows_work_done_rate_and_time_left_until_the_end(trace, name):
    for arguments in commands(trace, name):
        status, stdout, written = on_terminal(arguments)
        assert status == 0, written
        shown = frames(written)
        assert shown and all(frame.startswith(f"ccg {name}") for frame in shown), shown
        # work done of a total, elapsed<left, and a rate, as tqdm shows them
        assert any("%|" in frame and "<" in frame and "/s" in frame for frame in shown), shown
        assert "100%" in shown[-1], shown[-1]
        assert stdout  # the result line still goes to stdout


@pytest.mark.parametrize("name", ["convert", "export", "verify"])
def test_a_pipe_or_quiet_gets_no_progress(trace, name):
    for arguments in commands(trace, name):
        piped = subprocess.run(CCG + arguments, capture_output=True, cwd=ROOT)
        assert piped.returncode == 0 and piped.stderr == b"", piped.stderr
        status, _, written = on_terminal(arguments + ["--quiet"])
        assert status == 0 and written == b"", written
