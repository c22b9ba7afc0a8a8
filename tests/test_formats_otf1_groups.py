"""OTF v1 process groups as levels of the resource hierarchy (issue 15): hand-written traces
with node groups, nested, overlapping and communicator-flagged groups, checked through
`Archive.hierarchy`, the aggregation tables, `otfprint` and an OTF2 round trip; random
groups against a brute-force statement of the rule of `ccgformat.formats.otf1.groups`."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive.verify import verify
from ccgformat.formats import read
from ccgformat.hierarchy import ROOT_NAME
from ccgformat.model import EventBatch

from .corpus import require_module
from .test_formats_otf1 import as_printed, assert_same_as_otfprint

FIRST_GROUP = 0x100  # group ids apart from process ids, so that a DPGA names one thing


def write_otf(folder: Path, parents: list[int], groups: list[tuple[str, list[int]]],
              attributes: Sequence[str] = ()) -> Path:
    """A trace of processes 1..n (``parents[i]``: the parent of process i + 1, 0 for none),
    the groups as ``DPG`` records with ids from `FIRST_GROUP` on, extra definition lines,
    and per process a call of f1 around one of f2, both as long as the process id makes them."""
    processes = range(1, len(parents) + 1)
    definitions = ['DV1.c.5"test"', "DTRf4240", 'DFG1NM"grp"', 'DF1G1NM"f1"', 'DF2G1NM"f2"']
    definitions += [f'DP{p:x}NM"p{p}"' + (f"PT{parent:x}" if parent else "") for p, parent in zip(processes, parents)]
    definitions += [f'DPG{FIRST_GROUP + i:x}M{"".join(f"{m:x}," for m in members)}NM"{name}"'
                    for i, (name, members) in enumerate(groups)]
    records = sorted([(10 * p, p, "E1") for p in processes] + [(10 * p + 3, p, "E2") for p in processes]
                     + [(10 * p + 4 + p, p, "L2") for p in processes] + [(200 + 7 * p, p, "L1") for p in processes])
    events = [line for time, p, record in records for line in (f"{time:x}", f"*{p:x}", record)]
    (folder / "t.otf").write_text("1:" + ",".join(f"{p:x}" for p in processes) + "\n")
    (folder / "t.0.def").write_text("".join(f"{line}\n" for line in definitions + list(attributes)))
    (folder / "t.1.events").write_text("".join(f"{line}\n" for line in events))
    return folder / "t.otf"


def converted(folder: Path, master: Path) -> ccgformat.Archive:
    target = folder / "t.ccg"
    ccgformat.convert(master, target)
    assert verify(target) == []
    return ccgformat.open(target)


def shape(hierarchy: Any) -> list[tuple[str, str, str]]:
    """(name, kind, parent's name) per node in preorder."""
    return [(name, kind, hierarchy.names[parent] if parent >= 0 else "")
            for name, kind, parent in zip(hierarchy.names, hierarchy.kinds, hierarchy.parents.tolist())]


def assert_group_rows_are_sums(archive: ccgformat.Archive) -> None:
    """Every node's row of the finest table level (the archive rewritten with every level:
    a trace this small holds none within the writer's budget) is the sum of
    `Archive.aggregate`'s rows of the locations below it."""
    target = Path(archive.path).with_name("tables.ccg")
    ccgformat.write_trace(target, archive.definitions,
                          ((location, archive.location(location).events()) for location in sorted(archive.roots)),
                          aggregation=1000.0)
    archive = ccgformat.open(target)
    level = archive.aggregation_tables.levels[-1]
    model = archive.aggregate(level.slices)
    h = model.hierarchy
    nodes = level.dense()
    for node in range(len(h)):
        below = h.leaf_locations[h.first_leaf[node]:h.stop_leaf[node]]
        assert np.array_equal(nodes[node], model.values[np.searchsorted(model.locations, below)].sum(axis=0))
    assert nodes[0].sum() > 0


def test_disjoint_node_groups(tmp_path: Path) -> None:
    """Two hosts of two processes, a thread under process 1; the group of all processes and
    a flagged communicator that cuts across the hosts add nothing."""
    master = write_otf(tmp_path, [0, 0, 0, 0, 1], [("host a", [1, 2]), ("host b", [3, 4]), ("All", [1, 2, 3, 4, 5]),
                                                   ("MPI_COMM_WORLD", [1, 2, 3, 4]), ("row", [1, 3])],
                       ["DA1M1,7,", f"DPGA{FIRST_GROUP + 3:x}V1", f"DPGA{FIRST_GROUP + 4:x}V1"])
    with converted(tmp_path, master) as archive:
        assert shape(archive.hierarchy) == [
            (ROOT_NAME, ROOT_NAME, ""), ("host a", "process group", ROOT_NAME), ("p1", "process", "host a"),
            ("p1", "process", "p1"), ("p5", "thread", "p1"), ("p5", "thread", "p5"), ("p2", "process", "host a"),
            ("p2", "process", "p2"), ("host b", "process group", ROOT_NAME), ("p3", "process", "host b"),
            ("p3", "process", "p3"), ("p4", "process", "host b"), ("p4", "process", "p4")]
        assert archive.hierarchy.leaf_locations.tolist() == [0, 4, 1, 2, 3]
        assert [(c.name, c.members) for c in archive.definitions.communicators] == [
            ("host a", (0, 1)), ("host b", (2, 3)), ("All", (0, 1, 2, 3, 4)), ("MPI_COMM_WORLD", (0, 1, 2, 3)),
            ("row", (0, 2))]
        assert_group_rows_are_sums(archive)
        definitions = archive.definitions
        events = as_printed(definitions, ((i, archive.location(i).events()) for i in archive.locations))
    assert_same_as_otfprint(definitions, events, master)  # processes, threads and groups as otfprint reads them


def test_nested_groups(tmp_path: Path) -> None:
    """A rack of two hosts and a third host: the groups nest by inclusion, whatever their
    definition order."""
    master = write_otf(tmp_path, [0] * 6, [("host a", [1, 2]), ("rack", [4, 3, 2, 1]), ("host c", [5, 6]),
                                           ("host b", [3, 4])])
    with converted(tmp_path, master) as archive:
        h = archive.hierarchy
        assert [(n, p) for n, k, p in shape(h) if k != "process"] == [
            (ROOT_NAME, ""), ("rack", ROOT_NAME), ("host a", "rack"), ("host b", "rack"), ("host c", ROOT_NAME)]
        assert h.leaf_locations.tolist() == list(range(6))
        assert_group_rows_are_sums(archive)
    tree = read(master)[0].system_tree
    assert [(n.name, n.parent) for n in tree[6:]] == [("host a", 7), ("rack", None), ("host c", None),
                                                      ("host b", 7)]
    assert [n.parent for n in tree[:6]] == [6, 6, 9, 9, 8, 8]


def test_overlapping_groups_leave_the_smaller_out(tmp_path: Path) -> None:
    """Of two groups that overlap, the larger is a level; of equal ones, the first defined.
    Both stay communicators."""
    master = write_otf(tmp_path, [0] * 5, [("b", [2, 3]), ("big", [1, 2, 3]), ("c", [3, 4]), ("d", [4, 5])])
    with converted(tmp_path, master) as archive:
        assert [(n, p) for n, k, p in shape(archive.hierarchy) if k != "process"] == [
            (ROOT_NAME, ""), ("big", ROOT_NAME), ("b", "big"), ("d", ROOT_NAME)]
        assert [c.name for c in archive.definitions.communicators] == ["b", "big", "c", "d"]
        assert_group_rows_are_sums(archive)


def test_communicator_flags(tmp_path: Path) -> None:
    """A group flagged IsCommunicator through a DA list or VampirTrace's bit set is no
    level; other attributes, a list without attribute 7 and a flag on a process do not
    matter. A group of threads without their process is no level either."""
    groups = [("listed", [1, 2]), ("bits", [3, 4]), ("counters", [5, 6]), ("plain list", [7, 8]),
              ("threads", [9, 10])]
    attributes = ["DA1M3,7,", "DA2M1,5,", f"DPGA{FIRST_GROUP:x}V1", f"DPGA{FIRST_GROUP + 1:x}Va0",
                  f"DPGA{FIRST_GROUP + 2:x}V20", f"DPGA{FIRST_GROUP + 3:x}V2", "DPGA7V80"]
    master = write_otf(tmp_path, [0] * 8 + [1, 3], groups, attributes)
    with converted(tmp_path, master) as archive:
        assert [(n, p) for n, k, p in shape(archive.hierarchy) if k == "process group"] == [
            ("counters", ROOT_NAME), ("plain list", ROOT_NAME)]
        assert [c.name for c in archive.definitions.communicators] == [name for name, _ in groups]


def test_export_to_otf2_keeps_the_levels(tmp_path: Path) -> None:
    """OTF v1 with groups -> .ccg -> OTF2 -> .ccg: the same events per location and the
    same process-group nodes over the same locations."""
    require_module("otf2", "the otf2 package is not installed")
    master = write_otf(tmp_path, [0, 0, 0, 0, 1, 0], [("rack", [1, 2, 3, 4, 5]), ("host a", [1, 2, 5]),
                                                      ("host b", [3, 4])])
    with converted(tmp_path, master) as archive:
        archive.export(tmp_path / "out.otf2")
        want = levels_of(archive.hierarchy)
        events = {i: list(EventBatch.concat(list(archive.location(i).events())).rows()) for i in archive.locations}
    assert [name for name, _, _ in want] == ["rack", "host a", "host b"]
    ccgformat.convert(tmp_path / "out.otf2" / "traces.otf2", tmp_path / "back.ccg")
    with ccgformat.open(tmp_path / "back.ccg") as back:
        assert levels_of(back.hierarchy) == want
        assert {i: list(EventBatch.concat(list(back.location(i).events())).rows()) for i in back.locations} == events


def levels_of(hierarchy: Any) -> list[tuple[str, str, list[int]]]:
    """The process-group nodes in preorder: name, parent's name, locations below."""
    h = hierarchy
    return [(h.names[n], h.names[h.parents[n]], sorted(h.leaf_locations[h.first_leaf[n]:h.stop_leaf[n]].tolist()))
            for n in range(len(h)) if h.kinds[n] == "process group"]


# --------------------------------------------------------------------------- random groups

FLAGS = {"none": [], "list": ["DA1M3,7,"], "list without 7": ["DA2M1,5,"], "bits": ["Va0"], "bits without 7": ["V20"]}


@st.composite
def grouped_traces(draw: st.DrawFn) -> dict[str, Any]:
    """Processes with random threads; groups of random processes, mostly with their threads
    (in random order, sometimes a thread left out or added alone), mostly unflagged."""
    count = draw(st.integers(1, 8))
    parents = [draw(st.integers(0, p - 1)) if p > 1 and draw(st.integers(0, 2)) == 0 else 0
               for p in range(1, count + 1)]
    groups = []
    for i in range(draw(st.integers(0, 6))):
        members = set(draw(st.lists(st.integers(1, count), max_size=count)))
        if draw(st.integers(0, 3)):  # with every thread of its members
            members |= {q for q in range(1, count + 1) if any(_ancestor(parents, m, q) for m in members)}
        groups.append((f"g{i}", draw(st.permutations(sorted(members)))))
    flags = [draw(st.sampled_from(["none"] * 4 + sorted(FLAGS))) for _ in groups]
    return {"parents": parents, "groups": groups, "flags": flags}


def top(parents: list[int], process: int) -> int:
    while parents[process - 1]:
        process = parents[process - 1]
    return process


def kept_groups(trace: dict[str, Any]) -> list[int]:
    """The groups the rule makes levels, by brute force over pairs of member sets (the
    importer keeps one label per process instead)."""
    parents = trace["parents"]
    tops = {p for p in range(1, len(parents) + 1) if not parents[p - 1]}
    covers = [{top(parents, m) for m in members} for _, members in trace["groups"]]
    eligible = [i for i, (_, members) in enumerate(trace["groups"])
                if trace["flags"][i] in ("none", "list without 7", "bits without 7")
                and covers[i] <= set(members) and 1 < len(covers[i]) < len(tops)]
    candidates = [i for n, i in enumerate(eligible) if covers[i] not in [covers[j] for j in eligible[:n]]]

    def overlap(i: int, j: int) -> bool:
        return bool(covers[i] & covers[j]) and not covers[i] <= covers[j] and not covers[j] <= covers[i]

    kept: list[int] = []
    for i in sorted(candidates, key=lambda i: (-len(covers[i]), i)):
        if not any(overlap(i, j) for j in kept):
            kept.append(i)
    return sorted(kept)


def definition_lines(trace: dict[str, Any]) -> list[str]:
    lines = ["DA1M3,7,", "DA2M1,5,"]
    for i, flag in enumerate(trace["flags"]):
        if flag.startswith("list"):
            lines.append(f"DPGA{FIRST_GROUP + i:x}V{1 if flag == 'list' else 2}")
        elif flag.startswith("bits"):
            lines.append(f"DPGA{FIRST_GROUP + i:x}{FLAGS[flag][0]}")
    return lines


@settings(max_examples=60, deadline=None)
@given(grouped_traces())
def test_random_groups(trace: dict[str, Any]) -> None:
    parents, groups = trace["parents"], trace["groups"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        master = write_otf(folder, parents, groups, definition_lines(trace))
        with converted(folder, master) as archive:
            definitions, h = archive.definitions, archive.hierarchy
    count = len(parents)
    assert [loc.name for loc in definitions.locations] == [f"p{p}" for p in range(1, count + 1)]
    assert [(c.name, c.members) for c in definitions.communicators] == \
        [(name, tuple(m - 1 for m in members)) for name, members in groups]
    leaves = h.leaf_locations.tolist()
    assert sorted(leaves) == list(range(count))
    below = {node: set(leaves[h.first_leaf[node]:h.stop_leaf[node]]) for node in range(len(h))}
    for node in range(len(h)):  # children in the order of the smallest location below them
        firsts = [min(below[child]) for child in h.children(node).tolist()]
        assert firsts == sorted(firsts)
    kept = kept_groups(trace)
    subtree = {p: {q - 1 for q in range(1, count + 1) if q == p or _ancestor(parents, p, q)}
               for p in range(1, count + 1)}
    levels = {}
    for node, kind in enumerate(h.kinds):
        if kind == "process group":
            group = int(h.names[node][1:])
            assert below[node] == set().union(*(subtree[m] for m in groups[group][1]))
            levels[group] = node
        elif kind in ("process", "thread") and node not in h.parents:  # a leaf: its location
            continue
        elif kind in ("process", "thread"):  # a process's or thread's own node: it and its threads
            process = int(h.names[node][1:])
            assert below[node] == subtree[process]
            assert kind == ("thread" if parents[process - 1] else "process")
            holders = [i for i in kept if process in groups[i][1]]
            smallest = min(holders, key=lambda i: len({top(parents, m) for m in groups[i][1]}), default=None)
            if parents[process - 1]:
                assert h.names[h.parents[node]] == f"p{parents[process - 1]}"
            elif smallest is not None:
                assert h.names[h.parents[node]] == f"g{smallest}"
    assert sorted(levels) == kept


def _ancestor(parents: list[int], process: int, other: int) -> bool:
    """Whether ``process`` is an ancestor of ``other`` through PT parents."""
    while parents[other - 1]:
        other = parents[other - 1]
        if other == process:
            return True
    return False
