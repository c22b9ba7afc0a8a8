"""Tests of the EPILOG importer (ccgformat/formats/epilog/).

Besides the corpus files, the tests write EPILOG files themselves with a small writer that
follows the specification (Scalasca 1.4 ``elg_rw.c`` / ``elg_readcb.c[.gen]``: header,
``[length][type][body]`` records, string continuation, location ids written or not) and
compute the expected model events from what they wrote.
"""

from __future__ import annotations

import gzip
import json
import struct
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.errors import FormatError, TraceError
from ccgformat.formats import detect
from ccgformat.formats import epilog
from ccgformat.model import EventBatch, EventKind

from .corpus import corpus_path

NO_ID = 0xFFFFFFFF
CORPUS = ("epilog", "GENERATED-by-scalasca-1.4-elg_rw")

# --------------------------------------------------------------------------- test-only writer

#: Event records: type, fields before the metric values (names, struct format), metric
#: values?, fields after them (elg_readcb.c.gen).
EVENTS: dict[str, tuple[int, tuple[str, str], bool, tuple[str, str]]] = {
    "ENTER": (101, ("rid", "I"), True, ("", "")),
    "EXIT": (102, ("", ""), True, ("", "")),
    "MPI_SEND": (103, ("dlid cid tag sent", "IIII"), False, ("", "")),
    "MPI_RECV": (104, ("slid cid tag", "III"), False, ("", "")),
    "MPI_COLLEXIT": (105, ("", ""), True, ("rlid cid sent recvd", "IIII")),
    "OMP_FORK": (106, ("", ""), False, ("", "")),
    "OMP_JOIN": (107, ("", ""), False, ("", "")),
    "OMP_ALOCK": (108, ("lkid", "I"), False, ("", "")),
    "OMP_RLOCK": (109, ("lkid", "I"), False, ("", "")),
    "OMP_COLLEXIT": (110, ("", ""), True, ("", "")),
    "ENTER_CS": (111, ("csid", "I"), True, ("", "")),
    "MPI_PUT_1TS": (112, ("dlid wid rmaid nbytes", "IIII"), False, ("", "")),
    "MPI_PUT_1TE": (113, ("slid wid rmaid", "III"), False, ("", "")),
    "MPI_GET_1TS": (114, ("dlid wid rmaid nbytes", "IIII"), False, ("", "")),
    "MPI_GET_1TE": (115, ("slid wid rmaid", "III"), False, ("", "")),
    "MPI_GET_1TO": (116, ("rmaid", "I"), False, ("", "")),
    "MPI_WINEXIT": (117, ("", ""), True, ("wid cid synex", "IIB")),
    "MPI_WINCOLLEXIT": (118, ("", ""), True, ("wid", "I")),
    "MPI_WIN_LOCK": (119, ("llid wid ltype", "IIB"), False, ("", "")),
    "MPI_WIN_UNLOCK": (120, ("llid wid", "II"), False, ("", "")),
    "MPI_PUT_1TE_REMOTE": (121, ("dlid wid rmaid", "III"), False, ("", "")),
    "MPI_GET_1TS_REMOTE": (122, ("dlid wid rmaid nbytes", "IIII"), False, ("", "")),
    "PUT_1TS": (123, ("dlid rmaid nbytes", "III"), False, ("", "")),
    "PUT_1TE": (124, ("slid rmaid", "II"), False, ("", "")),
    "GET_1TS": (125, ("dlid rmaid nbytes", "III"), False, ("", "")),
    "GET_1TE": (126, ("slid rmaid", "II"), False, ("", "")),
    "PUT_1TE_REMOTE": (127, ("dlid rmaid", "II"), False, ("", "")),
    "GET_1TS_REMOTE": (128, ("dlid rmaid nbytes", "III"), False, ("", "")),
    "COLLEXIT": (129, ("", ""), True, ("rlid cid sent recvd", "IIII")),
    "ALOCK": (130, ("lkid", "I"), False, ("", "")),
    "RLOCK": (131, ("lkid", "I"), False, ("", "")),
    "MPI_SEND_COMPLETE": (132, ("reqid", "I"), False, ("", "")),
    "MPI_RECV_REQUEST": (133, ("reqid", "I"), False, ("", "")),
    "MPI_REQUEST_TESTED": (134, ("reqid", "I"), False, ("", "")),
    "MPI_CANCELLED": (135, ("reqid", "I"), False, ("", "")),
    "LOG_OFF": (201, ("", ""), True, ("", "")),
    "LOG_ON": (202, ("", ""), True, ("", "")),
    "ENTER_TRACING": (203, ("", ""), True, ("", "")),
    "EXIT_TRACING": (204, ("", ""), True, ("", "")),
}


def field_names(name: str) -> list[str]:
    _, (before, _), _, (after, _) = EVENTS[name]
    return before.split() + after.split()


class ElgFile:
    """Writes EPILOG records in the order they are added (test-only, from the spec)."""

    def __init__(self, order: str = "<", minor: int = 9):
        self.order = order
        self.chunks = [b"EPILOG\0" + bytes([1, minor, 1 if order == "<" else 2])]

    def record(self, kind: int, fmt: str = "", *values, tail: bytes = b"") -> None:
        body = struct.pack(self.order + fmt, *values) + tail
        assert len(body) <= 255
        self.chunks.append(bytes([len(body), kind]) + body)

    def string(self, strid: int, text: str) -> None:
        """STRING, with STRING_CNT records when the text and its NUL exceed 250 bytes."""
        raw = text.encode() + b"\0"
        if len(raw) <= 250:
            self.record(1, "IB", strid, 0, tail=raw)
            return
        rest = [raw[i:i + 255] for i in range(250, len(raw), 255)]
        self.record(1, "IB", strid, len(rest), tail=raw[:250])
        for chunk in rest:
            self.record(2, tail=chunk)

    def event(self, name: str, lid: int | None, seconds: float, values=(), metv=()) -> None:
        """An event record; ``lid`` None leaves the location id out."""
        kind, (before, fmt_before), has_metv, (after, fmt_after) = EVENTS[name]
        count = len(before.split())
        fmt = ("" if lid is None else "I") + "d" + fmt_before + "Q" * len(metv) + fmt_after
        assert has_metv or not metv
        head = () if lid is None else (lid,)
        self.record(kind, fmt, *head, seconds, *values[:count], *metv, *values[count:])

    def data(self, compress: bool = False) -> bytes:
        data = b"".join(self.chunks)
        return gzip.compress(data) if compress else data

    def write(self, path: Path, compress: bool = False) -> Path:
        path.write_bytes(self.data(compress))
        return path


# --------------------------------------------------------------------------- scenario and expectation

REQUEST = 2   # ELG_ATTR_REQUEST


class Run:
    """A trace to write: definitions by id, records per file order, and what they mean.

    Records are ``(name, location, microseconds, values, metv)`` or ``("ATTR_UI1" |
    "ATTR_UI4", type, value)``; ``merged`` writes location ids, otherwise the file is a
    per-rank trace of location 0 whose events carry 0xFFFFFFFF (``lid_written``) or none.
    """

    def __init__(self, locations: int, regions: dict[int, str], metrics: int = 0, merged: bool = True,
                 lid_written: bool = True, define_metrics: bool = True):
        self.lids = [100 + 7 * i for i in range(locations)] if merged else [42]
        self.regions = regions
        self.metrics = metrics
        self.merged, self.lid_written, self.define_metrics = merged, lid_written, define_metrics
        #: whether a merged trace defines MPI_COMM_WORLD (a record holds at most 1,960 ranks)
        self.communicator = merged
        self.call_sites = {2: next(iter(regions))}
        self.cid = 3
        self.records: list[tuple] = []

    def lid(self, location: int) -> int | None:
        if self.merged:
            return self.lids[location]
        return NO_ID if self.lid_written else None

    def peer(self, location: int) -> int:
        """A peer's id as written: its location id (merged) or rank (per-rank)."""
        return self.lids[location] if self.merged else location

    def file(self, order: str = "<") -> ElgFile:
        f = ElgFile(order)
        names = ["cluster", "node A"] + [f"rank {i}" for i in range(len(self.lids))] + ["thread 0", "USR", "MPI",
                                                                                         "hw"]
        names += list(self.regions.values()) + [f"PAPI_{m}" for m in range(self.metrics)]
        ids = {text: 1000 + i for i, text in enumerate(dict.fromkeys(names))}
        for text, strid in ids.items():
            f.string(strid, text)
        f.record(3, "III", 0, 1, ids["cluster"])
        f.record(4, "IIIId", 0, 0, 4, ids["node A"], 2.5e9)
        for rank, lid in enumerate(self.lids):
            f.record(5, "II", rank, ids[f"rank {rank}"])
            f.record(6, "III", 0, rank, ids["thread 0"])
            f.record(7, "IIIII", lid, 0, 0, rank, 0)
        for rid, text in self.regions.items():
            f.record(9, "IIIIIIB", rid, ids[text], NO_ID, 1, 2, ids["MPI" if text.startswith("MPI") else "USR"],
                     4 if text == "MPI_Barrier" else 1)
        for csid, rid in self.call_sites.items():
            f.record(15, "IIIII", csid, NO_ID, 12, rid, NO_ID)
        if self.define_metrics:
            for m in range(self.metrics):
                f.record(10, "IIIBBB", 50 + m, ids[f"PAPI_{m}"], ids["hw"], m % 2, 0, 0)
        if self.merged and self.communicator:
            ranks = len(self.lids)
            bits = bytes(sum(1 << (r % 8) for r in range(ranks) if r // 8 == b) for b in range((ranks + 7) // 8))
            f.record(11, "IBI", self.cid, 0, len(bits), tail=bits)
        f.record(14, "I", len(self.records))
        f.record(13)
        for record in self.records:
            if record[0].startswith("ATTR"):
                name, attr_type, value = record
                f.record(60 if name == "ATTR_UI1" else 61, "BB" if name == "ATTR_UI1" else "BI", attr_type, value)
            else:
                name, location, micros, values, metv = record
                f.event(name, self.lid(location), micros / 1e6, values, metv)
        return f

    def expected(self) -> dict[int, list[tuple]]:
        """Per location, the model events (GENERIC texts resolved), computed from the records."""
        regions = {rid: i for i, rid in enumerate(self.regions)}
        peers = {self.peer(i): i for i in range(len(self.lids))}
        out: dict[int, list[tuple]] = defaultdict(list)
        stacks: dict[int, list[int]] = defaultdict(list)
        attributes: list[tuple] = []
        for record in self.records:
            if record[0].startswith("ATTR"):
                attributes.append(record)
                continue
            name, loc, micros, values, metv = record
            events = out[loc]
            fields = dict(zip(field_names(name), values)) if name in EVENTS else {}

            def add(kind, ref=0, comm=0, tag=0, request=0, size=0, recv_size=0, value=0):
                events.append((micros, kind.name, ref, comm, tag, request, size, recv_size, value))

            request = None
            for j, attr in enumerate(attributes):
                if j == len(attributes) - 1 and attr[0] == "ATTR_UI4" and attr[1] == REQUEST and \
                        name in ("MPI_SEND", "MPI_RECV"):
                    request = attr[2]
                else:
                    add(EventKind.GENERIC, f"epilog:{attr[0]}", value={"type": attr[1], "value": attr[2]})
            attributes = []
            tagged = {"COLLEXIT": {}, "OMP_COLLEXIT": {}, "ENTER_CS": {"csid": fields.get("csid")},
                      "MPI_WINEXIT": fields, "MPI_WINCOLLEXIT": fields}
            if name in tagged:
                add(EventKind.GENERIC, f"epilog:{name}", value=tagged[name])
            for m, sample in enumerate(metv):
                add(EventKind.METRIC, m, value=sample - (1 << 64) if sample >= 1 << 63 else sample)
            if name in ("ENTER", "ENTER_CS"):
                rid = fields["rid"] if name == "ENTER" else self.call_sites[fields["csid"]]
                stacks[loc].append(regions[rid])
                add(EventKind.ENTER, regions[rid])
            elif name in ("EXIT", "OMP_COLLEXIT", "MPI_WINEXIT", "MPI_WINCOLLEXIT"):
                add(EventKind.LEAVE, stacks[loc].pop())
            elif name in ("MPI_SEND", "MPI_RECV"):
                send = name == "MPI_SEND"
                kind = {(True, False): EventKind.SEND, (True, True): EventKind.ISEND,
                        (False, False): EventKind.RECV, (False, True): EventKind.IRECV}[send, request is not None]
                add(kind, peers[fields["dlid" if send else "slid"]], 0, fields["tag"], request or 0,
                    fields["sent"] if send else 0)
            elif name in ("MPI_COLLEXIT", "COLLEXIT"):
                region = stacks[loc].pop()
                root = -1 if fields["rlid"] == NO_ID else peers[fields["rlid"]]
                add(EventKind.COLL_END, region, 0, root, 0, fields["sent"], fields["recvd"])
                add(EventKind.LEAVE, region)
            elif name == "MPI_SEND_COMPLETE":
                add(EventKind.REQUEST_COMPLETE, request=fields["reqid"])
            elif name == "MPI_RECV_REQUEST":
                add(EventKind.IRECV_REQUEST, request=fields["reqid"])
            elif name.startswith("UNKNOWN"):
                add(EventKind.GENERIC, "epilog:UNKNOWN", value=values)
            else:
                add(EventKind.GENERIC, f"epilog:{name}", value=fields)
        return dict(out)


def resolved(definitions, streams) -> dict[int, list[tuple]]:
    """The reader's events per location, GENERIC kind names and fields resolved."""
    result = {}
    for location, batches in streams:
        rows = []
        for event in EventBatch.concat(list(batches)).rows():
            row = (event.time, EventKind(event.kind).name) + tuple(event[2:])
            if event.kind == EventKind.GENERIC:
                row = row[:2] + (definitions.strings[event.ref],) + row[3:8] + \
                    (json.loads(definitions.strings[event.value]),)
            rows.append(row)
        result[location] = rows
    return result


def read_file(path: Path):
    definitions, streams = epilog.read(path)
    return definitions, resolved(definitions, streams)


# --------------------------------------------------------------------------- the corpus

def ns(*seconds: str) -> list[int]:
    """Nanosecond ticks of decimal second values (the corpus times are within 1 ns of them)."""
    return [round(float(s) * 1e9) for s in seconds]


def corpus_expected() -> dict[int, list[tuple]]:
    """The events of ref_merged_{le,be}.elg, read off the files' bytes."""
    def calls(send: bool) -> list[tuple]:
        t = ns("1.0", "1.001", "1.002" if send else "1.003", "1.0025" if send else "1.0031", "1.004", "1.005",
               "1.006", "1.008" if send else "1.008001", "1.009")
        region, peer = (1, 1) if send else (2, 0)
        p2p = ("SEND", peer, 0, 42, 0, 1024 if send else 0, 0, 0) if send else ("RECV", peer, 0, 42, 0, 0, 0, 0)
        return [(t[0], "ENTER", 0, 0, 0, 0, 0, 0, 0), (t[1], "ENTER", region, 0, 0, 0, 0, 0, 0),
                (t[2],) + p2p, (t[3], "LEAVE", region, 0, 0, 0, 0, 0, 0),
                (t[4], "ENTER", 4, 0, 0, 0, 0, 0, 0), (t[5], "LEAVE", 4, 0, 0, 0, 0, 0, 0),
                (t[6], "ENTER", 3, 0, 0, 0, 0, 0, 0), (t[7], "COLL_END", 3, 0, 0, 0, 0, 0, 0),
                (t[7], "LEAVE", 3, 0, 0, 0, 0, 0, 0), (t[8], "LEAVE", 0, 0, 0, 0, 0, 0, 0)]
    return {0: calls(True), 1: calls(False)}


@pytest.mark.parametrize("name", ["ref_merged_le.elg", "ref_merged_be.elg"])
def test_corpus_merged(name):
    definitions, events = read_file(corpus_path(*CORPUS, name))
    assert events == corpus_expected()
    assert definitions.timer_resolution == 10 ** 9
    assert [r.name for r in definitions.regions][:4] == ["main", "MPI_Send", "MPI_Recv", "MPI_Barrier"]
    assert definitions.regions[4].name == "long_region_name_" + "x" * 582      # 599 bytes: two STRING_CNT
    assert [r.role for r in definitions.regions] == ["function"] * 3 + ["barrier", "user_region"]
    assert [(n.name, n.kind, n.parent) for n in definitions.system_tree] == [
        ("cluster", "machine", None), ("node0", "node", 0), ("rank 0", "process", 1), ("rank 1", "process", 1)]
    assert [(loc.name, loc.parent) for loc in definitions.locations] == [("thread 0", 2), ("thread 0", 3)]
    assert [(c.name, c.members) for c in definitions.communicators] == [("comm 0", (0, 1))]


def test_corpus_byte_orders_give_the_same_archive(tmp_path):
    archives = []
    for name in ("ref_merged_le.elg", "ref_merged_be.elg"):
        target = tmp_path / (name + ".ccg")
        report = ccgformat.convert(corpus_path(*CORPUS, name), target)
        assert (report.format, report.locations, report.events) == ("epilog", 2, 20)
        archives.append(ccgformat.open(target))
    le, be = archives
    try:
        le_defs, be_defs = le.definitions, be.definitions
        assert le_defs.extensions["epilog"].pop("byte_order") == "little"
        assert be_defs.extensions["epilog"].pop("byte_order") == "big"
        assert le_defs == be_defs
        assert le.locations == be.locations == [0, 1]
        for location in le.locations:
            a = EventBatch.concat(list(le.location(location).events()))
            b = EventBatch.concat(list(be.location(location).events()))
            assert a.equals(b)
            assert [e[:2] for e in resolved(le_defs, [(location, [a])])[location]] == \
                [e[:2] for e in corpus_expected()[location]]
    finally:
        le.close()
        be.close()


def test_corpus_per_rank_file():
    definitions, events = read_file(corpus_path(*CORPUS, "ref_local_rank1_le.elg"))
    # its times 1.0, 1.001, 1.003, 1.0031, 1.009 s are exact at 10**4 ticks per second
    assert definitions.timer_resolution == 10 ** 4
    assert [(loc.name, loc.kind) for loc in definitions.locations] == [("thread 0", "thread"),
                                                                        ("rank 0", "process")]
    assert [r.name for r in definitions.regions] == ["main", "MPI_Recv"]
    assert events == {0: [(10000, "ENTER", 0, 0, 0, 0, 0, 0, 0), (10010, "ENTER", 1, 0, 0, 0, 0, 0, 0),
                          (10030, "RECV", 1, 0, 42, 0, 0, 0, 0), (10031, "LEAVE", 1, 0, 0, 0, 0, 0, 0),
                          (10090, "LEAVE", 0, 0, 0, 0, 0, 0, 0)]}
    assert definitions.extensions["epilog"]["per_rank"] is True
    assert definitions.extensions["epilog"]["placeholder_ranks"] == [0]


def test_corpus_is_detected(tmp_path):
    source = corpus_path(*CORPUS, "ref_merged_be.elg")
    assert detect(source) == "epilog"
    packed = tmp_path / "trace.bin"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    assert detect(packed) == "epilog"
    assert read_file(packed)[1] == read_file(source)[1]


# --------------------------------------------------------------------------- every record type

def every_record_run() -> Run:
    run = Run(2, {7: "main", 10: "MPI_Barrier", 13: "work", 16: "MPI_Win_fence"}, metrics=2)
    run.call_sites = {2: 13}
    me, other = run.peer(0), run.peer(1)
    half = struct.unpack("<Q", struct.pack("<d", 0.5))[0]
    m = [(1, half), (5, half), (9, 1 << 63), (10, 0), (11, 7), (12, 8), (13, 9), (14, 10), (15, 11), (16, 12)]
    t = iter(range(1_000_001, 2_000_000, 10))
    r = run.records
    r += [("ENTER", 0, next(t), (7,), m[0]), ("ENTER", 1, next(t), (7,), m[1])]
    r += [("ATTR_UI4", REQUEST, 77), ("MPI_SEND", 0, next(t), (other, 3, 9, 100), ()),
          ("MPI_SEND", 0, next(t), (other, 3, 10, 200), ()), ("MPI_SEND_COMPLETE", 0, next(t), (77,), ()),
          ("MPI_RECV", 1, next(t), (me, 3, 9), ()),
          ("ATTR_UI1", 1, 1), ("MPI_RECV", 1, next(t), (me, 3, 10), ()),
          ("MPI_RECV_REQUEST", 1, next(t), (5,), ()), ("ATTR_UI4", 3, 64), ("ATTR_UI4", REQUEST, 5),
          ("MPI_RECV", 1, next(t), (me, 3, 11), ()),
          ("MPI_REQUEST_TESTED", 1, next(t), (5,), ()), ("MPI_CANCELLED", 1, next(t), (6,), ())]
    r += [("ENTER", 0, next(t), (10,), m[2]), ("MPI_COLLEXIT", 0, next(t), (me, 3, 8, 16), m[3]),
          ("ENTER", 0, next(t), (10,), m[4]), ("COLLEXIT", 0, next(t), (NO_ID, 3, 0, 4), m[5])]
    r += [(name, 0, next(t), values, ()) for name, values in [
        ("OMP_FORK", ()), ("OMP_JOIN", ()), ("OMP_ALOCK", (3,)), ("OMP_RLOCK", (3,)), ("ALOCK", (4,)),
        ("RLOCK", (4,))]]
    r += [("ENTER_CS", 0, next(t), (2,), m[6]), ("OMP_COLLEXIT", 0, next(t), (), m[7]),
          ("ENTER", 0, next(t), (16,), m[8]), ("MPI_WINEXIT", 0, next(t), (1, 3, 1), m[9]),
          ("ENTER", 0, next(t), (16,), m[0]), ("MPI_WINCOLLEXIT", 0, next(t), (1,), m[1])]
    for name in ("MPI_PUT_1TS", "MPI_PUT_1TE", "MPI_GET_1TS", "MPI_GET_1TE", "MPI_GET_1TO",
                 "MPI_WIN_LOCK", "MPI_WIN_UNLOCK", "MPI_PUT_1TE_REMOTE", "MPI_GET_1TS_REMOTE", "PUT_1TS",
                 "PUT_1TE", "GET_1TS", "GET_1TE", "PUT_1TE_REMOTE", "GET_1TS_REMOTE"):
        r.append((name, 1, next(t), tuple(range(1, len(field_names(name)) + 1)), ()))
    r += [(name, 1, next(t), (), m[2]) for name in ("LOG_OFF", "LOG_ON", "ENTER_TRACING", "EXIT_TRACING")]
    r += [("EXIT", 0, next(t), (), m[3]), ("EXIT", 1, next(t), (), m[4])]
    return run


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("compress", [False, True])
def test_every_event_record(tmp_path, order, compress):
    run = every_record_run()
    f = run.file(order)
    f.record(150, "Id3s", run.lids[1], 1.999999, b"abc")          # a type this reader does not know
    run.records.append(("UNKNOWN", 1, 1_999_999, {"type": 150, "data": "616263"}, ()))
    definitions, events = read_file(f.write(tmp_path / "t.elg", compress))
    assert events == run.expected()
    assert definitions.timer_resolution == 10 ** 6
    assert [(m.name, m.value_type, m.mode) for m in definitions.metrics] == [
        ("PAPI_0", "uint64", "accumulated"), ("PAPI_1", "double", "accumulated")]
    assert [r.name for r in definitions.regions] == ["main", "MPI_Barrier", "work", "MPI_Win_fence"]
    assert [(c.name, c.members) for c in definitions.communicators] == [("comm 3", (0, 1))]
    assert definitions.extensions["epilog"]["location_ids"] == run.lids
    assert definitions.extensions["epilog"]["region_ids"] == [7, 10, 13, 16]
    assert definitions.system_tree[1].name == "node A"


def test_every_event_record_through_an_archive(tmp_path):
    source = every_record_run().file(">").write(tmp_path / "t.elg")
    target = tmp_path / "t.ccg"
    report = ccgformat.convert(source, target)
    definitions, streams = epilog.read(source)
    expected = {loc: EventBatch.concat(list(batches)) for loc, batches in streams}
    assert report.events == sum(len(b) for b in expected.values())
    with ccgformat.open(target) as archive:
        assert archive.definitions.strings == definitions.strings
        for location, batch in expected.items():
            assert EventBatch.concat(list(archive.location(location).events())).equals(batch)


# --------------------------------------------------------------------------- generated traces

@st.composite
def runs(draw) -> Run:
    merged = draw(st.booleans())
    locations = draw(st.integers(1, 3)) if merged else 1
    metrics = draw(st.integers(0, 2))
    run = Run(locations, {3: "main", 4: "MPI_Barrier", 9: "solve", 11: "x" * draw(st.integers(200, 700))},
              metrics, merged, lid_written=draw(st.booleans()), define_metrics=draw(st.booleans()))
    clocks = [draw(st.integers(1_000_001, 5_000_001)) | 1 for _ in range(locations)]   # odd: 1 us resolution
    per_location: list[list[tuple]] = []
    for loc in range(locations):
        depth, records = 0, []
        for _ in range(draw(st.integers(0, 25))):
            clocks[loc] += draw(st.integers(0, 3000))
            metv = tuple(draw(st.integers(0, 2 ** 64 - 1)) for _ in range(metrics))
            op = draw(st.sampled_from(["enter", "exit", "send", "isend", "recv", "irecv", "coll", "generic"]))
            peer = run.peer(draw(st.integers(0, locations - 1)))
            tag = draw(st.integers(0, 2 ** 32 - 1))
            if op == "enter" or (op == "exit" and depth == 0):
                records.append([("ENTER", loc, clocks[loc], (draw(st.sampled_from([3, 9, 11])),), metv)])
                depth += 1
            elif op == "exit":
                records.append([("EXIT", loc, clocks[loc], (), metv)])
                depth -= 1
            elif op in ("send", "isend"):
                send = ("MPI_SEND", loc, clocks[loc], (peer, run.cid, tag, draw(st.integers(0, 2 ** 32 - 1))), ())
                records.append([("ATTR_UI4", REQUEST, tag)] * (op == "isend") + [send])
            elif op in ("recv", "irecv"):
                recv = ("MPI_RECV", loc, clocks[loc], (peer, run.cid, tag), ())
                records.append([("ATTR_UI4", REQUEST, tag)] * (op == "irecv") + [recv])
            elif op == "coll":
                root = draw(st.sampled_from([NO_ID, peer]))
                records.append([("ENTER", loc, clocks[loc], (4,), metv),
                                ("MPI_COLLEXIT", loc, clocks[loc] + 5, (root, run.cid, 1, 2), metv)])
                clocks[loc] += 5
            else:
                name = draw(st.sampled_from(["OMP_FORK", "MPI_REQUEST_TESTED", "LOG_OFF", "MPI_GET_1TO"]))
                values = tuple(range(len(field_names(name))))
                records.append([(name, loc, clocks[loc], values, metv if EVENTS[name][2] else ())])
        for _ in range(depth):
            clocks[loc] += 1
            records.append([("EXIT", loc, clocks[loc], (), tuple(0 for _ in range(metrics)))])
        per_location.append(records)
    # merged traces are ordered by time across locations; a record group keeps its attributes
    groups = sorted((group for records in per_location for group in records), key=lambda g: g[-1][2])
    run.records = [record for group in groups for record in group]
    return run


@settings(max_examples=30, deadline=None)
@given(run=runs(), order=st.sampled_from("<>"), compress=st.booleans())
def test_generated_traces(run, order, compress):
    with tempfile.TemporaryDirectory() as folder:
        definitions, events = read_file(run.file(order).write(Path(folder) / "g", compress))
    expected = run.expected()
    # times are whole microseconds: the reader picks the coarsest exact resolution, 10**6
    # ticks per second or coarser when every time is a multiple of 10, 100, ... us
    resolution = definitions.timer_resolution
    assert resolution in [10 ** k for k in range(7)] or not any(expected.values())
    scale = 10 ** 6 // resolution if any(expected.values()) else 1
    assert {loc: [(e[0] * scale, *e[1:]) for e in rows] for loc, rows in events.items()} == expected
    times = [e[0] for rows in expected.values() for e in rows]
    if times and resolution > 1:  # and no coarser one would do
        assert any(t % (10 * scale) for t in times)
    assert definitions.regions[3].name == run.regions[11]
    bearing = any(EVENTS[r[0]][2] for r in run.records if r[0] in EVENTS)
    assert len(definitions.metrics) == (run.metrics if run.define_metrics or bearing else 0)
    # a file with one LOCATION and no event naming a location id is a per-rank trace
    located = run.merged and (len(run.lids) > 1 or any(r[0] in EVENTS for r in run.records))
    assert definitions.extensions["epilog"]["per_rank"] is (not located)


@settings(max_examples=20, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_characters="\0"), min_size=0, max_size=900))
def test_strings_of_any_length(text):
    f = ElgFile(">")
    f.string(0, text)
    f.record(9, "IIIIIIB", 5, 0, NO_ID, 0, 0, NO_ID, 1)
    with tempfile.TemporaryDirectory() as folder:
        definitions, _ = read_file(f.write(Path(folder) / "s"))
    assert [r.name for r in definitions.regions] == [text]


# --------------------------------------------------------------------------- per-rank files

def per_rank_file(offsets: list[tuple[float, float]], micros: list[int]) -> ElgFile:
    f = ElgFile()
    f.record(7, "IIIII", 3, 0, 0, 3, 0)
    f.string(0, "main")
    f.record(9, "IIIIIIB", 0, 0, NO_ID, 0, 0, NO_ID, 1)
    for ltime, offset in offsets[:1]:
        f.record(12, "dd", ltime, offset)
    f.event("ENTER", None, micros[0] / 1e6, (0,))
    f.event("MPI_SEND", None, micros[1] / 1e6, (6, 9, 1, 8))
    f.event("EXIT", NO_ID, micros[2] / 1e6)
    for ltime, offset in offsets[1:]:
        f.record(12, "dd", ltime, offset)
    return f


@pytest.mark.parametrize("offsets", [[], [(0.0, 0.25)], [(1.0, 0.5), (3.0, 0.5625)], [(2.0, 1.0), (2.0, 7.0)]])
def test_per_rank_offsets(tmp_path, offsets):
    micros = [1_000_003, 2_000_003, 3_000_003]
    definitions, events = read_file(per_rank_file(offsets, micros).write(tmp_path / "r"))
    seconds = [m / 1e6 for m in micros]
    if len(offsets) == 1 or (offsets and offsets[0][0] == offsets[1][0]):
        seconds = [t + offsets[0][1] for t in seconds]
    elif offsets:
        (l0, o0), (l1, o1) = offsets
        seconds = [t + ((o1 - o0) / (l1 - l0)) * (t - l0) + o0 for t in seconds]
    # the smallest exact power of ten, else nanoseconds
    resolution = next((10 ** k for k in range(10) if all(round(t * 10 ** k) / 10 ** k == t for t in seconds)),
                      10 ** 9)
    assert definitions.timer_resolution == resolution
    assert [e[0] for e in events[0]] == [round(t * resolution) for t in seconds]
    # the peer (rank 6) and communicator (9) of another file become placeholders
    assert [loc.name for loc in definitions.locations] == ["thread 0", "rank 6"]
    assert [(c.name, c.members) for c in definitions.communicators] == [("comm 9", ())]
    assert events[0][1][1:] == ("SEND", 1, 0, 1, 0, 8, 0, 0)


def test_communicator_continuation_and_groups(tmp_path):
    f = ElgFile()
    f.record(7, "IIIII", 0, 0, 0, 5, 0)
    ranks = [0, 5, 2000]                                     # 251 bytes of bits: one MPI_COMM_CNT
    bits = bytearray(251)
    for r in ranks:
        bits[r // 8] |= 1 << (r % 8)
    f.record(11, "IBI", 1, 0, len(bits), tail=bytes(bits[:246]))
    f.record(19, tail=bytes(bits[246:]))
    group = list(range(70))                                  # 70 ranks: one MPI_GROUP_CNT
    f.record(27, "IBI" + "I" * 61, 4, 0, len(group), *group[:61])
    f.record(28, "I" * 9, *group[61:])
    f.record(27, "IBI", 8, 1, 3)                             # WORLD: ranks 0..2, not listed
    f.record(29, "II", 2, 4)
    f.record(29, "II", 7, 8)
    definitions, _ = read_file(f.write(tmp_path / "c"))
    rank = {loc.name: i for i, loc in enumerate(definitions.locations)}
    assert rank["thread 0"] == 0                             # pid 5 is this file's location
    members = {c.name: [definitions.locations[i].name for i in c.members] for c in definitions.communicators}
    named = {r: "thread 0" if r == 5 else f"rank {r}" for r in range(2001)}
    assert members == {"comm 1": [named[r] for r in ranks], "comm 2": [named[r] for r in group],
                       "comm 7": [named[r] for r in range(3)]}


# --------------------------------------------------------------------------- bad input

def small_file(order: str = "<") -> ElgFile:
    f = ElgFile(order)
    f.string(0, "main")
    f.record(7, "IIIII", 0, 0, 0, 0, 0)
    f.record(9, "IIIIIIB", 0, 0, NO_ID, 0, 0, NO_ID, 1)
    f.event("ENTER", 0, 1.0, (0,))
    f.event("EXIT", 0, 2.0)
    return f


def error_of(tmp_path, data: bytes) -> FormatError:
    path = tmp_path / "bad.elg"
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        epilog.read(path)
    assert caught.value.path == str(path)
    return caught.value


def test_a_valid_small_file(tmp_path):
    assert read_file(small_file().write(tmp_path / "ok"))[1] == {
        0: [(1, "ENTER", 0, 0, 0, 0, 0, 0, 0), (2, "LEAVE", 0, 0, 0, 0, 0, 0, 0)]}


@pytest.mark.parametrize("cut", [1, 5, 13])
def test_truncated_record(tmp_path, cut):
    data = small_file().data()
    error = error_of(tmp_path, data[:-cut])
    assert error.offset == len(data) - 14                    # the EXIT record: 2 + 12 bytes
    assert "truncated record" in str(error) and "runs past the end" in str(error)


def test_record_length_past_the_end(tmp_path):
    data = bytearray(small_file().data())
    data[10] = 250                                            # the first record claims 250 bytes
    error = error_of(tmp_path, bytes(data)[:200])
    assert error.offset is not None and "runs past the end" in str(error)


def test_truncated_gzip(tmp_path):
    error = error_of(tmp_path, small_file().data(compress=True)[:-12])
    assert "gzip" in str(error)


@pytest.mark.parametrize("data, message", [
    (b"EPILOX\0\1\x09\1", "bad magic"), (b"EPILOG\0\1", "header"), (b"EPILOG\0\2\0\1", "version"),
    (b"EPILOG\0\1\x09\3", "byte order")])
def test_bad_header(tmp_path, data, message):
    assert message in str(error_of(tmp_path, data))


def test_undefined_region(tmp_path):
    f = small_file()
    f.event("ENTER", 0, 3.0, (9,))
    error = error_of(tmp_path, f.data())
    assert "undefined region id 9" in str(error) and error.offset == len(small_file().data())


def test_undefined_location(tmp_path):
    f = small_file()
    f.event("ENTER", 4, 3.0, (0,))
    error = error_of(tmp_path, f.data())
    assert "undefined location id 4" in str(error) and error.offset == len(small_file().data())


def test_undefined_peer_in_a_merged_file(tmp_path):
    f = small_file()
    f.event("MPI_SEND", 0, 3.0, (8, 0, 0, 0))
    assert "undefined location id 8" in str(error_of(tmp_path, f.data()))


def test_record_too_short_for_its_type(tmp_path):
    f = small_file()
    f.record(103, "Id", 0, 3.0)                               # MPI_SEND without its fields
    error = error_of(tmp_path, f.data())
    assert "truncated MPI_SEND record" in str(error) and error.offset == len(small_file().data())


def test_missing_string_continuation(tmp_path):
    f = ElgFile()
    f.record(1, "IB", 0, 1, tail=b"x" * 250)                 # announces one STRING_CNT
    f.record(13)
    error = error_of(tmp_path, f.data())
    assert "STRING_CNT record expected" in str(error) and error.offset == 10 + 2 + 255


def test_exit_without_enter(tmp_path):
    f = small_file()
    f.event("EXIT", 0, 3.0)
    error = error_of(tmp_path, f.data())
    assert "no region open" in str(error) and error.offset == len(small_file().data())


def test_attribute_at_the_end(tmp_path):
    f = small_file()
    f.record(61, "BI", REQUEST, 3)
    assert "attribute record not followed" in str(error_of(tmp_path, f.data()))


def test_region_left_open_is_a_trace_error(tmp_path):
    f = small_file()
    f.event("ENTER", 0, 3.0, (0,))
    with pytest.raises(TraceError):
        ccgformat.convert(f.write(tmp_path / "open.elg"), tmp_path / "open.ccg")
    assert not (tmp_path / "open.ccg").exists()


def test_sniff():
    assert epilog.sniff(Path("x"), small_file().data()[:64])
    assert epilog.sniff(Path("x"), small_file().data(compress=True)[:64])
    assert not epilog.sniff(Path("x"), gzip.compress(b"%EventDef PajeDefineContainerType")[:64])
    assert not epilog.sniff(Path("x"), b"\x1f\x8b garbage")
    assert not epilog.sniff(Path("x"), b"EPILOG")


# --------------------------------------------------------------------------- speed

def large_file(path: Path, calls: int, locations: int = 4) -> int:
    """A merged trace of ``calls`` ENTER/SEND/EXIT triples per location; returns the event count."""
    f = ElgFile()
    f.string(0, "work")
    f.record(9, "IIIIIIB", 0, 0, NO_ID, 0, 0, NO_ID, 1)
    for lid in range(locations):
        f.record(7, "IIIII", lid, 0, 0, lid, 0)
    f.record(11, "IBI", 0, 0, 1, tail=bytes([(1 << locations) - 1]))
    pack_enter, pack_send, pack_exit = struct.Struct("<BBIdI"), struct.Struct("<BBIdIIII"), struct.Struct("<BBId")
    chunks = []
    for i in range(calls):
        for lid in range(locations):
            t = i * 1e-5 + lid * 1e-7
            chunks.append(pack_enter.pack(16, 101, lid, t, 0))
            chunks.append(pack_send.pack(28, 103, lid, t + 1e-6, (lid + 1) % locations, 0, i, 64))
            chunks.append(pack_exit.pack(12, 102, lid, t + 2e-6))
    path.write_bytes(f.data() + b"".join(chunks))
    return 3 * calls * locations


def test_import_speed(tmp_path):
    """Smoke test of the speed on a larger file (the report gives the figure)."""
    events = large_file(tmp_path / "big.elg", 20_000)
    began = time.perf_counter()
    _, streams = epilog.read(tmp_path / "big.elg")
    read = sum(len(b) for _, batches in streams for b in batches)
    rate = read / (time.perf_counter() - began)
    assert read == events
    assert rate > 50_000, f"{rate:.0f} events/s"


# --------------------------------------------------------------------------- the extension's records

def resolved_records(path: Path) -> tuple[list[list], dict[int, str]]:
    """Every definition record of the file but STRING records, as the parser reads it, with
    each STRING id replaced by its text (what the extension and the model must give back),
    and the STRING records' texts by id."""
    from ccgformat.formats.epilog.definitions import _STRING_FIELDS, DefinitionReader
    from ccgformat.formats.epilog.layouts import ATTRIBUTES
    from ccgformat.formats.epilog.source import load, scan

    source = load(path)
    starts = scan(source)
    kinds = [source.data[start + 1] for start in starts.tolist()]
    defs = DefinitionReader(source, starts[[kind < 100 and kind not in ATTRIBUTES for kind in kinds]]).run()

    def text(name, key, item):
        if key not in _STRING_FIELDS.get(name, {}):
            return item
        if isinstance(item, list):
            return [defs.strings.get(i, i) for i in item]
        return defs.strings.get(item, item)

    return [[r["record"], *(text(r["record"], k, v) for k, v in r.items() if k != "record")]
            for r in defs.records if r["record"] != "STRING"], defs.strings


def restored_rows(definitions) -> list[list]:
    """The extension's rows with each null (a text the model holds) replaced by that text,
    found in the model as docs/formats/epilog.md says, and its STRING rows apart."""
    extension = definitions.extensions["epilog"]
    tree = definitions.system_tree
    names = {kind: iter([node.name for node in tree if node.kind == kind]) for kind in ("machine", "node", "process")}
    regions = dict(zip(extension["region_ids"], definitions.regions))
    metrics = iter(definitions.metrics)
    locations = [row for row in extension["definitions"] if row[0] == "LOCATION"]
    threads = {(row[4], row[5]): definitions.locations[i].name for i, row in enumerate(locations)}
    rows = []
    for row in extension["definitions"]:
        name, row = row[0], list(row)
        if name in ("MACHINE", "NODE", "PROCESS") and None in row:
            row[row.index(None)] = next(names[name.lower()])
        elif name == "THREAD" and row[3] is None:
            row[3] = threads[(row[2], row[1])]
        elif name == "REGION":
            region = regions[row[1]]
            row[2] = region.name if row[2] is None else row[2]
            row[6] = region.group if row[6] is None else row[6]
        elif name == "METRIC" and row[2] is None:
            row[2] = next(metrics).name
        rows.append(row)
    return [row for row in rows if row[0] != "STRING"], {row[1]: row[2] for row in rows if row[0] == "STRING"}


def assert_rows_restore_the_records(path: Path) -> None:
    definitions, _ = read_file(path)
    assert definitions.extensions["epilog"]["extension_version"] == 2
    records, strings = resolved_records(path)
    rows, kept_strings = restored_rows(definitions)
    assert rows == records
    assert set(kept_strings.items()) <= set(strings.items())


@pytest.mark.parametrize("name", ["ref_merged_le.elg", "ref_merged_be.elg", "ref_local_rank1_le.elg"])
def test_the_extension_rows_and_the_model_give_back_every_corpus_record(name):
    assert_rows_restore_the_records(corpus_path(*CORPUS, name))


@settings(max_examples=20, deadline=None)
@given(run=runs(), order=st.sampled_from("<>"))
def test_the_extension_rows_and_the_model_give_back_every_record(run, order):
    with tempfile.TemporaryDirectory() as folder:
        assert_rows_restore_the_records(run.file(order).write(Path(folder) / "g"))


def test_a_string_no_record_names_stays_in_the_rows(tmp_path):
    f = small_file()
    f.string(77, "named by nothing")
    definitions, _ = read_file(f.write(tmp_path / "s.elg"))
    assert ["STRING", 77, "named by nothing"] in definitions.extensions["epilog"]["definitions"]
