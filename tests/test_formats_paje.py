"""Paje import and export: the corpus checked against pj_dump (pajeng) before and after a
Paje -> .ccg -> Paje round trip, synthetic Paje files, archives from other sources, and
bad input."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive import write_trace
from ccgformat.errors import FormatError
from ccgformat.formats import detect, read
from ccgformat.formats.paje import sniff
from ccgformat.model import Definitions, EventBatch, EventKind, Location, Metric, Region, SystemTreeNode

from .corpus import corpus_path, optional_tool, require_tool
from .traces import traces

K = EventKind
PAJENG = ("paje", "pajeng", "traces")
CORPUS = [PAJENG + ("states.trace",), PAJENG + ("links.trace",), PAJENG + ("events.trace",),
          PAJENG + ("variables.trace",), PAJENG + ("containers.trace",), PAJENG + ("native_sample.trace",),
          PAJENG + ("multiple_files", "root.trace"), ("paje", "paje", "Traces", "JavaTest.trace")]
JAVA = CORPUS[-1]
NATIVE = CORPUS[5]


# --------------------------------------------------------------------------- helpers

def pj_dump(path: Path, *options: str) -> list[str]:
    """pj_dump's lines, sorted (it prints containers in no particular order)."""
    done = subprocess.run([require_tool("pj_dump"), *options, str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, f"pj_dump failed on {path}: {done.stdout[-500:]}{done.stderr[-500:]}"
    return sorted(done.stdout.splitlines())


def jrastro_fixed(source: Path, target: Path) -> Path:
    """JavaTest.trace names the destroyed container's field ``Container`` (pj_dump wants
    ``Name``): a copy with that one header line renamed, so that pj_dump can read it."""
    lines, block = [], None
    for line in source.read_text().splitlines():
        words = line[1:].split() if line.startswith("%") else []
        if words[:1] == ["EventDef"]:
            block = words[1]
        if block == "PajeDestroyContainer" and words[:1] == ["Container"]:
            line = f"% Name {words[1]}"
        lines.append(line)
    target.write_text("\n".join(lines) + "\n")
    return target


def round_trip(source: Path, folder: Path, name: str = "out.trace") -> Path:
    archive = folder / "trace.ccg"
    ccgformat.convert(source, archive)
    with ccgformat.open(archive) as opened:
        return opened.export(folder / name)


def described(path: Path) -> tuple[Definitions, dict[str, list[tuple]]]:
    """A trace's events per location name, with table indexes replaced by what they name
    (tables are numbered in order of first use, which an export may change)."""
    definitions, streams = read(path)
    regions = definitions.extensions["paje"]["regions"]
    result = {}
    for location, batches in streams:
        rows = []
        for batch in batches:
            for event in batch.rows():
                ref, comm, value = event.ref, event.comm, event.value
                if event.kind in (K.ENTER, K.LEAVE):
                    ref = (definitions.regions[ref], tuple(regions[ref]))
                elif event.kind in (K.SEND, K.RECV):
                    ref, comm = definitions.locations[ref].name, definitions.communicators[comm].name
                elif event.kind == K.METRIC:
                    ref = definitions.metrics[ref]
                elif event.kind in (K.MARKER, K.GENERIC):
                    ref, value = definitions.strings[ref], definitions.strings[value]
                rows.append((event.time, K(event.kind).name, ref, comm, value))
        result[definitions.locations[location].name] = rows
    return definitions, result


def tree(definitions: Definitions) -> list[tuple]:
    nodes = definitions.system_tree
    return [(n.name, n.kind, None if n.parent is None else nodes[n.parent].name) for n in nodes]


def seconds(ticks: int, resolution: int) -> str:
    """Ticks as pj_dump -l 9 prints a date (the corpus has at most 9 decimals)."""
    scaled = ticks * 10 ** 9 // resolution
    return f"{scaled // 10 ** 9}.{scaled % 10 ** 9:09d}"


def expected_dump(path: Path) -> dict[str, list[str]]:
    """What pj_dump -l 9 must print for states, events, variable changes and links,
    computed from the imported events alone."""
    definitions, streams = read(path)
    res = definitions.timer_resolution
    container = [definitions.system_tree[loc.parent].name if loc.parent is not None else "0"
                 for loc in definitions.locations]
    lines: dict[str, list[str]] = defaultdict(list)
    sends, receives = [], []
    for location, batches in streams:
        stack: list[tuple[int, int]] = []
        for event in (e for batch in batches for e in batch.rows()):
            if event.kind == K.ENTER:
                stack.append((event.ref, event.time))
            elif event.kind == K.LEAVE:
                region, start = stack.pop()
                name = definitions.regions[region]
                lines["State"].append(f"State, {container[location]}, {name.group}, {seconds(start, res)}, "
                                      f"{seconds(event.time, res)}, {seconds(event.time - start, res)}, "
                                      f"{len(stack)}.000000000, {name.name}")
            elif event.kind == K.MARKER:
                lines["Event"].append(f"Event, {container[location]}, {definitions.strings[event.ref]}, "
                                      f"{seconds(event.time, res)}, {definitions.strings[event.value]}")
            elif event.kind == K.METRIC:
                lines["Variable"].append(f"{container[location]}, {definitions.metrics[event.ref].name}, "
                                         f"{seconds(event.time, res)}")
            elif event.kind in (K.SEND, K.RECV):
                (sends if event.kind == K.SEND else receives).append(
                    (container[location], container[event.ref], seconds(event.time, res)))
    lines["Link"] = sorted(Counter((a, b) for a, b, _ in sends).elements())
    lines["Link starts"] = sorted(t for _, _, t in sends)
    lines["Link ends"] = sorted(t for _, _, t in receives)
    return {kind: sorted(found) for kind, found in lines.items()}


def dumped(lines: list[str]) -> dict[str, list[str]]:
    """pj_dump lines in the shape of `expected_dump`."""
    result: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        fields = line.split(", ")
        if fields[0] in ("State", "Event"):
            result[fields[0]].append(line)
        elif fields[0] == "Variable":
            result["Variable"].append(", ".join(fields[1:4]))
        elif fields[0] == "Link":
            result["Link"].append((fields[7], fields[8]))
            result["Link starts"].append(fields[3])
            result["Link ends"].append(fields[4])
    return {kind: sorted(found) for kind, found in result.items()}


# --------------------------------------------------------------------------- the old field names

#: (event, id, fields) of a header in the convention of the original Paje documentation
#: (schnorr/paje, Documentation/lang-paje, "Example"): ids 1-8 and 10 as it numbers them,
#: the other events numbered after them, the old field names (ContainerType, EntityType,
#: SourceContainerType, DestContainerType, SourceContainer, DestContainer)
OLD_CONVENTION_HEADER = [
    ("PajeDefineContainerType", 1, ["Alias", "ContainerType", "Name"]),
    ("PajeDefineEventType", 2, ["Alias", "ContainerType", "Name"]),
    ("PajeDefineStateType", 3, ["Alias", "ContainerType", "Name"]),
    ("PajeDefineVariableType", 4, ["Alias", "ContainerType", "Name"]),
    ("PajeDefineLinkType", 5, ["Alias", "ContainerType", "SourceContainerType", "DestContainerType", "Name"]),
    ("PajeDefineEntityValue", 6, ["Alias", "EntityType", "Name", "Color"]),
    ("PajeCreateContainer", 7, ["Time", "Alias", "Type", "Container", "Name"]),
    ("PajeDestroyContainer", 8, ["Time", "Name", "Type"]),
    ("PajeNewEvent", 9, ["Time", "EntityType", "Container", "Value"]),
    ("PajeSetState", 10, ["Time", "EntityType", "Container", "Value"]),
    ("PajePushState", 11, ["Time", "EntityType", "Container", "Value"]),
    ("PajePopState", 12, ["Time", "EntityType", "Container"]),
    ("PajeSetVariable", 13, ["Time", "EntityType", "Container", "Value"]),
    ("PajeAddVariable", 14, ["Time", "EntityType", "Container", "Value"]),
    ("PajeSubVariable", 15, ["Time", "EntityType", "Container", "Value"]),
    ("PajeStartLink", 16, ["Time", "EntityType", "Container", "Value", "SourceContainer", "Key"]),
    ("PajeEndLink", 17, ["Time", "EntityType", "Container", "Value", "DestContainer", "Key"]),
]


def old_convention_trace() -> str:
    """A Paje trace in the old documentation's convention (`OLD_CONVENTION_HEADER`): its
    example program of two threads, with an event, a variable and a link added."""
    kinds = {"Time": "date", "Color": "color"}
    header = [f"%EventDef\t{event}\t{number}\n" + "".join(
        f"%\t{field}\t{'double' if event.endswith('Variable') and field == 'Value' else kinds.get(field, 'string')}\n"
        for field in fields) + "%EndEventDef" for event, number, fields in OLD_CONVENTION_HEADER]
    body = ["1 P 0 Program", "1 T P Thread", '2 EV T "Thread Event"', '3 S T "Thread State"', '4 V T "Thread Load"',
            '5 L P T T "Thread Link"', '6 E S Executing "0 1 0"', '6 B S Blocked "1 0 0"', '6 X EV Signal "0 0 1"',
            '6 M L Message ".5 .5 .5"', '7 0 TTP P 0 "Thread Testing Program"', '7 0.986789 T1 T TTP "Thread 1"',
            "11 0.986789 S T1 E", '7 1.012332 T2 T TTP "Thread 2"', "11 1.012332 S T2 E", "9 1.2 EV T1 X",
            "13 1.3 V T1 2", "14 1.4 V T1 1.5", "15 1.5 V T1 0.5", "16 2.3 L TTP M T1 k1", "10 2.34567 S T1 B",
            "17 2.4 L TTP M T2 k1", "11 2.405678 S T2 B", "12 2.456789 S T1", "12 3.001543 S T2",
            "12 4.001543 S T2", "8 4.295677 T2 T", "8 4.34565 T1 T", "8 4.3498 TTP P"]
    return "\n".join(header + body) + "\n"


def test_old_field_names_import_as_pj_dump_reads_them(tmp_path):
    source = tmp_path / "old.trace"
    source.write_text(old_convention_trace())
    assert detect(source) == "paje"
    expected = expected_dump(source)
    assert {kind: found for kind, found in dumped(pj_dump(source, "-n", "-l", "9")).items() if found} == \
           {kind: found for kind, found in expected.items() if found}
    assert [len(expected[kind]) for kind in ("State", "Event", "Variable", "Link")] == [4, 1, 3, 1]
    assert pj_dump(source, "-n", "-u") == pj_dump(round_trip(source, tmp_path), "-n", "-u")


# --------------------------------------------------------------------------- corpus

@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_corpus_round_trip_prints_the_same(tmp_path, parts):
    source = corpus_path(*parts)
    assert detect(source) == "paje"
    exported = round_trip(source, tmp_path)
    if parts == JAVA:  # pj_dump rejects the original's header; compare with that line fixed
        original, again = jrastro_fixed(source, tmp_path / "a.trace"), jrastro_fixed(exported, tmp_path / "b.trace")
        assert pj_dump(original, "-n", "-u") == pj_dump(again, "-n", "-u")
    else:
        assert pj_dump(source, "-u") == pj_dump(exported, "-u")


@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_corpus_import_matches_pj_dump(tmp_path, parts):
    source = corpus_path(*parts)
    readable = jrastro_fixed(source, tmp_path / "fixed.trace") if parts == JAVA else source
    lines = pj_dump(readable, "-n", "-l", "9")
    expected = expected_dump(source)
    assert {kind: found for kind, found in dumped(lines).items() if found} == \
           {kind: found for kind, found in expected.items() if found}
    definitions, _ = read(source)
    containers = sorted(line.split(", ")[-1] for line in lines if line.startswith("Container"))
    assert containers == sorted(["0"] + [node.name for node in definitions.system_tree])


@pytest.mark.parametrize("parts", CORPUS, ids=lambda parts: parts[-1])
def test_corpus_round_trip_gives_identical_events(tmp_path, parts):
    source = corpus_path(*parts)
    before, events = described(source)
    after, again = described(round_trip(source, tmp_path))
    assert again == events
    assert tree(after) == tree(before)
    assert after.timer_resolution == before.timer_resolution
    assert [(loc.name, loc.parent) for loc in after.locations] == [(loc.name, loc.parent) for loc in before.locations]


def test_corpus_details():
    definitions, events = described(corpus_path(*NATIVE))
    assert definitions.timer_resolution == 10 ** 9
    assert sum(len(rows) for rows in events.values()) > 7000
    user = [value for rows in events.values() for _, kind, ref, _, value in rows
            if kind == "GENERIC" and '"JobId"' in value]
    assert len(user) == 220  # the 220 PajeSetState events with StarPU's extra fields
    java, rows = described(corpus_path(*JAVA))
    assert java.timer_resolution == 10 ** 6  # dates like 0.001 and 1.00304, one of them -0.0001
    assert ("JavaTest", "Java Program", None) in tree(java)
    links = [row for found in rows.values() for row in found if row[1] in ("SEND", "RECV")]
    assert sorted((kind, peer) for _, kind, peer, _, _ in links) == [("RECV", "T11"), ("SEND", "Monitor 0")]
    root, events = described(corpus_path(*CORPUS[6]))
    assert events == {} and root.extensions["paje"]["includes"] == [
        {"file": "root.trace", "container": "0", "read": False, "record": [17, ["0", "0", {"self": "root.trace"}]]}]


def test_export_writes_dates_exactly(tmp_path):
    source = corpus_path(*JAVA)
    text = round_trip(source, tmp_path).read_text()
    assert "7 -0.000100 pj PJ 0 JavaTest" in text
    assert "1.003040" in text and "0.000000" in text


# --------------------------------------------------------------------------- synthetic Paje files

_FIELDS = {  # required fields of the spec's table (lang-paje 1.3), written independently of the reader
    "PajeDefineContainerType": ["Name", "Type", "Alias"],
    "PajeDefineStateType": ["Name", "Type", "Alias"],
    "PajeDefineEventType": ["Name", "Type", "Alias"],
    "PajeDefineVariableType": ["Name", "Type", "Alias"],
    "PajeDefineLinkType": ["Name", "Type", "StartContainerType", "EndContainerType", "Alias"],
    "PajeDefineEntityValue": ["Name", "Type", "Alias", "Color"],
    "PajeCreateContainer": ["Time", "Name", "Type", "Container", "Alias"],
    "PajeDestroyContainer": ["Time", "Name", "Type"],
    "PajeSetState": ["Time", "Type", "Container", "Value"],
    "PajePushState": ["Time", "Type", "Container", "Value"],
    "PajePopState": ["Time", "Type", "Container"],
    "PajeResetState": ["Time", "Type", "Container"],
    "PajeNewEvent": ["Time", "Type", "Container", "Value"],
    "PajeSetVariable": ["Time", "Type", "Container", "Value"],
    "PajeAddVariable": ["Time", "Type", "Container", "Value"],
    "PajeSubVariable": ["Time", "Type", "Container", "Value"],
    "PajeStartLink": ["Time", "Type", "Container", "StartContainer", "Value", "Key"],
    "PajeEndLink": ["Time", "Type", "Container", "EndContainer", "Value", "Key"],
}
_OLD = {"Type": "EntityType", "StartContainer": "SourceContainer", "EndContainer": "DestContainer"}
_TYPES = {"Time": "date", "Value": "string", "Color": "color"}


@st.composite
def paje_files(draw: st.DrawFn) -> str:
    """A valid Paje trace: random ids, field orders, old field names, a second PushState
    definition with a user field, three threads with two state types each, events,
    variables, links (either half first), dates with 0-9 decimals or an exponent."""
    names = list(_FIELDS) + ["PajePushState*"]
    ids = draw(st.permutations(range(100, 100 + len(names))))
    defs, header = {}, []
    for name, number in zip(names, ids):
        event = name.rstrip("*")
        fields = draw(st.permutations(_FIELDS[event])) + (["Mark"] if name.endswith("*") else [])
        if draw(st.booleans()):
            fields = [_OLD.get(field, field) for field in fields]
        defs[name] = (str(number), fields)
        kinds = [("double" if event.endswith("Variable") and f == "Value" else _TYPES.get(f, "string"))
                 for f in fields]
        header.append(f"%EventDef\t{event} {number}\n" + "".join(f"%\t{f}\t{k}\n" for f, k in zip(fields, kinds))
                      + "%EndEventDef")
    canonical = {old: new for new, old in _OLD.items()}

    def line(name: str, **values: str) -> str:
        number, fields = defs[name]
        texts = [values[canonical.get(field, field)] for field in fields]
        return " ".join([number] + [f'"{t}"' if not t or " " in t else t for t in texts])

    ticks = 0

    def date() -> str:
        nonlocal ticks
        ticks += draw(st.sampled_from([0, 0, 1, 30, 1000, 123457]))
        style = draw(st.sampled_from(["fixed", "short", "exponent"]))
        whole, part = divmod(ticks, 10 ** 9)
        if style == "fixed":
            return f"{whole}.{part:09d}"
        if style == "exponent":
            return f"{ticks}e-9"
        return f"{whole}.{part:09d}".rstrip("0").rstrip(".")

    lines = header + ["# types", line("PajeDefineContainerType", Name="Process", Type="0", Alias="P"),
                      line("PajeDefineContainerType", Name="Thread", Type="P", Alias="T")]
    for state in ("S1", "S2"):
        lines.append(line("PajeDefineStateType", Name=f"state {state}", Type="T", Alias=state))
        lines.append(line("PajeDefineEntityValue", Name="value a", Type=state, Alias=f"a{state}", Color="1 0 0"))
    lines += [line("PajeDefineEventType", Name="E", Type="T", Alias="E"),
              line("PajeDefineVariableType", Name="V", Type="T", Alias="V"),
              line("PajeDefineLinkType", Name="L", Type="P", StartContainerType="T", EndContainerType="T", Alias="L"),
              line("PajeCreateContainer", Time=date(), Name="process", Type="P", Container="0", Alias="p")]
    threads = ["t0", "t1", "t2"]
    for thread in threads:
        lines.append(line("PajeCreateContainer", Time=date(), Name=f"thread {thread}", Type="T", Container="p",
                          Alias=thread))
    stacks: dict[tuple[str, str], int] = Counter()
    variables: set[str] = set()
    link_dates: set[int] = set()
    for step in range(draw(st.integers(0, 30))):
        thread, state = draw(st.sampled_from(threads)), draw(st.sampled_from(["S1", "S2"]))
        action = draw(st.sampled_from(["push", "push", "pop", "set", "reset", "event", "variable", "link"]))
        value = draw(st.sampled_from(["x", "y z", f"a{state}", "a"]))
        if action == "push":
            name = draw(st.sampled_from(["PajePushState", "PajePushState*"]))
            lines.append(line(name, Time=date(), Type=state, Container=thread, Value=value, Mark=str(step)))
            stacks[thread, state] += 1
        elif action == "pop" and stacks[thread, state]:
            lines.append(line("PajePopState", Time=date(), Type=state, Container=thread))
            stacks[thread, state] -= 1
        elif action == "set":
            lines.append(line("PajeSetState", Time=date(), Type=state, Container=thread, Value=value))
            stacks[thread, state] = 1
        elif action == "reset":
            lines.append(line("PajeResetState", Time=date(), Type=state, Container=thread))
            stacks[thread, state] = 0
        elif action == "event":
            lines.append(line("PajeNewEvent", Time=date(), Type="E", Container=thread, Value=value))
        elif action == "variable":
            way = draw(st.sampled_from(["Set", "Add", "Sub"] if thread in variables else ["Set"]))
            number = draw(st.sampled_from(["1", "0.1", "2.5e3", "-7.25", "1e-300"]))
            lines.append(line(f"Paje{way}Variable", Time=date(), Type="V", Container=thread, Value=number))
            variables.add(thread)
        elif action == "link":
            other = draw(st.sampled_from(threads))
            when = date()
            if ticks in link_dates:  # pj_dump shows one of two links of a container that start at
                continue             # the same time, which one depending on the order of the records
            link_dates.add(ticks)
            start = line("PajeStartLink", Time=when, Type="L", Container="p", StartContainer=thread, Value=value,
                         Key=f"k{step}")
            end_first = draw(st.booleans())  # then at the same date (dates never decrease in a file)
            end = line("PajeEndLink", Time=when if end_first else date(), Type="L", Container="p",
                       EndContainer=other, Value=value, Key=f"k{step}")
            lines += [end, start] if end_first else [start, end]
    for thread in draw(st.lists(st.sampled_from(threads), unique=True)):
        lines.append(line("PajeDestroyContainer", Time=date(), Name=thread, Type="T"))
    return "\n".join(lines) + "\n"


@settings(max_examples=12, deadline=None)
@given(text=paje_files())
def test_synthetic_paje_round_trip_gives_identical_events(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("paje")
    source = folder / "in.trace"
    source.write_text(text)
    before, events = described(source)
    after, again = described(round_trip(source, folder))
    assert again == events
    assert tree(after) == tree(before)
    assert after.timer_resolution == before.timer_resolution == 10 ** 9


@settings(max_examples=8, deadline=None)
@given(text=paje_files())
def test_synthetic_paje_round_trip_prints_the_same(tmp_path_factory, text):
    require_tool("pj_dump")
    folder = tmp_path_factory.mktemp("paje")
    source = folder / "in.trace"
    source.write_text(text)
    assert pj_dump(source, "-n", "-u", "-l", "9") == pj_dump(round_trip(source, folder), "-n", "-u", "-l", "9")


# --------------------------------------------------------------------------- other archives

def other_definitions() -> Definitions:
    return Definitions(
        regions=[Region("main"), Region("MPI Send", group="MPI"), Region("f"), Region("g")],
        system_tree=[SystemTreeNode("node", "node"), SystemTreeNode("rank 0", "process", 0)],
        locations=[Location("thread 0", "thread", 1), Location("thread 1", "thread", 1), Location("thread 2")],
        metrics=[Metric("count"), Metric("temperature", "C", "absolute", "double"), Metric("bytes", value_type="uint64")],
        strings=["phase", "checkpoint", "a record"], timer_resolution=10 ** 6, clock_offset=-5000)


@settings(max_examples=10, deadline=None)
@given(trace=traces())
def test_archives_from_elsewhere_export_to_valid_paje(tmp_path_factory, trace):
    folder = tmp_path_factory.mktemp("other")
    definitions = other_definitions()
    archive = folder / "in.ccg"
    write_trace(archive, definitions, ((loc, [EventBatch.from_events(events)]) for loc, events in trace.items()))
    target = folder / "out.paje"
    with ccgformat.open(archive) as opened:
        opened.export(target)
    again, streams = read(target)
    reread = {again.locations[loc].name.rsplit("/", 1)[-1]: [e for b in batches for e in b.rows()]
              for loc, batches in streams}
    sent = Counter((loc, e.ref, e.comm, e.tag) for loc, events in trace.items() for e in events
                   if e.kind in (K.SEND, K.ISEND))
    received = Counter((e.ref, loc, e.comm, e.tag) for loc, events in trace.items() for e in events
                       if e.kind in (K.RECV, K.IRECV))
    links = sum(min(count, received[key]) for key, count in sent.items())
    for loc, events in trace.items():
        got = reread[definitions.locations[loc].name]
        calls = [(e.time + 5000, e.kind, definitions.regions[e.ref].name) for e in events if e.kind <= K.LEAVE]
        assert [(e.time, e.kind, again.regions[e.ref].name) for e in got if e.kind <= K.LEAVE] == calls
        metrics = [(e.time + 5000, definitions.metrics[e.ref].name) for e in events if e.kind == K.METRIC]
        assert [(e.time, again.metrics[e.ref].name) for e in got if e.kind == K.METRIC] == metrics
    assert sum(e.kind == K.SEND for events in reread.values() for e in events) == links
    if optional_tool("pj_dump"):
        lines = pj_dump(target)
        states = sum(e.kind == K.ENTER for events in trace.values() for e in events)
        # pj_dump leaves out zero-length states at the very end of the trace
        end = max((e.time for events in trace.values() for e in events), default=0)
        at_end = sum(e.kind == K.ENTER and e.time == end for events in trace.values() for e in events)
        assert states - at_end <= sum(line.startswith("State") for line in lines) <= states
        assert sum(line.startswith("Link") for line in lines) == links


# --------------------------------------------------------------------------- bad input

HEADER = """%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineLinkType 4
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeSetVariable 8
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeAddVariable 9
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajePushState 12
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajePopState 14
% Time date
% Container string
% Type string
%EndEventDef
%EventDef PajeStartLink 16
% Time date
% Container string
% Type string
% StartContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeTraceFile 17
% Container string
% Type string
% Filename string
%EndEventDef
0 P 0 PROCESS
2 S P STATE
6 0.0 p1 P 0 p1
"""
FIRST = HEADER.count("\n") + 1  # the number of the first line after HEADER


@pytest.mark.parametrize("body, line, reason", [
    ("99 0.1 p1 S x\n", FIRST, "unknown event id '99'"),
    ("12 0.1 p1 S\n", FIRST, "3 fields, but PajePushState (id 12) defines 4"),
    ("12 0.1 p1 S x y\n", FIRST, "5 fields"),
    ("12 1.2.3 p1 S x\n", FIRST, "unparseable date '1.2.3'"),
    ("12 0.1 p1 S x\n12 1.5x p1 S x\n", FIRST + 1, "unparseable date"),
    ("12 0.1 nobody S x\n", FIRST, "undefined container 'nobody'"),
    ("12 0.1 p1 S x\n14 0.2 p1 S\n14 0.3 p1 S\n", FIRST + 2, "no state pushed"),
    ("12 0.1 p1 NOPE x\n", FIRST, "undefined type 'NOPE'"),
    ("12 0.1 p1 P x\n", FIRST, "not a state type"),
    ('12 0.1 p1 S "open\n', FIRST, "unterminated quote"),
    ("12 0.2 p1 S x\n12 0.1 p1 S y\n", FIRST + 1, "back in time"),
    ("8 0.1 p1 S 1\n", FIRST, "not a variable type"),
    ("4 L 0 P P L\n16 0.1 0 L p1 v k\n", FIRST + 1, "PajeStartLink without a matching PajeEndLink"),
    ("17 0 0 missing.trace\n", FIRST, "included file 'missing.trace' does not exist"),
    ("%EventDef PajeNoSuchEvent 50\n% Time date\n%EndEventDef\n", FIRST, "unknown Paje event 'PajeNoSuchEvent'"),
    ("%EventDef PajePopState 51\n% Time date\n%EndEventDef\n", FIRST, "lacks the required field(s) Type, Container"),
    ("%EventDef PajePopState 14\n% Time date\n% Type string\n% Container string\n%EndEventDef\n", FIRST + 4,
     "defined twice"),
    ("%EventDef PajePopState 52\n% Time date\n% Type strange\n", FIRST + 2, "a field line needs"),
    ("%EventDef PajePopState 53\n% Time date\n", FIRST, "not closed"),
    ("12 0.1 p1 S x\n14 9e999999 p1 S\n", FIRST + 1, "unparseable date"),
    ("14 123456789012.0000000001 p1 S\n", FIRST, "does not fit 64 bits"),
    ("14 0.0000000000000000001 p1 S\n", FIRST, "more than 18 decimals"),
])
def test_bad_input_names_file_and_line(tmp_path, body, line, reason):
    path = tmp_path / "bad.trace"
    path.write_text(HEADER + body)
    with pytest.raises(FormatError) as caught:
        _, streams = read(path, "paje")
        for _, batches in streams:
            list(batches)
    assert caught.value.path == str(path) and caught.value.line == line
    assert reason in str(caught.value)


def test_variable_changes_need_a_value_first(tmp_path):
    path = tmp_path / "bad.trace"
    path.write_text(HEADER.replace("2 S P STATE\n", "2 S P STATE\n%EventDef PajeDefineVariableType 1\n"
                                   "% Alias string\n% Type string\n% Name string\n%EndEventDef\n1 V P VAR\n")
                    + "9 0.1 p1 V 2\n")
    with pytest.raises(FormatError, match="before any PajeSetVariable") as caught:
        read(path, "paje")
    assert caught.value.line == FIRST + 6


def test_not_utf8_is_reported(tmp_path):
    path = tmp_path / "bad.trace"
    path.write_bytes(HEADER.encode() + b"12 0.1 p1 S \xff\xfe\n")
    with pytest.raises(FormatError, match="not UTF-8"):
        read(path, "paje")


def test_includes_are_read_once_and_cycles_stop(tmp_path):
    (tmp_path / "main.trace").write_text(HEADER + "12 0.1 p1 S x\n17 p1 P part.trace\n14 0.5 p1 S\n")
    (tmp_path / "part.trace").write_text("6 0.2 p2 P 0 p2\n12 0.3 p2 S y\n17 p2 P main.trace\n17 0 0 part.trace\n"
                                         "14 0.4 p2 S\n")
    definitions, events = described(tmp_path / "main.trace")
    assert [node.name for node in definitions.system_tree] == ["p1", "p2"]
    assert definitions.timer_resolution == 10
    assert [(t, kind) for t, kind, *_ in events["p2"] if kind != "GENERIC"] == [(3, "ENTER"), (4, "LEAVE")]
    includes = definitions.extensions["paje"]["includes"]
    assert [(i["file"], i["read"]) for i in includes] == [("part.trace", True), ("main.trace", False),
                                                          ("part.trace", False)]
    exported = round_trip(tmp_path / "main.trace", tmp_path, "single.trace")
    assert described(exported)[1] == events
    assert "part.trace" not in exported.read_text()


def test_sniff_reads_content_only(tmp_path):
    assert sniff(Path("x"), b"# comment\n%EventDef PajeNewEvent 1\n")
    assert sniff(Path("x"), b"%EventDef\tPajeDefineContainerType\t1\n")
    assert not sniff(Path("x.trace"), b"1 2 3\n")
    assert not sniff(Path("x.trace"), b"\x00\x01%EventDef")
    renamed = tmp_path / "trace.bin"
    shutil.copy(corpus_path(*PAJENG, "states.trace"), renamed)
    assert detect(renamed) == "paje"
