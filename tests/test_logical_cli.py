"""`ccg logical` and the shapes of a logical-time answer: the JSON of the issue (a list per
location in trace order, the phases with their clusters), the text summary, pictures,
the pandas table, `Archive.logical`, and the exit statuses."""

from __future__ import annotations

import json

import ccgformat
from ccgformat.cli import main
from ccgformat.model import EventBatch, EventKind as K

from .logical_support import calls, definitions


def archive_of(tmp_path, trace, locations):
    path = tmp_path / "trace.ccg"
    ccgformat.write_trace(path, definitions(locations), [(location, [EventBatch.from_events(events)])
                                                         for location, events in trace.items()])
    return path


def exchange(tmp_path):
    """Three ranks sending right and receiving from the left; rank 2 has no message in the
    second round and rank 3 none at all."""
    trace = {rank: calls([(K.SEND, (rank + 1) % 3, 0), (K.RECV, (rank - 1) % 3, 0)]
                         + ([(K.SEND, 1 - rank, 1), (K.RECV, 1 - rank, 1)] if rank < 2 else []))
             for rank in range(3)}
    trace[3] = calls([])
    return archive_of(tmp_path, trace, 4)


def test_json_has_the_issues_shape(tmp_path, capsys):
    path = exchange(tmp_path)
    assert main(["logical", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    with ccgformat.open(path) as archive:
        result = archive.logical()
    assert document["scheme"] == "ravel" and document["timer_resolution"] == result.timer_resolution
    assert [entry["location"] for entry in document["locations"]] == [0, 1, 2, 3]
    assert [entry["name"] for entry in document["locations"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    for location, entry in enumerate(document["locations"]):
        rows = result.rows_of(location)
        assert entry["events"] == result.event[rows].tolist() == sorted(entry["events"])
        for key, column in (("steps", "step"), ("lateness", "lateness"), ("phases", "phase"),
                            ("clusters", "cluster"), ("aggregate_lateness", "aggregate_lateness")):
            assert entry[key] == getattr(result, column)[rows].tolist()
    assert document["locations"][3]["events"] == []
    # rank 0's events: main's ENTER, then MPI_Send at 1..3 (SEND at 2), MPI_Recv at 4..6, ...
    assert document["locations"][0]["events"] == [2, 5, 8, 11]
    # round 1 (a ring of three) and round 2 (ranks 0 and 1) are cycles of groups: two phases,
    # the second at offset 0 + 1 + 1 = 2 (steps 2 * 2 + 1 = 5 and 7); three and two locations,
    # at most 8 clusters: a cluster each
    assert document["locations"][0]["steps"] == [1, 3, 5, 7] and document["locations"][2]["steps"] == [1, 3]
    assert document["phases"] == [{"phase": 0, "first_step": 1, "last_step": 3, "events": 6, "clusters": [[0], [1], [2]]},
                                  {"phase": 1, "first_step": 5, "last_step": 7, "events": 4, "clusters": [[0], [1]]}]
    assert main(["logical", str(path), "--json", "--scheme", "lamport"]) == 0
    lamport = json.loads(capsys.readouterr().out)
    assert lamport["scheme"] == "lamport" and "aggregate_lateness" not in lamport["locations"][0]
    assert lamport["locations"][0]["steps"] == [0, 1, 2, 3]


def test_text_pictures_and_errors(tmp_path, capsys):
    path = exchange(tmp_path)
    assert main(["logical", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["location", "events", "steps", "mean", "lateness", "s", "max", "lateness", "s"]
    assert out[1].split()[:4] == ["rank", "0", "4", "1-7"]
    assert out[-2].startswith("10 communication events in 8 steps, 2 phases (ravel scheme)")
    assert main(["logical", str(path), "--png", str(tmp_path / "l.png"), "--svg", str(tmp_path / "l.svg")]) == 0
    assert (tmp_path / "l.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "l.svg").read_text().startswith("<svg")
    assert capsys.readouterr().out == ""
    assert main(["logical", str(path), "--scheme", "vector"]) == 2
    (tmp_path / "bad.ccg").write_bytes(b"not an archive")
    assert main(["logical", str(tmp_path / "bad.ccg")]) == 1


def test_the_pandas_table(tmp_path):
    with ccgformat.open(exchange(tmp_path)) as archive:
        result = archive.logical("lamport", clusters=1)
    frame = result.to_pandas()
    assert list(frame.columns) == ["location", "location_name", "event", "kind", "step", "phase", "lateness",
                                   "aggregate_lateness", "cluster", "partner", "leave"]
    assert frame["step"].tolist() == result.step.tolist()
    assert frame["kind"].tolist()[:2] == ["SEND", "RECV"]
    assert frame["location_name"].tolist()[0] == "rank 0" and set(frame["cluster"]) == {0}
    assert frame.attrs == {"scheme": "lamport", "timer_resolution": result.timer_resolution}
    assert type(result) is ccgformat.Logical
