"""EPILOG event and attribute record layouts: fields, metric values, and what each becomes."""

from __future__ import annotations

from dataclasses import dataclass

NO_ID = 0xFFFFFFFF        # an absent id (location, string, root)
ATTR_REQUEST = 2         # ELG_ATTR_REQUEST


@dataclass(frozen=True)
class Layout:
    """An event record: fields before the metric values, whether it has them, fields after."""

    name: str
    role: str
    before: tuple[tuple[str, str], ...] = ()
    metrics: bool = False
    after: tuple[tuple[str, str], ...] = ()
    tagged: bool = False     #: a GENERIC naming the record precedes its model events

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """All named fields, metric values left out."""
        return self.before + self.after


def _u4(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, "u4") for name in names)


EVENTS: dict[int, Layout] = {
    101: Layout("ENTER", "enter", _u4("rid"), True),
    102: Layout("EXIT", "exit", (), True),
    103: Layout("MPI_SEND", "send", _u4("dlid", "cid", "tag", "sent")),
    104: Layout("MPI_RECV", "recv", _u4("slid", "cid", "tag")),
    105: Layout("MPI_COLLEXIT", "collexit", (), True, _u4("rlid", "cid", "sent", "recvd")),
    106: Layout("OMP_FORK", "generic"),
    107: Layout("OMP_JOIN", "generic"),
    108: Layout("OMP_ALOCK", "generic", _u4("lkid")),
    109: Layout("OMP_RLOCK", "generic", _u4("lkid")),
    110: Layout("OMP_COLLEXIT", "exit", (), True, tagged=True),
    111: Layout("ENTER_CS", "enter_cs", _u4("csid"), True, tagged=True),
    112: Layout("MPI_PUT_1TS", "generic", _u4("dlid", "wid", "rmaid", "nbytes")),
    113: Layout("MPI_PUT_1TE", "generic", _u4("slid", "wid", "rmaid")),
    114: Layout("MPI_GET_1TS", "generic", _u4("dlid", "wid", "rmaid", "nbytes")),
    115: Layout("MPI_GET_1TE", "generic", _u4("slid", "wid", "rmaid")),
    116: Layout("MPI_GET_1TO", "generic", _u4("rmaid")),
    117: Layout("MPI_WINEXIT", "exit", (), True, _u4("wid", "cid") + (("synex", "u1"),), tagged=True),
    118: Layout("MPI_WINCOLLEXIT", "exit", (), True, _u4("wid"), tagged=True),
    119: Layout("MPI_WIN_LOCK", "generic", _u4("llid", "wid") + (("ltype", "u1"),)),
    120: Layout("MPI_WIN_UNLOCK", "generic", _u4("llid", "wid")),
    121: Layout("MPI_PUT_1TE_REMOTE", "generic", _u4("dlid", "wid", "rmaid")),
    122: Layout("MPI_GET_1TS_REMOTE", "generic", _u4("dlid", "wid", "rmaid", "nbytes")),
    123: Layout("PUT_1TS", "generic", _u4("dlid", "rmaid", "nbytes")),
    124: Layout("PUT_1TE", "generic", _u4("slid", "rmaid")),
    125: Layout("GET_1TS", "generic", _u4("dlid", "rmaid", "nbytes")),
    126: Layout("GET_1TE", "generic", _u4("slid", "rmaid")),
    127: Layout("PUT_1TE_REMOTE", "generic", _u4("dlid", "rmaid")),
    128: Layout("GET_1TS_REMOTE", "generic", _u4("dlid", "rmaid", "nbytes")),
    129: Layout("COLLEXIT", "collexit", (), True, _u4("rlid", "cid", "sent", "recvd"), tagged=True),
    130: Layout("ALOCK", "generic", _u4("lkid")),
    131: Layout("RLOCK", "generic", _u4("lkid")),
    132: Layout("MPI_SEND_COMPLETE", "send_complete", _u4("reqid")),
    133: Layout("MPI_RECV_REQUEST", "recv_request", _u4("reqid")),
    134: Layout("MPI_REQUEST_TESTED", "generic", _u4("reqid")),
    135: Layout("MPI_CANCELLED", "generic", _u4("reqid")),
    201: Layout("LOG_OFF", "generic", (), True),
    202: Layout("LOG_ON", "generic", (), True),
    203: Layout("ENTER_TRACING", "generic", (), True),
    204: Layout("EXIT_TRACING", "generic", (), True),
}
#: Attribute records: no location id and no time; they belong to the next event record.
ATTRIBUTES: dict[int, Layout] = {
    60: Layout("ATTR_UI1", "attribute", (("type", "u1"), ("value", "u1"))),
    61: Layout("ATTR_UI4", "attribute", (("type", "u1"), ("value", "u4"))),
}
#: Fields that end up in columns (the others go to a GENERIC event).
CONSUMED = {"enter": {"rid"}, "send": {"dlid", "cid", "tag", "sent"}, "recv": {"slid", "cid", "tag"},
            "collexit": {"rlid", "cid", "sent", "recvd"}, "send_complete": {"reqid"},
            "recv_request": {"reqid"}}
#: Model events each role produces after its GENERIC and METRIC events.
MAIN_EVENTS = {"enter": 1, "enter_cs": 1, "exit": 1, "send": 1, "recv": 1, "collexit": 2,
               "send_complete": 1, "recv_request": 1, "generic": 1}
