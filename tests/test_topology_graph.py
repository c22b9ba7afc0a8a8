"""The topology graph (issue 38, items 2-4): edges against the Paje links pj_dump prints
and against a brute-force message matching of generated MPI-like traces, at every cut;
the JSON, the command line, DOT and the SVG Graphviz draws."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.analysis import graphviz
from ccgformat.cli import main
from ccgformat.errors import CcgError, MissingToolError, ParameterError

from . import query_oracle as oracle
from .corpus import require_tool
from .topology_support import (container_paths, covering, drawn_window, message_traces, paje_archive, pj_dump,
                               saved, ticks)


def edge_counter(topology):
    """{(path, path): (messages, bytes)} of a topology's edges."""
    e = topology.edges
    return {(topology.paths[a], topology.paths[b]): (n, size)
            for a, b, n, size in zip(e.first.tolist(), e.second.tolist(), e.messages.tolist(), e.bytes.tolist())}


def expected_edges(node_paths, ends):
    """{(path, path): (messages, bytes)} from (first path, second path, in window, bytes)
    of every message: each end's covering node, the pair unordered, pairs inside a node
    left out; a pair is an edge even when none of its messages is in the window."""
    counts = Counter()
    for a, b, inside, size in ends:
        first, second = sorted((covering(node_paths, a), covering(node_paths, b)))
        if first != second:
            n, volume = counts.get((first, second), (0, 0))
            counts[(first, second)] = (n + inside, volume + (size if inside else 0))
    return {(node_paths[a], node_paths[b]): value for (a, b), value in counts.items()}


@pytest.mark.parametrize("name", ["links.trace", "platform"])
def test_edges_are_the_paje_links(tmp_path_factory, name):
    source, archive = paje_archive(tmp_path_factory, name)
    records = pj_dump(source)
    paths = container_paths(records)
    resolution = archive.timer_resolution
    links = [(paths[f[7]], paths[f[8]], ticks(f[3], resolution), ticks(f[4], resolution))
             for f in records if f[0] == "Link"]
    assert links
    first, last = archive.time_range
    for start, stop in [(None, None), (first, first + 1), (first + 1, last + 1), (last // 3, last // 2)]:
        leaves = archive.topology(start, stop)
        window = (leaves.start, leaves.stop)
        for depth in [None, *range(int(leaves.depths.max()) + 1)]:
            topology = archive.topology(start, stop, depth)
            ends = [(a, b, window[0] <= t0 < window[1] or window[0] <= t1 < window[1], 0) for a, b, t0, t1 in links]
            assert edge_counter(topology) == expected_edges(list(topology.paths), ends), (start, stop, depth)


@settings(max_examples=40, deadline=None)
@given(system=message_traces(), data=st.data())
def test_edges_are_the_matched_messages(tmp_path_factory, system, data):
    definitions, trace = system
    start, stop, depth = drawn_window(data, trace)
    with ccgformat.open(saved(tmp_path_factory, definitions, trace)) as archive:
        events = {location: oracle.events_of(archive, location) for location in archive.roots}
        everything, _ = oracle.messages(events)
        inside, _ = oracle.messages(events, start, stop)
        hierarchy = archive.hierarchy
        leaf = {int(location): hierarchy.path(int(node))
                for location, node in zip(hierarchy.leaf_locations, hierarchy.leaf_nodes())}
        ends = []
        for message, times_seen in everything.items():
            sender, receiver, size = message[0], message[2], message[6]
            ends += [(leaf[sender], leaf[receiver], k < inside[message], size) for k in range(times_seen)]
        topology = archive.topology(start, stop, depth)
        assert edge_counter(topology) == expected_edges(list(topology.paths), ends)


# --------------------------------------------------------------------------- JSON and the command line

def test_json_has_the_issues_shape(tmp_path_factory, capsys):
    _, archive = paje_archive(tmp_path_factory, "platform")
    assert main(["topology", str(archive.path), "--depth", "2", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"start", "stop", "nodes", "edges"}
    whole = archive.topology()
    assert (document["start"], document["stop"]) == (whole.start, whole.stop)
    paths = [node["path"] for node in document["nodes"]]
    assert len(set(paths)) == len(paths)
    for node in document["nodes"]:
        assert set(node) == {"name", "path", "depth", "metrics"}
        assert node["path"].split("/")[-1] == node["name"] and node["depth"] == node["path"].count("/") <= 2
    clusters = [node for node in document["nodes"] if node["name"].startswith("cluster-")]
    assert len(clusters) == 4 and all(set(c["metrics"]) == {"power", "power_used", "bandwidth", "bandwidth_used"}
                                      for c in clusters)
    for edge in document["edges"]:
        assert set(edge) == {"from", "to", "metrics"} and {edge["from"], edge["to"]} <= set(paths)
        assert set(edge["metrics"]) == {"messages", "bytes"}
    # the cluster's uplink connects it to its site's router: cluster - uplink - router
    assert {"from": "grid/site-0/cluster-0-0", "to": "grid/site-0/uplink-0-0",
            "metrics": {"messages": 1, "bytes": 0}} in document["edges"]


def test_text_output_and_usage_errors(tmp_path_factory, capsys):
    _, archive = paje_archive(tmp_path_factory, "variables.trace")
    assert main(["topology", str(archive.path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("1 containers, 0 edges; window 0..1340000000 (1.34 s)")
    assert re.fullmatch(r"p1  VAR 11\.0746", out[1])
    assert main(["topology", str(archive.path), "--start", "5", "--stop", "5"]) == 2
    assert main(["topology", str(archive.path), "--fill", "VAR"]) == 2
    assert main(["topology", str(archive.path), "--depth", "-1"]) == 2
    assert main(["topology", str(archive.path), "--within", "nowhere"]) == 1
    assert "no container 'nowhere'" in capsys.readouterr().err


# --------------------------------------------------------------------------- pictures

def dot_nodes(dot: str) -> dict[str, dict[str, str]]:
    """The node statements of a DOT text: id -> attributes."""
    nodes = {}
    for name, attributes in re.findall(r'^  (n\d+) \[(.*)\];$', dot, re.M):
        nodes[name] = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', attributes))
    return nodes


def test_dot_maps_capacity_use_and_traffic(tmp_path_factory):
    _, archive = paje_archive(tmp_path_factory, "platform")
    topology = archive.topology(depth=2)
    nodes = dot_nodes(topology.to_dot("a title"))
    assert len(nodes) == len(topology.paths)
    column = {name: k for k, name in enumerate(topology.metrics)}
    largest = np.nanmax(topology.values[:, column["power"]])
    for node, path in enumerate(topology.paths):
        style = nodes[f"n{node}"]
        assert style["tooltip"] == path
        power, bandwidth = (topology.values[node, column[m]] for m in ("power", "bandwidth"))
        if not np.isnan(power):  # a cluster: a square, area from its power, filled up to its power's use
            share = topology.values[node, column["power_used"]] / power
            assert style["shape"] == "box" and float(style["width"]) == pytest.approx(1.1 * (power / largest) ** 0.5,
                                                                                      abs=1e-3)
            assert style["fillcolor"] == f"#d62728;{share:.3f}:white" and f"({share:.0%} used)" in style["xlabel"]
            assert "\\nbandwidth " in style["xlabel"]  # its links, too
        elif not np.isnan(bandwidth):
            assert style["shape"] == "diamond"
        else:  # a router carries nothing
            assert style["shape"] == "ellipse" and style["label"] == topology.names[node]
    # each shape on its own scale (paper 001, 4.1): the largest link drawn is as large as the largest cluster
    assert max(float(style["width"]) for style in nodes.values() if style["shape"] == "diamond") == 1.1
    assert 'label=<<TABLE' in topology.to_dot("a title") and "<B>a title</B>" in topology.to_dot("a title")


def test_chosen_metrics_must_exist(tmp_path_factory, tmp_path):
    _, archive = paje_archive(tmp_path_factory, "variables.trace")
    topology = archive.topology()
    assert dot_nodes(topology.to_dot(size="VAR"))["n0"]["shape"] == "box"
    assert "window 0.000 s to 1.340 s (1.34 s)" in topology.to_dot()
    for size, fill in [("power", None), ("VAR", "power_used")]:
        with pytest.raises(ParameterError, match="no metric"):
            topology.to_dot(size=size, fill=fill)
    assert main(["topology", str(archive.path), "--size", "power", "--dot", str(tmp_path / "t.dot")]) == 1
    assert list(tmp_path.iterdir()) == []


def test_edge_widths_follow_the_bytes():
    from ccgformat.analysis.topology import Topology
    from ccgformat.analysis.topology_edges import Edges
    topology = Topology(0, 10, 1, None, "sum", ("a", "b", "c"), ("a", "b", "c"), ("x",) * 3, np.zeros(3, np.int64),
                        (), np.zeros((3, 0)), Edges(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([4, 1, 0]),
                                                    np.array([400, 100, 0])))
    widths = [float(w) for w in re.findall(r"penwidth=([\d.]+)", topology.to_dot())]
    assert widths == pytest.approx([6.0, 0.8 + 5.2 * 0.5, 0.8])
    assert len(re.findall("style=dashed", topology.to_dot())) == 1  # the edge without traffic in the window


def test_svg_is_drawn_by_graphviz(tmp_path_factory, tmp_path):
    require_tool("twopi")
    _, archive = paje_archive(tmp_path_factory, "platform")
    topology = archive.topology(depth=2)
    target = topology.save_svg(tmp_path / "t.svg", "Platform at depth 2")
    root = ElementTree.parse(target).getroot()
    space = {"svg": "http://www.w3.org/2000/svg"}
    groups = Counter(g.get("class") for g in root.iter("{http://www.w3.org/2000/svg}g"))
    assert groups["node"] == len(topology.paths) and groups["edge"] == len(topology.edges.first)
    texts = [t.text for t in root.iterfind(".//svg:text", space)]
    assert "Platform at depth 2" in texts and any(t and t.startswith("hosts: area = power") for t in texts)
    assert len(root.findall(".//svg:linearGradient", space)) >= 4  # the clusters' partial fills
    assert [p.name for p in tmp_path.iterdir()] == ["t.svg"]


def test_a_missing_or_failing_graphviz_is_a_clear_error(tmp_path, monkeypatch):
    if graphviz.shutil.which("neato"):
        with pytest.raises(CcgError, match="neato failed"):
            graphviz.render("graph { this is not dot", tmp_path / "bad.svg", "neato")
    monkeypatch.setattr(graphviz.shutil, "which", lambda name: None)
    with pytest.raises(MissingToolError, match="apt-get install graphviz"):
        graphviz.render("graph {}", tmp_path / "x.svg", "neato")
    assert list(tmp_path.iterdir()) == []


def test_a_trace_of_containers_without_events_is_an_empty_graph(tmp_path_factory):
    """pajeng's containers.trace creates containers but no event: its hierarchy is a bare
    root without leaves (it made leaf_nodes index past its leaves)."""
    _, archive = paje_archive(tmp_path_factory, "containers.trace")
    assert archive.hierarchy.leaves == 0 and len(archive.hierarchy.leaf_nodes()) == 0
    for depth in (None, 0, 2):
        assert archive.topology(depth=depth).to_json()["nodes"] == []
