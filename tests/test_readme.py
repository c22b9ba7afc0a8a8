"""The README runs as written: every Python block and every shell line, in document order,
in a temporary folder - `ccg` and `python` being this checkout's - with the synthetic
trace the README makes and, for the lines that convert a trace of another format, a
corpus trace under the README's file name. The only lines not run are those in `NOT_RUN`,
each with the reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ccgformat

from .corpus import corpus_path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: README shell lines a test cannot run, and why.
NOT_RUN = {
    "python -m pip install -e '.[dev]'": "installs the package into the environment this suite runs in",
    "python -m pytest": "runs this suite itself (.ci/run does)",
    "CCGFORMAT_BACKEND=python python -m pytest": "runs this suite itself (.ci/run does)",
}

#: The README's input files of other formats: a corpus trace (a file, or a folder's files) each.
INPUTS = {
    "scorep-run": ("otf2", "pipit", "pipit", "tests", "data", "ping-pong-otf2"),
    "app.otf": ("otf", "otf-vis", "otf_traces", "hello"),
    "simgrid.trace": ("paje", "pajeng", "traces", "states.trace"),
    "trace.elg": ("epilog", "GENERATED-by-scalasca-1.4-elg_rw", "ref_merged_le.elg"),
    "profile.json.gz": ("chrome-json", "otf2_cli_chrome_trace_converter", "tests", "data",
                        "memcpy-host-device.rocprofiler.json.gz"),
}

#: What the README's lines leave behind.
OUTPUTS = ("demo/demo.ccg", "demo/overview.svg", "fig41.ccg", "trace.npz", "trace.ccg", "lossy.ccg", "events.csv",
           "part0.ccg", "part1.ccg", "merged.ccg", "run.ccg", "app.ccg", "sim.ccg",
           "elg.ccg", "prof.ccg", "run.otf2/traces.otf2", "sim.trace", "run.json.gz", "timeline.svg", "out.svg",
           "depth.png", "platform.trace", "platform.ccg", "topology.dot", "logical.svg", "logical.png",
           "logical.otf2/traces.otf2", "logical-run.otf2/traces.otf2", "run-mpi.ccg")


def blocks() -> list[tuple[str, str]]:
    """(language, text) of every python and sh block, in order."""
    return re.findall(r"```(python|sh)\n(.*?)```", README.read_text(), re.S)


def shell_lines(text: str) -> list[str]:
    """The commands of a sh block, without their comments."""
    return [line for line in (re.sub(r"\s+#.*$", "", raw).strip() for raw in text.splitlines()) if line]


def provide_inputs(folder: Path) -> None:
    """The corpus traces under the README's names (an OTF master file's streams share its stem)."""
    for name, parts in INPUTS.items():
        source = corpus_path(*parts)
        if name == "scorep-run":
            shutil.copytree(source, folder / name)
        elif source.is_dir():
            stem = name.split(".")[0]
            for file in source.iterdir():
                shutil.copy(file, folder / (stem + file.name[file.name.index("."):]))
        else:
            shutil.copy(source, folder / name)


def commands(folder: Path) -> dict[str, str]:
    """An environment whose ``ccg`` and ``python`` are this checkout's."""
    bin_ = folder / ".bin"
    bin_.mkdir()
    for name, target in (("python", f'exec "{sys.executable}" "$@"'),
                         ("ccg", f'exec "{sys.executable}" -m ccgformat.cli "$@"')):
        (bin_ / name).write_text(f"#!/bin/sh\n{target}\n")
        (bin_ / name).chmod(0o755)
    (folder / "tools").symlink_to(ROOT / "tools")
    return dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))


def test_not_run_lines_are_in_the_readme():
    lines = {line for language, text in blocks() if language == "sh" for line in shell_lines(text)}
    assert set(NOT_RUN) <= lines, f"NOT_RUN names lines the README no longer has: {set(NOT_RUN) - lines}"


def test_every_block_and_line_runs(tmp_path, monkeypatch, capsys):
    provide_inputs(tmp_path)
    env = commands(tmp_path)
    monkeypatch.chdir(tmp_path)
    for language, text in blocks():
        if language == "python":
            exec(compile(text, str(README), "exec"), {})
            continue
        for line in shell_lines(text):
            if line in NOT_RUN:
                continue
            done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"README line failed: {line}\n{done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr, line
    printed = capsys.readouterr().out
    assert "ArchiveStats(events=7" in printed and "size=64" in printed  # the quickstart's own output
    missing = [name for name in OUTPUTS if not (tmp_path / name).is_file()]
    assert not missing, f"the README's lines did not write {missing}"
    with ccgformat.open(tmp_path / "lossy.ccg") as archive:  # a header and every event of the lossy archive
        assert len((tmp_path / "events.csv").read_text().splitlines()) == 1 + archive.stats.events > 4 * 19000
