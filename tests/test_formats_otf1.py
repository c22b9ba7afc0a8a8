"""OTF v1 import: the corpus against ``otfprint`` (also after ``otfmerge`` rewrote it in the
long form, compressed, or as other streams), bad input, and traces written from the
specification by a test-only writer."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.errors import FormatError
from ccgformat.formats import detect, read
from ccgformat.model import Definitions, EventBatch, EventKind

from .corpus import corpus_path, require_tool

OTF = ("otf", "otf-vis", "otf_traces")
BUFFER_TEST = ("otf", "ompi", "ompi", "contrib", "vt", "vt", "extlib", "otf", "tests", "read_from_buffer")
CORPUS = {"hello": OTF + ("hello", "hello_world.otf"), "philosophers": OTF + ("philosophers", "philosophers.otf"),
          "out": OTF + ("out", "out.otf"), "read_from_buffer": BUFFER_TEST + ("hello_world.otf",)}


def copy_trace(master: Path, folder: Path) -> Path:
    """A writable copy of the folder holding ``master``."""
    target = folder / "trace"
    shutil.copytree(master.parent, target)
    for file in target.iterdir():
        file.chmod(0o644)
    return target / master.name


def corpus_master(name: str, tmp_path: Path) -> Path:
    """The corpus trace's master file; the read_from_buffer copy gets its definitions back."""
    master = corpus_path(*CORPUS[name])
    if name == "read_from_buffer":
        master = copy_trace(master, tmp_path)
        master.with_name("hello_world.0.def--missing").rename(master.with_name("hello_world.0.def"))
    return master


# --------------------------------------------------------------------------- otfprint

_EVENT_LINE = re.compile(r"\(#\d+\)\s+(\d+) (\w+): (.*)")
_DEF_LINE = re.compile(r"\(#\d+\)\s+(Def\w+): (.*)")
_DEF_FIELDS = {
    "DefProcess": re.compile(r'stream \d+, process (\d+), name "(.*)", parent (\d+)'),
    "DefFunction": re.compile(r'stream \d+, function (\d+), name "(.*)", group \d+, source \d+'),
    "DefTimerResolution": re.compile(r"stream \d+, TicksPerSecond (\d+)"),
    "DefProcessGroup": re.compile(r'stream \d+, group (\d+), name "(.*)", procs ?(.*)'),
}


def _value(text: Any) -> str:
    return f"{float(text):.4g}"


def _text(raw: bytes) -> str:
    """otfprint copies names byte for byte; the importer reads them as UTF-8, else Latin-1."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def otfprint(master: Path) -> tuple[dict[str, list[tuple]], dict[int, list[tuple]]]:
    """otfprint's definitions (by record) and event and marker lines (by process)."""
    output = subprocess.run([require_tool("otfprint"), str(master)], capture_output=True, check=True).stdout
    definitions: dict[str, list[tuple]] = {}
    events: dict[int, list[tuple]] = {}
    section = ""
    for raw in output.splitlines():
        line = _text(raw).strip()
        if line in ("definitions:", "events:", "statistics:", "snapshots:", "markers:"):
            section = line
            continue
        match = _DEF_LINE.fullmatch(line)
        if section == "definitions:" and match and match[1] in _DEF_FIELDS:
            definitions.setdefault(match[1], []).append(_DEF_FIELDS[match[1]].fullmatch(match[2]).groups())
        match = _EVENT_LINE.fullmatch(line)
        if section in ("events:", "markers:") and match:
            time, record, text = int(match[1]), match[2], match[3]
            text, _, pairs = text.partition(", KeyValue: ")
            kv = {int(k): _value(v) for k, v in (p.split(":", 1) for p in pairs.split(", ") if p)}
            if record == "Marker":
                fields = dict(zip(("ID", "process", "text"),
                                  re.fullmatch(r'ID (\d+), process (\d+), text "(.*)"', text).groups(), strict=True))
            else:
                fields = dict(part.split(" ", 1) for part in text.split(", "))
            events.setdefault(int(fields.pop("process")), []).append((time, record, fields, kv))
    return definitions, events


def _kv_value(kind: int, hex_value: str) -> str:
    if kind == 10:  # OTF_DOUBLE
        return _value(struct.unpack(">d", bytes.fromhex(hex_value.zfill(16)))[0])
    return _value(int(hex_value, 16))


def as_printed(definitions: Definitions, locations: Iterable[tuple[int, Iterable[EventBatch]]]
               ) -> dict[int, list[tuple]]:
    """The imported events mapped back through the definitions to otfprint's fields."""
    ext = definitions.extensions["otf1"]
    out: dict[int, list[tuple]] = {}
    for location, batches in locations:
        items = out.setdefault(ext["process"][location], [])
        attributes: dict[str, Any] = {}
        for batch in batches:
            for event in batch.rows():
                kind = EventKind(event.kind)
                source = str(attributes.get("scl", 0))
                if kind == EventKind.GENERIC:
                    name, fields = definitions.strings[event.ref], json.loads(definitions.strings[event.value])
                    if name == "otf1:attributes":
                        attributes = fields
                        continue
                    record = name.removeprefix("otf1:")
                    assert record in ("Enter", "Leave", "BeginProcess", "EndProcess"), name
                    printed = {} if record.endswith("Process") else {
                        "function": str(fields.get("function", 0)), "source": str(fields.get("scl", 0))}
                elif kind in (EventKind.ENTER, EventKind.LEAVE):
                    record = "Enter" if kind == EventKind.ENTER else "Leave"
                    printed = {"function": str(attributes.get("function", ext["function"][event.ref])),
                               "source": source}
                elif kind == EventKind.METRIC:
                    record = "Counter"
                    printed = {"counter": str(ext["counter"][event.ref]), "value": str(event.value % (1 << 64))}
                else:
                    assert kind == EventKind.MARKER, kind
                    record = "Marker"
                    printed = {"ID": str(ext["markers"][event.ref]["marker"]), "text": definitions.strings[event.value]}
                kv = {k: _kv_value(t, v) for k, t, v, *_ in attributes.get("kv", [])}
                items.append((event.time, record, printed, kv))
                attributes = {}
    return {process: items for process, items in out.items() if items}  # otfprint lists events only


def assert_same_as_otfprint(definitions: Definitions, events: dict[int, list[tuple]], master: Path) -> None:
    printed_definitions, printed = otfprint(master)
    assert {p: [e for e in items if e[1] != "Marker"] for p, items in events.items()} == \
        {p: [e for e in items if e[1] != "Marker"] for p, items in printed.items()}
    assert {p: [e for e in items if e[1] == "Marker"] for p, items in events.items()} == \
        {p: [e for e in items if e[1] == "Marker"] for p, items in printed.items()}
    ext = definitions.extensions["otf1"]
    processes = len(definitions.locations)  # the process groups' system-tree nodes follow the processes'
    assert [(str(ext["process"][i]), loc.name,
             str(ext["process"][node.parent] if node.parent is not None and node.parent < processes else 0))
            for i, (loc, node) in enumerate(zip(definitions.locations, definitions.system_tree[:processes],
                                                strict=True))] == printed_definitions["DefProcess"]
    assert [(str(g), c.name, ", ".join(str(ext["process"][m]) for m in c.members))
            for g, c in zip(ext["process_group"], definitions.communicators, strict=True)] == \
        printed_definitions.get("DefProcessGroup", [])
    assert [(str(f), r.name) for f, r in zip(ext["function"], definitions.regions, strict=True)] == \
        [f[:2] for f in printed_definitions["DefFunction"]]
    assert [(str(definitions.timer_resolution),)] == printed_definitions["DefTimerResolution"]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_archive_matches_otfprint(name: str, tmp_path: Path) -> None:
    master = corpus_master(name, tmp_path)
    assert detect(master) == "otf1"
    target = tmp_path / "trace.ccg"
    report = ccgformat.convert(master, target)
    assert report.format == "otf1"
    with ccgformat.open(target) as archive:
        definitions = archive.definitions
        events = as_printed(definitions, ((i, archive.location(i).events()) for i in archive.locations))
    assert_same_as_otfprint(definitions, events, master)


@pytest.mark.parametrize("options", [("--long", "-n", "1"), ("-z", "6", "-n", "0")], ids=["long", "compressed"])
@pytest.mark.parametrize("name", ["hello", "out", "read_from_buffer"])
def test_otfmerge_rewrites_import_alike(name: str, options: tuple[str, ...], tmp_path: Path) -> None:
    master = corpus_master(name, tmp_path)
    merged = tmp_path / "merged"
    merged.mkdir()
    subprocess.run([require_tool("otfmerge"), *options, "-o", str(merged / "m"), str(master)], check=True,
                   capture_output=True)
    written = sorted(p.name for p in merged.iterdir())
    if "--long" in options:
        assert b"DEFPROCESS" in (merged / "m.0.def").read_bytes()
    else:
        assert "m.0.def.z" in written and "m.1.events.z" in written
    definitions, locations = read(merged / "m.otf")
    assert_same_as_otfprint(definitions, as_printed(definitions, locations), master)


def test_missing_global_definitions_are_named() -> None:
    master = corpus_path(*CORPUS["read_from_buffer"])
    with pytest.raises(FormatError, match="global definition file") as caught:
        read(master)
    assert caught.value.path.endswith("read_from_buffer/hello_world.0.def")


def test_philosophers_threads_form_a_system_tree(tmp_path: Path) -> None:
    definitions, _ = read(corpus_master("philosophers", tmp_path))
    tree = definitions.system_tree
    assert [(n.name, n.kind, n.parent) for n in tree[:2]] == [("Programme", "process", None), ("Thread0", "thread", 0)]
    assert [loc.parent for loc in definitions.locations] == list(range(6))
    assert definitions.timer_resolution == 10**9


# --------------------------------------------------------------------------- bad input

def _edit(file: Path, old: bytes, new: bytes) -> int:
    """Replace the first ``old`` in ``file``; the line number where it was."""
    data = file.read_bytes()
    at = data.index(old)
    file.write_bytes(data[:at] + new + data[at + len(old):])
    return data[:at].count(b"\n") + 1


def _read_all(master: Path) -> None:
    _, locations = read(master, "otf1")
    for _, batches in locations:
        for _ in batches:
            pass


@pytest.mark.parametrize("file, old, new, reason", [
    ("hello_world.1.events", b"E1\n", b"E1Q\n", "unparseable event record"),
    ("hello_world.1.events", b"*1\n", b"*63\n", "process 99 is not defined"),
    ("hello_world.1.events", b"E1\n", b"E63\n", "function 99 is not defined"),
    ("hello_world.1.events", b"CNT5V0\n", b"CNT6V0\n", "counter 6 is not defined"),
    ("hello_world.1.events", b"K2aY8V1\n", b"K2bY8V1\n", "key 43 is not defined"),
    ("hello_world.1.events", b"L3\n", b"L2\n", "Leave of function 2 while function 3 is open"),
    ("hello_world.1.events", b"2ba1\n", b"2000\n", "smaller than the previous"),
    ("hello_world.1.events", b"CNT5V0\n", b"COPE1\n", "collective operation 1 ends but never began"),
    ("hello_world.1.events", b"2ba1\n", b"2bX1\n", "unparseable time stamp"),
    ("hello_world.0.def", b'DF1G10NM"main"\n', b'DF1G10NM"main\n', "unparseable definition record"),
    ("hello_world.0.def", b'DP2NM"Process 2"\n', b'DP2NM"Process 2"PT7\n', "parent process 7 is not defined"),
    ("hello_world.0.def", b'DP2NM"Process 2"\n', b'DP1NM"Process 2"\n', "DefProcess 1 is defined twice"),
    ("hello_world.0.marker", b"MS65T2710P1", b"MS65T2710P9", "process 9 is not defined"),
    ("hello_world.otf", b"2:2\n", b"2:1\n", "listed for streams"),
    ("hello_world.otf", b"2:2\n", b"2;2\n", "not a master control line"),
])
def test_bad_records_name_file_and_line(file: str, old: bytes, new: bytes, reason: str, tmp_path: Path) -> None:
    master = copy_trace(corpus_path(*CORPUS["hello"]), tmp_path)
    line = _edit(master.with_name(file), old, new)
    with pytest.raises(FormatError, match=reason) as caught:
        _read_all(master)
    assert caught.value.path == str(master.with_name(file))
    assert caught.value.line == line


def test_events_of_one_process_in_two_streams(tmp_path: Path) -> None:
    master = copy_trace(corpus_path(*CORPUS["hello"]), tmp_path)
    _edit(master.with_name("hello_world.2.events"), b"*2\n", b"*1\n")  # line 2; its first record is on line 3
    with pytest.raises(FormatError, match="process 1 has events in more than one stream") as caught:
        _read_all(master)
    assert (caught.value.path, caught.value.line) == (str(master.with_name("hello_world.2.events")), 3)


def test_missing_stream_file(tmp_path: Path) -> None:
    master = copy_trace(corpus_path(*CORPUS["hello"]), tmp_path)
    master.with_name("hello_world.2.events").unlink()
    with pytest.raises(FormatError, match="event file of stream 2 is missing") as caught:
        _read_all(master)
    assert caught.value.path.endswith("hello_world.2.events")


def _deflate(data: bytes, terminated: bool) -> bytes:
    """zlib data as OTF writes it: full flushes, and usually no final block."""
    compressor = zlib.compressobj()
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if terminated else zlib.Z_FULL_FLUSH)


@pytest.mark.parametrize("terminated", [False, True])
def test_compressed_stream_and_its_truncation(terminated: bool, tmp_path: Path) -> None:
    master = copy_trace(corpus_path(*CORPUS["hello"]), tmp_path)
    plain = master.with_name("hello_world.1.events")
    expected = as_printed(*read(master))
    compressed = plain.with_name(plain.name + ".z")
    compressed.write_bytes(_deflate(plain.read_bytes(), terminated))
    plain.unlink()
    assert as_printed(*read(master)) == expected
    compressed.write_bytes(compressed.read_bytes()[:-7])
    with pytest.raises(FormatError, match="truncated zlib stream") as caught:
        _read_all(master)
    assert caught.value.path == str(compressed)


def test_sniff_needs_master_content_and_its_files(tmp_path: Path) -> None:
    master = copy_trace(corpus_path(*CORPUS["hello"]), tmp_path)
    for name in ("hello_world.1.events", "hello_world.0.def", "hello_world.0.marker"):
        with pytest.raises(FormatError, match="unrecognised"):
            detect(master.with_name(name))
    renamed = master.rename(master.with_name("hello_world.master"))
    with pytest.raises(FormatError, match="unrecognised"):
        detect(renamed)  # no hello_world.master.0.def next to it
    (tmp_path / "t.0.def").write_bytes(b'DTR3e8\n')
    (tmp_path / "t").write_bytes(b"1:" + b",".join(b"%x" % p for p in range(1, 3000)) + b"\n")
    assert detect(tmp_path / "t") == "otf1"  # no .otf suffix, and a line longer than the sniffed head


# --------------------------------------------------------------------------- generated traces

GROUP, COUNTER, OPERATION, KEY, MARKER_ID = 0x64, 7, 0x32, 0x2a, 0x41
ENTER, LEAVE, SEND, RECV = EventKind.ENTER, EventKind.LEAVE, EventKind.SEND, EventKind.RECV
COLL_BEGIN, COLL_END, METRIC, GENERIC, MARKER = (EventKind.COLL_BEGIN, EventKind.COLL_END, EventKind.METRIC,
                                                 EventKind.GENERIC, EventKind.MARKER)


def record_line(record: str, f: dict[str, int], long: bool) -> str:
    """One event record of the OTF specification, short or long form."""
    scl = (f" SCL {f['scl']:x}" if long else f"X{f['scl']:x}") if f.get("scl") else ""
    if record == "Enter":
        return (f"ENTER {f['function']:x}" if long else f"E{f['function']:x}") + scl
    if record == "Leave":
        function = f"{f['function']:x}" if f.get("function") or scl else ""
        return ("LEAVE " if long else "L") + function + scl
    if record in ("SendMsg", "RecvMsg"):
        peer = f["receiver"] if record == "SendMsg" else f["sender"]
        keyword = ("SEND" if record == "SendMsg" else "RECEIVE") if long else record[0]
        pattern = "{} {:x} LEN {:x} TAG {:x} COMM {:x}" if long else "{}{:x}L{:x}T{:x}C{:x}"
        return pattern.format(keyword, peer, f["length"], f["tag"], f["communicator"])
    if record == "Counter":
        return f"COUNTER {f['counter']:x} VALUE {f['value']:x}" if long else f"CNT{f['counter']:x}V{f['value']:x}"
    if record == "CollectiveOperation":
        pattern = ("COLLOP {:x} COMM {:x} ROOT {:x} SENT {:x} RECVD {:x} DUR {:x}" if long
                   else "COP{:x}C{:x}RT{:x}S{:x}R{:x}D{:x}")
        return pattern.format(f["operation"], f["communicator"], f["root"], f["sent"], f["received"], f["duration"])
    if record == "BeginCollectiveOperation":
        pattern = ("COLLOPBEGIN {:x} HANDLEID {:x} COMM {:x} ROOT {:x} SENT {:x} RECVD {:x}" if long
                   else "COPB{:x}H{:x}C{:x}RT{:x}S{:x}R{:x}")
        return pattern.format(f["operation"], f["matching_id"], f["communicator"], f["root"], f["sent"],
                              f["received"])
    if record == "EndCollectiveOperation":
        return f"COLLOPEND {f['matching_id']:x}" if long else f"COPE{f['matching_id']:x}"
    if record == "KeyValue":
        return f"KEY {f['key']:x} TYPE 8 VALUE {f['value']:x}" if long else f"K{f['key']:x}Y8V{f['value']:x}"
    return {"BeginProcess": ("PB", "PROCESSBEGIN"), "EndProcess": ("PE", "PROCESSEND")}[record][long]


def definition_lines(processes: dict[int, int], functions: int, long: bool) -> list[str]:
    """Global definitions: processes (with parents), functions, group, counter, collective, key."""
    d = "DEF" if long else "D"
    kw = {"name": " NAME " if long else "NM", "parent": " PARENT " if long else "PT", "group": " GROUP " if long
          else "G", "members": " MEMBERS " if long else "M", "type": " TYPE " if long else "Y",
          "properties": " PROPERTIES " if long else "P", "unit": " UNIT " if long else "U",
          "tag": " TAG " if long else "T", "sep": " " if long else ""}
    s = kw["sep"]
    lines = [f'{d}{"VERSION" if long else "V"}{s}1.c.5"test"', f'{d}{"TIMERRESOLUTION" if long else "TR"}{s}f4240']
    for process, parent in processes.items():
        lines.append(f'{d}{"PROCESS" if long else "P"}{s}{process:x}{kw["name"]}"p {process}"'
                     + (f'{kw["parent"]}{parent:x}' if parent else ""))
    lines.append(f'{d}{"FUNCTIONGROUP" if long else "FG"}{s}3{kw["name"]}"grp"')
    lines += [f'{d}{"FUNCTION" if long else "F"}{s}{f:x}{kw["group"]}3{kw["name"]}"f{f}"'
              for f in range(1, functions + 1)]
    members = "".join(f"{p:x}," for p in processes)
    lines.append(f'{d}{"PROCESSGROUP" if long else "PG"}{s}{GROUP:x}{kw["members"]}{members}{kw["name"]}"world"')
    lines.append(f'{d}{"COUNTER" if long else "CNT"}{s}{COUNTER:x}{kw["group"]}1{kw["name"]}"c"{kw["properties"]}0'
                 f'{kw["unit"]}"#"')
    lines.append(f'{d}{"COLLOP" if long else "CO"}{s}{OPERATION:x}{kw["name"]}"MPI_Bcast"{kw["type"]}2')
    lines.append(f'{d}{"KEYVALUE" if long else "K"}{s}{KEY:x}{kw["type"]}8{kw["name"]}"k"{kw["tag"]}"key"')
    return lines


@st.composite
def process_events(draw: st.DrawFn, process: int, processes: list[int], functions: int) -> list[tuple]:
    """(time, record, fields, key-values, expected events) of one process, well nested."""
    time = draw(st.integers(0, 1 << 40))
    out: list[tuple] = []
    matching = iter(range(1, 1 << 20))

    def tick() -> int:
        nonlocal time
        time += draw(st.sampled_from([0, 1, 7, 1000]))
        return time

    def emit(record: str, fields: dict[str, int], expected: list[tuple], attributes: dict[str, Any]) -> None:
        kv = draw(st.lists(st.integers(0, (1 << 64) - 1), max_size=1))
        if kv:
            attributes = {**attributes, "kv": [[KEY, 8, f"{kv[0]:x}"]]}
        at = tick()
        prefix = [(at, GENERIC, "otf1:attributes", attributes)] if attributes else []
        out.append((at, record, fields, kv, prefix + [(at, *e) for e in expected]))

    def body(depth: int) -> None:
        for _ in range(draw(st.integers(0, 3))):
            step = draw(st.sampled_from(["call", "send", "recv", "counter", "cop", "copb", "process"]))
            if step == "call" and depth < 3:
                f = draw(st.integers(1, functions))
                scl = draw(st.sampled_from([0, 0, 5]))
                emit("Enter", {"function": f, "scl": scl}, [(ENTER, f - 1)], {"scl": scl} if scl else {})
                body(depth + 1)
                named = draw(st.booleans())
                emit("Leave", {"function": f if named else 0}, [(LEAVE, f - 1)], {} if named else {"function": 0})
            elif step in ("send", "recv"):
                peer, tag = draw(st.sampled_from(processes)), draw(st.integers(0, 9))
                length = draw(st.integers(0, 1 << 31))
                fields = {"receiver" if step == "send" else "sender": peer, "length": length, "tag": tag,
                          "communicator": GROUP}
                emit("SendMsg" if step == "send" else "RecvMsg", fields,
                     [(SEND if step == "send" else RECV, processes.index(peer), 0, tag, length)], {})
            elif step == "counter":
                value = draw(st.integers(0, (1 << 64) - 1))
                emit("Counter", {"counter": COUNTER, "value": value},
                     [(METRIC, 0, 0, 0, 0, 0, value - (1 << 64) if value >> 63 else value)], {})
            elif step in ("cop", "copb"):
                root = draw(st.sampled_from([0] + processes))
                fields = {"operation": OPERATION, "communicator": GROUP, "root": root,
                          "sent": draw(st.integers(0, 99)), "received": draw(st.integers(0, 99))}
                end = (COLL_END, 0, 0, processes.index(root) if root else -1, fields["sent"], fields["received"])
                if step == "cop":
                    fields["duration"] = draw(st.integers(0, 50))
                    emit("CollectiveOperation", fields, [(COLL_BEGIN,), end], {"duration": fields["duration"]})
                else:
                    match = next(matching)
                    emit("BeginCollectiveOperation", {**fields, "matching_id": match}, [(COLL_BEGIN,)],
                         {"matching_id": match})
                    body(depth + 1)
                    emit("EndCollectiveOperation", {"matching_id": match}, [end], {})
            elif step == "process":
                record = draw(st.sampled_from(["BeginProcess", "EndProcess"]))
                emit(record, {}, [(GENERIC, f"otf1:{record}", {})], {})

    if draw(st.booleans()):  # the trace starts inside a function
        emit("Leave", {}, [(GENERIC, "otf1:Leave", {})], {})
    body(0)
    if draw(st.booleans()):  # and ends inside one
        f = draw(st.integers(1, functions))
        emit("Enter", {"function": f}, [(GENERIC, "otf1:Enter", {"function": f})], {})
    return out


@st.composite
def otf_traces(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    processes = {p: (1 if p > 1 and draw(st.booleans()) else 0) for p in range(1, count + 1)}
    functions = draw(st.integers(1, 3))
    events = {p: draw(process_events(p, list(processes), functions)) for p in processes}
    markers = [(draw(st.sampled_from([item[0] for item in events[p]]) if events[p] and draw(st.booleans())
                     else st.integers(0, 1 << 41)), p, draw(st.sampled_from(["x", "a, b"])))
               for p in processes if draw(st.booleans())]
    return {"processes": processes, "functions": functions, "events": events, "markers": markers,
            "long": draw(st.booleans()), "one_stream": draw(st.booleans()),
            "compression": draw(st.sampled_from([None, "full-flush", "finished"]))}


def write_trace(folder: Path, trace: dict[str, Any]) -> Path:
    """The trace as OTF v1 files (test-only writer following the specification)."""
    long, processes = trace["long"], list(trace["processes"])

    def write(name: str, lines: list[str]) -> None:
        data = "".join(line + "\n" for line in lines).encode()
        if trace["compression"] and not name.endswith(".otf"):
            (folder / (name + ".z")).write_bytes(_deflate(data, trace["compression"] == "finished"))
        else:
            (folder / name).write_bytes(data)

    streams = [processes] if trace["one_stream"] else [[p] for p in processes]
    write("t.otf", [f"{i + 1:x}:" + ",".join(f"{p:x}" for p in members) for i, members in enumerate(streams)])
    write("t.0.def", definition_lines(trace["processes"], trace["functions"], long))
    for i, members in enumerate(streams):
        records = sorted(((item[0], position, n, p, item) for position, p in enumerate(members)
                          for n, item in enumerate(trace["events"][p])), key=lambda r: r[:3])
        lines: list[str] = []
        for time, _, _, process, (_, record, fields, kv, _) in records:
            lines += [f"{time:x}", f"*{process:x}"]
            lines += [record_line("KeyValue", {"key": KEY, "value": v}, long) for v in kv]
            lines.append(record_line(record, fields, long))
        write(f"t.{i + 1:x}.events", lines)
    spots = [("MARKERSPOT {:x} TIME {:x} PROCESS {:x} VALUE \"{}\"" if long else 'MS{:x}T{:x}P{:x}V"{}"')
             .format(MARKER_ID, time, p, text) for time, p, text in trace["markers"]]
    write("t.0.marker", [('MARKERDEF {:x} NAME "m" TYPE 3' if long else 'MD{:x}NM"m"Y3').format(MARKER_ID)] + spots)
    return folder / "t.otf"


def expected_events(trace: dict[str, Any]) -> dict[int, list[tuple]]:
    """Per location: (time, kind, ref, comm, tag, size, recv_size, value) with GENERIC
    events as (time, GENERIC, kind name, fields)."""
    processes = list(trace["processes"])
    out: dict[int, list[tuple]] = {}
    for process in processes:
        events = [e for item in trace["events"][process] for e in item[4]]
        events += [(time, MARKER, 0, 0, 0, 0, 0, ("text", text)) for time, p, text in trace["markers"] if p == process]
        events.sort(key=lambda e: (e[0], e[1] == MARKER))
        if events:
            out[processes.index(process)] = [tuple(e) + (0,) * (8 - len(e)) if e[1] != GENERIC else e for e in events]
    return out


def imported_events(master: Path) -> dict[int, list[tuple]]:
    definitions, locations = read(master)
    out: dict[int, list[tuple]] = {}
    for location, batches in locations:
        rows = out.setdefault(location, [])
        for batch in batches:
            for e in batch.rows():
                if e.kind == GENERIC:
                    rows.append((e.time, GENERIC, definitions.strings[e.ref], json.loads(definitions.strings[e.value])))
                elif e.kind == MARKER:
                    rows.append((e.time, MARKER, e.ref, 0, 0, 0, 0, ("text", definitions.strings[e.value])))
                else:
                    rows.append((e.time, e.kind, e.ref, e.comm, e.tag, e.size, e.recv_size, e.value))
    return out


@settings(max_examples=40, deadline=None)
@given(otf_traces())
def test_written_traces_come_back(trace: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        master = write_trace(Path(folder), trace)
        assert detect(master) == "otf1"
        assert imported_events(master) == expected_events(trace)


@settings(max_examples=5, deadline=None)
@given(otf_traces())
def test_written_traces_survive_an_archive(trace: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        master = write_trace(Path(folder), trace)
        ccgformat.convert(master, Path(folder) / "t.ccg")
        with ccgformat.open(Path(folder) / "t.ccg") as archive:
            stored = {i: list(EventBatch.concat(list(archive.location(i).events())).rows())
                      for i in archive.locations}
        definitions, locations = read(master)
        expected = {i: [] for i in range(len(definitions.locations))}  # an archive lists every location
        expected.update({i: list(EventBatch.concat(list(batches)).rows()) for i, batches in locations})
        assert stored == expected
