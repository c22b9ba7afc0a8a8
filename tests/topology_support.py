"""What the topology tests share: Paje traces converted once (the corpus's and a small
SimGrid-style platform from tools/simgrid_platform.py), pj_dump's variables and links of
them, and the node of a topology that covers a path."""

from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path

from hypothesis import strategies as st

import ccgformat
from ccgformat.model import Communicator, Definitions, Event, EventKind, Location, Metric, Region, SystemTreeNode

from . import query_oracle as oracle
from .corpus import corpus_path, require_tool
from .query_support import bounds

from simgrid_platform import Platform, write_platform  # noqa: E402 (tools/, on the path through tests/corpus.py)

PAJENG = ("paje", "pajeng", "traces")
#: A platform small enough to test in a second: 2 sites x 2 clusters x 3 hosts, 30 steps
SMALL_PLATFORM = Platform(sites=2, clusters=2, hosts=3, steps=30, change=0.3, seed=7)

_CONVERTED: dict[str, tuple[Path, ccgformat.Archive]] = {}


def paje_archive(tmp_path_factory, name: str) -> tuple[Path, ccgformat.Archive]:
    """The Paje trace ``name`` (a corpus file of pajeng's traces, or ``platform``: the
    small SimGrid-style platform) and its archive, converted once per session."""
    found = _CONVERTED.get(name)
    if found is None:
        folder = tmp_path_factory.mktemp("topology")
        if name == "platform":
            source = folder / "platform.trace"
            write_platform(source, SMALL_PLATFORM)
        else:
            source = corpus_path(*PAJENG, name)
        ccgformat.convert(source, folder / "trace.ccg")
        found = _CONVERTED[name] = (source, ccgformat.open(folder / "trace.ccg"))
    return found


def pj_dump(path: Path) -> list[list[str]]:
    """pj_dump's records of ``path`` (dates with 9 decimals), split into fields."""
    done = subprocess.run([require_tool("pj_dump"), "-l", "9", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    return [line.split(", ") for line in done.stdout.splitlines()]


def ticks(date: str, resolution: int) -> Fraction:
    return Fraction(date) * resolution


def container_paths(records: list[list[str]]) -> dict[str, str]:
    """Per container name, the path of its events' location in the hierarchy: its
    containers from the top (the implicit root ``0`` left out; the synthetic root
    ``trace`` over several tops, as `ccgformat.hierarchy` makes it), then its own name
    again (the location the Paje importer makes of a container's events)."""
    parent = {fields[6]: fields[1] for fields in records if fields[0] == "Container" and fields[6] != "0"}
    tops = [name for name, above in parent.items() if above == "0"]
    paths = {}
    for name in parent:
        chain, at = [], name
        while at != "0":
            chain.append(at)
            at = parent[at]
        paths[name] = "/".join((["trace"] if len(tops) > 1 else []) + chain[::-1] + [name])
    return paths


def covering(node_paths: list[str], path: str) -> int:
    """The one node whose path is ``path`` or a prefix of it (asserts there is exactly one:
    the nodes of a cut partition the leaves)."""
    found = [i for i, node in enumerate(node_paths) if path == node or path.startswith(node + "/")]
    assert len(found) == 1, (path, [node_paths[i] for i in found])
    return found[0]


def saved(tmp_path_factory, definitions, trace, **options) -> Path:
    """A generated trace (location -> events) written as an archive in a fresh folder
    (``options``: `ccgformat.save_graph`'s)."""
    path = tmp_path_factory.mktemp("topology") / "t.ccg"
    ccgformat.save_graph(oracle.build_with(definitions, trace), path, **options)
    return path


def drawn_window(data, trace) -> tuple[int, int, int | None]:
    """A window ``[start, stop)`` (not empty; bounds on or next to the trace's event times,
    as often as not) and a depth (None or 0-4) drawn for a hypothesis test."""
    times = [e.time for events in trace.values() for e in events]
    start, stop = sorted([data.draw(bounds(times)) or min(times), data.draw(bounds(times)) or max(times) + 1])
    return start, stop + (start == stop), data.draw(st.one_of(st.none(), st.integers(0, 4)))


@st.composite
def message_traces(draw, samples: bool = False, requests: bool = False):
    """Locations under a random system tree exchanging messages (sends and receives in
    random order and number, some left unmatched; with ``requests`` non-blocking ones
    too, drawn or not) inside one call; with ``samples`` also sampling two metrics, one
    absolute and one accumulated, among them."""
    tree = [SystemTreeNode(f"node{i}", "node", draw(st.sampled_from([None, *range(i)])))
            for i in range(draw(st.integers(1, 4)))]
    count = draw(st.integers(2, 5))
    locations = [Location(f"rank {i}", "thread", draw(st.sampled_from([None, *range(len(tree))]))) for i in range(count)]
    kinds = [EventKind.SEND, EventKind.RECV] + [EventKind.METRIC] * 2 * samples \
        + [EventKind.ISEND, EventKind.IRECV] * (requests and draw(st.booleans()))
    trace = {}
    for location in range(count):
        time = draw(st.integers(0, 100))
        events = [Event(time, EventKind.ENTER, 0)]
        for _ in range(draw(st.integers(0, 10))):
            time += draw(st.sampled_from([0, 1, 7]))
            kind = draw(st.sampled_from(kinds))
            if kind == EventKind.METRIC:
                events.append(Event(time, kind, draw(st.integers(0, 1)), value=draw(st.integers(-5, 100))))
                continue
            events.append(Event(time, kind, draw(st.integers(0, count - 1)), comm=0, tag=draw(st.integers(0, 1)),
                                size=draw(st.sampled_from([0, 8, 1000])),
                                request=draw(st.integers(0, 2)) if kind in (EventKind.ISEND, EventKind.IRECV) else 0))
        events.append(Event(time + 1, EventKind.LEAVE, 0))
        trace[location] = events
    return Definitions(regions=[Region("main")], system_tree=tree, locations=locations,
                       metrics=[Metric("load", "1", "absolute"), Metric("ops", "1", "accumulated")] if samples else [],
                       communicators=[Communicator("world", tuple(range(count)))]), trace
