"""Small traces for the logical-time tests: graphs and archives of hand-made or generated
events with as many locations as they use, and message exchanges written as calls."""

from __future__ import annotations

from hypothesis import strategies as st

from ccgformat.model import Definitions, Event, EventKind as K, Location, Region

from . import query_oracle as oracle

#: regions: 0 main, 1 MPI_Send, 2 MPI_Recv, 3 MPI_Isend, 4 MPI_Irecv, 5 MPI_Wait, 6 MPI_Allreduce
REGIONS = ("main", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Allreduce")
CALL_OF = {K.SEND: 1, K.RECV: 2, K.ISEND: 3, K.IRECV: 5, K.IRECV_REQUEST: 4, K.REQUEST_COMPLETE: 5, K.COLL_END: 6}


def definitions(locations: int) -> Definitions:
    return Definitions(regions=[Region(name) for name in REGIONS],
                       locations=[Location(f"rank {i}") for i in range(locations)])


def build(trace: dict[int, list[Event]]):
    """The graph of ``trace`` (location -> events)."""
    return oracle.build_with(definitions(max(trace) + 1), trace)


def calls(location_ops: list[tuple], start: int = 0, gap: int = 10) -> list[Event]:
    """A location's events: ``main`` around one call per operation, each ``gap`` ticks
    after the previous. An operation is (kind, peer, tag[, request][, duration]) for a
    message end, (IRECV_REQUEST, request), (REQUEST_COMPLETE, request) or (COLL_END,)."""
    events = [Event(start, K.ENTER, 0)]
    time = start
    for op in location_ops:
        kind = op[0]
        time += gap
        duration = op[4] if len(op) > 4 else 2
        events.append(Event(time, K.ENTER, CALL_OF[kind]))
        if kind in (K.SEND, K.RECV, K.ISEND, K.IRECV):
            request = op[3] if len(op) > 3 else 0
            events.append(Event(time + 1, kind, op[1], 0, op[2], request, 8))
        elif kind in (K.IRECV_REQUEST, K.REQUEST_COMPLETE):
            events.append(Event(time + 1, kind, request=op[1]))
        else:
            events += [Event(time + 1, K.COLL_BEGIN), Event(time + 1, K.COLL_END, 1, 0, 0, 0, 8, 8)]
        time += duration
        events.append(Event(time, K.LEAVE, CALL_OF[kind]))
    events.append(Event(time + gap, K.LEAVE, 0))
    return events


def exchange_trace(plan: list[tuple[int, int, int, str, int]], locations: int, gaps: list[int]) -> dict[int, list[Event]]:
    """The events of a plan of steps taken in a global order, which every location's
    events follow (so that every message is sent before it is received):
    ``(sender, receiver, tag, how, completion)``: ``how`` is ``blocking`` (SEND ...
    RECV), ``nonblocking`` (ISEND + REQUEST_COMPLETE, IRECV_REQUEST + IRECV, each
    completion put off by ``completion`` plan steps, so that completions reorder) or
    ``mixed``; ``collective``: every location ends a collective operation (the other
    fields unused). Times rise by ``gaps`` (cycled; 0 makes equal times), each event in a call
    of its own inside ``main``."""
    pending: list[tuple[int, int, Event, int]] = []  # (due, location, completion event, request)
    ops: dict[int, list[Event]] = {location: [] for location in range(locations)}
    requests = [0] * locations
    time = [1] * locations
    gap = iter(gaps * (4 * len(plan) + 4)) if gaps else iter([1] * (4 * len(plan) + 4))

    def emit(location: int, kind: K, **fields: int) -> None:
        time[location] += next(gap)
        ops[location] += [Event(time[location], K.ENTER, CALL_OF[kind]), Event(time[location], kind, **fields),
                          Event(time[location], K.LEAVE, CALL_OF[kind])]

    for step, (sender, receiver, tag, how, later) in enumerate(plan):
        for due, location, event, _ in sorted(p for p in pending if p[0] <= step):
            emit(location, K(event.kind), **{k: getattr(event, k) for k in ("ref", "comm", "tag", "request", "size")})
        pending = [p for p in pending if p[0] > step]
        if how == "collective":
            for location in range(locations):
                emit(location, K.COLL_END, ref=1, size=8)
            continue
        blocking_send = how == "blocking" or (how == "mixed" and tag % 2 == 0)
        if blocking_send:
            emit(sender, K.SEND, ref=receiver, tag=tag, size=8)
        else:
            requests[sender] += 1
            emit(sender, K.ISEND, ref=receiver, tag=tag, request=requests[sender], size=8)
            pending.append((step + later, sender, Event(0, K.REQUEST_COMPLETE, request=requests[sender]),
                            requests[sender]))
        if how == "blocking" or (how == "mixed" and tag % 3 == 0):
            emit(receiver, K.RECV, ref=sender, tag=tag, size=8)
        else:
            requests[receiver] += 1
            emit(receiver, K.IRECV_REQUEST, request=requests[receiver])
            pending.append((step + later, receiver, Event(0, K.IRECV, sender, 0, tag, requests[receiver], 8),
                            requests[receiver]))
    for _, location, event, _ in sorted(pending):
        emit(location, K(event.kind), **{k: getattr(event, k) for k in ("ref", "comm", "tag", "request", "size")})
    return {location: [Event(0, K.ENTER, 0), *events, Event(time[location] + 1, K.LEAVE, 0)]
            for location, events in ops.items()}


@st.composite
def plans(draw: st.DrawFn) -> tuple[dict[int, list[Event]], int]:
    locations = draw(st.integers(2, 4))
    step = st.tuples(st.integers(0, locations - 1), st.integers(1, locations - 1), st.integers(0, 2),
                     st.sampled_from(["blocking", "nonblocking", "mixed", "collective"]), st.integers(0, 4))
    plan = [(s, (s + d) % locations, tag, how, later) for s, d, tag, how, later in draw(st.lists(step, max_size=14))]
    gaps = draw(st.lists(st.integers(0, 3), min_size=1, max_size=5))
    return exchange_trace(plan, locations, gaps), locations
