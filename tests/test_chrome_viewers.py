"""The Chrome export of every corpus trace, read by real offline viewers: speedscope in
headless Chromium (its importer must log no warning, and its call table must show the
calls) and the ``chrome-trace`` parser in Node (it must pair every B with its E: each thread with
calls reported, under the names of its calls).
The viewers come from tools/install-reference-tools (npm packages in tools/viewers)."""

from __future__ import annotations

import functools
import html.parser
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ccgformat
from ccgformat.cli import main
from ccgformat.errors import CcgError
from ccgformat.formats import detect
from ccgformat.model import EventKind

from .chromium import console_messages, headless
from .corpus import ROOT, corpus_available, corpus_root, require_installed, require_tool

VIEWERS = ROOT / "tools" / "viewers" / "node_modules"
SPEEDSCOPE = VIEWERS / "speedscope" / "dist" / "release"
#: The corpus trace whose definitions are missing on purpose (its README says so).
BROKEN = "otf/ompi/ompi/contrib/vt/vt/extlib/otf/tests/read_from_buffer/hello_world.otf"


def corpus_traces() -> list[Any]:
    """Every trace file of the corpus (the files a format is detected in), relative to it."""
    root = corpus_root()
    found = []
    for path in sorted(root.rglob("*")) if corpus_available() else ():
        try:
            if path.is_file() and detect(path) and path.relative_to(root).as_posix() != BROKEN:
                found.append(path.relative_to(root).as_posix())
        except CcgError:
            continue
    return found or [pytest.param("", marks=pytest.mark.skip(reason=f"trace corpus not available: {root}"))]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The Chrome export of a corpus trace (converted with the library, exported with
    ``ccg export --to chrome``), after checking that it holds every call of the archive."""
    folder = tmp_path_factory.mktemp("exports")

    @functools.cache
    def exported(trace: str) -> Path:
        archive, target = folder / f"{trace.replace('/', '_')}.ccg", folder / f"{trace.replace('/', '_')}.json"
        ccgformat.convert(corpus_root() / trace, archive)
        assert main(["export", str(archive), str(target), "--to", "chrome", "--quiet"]) == 0
        document = json.loads(target.read_text())
        with ccgformat.open(archive) as opened:
            calls = sum(int((batch.kind == EventKind.ENTER).sum())
                        for location in opened.locations for batch in opened.location(location).events())
        assert sum(1 for e in document["traceEvents"] if e["ph"] in ("B", "X")) == calls
        return target

    return exported


def js(value: Any) -> str:
    """A pid or tid as JavaScript turns it into text (viewers key threads by that text)."""
    return "undefined" if value is None else str(value)


def thread_calls(document: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """The names of the calls (B and X events) of each (pid, tid), as text."""
    calls: dict[tuple[str, str], set[str]] = {}
    for event in document["traceEvents"]:
        if event["ph"] in ("B", "X"):
            calls.setdefault((js(event.get("pid")), js(event.get("tid"))), set()).add(event["name"])
    return calls


# --------------------------------------------------------------------------- speedscope

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """Chromium, and a folder served over HTTP on 127.0.0.1 (speedscope under /speedscope/)
    and its URL."""
    chromium = require_tool("chromium")
    require_installed(SPEEDSCOPE / "index.html",
                      f"speedscope is not installed in {VIEWERS} (run tools/install-reference-tools)")
    folder = tmp_path_factory.mktemp("served")
    (folder / "speedscope").symlink_to(SPEEDSCOPE, target_is_directory=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield chromium, folder, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


class _SymbolNames(html.parser.HTMLParser):
    """The texts of the cells in the column headed "Symbol Name" (speedscope's sandwich table)."""

    def __init__(self) -> None:
        super().__init__()
        self.column: str | None = None
        self.cell: str | None = None
        self.text: list[str] = []
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("th", "td"):
            self.cell, self.text = f"{tag} {dict(attrs).get('class')}", []

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("th", "td") or self.cell is None:
            return
        kind, css = self.cell.split(" ", 1)
        text = "".join(self.text)
        if kind == "th" and text == "Symbol Name":
            self.column = css
        elif kind == "td" and css == self.column:
            self.names.append(text)
        self.cell = None


def speedscope(trace_file: Path, served: tuple[str, Path, str], profile: Path) -> tuple[list[str], str]:
    """Load ``trace_file`` in speedscope (sandwich view) in headless Chromium: the console
    messages and the page."""
    chromium, folder, url = served
    shutil.copy(trace_file, folder / "trace.json")
    command = headless(chromium, profile, "--virtual-time-budget=10000", "--dump-dom",
                       f"{url}/speedscope/index.html#profileURL={url}/trace.json&view=sandwich")
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return console_messages(done.stderr), done.stdout


@pytest.mark.parametrize("trace", corpus_traces())
def test_speedscope_reads_the_export_without_warnings(export, server, tmp_path, trace):
    path = export(trace)
    calls = thread_calls(json.loads(path.read_text()))
    if not calls:
        return      # the export rightly has no calls (checked by `export`): nothing to show
    for attempt in range(3):    # the rows come an animation frame after the import: a dump may precede it
        console, page = speedscope(path, server, tmp_path / f"profile{attempt}")
        table = _SymbolNames()
        table.feed(page)
        if table.names:
            break
    starts = [i for i, m in enumerate(console) if m == "Importing as Trace Event Format profile"]
    ends = [i for i, m in enumerate(console) if m.startswith("import: ")]
    assert starts and ends, f"speedscope did not import the file; console: {console}"
    warnings = console[starts[0] + 1:ends[0]]
    assert not warnings, f"speedscope's importer warned {len(warnings)} times: {warnings[:5]}"
    assert table.names, "speedscope shows no call table"
    # the table is of the first profile (speedscope orders threads by zero-padded "pid:tid");
    # a symbol is a call's name, followed by its args as JSON if it has any
    names = calls[min(calls, key=lambda key: [text.rjust(10, "0") for text in key])]
    assert all(symbol in names or symbol.split(" {", 1)[0] in names for symbol in table.names), table.names


# --------------------------------------------------------------------------- chrome-trace

_CHROME_TRACE = ("const {parseObject} = require('chrome-trace');"
                 "const trace = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
                 "process.stdout.write(JSON.stringify(parseObject(trace).eventTypeTime));")


@pytest.mark.parametrize("trace", corpus_traces())
def test_chrome_trace_parser_sees_the_calls_of_every_thread(export, trace):
    """chrome-trace turns each B/E pair into a complete event (it skips events without a
    name) and reports self time per name for every thread that has one."""
    node = require_tool("node")
    require_installed(VIEWERS / "chrome-trace",
                      f"chrome-trace is not installed in {VIEWERS} (run tools/install-reference-tools)")
    path = export(trace)
    done = subprocess.run([node, "-e", _CHROME_TRACE, str(path)], cwd=VIEWERS.parent, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)      # {"pid:tid": {name: self time in ms}}
    calls = {f"{pid}:{tid}": names for (pid, tid), names in thread_calls(json.loads(path.read_text())).items()}
    assert set(seen) == set(calls)
    for thread, times in seen.items():
        assert set(times) <= calls[thread], thread
