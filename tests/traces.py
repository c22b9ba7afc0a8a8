"""Hypothesis strategies for random well-nested traces with every event kind, and a
brute-force oracle computed from the plain event list."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ccgformat.model import (KIND_FIELDS, Definitions, Event, EventBatch, EventKind, Location, LocationValidator, Metric,
                             Region, Repair)

ATOMIC = [k for k in EventKind if k not in (EventKind.ENTER, EventKind.LEAVE)]
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


@st.composite
def atomic_events(draw: st.DrawFn) -> tuple:
    kind = draw(st.sampled_from(ATOMIC))
    fields = KIND_FIELDS[kind]
    values = {}
    for name in fields.hard:
        values[name] = draw(st.integers(0, 2))
    for name in fields.soft:
        if kind == EventKind.METRIC:
            values[name] = draw(st.one_of(st.integers(-50, 50), st.integers(INT64_MIN, INT64_MAX)))
        else:
            values[name] = draw(st.sampled_from([0, 8, 9, 1000, 1040, 1 << 40]))
    return ("atom", int(kind), values)


def call_trees(max_leaves: int = 12) -> st.SearchStrategy:
    return st.recursive(
        atomic_events(),
        lambda children: st.tuples(st.just("call"), st.integers(0, 3), st.lists(children, max_size=6)),
        max_leaves=max_leaves)


def flatten(tree: tuple, out: list) -> None:
    if tree[0] == "atom":
        out.append((tree[1], tree[2]))
    else:
        out.append((int(EventKind.ENTER), {"ref": tree[1]}))
        for child in tree[2]:
            flatten(child, out)
        out.append((int(EventKind.LEAVE), {"ref": tree[1]}))


@st.composite
def location_events(draw: st.DrawFn, motifs: list) -> list[Event]:
    """A location: motifs repeated in a random order, timed with repetitive gaps."""
    order = draw(st.lists(st.integers(0, len(motifs) - 1), min_size=1, max_size=20))
    skeleton: list = []
    for i in order:
        flatten(motifs[i], skeleton)
    seed = draw(st.integers(0, 2**32 - 1))
    jitter = draw(st.sampled_from([0, 0, 1, 3, 20]))
    rng = np.random.default_rng(seed)
    base = rng.choice([0, 1, 2, 10, 100], size=len(skeleton))
    gaps = base + (rng.integers(0, jitter + 1, size=len(skeleton)) if jitter else 0)
    time = draw(st.integers(0, 10**12))
    events = []
    for (kind, values), gap in zip(skeleton, gaps.tolist()):
        time += gap
        events.append(Event(time, kind, **values))
    return events


@st.composite
def traces(draw: st.DrawFn, max_locations: int = 3) -> dict[int, list[Event]]:
    """Several locations sharing motifs, so that sub-trees repeat within and across them."""
    motifs = draw(st.lists(call_trees(), min_size=1, max_size=4))
    count = draw(st.integers(1, max_locations))
    return {loc: draw(location_events(motifs)) for loc in range(count)}


def batches(events: list[Event], pieces: int = 3) -> list[EventBatch]:
    """Split a location's events into a few batches (batch borders must not matter)."""
    batch = EventBatch.from_events(events)
    cuts = np.linspace(0, len(events), pieces + 1).astype(int)
    return [batch[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def call_stack_at(events: list[Event], time: int) -> list[int]:
    """Brute force: regions entered at or before ``time`` and not yet left after it."""
    stack: list[int] = []
    for event in events:
        if event.time > time:
            break
        if event.kind == EventKind.ENTER:
            stack.append(event.ref)
        elif event.kind == EventKind.LEAVE:
            stack.pop()
    # calls left exactly at ``time`` are closed; calls entered at ``time`` are open
    return stack


def definitions() -> Definitions:
    """Definitions that every trace of `traces` refers to: regions 0-3, locations and
    metrics 0-2 (references are drawn from 0..2, regions from 0..3)."""
    return Definitions(regions=[Region(f"r{i}") for i in range(4)],
                       locations=[Location(f"rank {i}") for i in range(3)],
                       metrics=[Metric(f"m{i}") for i in range(3)])


def validate(location: int, batches, definitions: Definitions | None = None, repair: bool = False) -> list[Repair]:
    """Check a whole location with `LocationValidator` (as the builder does, batch by
    batch); returns the repairs made (empty unless ``repair``)."""
    validator = LocationValidator(location, definitions, repair)
    for batch in batches:
        validator.check(batch)
    validator.finish()
    return validator.repairs


def coded_minor(kinds, otherwise: int) -> int:
    """The minor version of a file whose node blocks are of ``kinds`` (spec 2.1): 7 with a
    CODED_SOFT_NODES block, else 6 with a CODED_NODES block, else ``otherwise``."""
    from ccgformat.archive.layout import SectionKind
    kinds = set(kinds)
    return 7 if SectionKind.CODED_SOFT_NODES in kinds else 6 if SectionKind.CODED_NODES in kinds else otherwise
