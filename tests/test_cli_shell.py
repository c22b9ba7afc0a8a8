"""The `ccg` command line in a shell: a closed pipe (``| head``) ends every command quietly
with status 0, every command that prints data has ``--json``, and ``--version`` names the
package version and the format versions. Real processes, as a shell runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ccgformat as ccg
from ccgformat.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import synth  # noqa: E402

#: this checkout's ``ccg``, run from the checkout's root so that its package is imported
CCG = [sys.executable, "-m", "ccgformat.cli"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A synthetic trace as .npz and as an archive."""
    folder = tmp_path_factory.mktemp("shell")
    definitions, events = synth.synthesize(2, 600, jitter=0.2, seed=5, batch_size=200)
    npz = folder / "trace.npz"
    synth.write_npz(npz, definitions, events)
    archive = folder / "trace.ccg"
    ccg.convert(npz, archive)
    return {"npz": npz, "ccg": archive, "folder": folder}


def commands(files, json_option: bool) -> dict[str, list[str]]:
    """Every command that prints data, with arguments that make it print some."""
    archive, folder = str(files["ccg"]), files["folder"]
    extra = ["--json"] if json_option else []
    return {
        "convert": ["convert", str(files["npz"]), str(folder / f"again{len(extra)}.ccg"), *extra],
        "merge": ["merge", archive, "-o", str(folder / f"merged{len(extra)}.ccg"), *extra],
        "info": ["info", archive, *extra],
        "verify": ["verify", archive, *extra],
        "cat": ["cat", archive, *extra],
        "export": ["export", archive, str(folder / f"out{len(extra)}.json"), *extra],
        "profile": ["profile", archive, *extra],
        "messages": ["messages", archive, *extra],
        "timeline": ["timeline", archive, "--width", "50", "--json"],  # JSON is its text output
        "aggregate": ["aggregate", archive, "--slices", "20", *extra],
        "overview": ["overview", archive, "--slices", "10", *extra],
        "calltree": ["calltree", archive, *extra],
        "topology": ["topology", archive, *extra],
        "logical": ["logical", archive, *extra],
        "demo": ["demo", "--out", str(folder / f"demo{len(extra)}"), *extra],
    }


def test_every_command_is_tried_here(files):
    """A new command gets its closed-pipe and JSON test: the list above names them all."""
    choices = next(action.choices for action in build_parser()._actions if action.dest == "command")
    assert sorted(choices) == sorted(commands(files, False))


def test_every_command_has_json():
    choices = next(action.choices for action in build_parser()._actions if action.dest == "command")
    missing = [name for name, parser in choices.items()
               if "--json" not in {option for action in parser._actions for option in action.option_strings}]
    assert missing == []


@pytest.mark.parametrize("name", ["convert", "merge", "info", "verify", "cat", "export", "profile", "messages", "timeline",
                                  "aggregate", "overview", "calltree", "topology", "logical", "demo"])
def test_a_closed_pipe_ends_quietly(files, name):
    """The reader is gone before the command writes (``| head`` that has read enough):
    status 0, nothing on stderr."""
    assert into_a_closed_pipe(commands(files, False)[name]) == (0, "")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["profile", "--help"]])
def test_help_and_version_into_a_closed_pipe_end_quietly(argv):
    assert into_a_closed_pipe(argv) == (0, "")


def into_a_closed_pipe(argv: list[str]) -> tuple[int, str]:
    """Run ``ccg ARGV`` with its standard output a pipe whose reader is gone; its exit
    status and standard error."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(CCG + argv, stdout=write, stderr=subprocess.PIPE, cwd=ROOT, timeout=120)
    finally:
        os.close(write)
    return done.returncode, done.stderr.decode()


def test_head_reads_the_first_lines(files):
    """``ccg cat ARCHIVE | head -3``: the lines head wanted, then a quiet end."""
    process = subprocess.Popen(CCG + ["cat", str(files["ccg"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=ROOT)
    lines = [process.stdout.readline() for _ in range(3)]
    process.stdout.close()
    error = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=120) == 0 and error == b""
    with ccg.open(files["ccg"]) as archive:
        _, batch = next(archive.events(batch_size=3))
    assert [int(line.split()[1]) for line in lines] == batch.time.tolist()


@pytest.mark.parametrize("name", ["convert", "merge", "info", "verify", "cat", "export", "profile", "messages", "timeline",
                                  "aggregate", "overview", "calltree", "topology", "logical", "demo"])
def test_json_output_parses(files, name):
    done = subprocess.run(CCG + commands(files, True)[name], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    documents = [json.loads(line) for line in done.stdout.splitlines()]
    assert documents
    if name == "cat":
        with ccg.open(files["ccg"]) as archive:
            assert len(documents) == archive.stats.events
    else:
        assert len(documents) == 1 and isinstance(documents[0], dict)
    if name == "convert":
        assert documents[0]["events"] == 1200 and Path(documents[0]["target"]).exists()
    if name == "export":
        assert documents[0]["format"] == "chrome" and Path(documents[0]["target"]).exists()
    if name == "merge":
        assert documents[0]["events"] == 1200 and Path(documents[0]["target"]).exists()


def _latest_versions() -> dict[int, int]:
    """Per major version, the latest minor version of the spec's change log."""
    latest: dict[int, int] = {}
    for major, minor in re.findall(r"^\| (\d+)\.(\d+) \| \d{4}-\d\d-\d\d \|", (ROOT / "spec" / "format.md").read_text(),
                                   re.MULTILINE):
        latest[int(major)] = max(latest.get(int(major), 0), int(minor))
    return latest


def test_version_names_the_package_and_the_format_versions():
    done = subprocess.run(CCG + ["--version"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == f"ccg {ccg.__version__}"
    latest = _latest_versions()
    assert sorted(latest) == [1, 2]
    for major, minor in latest.items():
        line = next(line for line in lines[1:] if f"(major {major})" in line)
        assert f"reads {major}.0-{major}.{minor}" in line and f"writes {major}.0-{major}.{minor}" in line


def test_version_matches_the_files_written(files):
    """The archive just written has a version within what ``--version`` says is written."""
    done = subprocess.run(CCG + ["--version"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    with ccg.open(files["ccg"]) as archive:
        major, minor = archive.version
    line = next(line for line in done.stdout.splitlines() if f"(major {major})" in line)
    last = int(re.search(rf"writes {major}\.0-{major}\.(\d+)", line).group(1))
    assert 0 <= minor <= last
