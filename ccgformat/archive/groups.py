"""Many small locations built and indexed together: the checkpoints of finished
locations as columns (`location_checkpoints`), and the groups in which `write_trace` feeds
the small locations of a stream to the builder in one call each (`SmallLocations`).

A location of at most one checkpoint interval has one checkpoint, at its end; when its
calls balance, `checkpoint_columns.end_checkpoints` computes it with numpy together with
the others of its group. The rest take the per-location path of `indexes.checkpoints`.

With the native builder, a full group is built in a thread of its own while the next one
is read (issue 35 item 4): building, encoding and the checkpoints' numpy work are C
calls that let go of the GIL, so they run on the second core beside the importer.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..model import COLUMNS, EventBatch, LocationRun
from .checkpoint_columns import CheckpointColumns, balanced, end_checkpoints
from .indexes import checkpoints
from .many import event_passes
from .native import walk_locations, walker
from .samples import MetricSamples

#: events of the small locations a stream's group holds before they are built (an importer's
#: batches may keep larger buffers alive: 20,000 x 50 from OTF2 peaks at 594 MB with 2^18,
#: 863 MB with 2^20, at the same time): a group built in a thread while the next is read
#: (`SmallLocations` ``ahead``) and that next one hold what one group of 2^18 did, and a
#: group built without the thread (one core: a rank under mpirun) holds half of it (a
#: 20,000 x 50 ring's part on 2 ranks: 320 MB per rank, 420 MB with 2^18)
EVENTS_PER_GROUP = 1 << 17


def location_checkpoints(pool: Any, locations: np.ndarray, roots: np.ndarray, starts: np.ndarray,
                         counts: np.ndarray, interval: int, path: str | None = None, *,
                         events: EventBatch | None = None) -> CheckpointColumns:
    """The checkpoints of finished ``locations`` (`indexes.checkpoints` of each), given
    their root nodes, first timestamps and event counts. ``events``: the locations'
    events in that order, when the graph is lossless (it gives them back) and every
    location has at most ``interval`` events, so that they need no walk."""
    small = np.flatnonzero(counts <= interval)
    parts, single, passed = [], [], 0
    for run in event_passes(counts[small]):
        chosen = small[run]
        offsets = np.concatenate(([0], np.cumsum(counts[chosen])))
        if events is not None:  # every location is small: the runs follow one another
            batch = events[passed:passed + int(offsets[-1])]
            passed += int(offsets[-1])
        else:
            batch = walk_locations(pool, locations[chosen], roots[chosen], starts[chosen], offsets, path)
        ok = balanced(batch, offsets)
        if not ok.all():  # left for the per-location path
            single.extend(chosen[~ok].tolist())
            keep = np.repeat(ok, np.diff(offsets))
            batch = EventBatch(**{name: getattr(batch, name)[keep] for name in ("time", "kind") + COLUMNS})
            chosen = chosen[ok]
            offsets = np.concatenate(([0], np.cumsum(counts[chosen])))
        parts.append(end_checkpoints(locations[chosen], starts[chosen], batch, offsets))
    single.extend(np.flatnonzero(counts > interval).tolist())
    if single:
        parts.append(CheckpointColumns.from_checkpoints(
            (int(locations[i]), checkpoints(walker(pool, int(roots[i]), int(starts[i]), int(locations[i])),
                                            interval)) for i in sorted(single)))
    return CheckpointColumns.concat(parts) if parts else CheckpointColumns.from_checkpoints([])


def add_graph_locations(writer: Any, pool: Any, roots: tuple[np.ndarray, ...], path: str | None = None) -> None:
    """`Writer.add_location` of the finished locations of ``roots`` (`root_columns`, in their
    order) over ``pool``, in the CHECKPOINT_TABLE blocks it writes:
    each run of small locations (at most one checkpoint interval of events) walked and
    indexed together by `location_checkpoints`, the run ending where the writer flushes
    (a merge of 20,000 locations of 50 events walked them one at a time: 0.28 ms each),
    the larger ones one at a time."""
    locations, nodes, starts, _, counts = roots
    large = np.flatnonzero(counts > writer.checkpoint_interval).tolist() + [len(locations)]
    start = 0
    for stop in large:
        while start < stop:
            end = min(stop, start + writer.checkpoints_before_flush())
            writer.add_location_columns(location_checkpoints(pool, locations[start:end], nodes[start:end],
                                                             starts[start:end], counts[start:end],
                                                             writer.checkpoint_interval, path))
            start = end
        if stop < len(locations):
            writer.add_location(int(locations[stop]), walker(pool, int(nodes[stop]), int(starts[stop]),
                                                             int(locations[stop]), path=path))
            start = stop + 1


def add_empty_locations(writer: Any, starts: dict[int, int]) -> None:
    """`Writer.add_location` of each location of ``starts`` (location -> its time; in
    increasing order), locations without events, with their checkpoints made together
    in the CHECKPOINT_TABLE blocks the per-location path writes (an MPI conversion's part
    defines every other part's locations so: at 20,000 x 50 events their 10,000 walks
    took 0.48 s of a part's 2.4 s)."""
    locations = np.fromiter(starts, np.int64, len(starts))
    times = np.fromiter(starts.values(), np.int64, len(starts))
    start = 0
    while start < len(locations):
        stop = min(len(locations), start + writer.checkpoints_before_flush())
        count = stop - start
        writer.add_location_columns(end_checkpoints(locations[start:stop], times[start:stop], EventBatch.empty(),
                                                    np.zeros(count + 1, np.int64)))
        start = stop


class SmallLocations:
    """The small locations of a stream (at most one checkpoint interval of events each),
    held until a group is full, then fed to the builder in one call per CHECKPOINT_TABLE
    block, the writer given their checkpoints as columns. The file is the one the
    per-location path writes: the builder sees the locations in the same order, and each
    run ends where `Writer.add_checkpoints` would flush the block, after the node blocks
    that path writes before it. ``from_input``: the graph is lossless and the
    checkpoints are made from the input; ``samples`` keeps their metric samples.
    ``ahead``: a full group is built in a thread of its own while the next is
    collected (one group at a time, in order); `flush` builds the rest and waits."""

    def __init__(self, builder: Any, writer: Any, from_input: bool, samples: MetricSamples | None = None, *,
                 ahead: bool = False) -> None:
        self.builder, self.writer, self.from_input, self.samples = builder, writer, from_input, samples
        self.locations: list[int] = []
        self.batches: list[EventBatch] = []
        self.counts: list[int] = []
        self.events = 0
        self.ahead = ahead
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ccg-build") if ahead else None
        self._building: Future[None] | None = None

    def add(self, location: int, batches: list[EventBatch]) -> None:
        """Hold a small location's events (building the group first when it is full)."""
        self.locations.append(location)
        self.batches.extend(batches)
        self.counts.append(sum(len(b) for b in batches))
        self._held(self.counts[-1])

    def add_run(self, run: LocationRun) -> None:
        """Hold a run of small locations' events, as `add` holds each of them."""
        self.locations.extend(run.locations.tolist())
        self.batches.append(run.events)
        self.counts.extend(run.counts.tolist())
        self._held(len(run.events))

    def _held(self, events: int) -> None:
        self.events += events
        if self.events >= EVENTS_PER_GROUP:
            self._build_held()

    def flush(self) -> None:
        """Build the locations held and wait until every group is built."""
        self._build_held()
        self._wait()

    def close(self) -> None:
        """Wait for the group being built (its error, of locations before the caller's, is
        raised) and end the thread; the locations held are dropped."""
        try:
            self._wait()
        finally:
            if self._thread is not None:
                self._thread.shutdown()
                self._thread = None

    def _wait(self) -> None:
        building, self._building = self._building, None
        if building is not None:
            building.result()

    def _build_held(self) -> None:
        if not self.locations:
            return
        held = (np.array(self.locations, np.int64), np.array(self.counts, np.int64), self.batches)
        self.locations, self.batches, self.counts, self.events = [], [], [], 0
        self._wait()
        if self._thread is None:
            self._build(*held)
        else:
            self._building = self._thread.submit(self._build, *held)

    def _build(self, locations: np.ndarray, counts: np.ndarray, batches: list[EventBatch]) -> None:
        """Build and index ``locations``, in runs that end at the writer's flushes."""
        offsets = np.concatenate(([0], np.cumsum(counts)))
        batch = EventBatch.concat(batches) if len(batches) != 1 else batches[0]
        if self.samples is not None:
            self.samples.add(locations, batch, offsets)
        start = 0
        while start < len(locations):
            stop = min(len(locations), start + self.writer.checkpoints_before_flush())
            run = batch[int(offsets[start]):int(offsets[stop])]
            cuts = offsets[start:stop + 1] - offsets[start]
            roots = self.builder.add_locations(locations[start:stop], run, cuts)
            self.writer.add_nodes(self.builder.pool)
            self.writer.add_location_columns(location_checkpoints(
                self.builder.pool, locations[start:stop], roots[:, 0], roots[:, 1], roots[:, 3],
                self.writer.checkpoint_interval, events=run if self.from_input else None))
            self.writer.release_written(self.builder)
            start = stop
