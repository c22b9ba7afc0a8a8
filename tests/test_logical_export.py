"""Logical time in the OTF2 export, read back by otf2-print: the attributes Ravel saves
(``phase``, ``step``, ``Lateness``, ``Lateness_agg``, UINT64) on the Leave of the call
holding a communication event, or on the event's own record when no call holds it alone,
the same from a scheme's name (streamed) as from an `Archive.logical` answer; only the
OTF2 export takes them."""

from __future__ import annotations

import re
import subprocess

import pytest

import ccgformat
from ccgformat.cli import main
from ccgformat.errors import FormatError
from ccgformat.model import Event, EventBatch, EventKind as K

from .corpus import require_tool
from .logical_support import calls, definitions

_ATTRIBUTE = re.compile(r'\("(\w+)" <\d+>; UINT64; (\d+)\)')


def trace() -> dict[int, list[Event]]:
    """Rank 0: MPI_Send, then one call holding a SEND and a RECV (as MPI_Sendrecv), then,
    after main, a SEND outside any call. Rank 1: MPI_Recv, MPI_Send, MPI_Recv, MPI_Recv."""
    rank0 = calls([(K.SEND, 1, 0)])[:-1] + [
        Event(20, K.ENTER, 1), Event(21, K.SEND, 1, 0, 1, 0, 8), Event(22, K.RECV, 1, 0, 1, 0, 8),
        Event(25, K.LEAVE, 1), Event(30, K.LEAVE, 0), Event(40, K.SEND, 1, 0, 2, 0, 8)]
    rank1 = calls([(K.RECV, 0, 0), (K.SEND, 0, 1), (K.RECV, 0, 1), (K.RECV, 0, 2)], gap=6)
    return {0: rank0, 1: rank1}


def records(tool: str, folder, location: int) -> list[tuple[str, dict[str, int]]]:
    """Per record of ``location`` in order: its name and its attributes (otf2-print)."""
    out = subprocess.run([tool, "-L", str(location), str(folder / "traces.otf2")], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    found: list[tuple[str, dict[str, int]]] = []
    for line in out[out.index(next(x for x in out if x.startswith("-----"))) + 1:]:
        if line.strip().startswith("ADDITIONAL ATTRIBUTES"):
            found[-1][1].update({name: int(value) for name, value in _ATTRIBUTE.findall(line)})
        elif line.strip():
            found.append((line.split()[0], {}))
    return found


@pytest.mark.parametrize("scheme", ["ravel", "lamport"])
def test_the_otf2_export_carries_logical_time(tmp_path, scheme):
    tool = require_tool("otf2-print")
    path = tmp_path / "trace.ccg"
    ccgformat.write_trace(path, definitions(2), [(location, [EventBatch.from_events(events)])
                                                 for location, events in trace().items()])
    with ccgformat.open(path) as archive:
        result = archive.logical(scheme)
        archive.export(tmp_path / "out.otf2", logical=scheme)  # streamed, as ccg logical streams it
        archive.export(tmp_path / "whole.otf2", logical=result)
    names = ["phase", "step", "Lateness"] + (["Lateness_agg"] if scheme == "ravel" else [])
    carried = {0: {}, 1: {}}
    for location in (0, 1):
        got = records(tool, tmp_path / "out.otf2", location)
        assert got == records(tool, tmp_path / "whole.otf2", location)
        assert len(got) == len(trace()[location])
        carried[location] = {index: attributes for index, (_, attributes) in enumerate(got) if attributes}
        assert all(list(attributes) == names for attributes in carried[location].values())
    # rank 0: the MPI_Send's Leave (event 3) carries the SEND (event 2); the call holding the
    # SEND and RECV (events 5, 6) leaves them on their own records; the SEND outside any call
    # (event 9) carries its own; rank 1's calls each hold one event: their Leaves (3, 6, 9, 12)
    assert sorted(carried[0]) == [3, 5, 6, 9] and sorted(carried[1]) == [3, 6, 9, 12]
    rows = {0: [3, 5, 6, 9], 1: [3, 6, 9, 12]}
    for location, carriers in rows.items():
        part = result.rows_of(location)
        for row, carrier in zip(range(part.start, part.stop), carriers):
            want = [result.phase[row], result.step[row], result.lateness[row]] + \
                ([result.aggregate_lateness[row]] if scheme == "ravel" else [])
            assert [carried[location][carrier][name] for name in names] == [int(v) for v in want]


def test_only_the_otf2_export_takes_logical_time(tmp_path):
    path = tmp_path / "trace.ccg"
    ccgformat.write_trace(path, definitions(2), [(location, [EventBatch.from_events(events)])
                                                 for location, events in trace().items()])
    with ccgformat.open(path) as archive, pytest.raises(FormatError, match="paje export does not take logical"):
        archive.export(tmp_path / "out.trace", logical="ravel")
    assert not (tmp_path / "out.trace").exists()
    assert main(["export", str(path), str(tmp_path / "out.json"), "--logical", "ravel"]) == 2
    assert main(["export", "-q", str(path), str(tmp_path / "cli.otf2"), "--logical", "lamport"]) == 0
    assert (tmp_path / "cli.otf2" / "traces.otf2").exists()
