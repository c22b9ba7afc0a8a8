"""Walking a location's graph: random access, iteration both ways and time search.

Timestamps are rebuilt from durations on the way down (Lemma 1): a child's start is its
parent's start plus every duration before it. A `Cursor` is the random-access iterator of
dissertation 4.5.1: a stack of (node, slot, time) frames from the root to the current
event. Slots of a call node with n children: 0 is its enter, 1..n its children, n+1 its
leave; an artificial node's slots are its children; an atomic node has the one slot 0.
The frame's time is when its current slot starts.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ..model import COLUMNS, KIND_FIELDS, Event, EventBatch, EventKind
from .pool import NodeKind, NodePool, wrap64
from .spans import SpanReader

_COLUMN_INDEX = {name: i for i, name in enumerate(COLUMNS)}
#: For each atomic kind, the column positions of its hard and of its soft properties.
_LAYOUT = {kind: (tuple(_COLUMN_INDEX[c] for c in f.hard), tuple(_COLUMN_INDEX[c] for c in f.soft))
           for kind, f in KIND_FIELDS.items()}
_ATOMIC = NodeKind.ARTIFICIAL + 1  # node kinds from here on are atomic


class Cursor:
    """An iterator positioned on one event of a location, movable forward and backward.

    ``metrics`` holds, per metric, the value after all samples before the current event.
    """

    def __init__(self, pool: NodePool, frames: list[list[int]], index: int, metrics: dict[int, int],
                 count: int):
        self.pool = pool
        self.frames = frames
        self.index = index
        self.metrics = metrics
        self.count = count

    @property
    def valid(self) -> bool:
        return 0 <= self.index < self.count

    def event(self) -> Event:
        """The event the cursor is on."""
        if not self.valid:
            raise IndexError(f"cursor at {self.index} is outside 0..{self.count - 1}")
        node, slot, time = self.frames[-1]
        pool = self.pool
        kind = pool.kind[node]
        if kind == NodeKind.CALL:
            event_kind = EventKind.ENTER if slot == 0 else EventKind.LEAVE
            return Event(time, int(event_kind), pool.key[node][0])
        columns = [0] * len(COLUMNS)
        hard, soft = _LAYOUT[EventKind(kind)]
        for position, value in zip(hard, pool.key[node]):
            columns[position] = value
        for position, value in zip(soft, pool.soft[node]):
            columns[position] = value
        if kind == EventKind.METRIC:
            metric = pool.key[node][0]
            columns[_COLUMN_INDEX["value"]] = wrap64(self.metrics.get(metric, 0) + pool.soft[node][0])
        return Event(time, kind, *columns)

    def _metric_delta(self) -> tuple[int, int] | None:
        node = self.frames[-1][0]
        if self.pool.kind[node] == EventKind.METRIC:
            return self.pool.key[node][0], self.pool.soft[node][0]
        return None

    def next(self) -> bool:
        """Move to the following event; False (and past the end) when there is none."""
        if self.index >= self.count:
            return False
        sample = self._metric_delta()
        if sample is not None:
            metric, delta = sample
            self.metrics[metric] = wrap64(self.metrics.get(metric, 0) + delta)
        self.index += 1
        pool, frames = self.pool, self.frames
        while frames:
            frame = frames[-1]
            node, slot, time = frame
            kind = pool.kind[node]
            if kind >= _ATOMIC:
                frames.pop()
                continue
            children = pool.children[node]
            d = pool.durations[node]
            n = len(children)
            if kind == NodeKind.CALL:
                if slot == n + 1:
                    frames.pop()
                    continue
                time += d[0] if slot == 0 else d[2 * slot - 1] + d[2 * slot]
                slot += 1
                frame[1], frame[2] = slot, time
                if slot == n + 1:
                    return True  # the leave
                self._descend_first(children[slot - 1], time)
                return True
            if slot + 1 >= n:
                frames.pop()
                continue
            time += d[2 * slot + 1] + d[2 * slot + 2]
            slot += 1
            frame[1], frame[2] = slot, time
            self._descend_first(children[slot], time)
            return True
        return False

    def prev(self) -> bool:
        """Move to the preceding event; False (and before the start) when there is none."""
        if self.index <= 0:
            self.index = -1
            self.frames.clear()
            return False
        self.index -= 1
        pool, frames = self.pool, self.frames
        while frames:
            frame = frames[-1]
            node, slot, time = frame
            kind = pool.kind[node]
            if kind >= _ATOMIC:
                frames.pop()
                continue
            children = pool.children[node]
            d = pool.durations[node]
            first_child_slot = 1 if kind == NodeKind.CALL else 0
            if slot == 0:
                frames.pop()
                continue
            if kind == NodeKind.CALL and slot == 1:
                frame[1], frame[2] = 0, time - d[0]
                break  # the enter
            # child j = slot - first_child_slot (or the leave, j = n) starts at time; the
            # previous child starts two durations before the gap that precedes it
            j = slot - first_child_slot
            time -= d[2 * j] + d[2 * j - 1]
            slot -= 1
            frame[1], frame[2] = slot, time
            self._descend_last(children[slot - first_child_slot], time)
            break
        sample = self._metric_delta()
        if sample is not None:
            metric, delta = sample
            self.metrics[metric] = wrap64(self.metrics.get(metric, 0) - delta)
        return True

    def _descend_first(self, node: int, time: int) -> None:
        """Push frames from ``node`` (starting at ``time``) down to its first event."""
        pool = self.pool
        while pool.kind[node] == NodeKind.ARTIFICIAL:
            time += pool.durations[node][0]
            self.frames.append([node, 0, time])
            node = pool.children[node][0]
        self.frames.append([node, 0, time])

    def _descend_last(self, node: int, time: int) -> None:
        """Push frames from ``node`` (starting at ``time``) down to its last event."""
        pool = self.pool
        while True:
            kind = pool.kind[node]
            if kind >= _ATOMIC:
                self.frames.append([node, 0, time])
                return
            d = pool.durations[node]
            end = time + pool.total[node]
            children = pool.children[node]
            if kind == NodeKind.CALL:
                self.frames.append([node, len(children) + 1, end])
                return
            time = end - d[-1] - d[-2]
            self.frames.append([node, len(children) - 1, time])
            node = children[-1]


class LocationWalker:
    """Read access to one location's events in the graph (4.5.1, 4.5.2)."""

    def __init__(self, pool: NodePool, root: int, start: int, location: int):
        self.pool = pool
        self.root = root
        self.start = start
        self.location = location

    def __len__(self) -> int:
        return self.pool.events[self.root]

    def cursor(self, index: int = 0) -> Cursor:
        """A cursor on event ``index`` (``len(self)`` gives an exhausted cursor)."""
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index <= count:
            raise IndexError(f"event index {index} outside 0..{count} of location {self.location}")
        if index == count:
            return Cursor(self.pool, [], count, {}, count)
        pool = self.pool
        frames: list[list[int]] = []
        metrics: dict[int, int] = {}
        node, time, remaining = self.root, self.start, index
        while True:
            kind = pool.kind[node]
            if kind >= _ATOMIC:
                frames.append([node, 0, time])
                break
            children = pool.children[node]
            d = pool.durations[node]
            first_child_slot = 0
            if kind == NodeKind.CALL:
                if remaining == 0:
                    frames.append([node, 0, time])
                    break
                remaining -= 1
                first_child_slot = 1
            child_time = time + d[0]
            child_events = pool.child_events[node]
            for j, child in enumerate(children):
                events = child_events[j]
                if remaining < events:
                    frames.append([node, j + first_child_slot, child_time])
                    node, time = child, child_time
                    break
                remaining -= events
                for metric, value in pool.child_metric_sums[node][j]:
                    metrics[metric] = wrap64(metrics.get(metric, 0) + value)
                child_time += d[2 * j + 1] + d[2 * j + 2]
            else:
                frames.append([node, len(children) + 1, child_time])  # the leave
                break
        return Cursor(pool, frames, index, metrics, count)

    def event(self, index: int) -> Event:
        """The event at ``index`` (negative counts from the end), by an O(b*d) descent."""
        return self.cursor(index).event()

    def find(self, time: int) -> int:
        """Index of the first event at or after ``time`` (``len(self)`` if none): the
        timestamp search of 4.5.2, descending into the one child whose interval holds it."""
        pool = self.pool
        node, start, index = self.root, self.start, 0
        while True:
            kind = pool.kind[node]
            if time <= start:
                return index
            if kind == NodeKind.CALL:
                index += 1
            d = pool.durations[node]
            child_start = start + d[0]
            child_events = pool.child_events[node]
            for j, child in enumerate(pool.children[node]):
                child_end = child_start + d[2 * j + 1]
                if time <= child_end:
                    if time <= child_start:
                        return index
                    node, start = child, child_start
                    break
                index += child_events[j]
                child_start = child_end + d[2 * j + 2]
            else:
                # past every child: the leave, if the call ends at or after ``time``
                if kind == NodeKind.CALL and time > start + pool.total[node]:
                    index += 1
                return index

    def call_stack(self, time: int) -> list[int]:
        """Regions open at ``time``, outermost first: entered at or before it and left
        after it."""
        pool = self.pool
        stack: list[int] = []
        node, start = self.root, self.start
        while True:
            kind = pool.kind[node]
            if kind >= _ATOMIC or not start <= time < start + pool.total[node]:
                return stack
            if kind == NodeKind.CALL:
                stack.append(pool.key[node][0])
            d = pool.durations[node]
            child_start = start + d[0]
            for j, child in enumerate(pool.children[node]):
                if child_start <= time < child_start + d[2 * j + 1]:
                    node, start = child, child_start
                    break
                child_start += d[2 * j + 1] + d[2 * j + 2]
            else:
                return stack

    def events(self, start: int = 0, stop: int | None = None, *, reverse: bool = False,
               batch_size: int = 65536) -> Iterator[EventBatch]:
        """Events ``start <= i < stop`` as columnar batches, in time order or, with
        ``reverse``, from ``stop - 1`` down to ``start``."""
        count = len(self)
        stop = count if stop is None else min(stop, count)
        start = max(start, 0)
        if start >= stop:
            return
        cursor = self.cursor(stop - 1 if reverse else start)
        if not reverse:
            yield from SpanReader(self.pool, self.root, self.start).batches(start, stop, cursor.metrics, batch_size)
            return
        yield from self.cursor_events(cursor, stop - start, cursor.prev, batch_size)

    @staticmethod
    def cursor_events(cursor: Cursor, remaining: int, step: Callable[[], bool],
                      batch_size: int) -> Iterator[EventBatch]:
        """``remaining`` events from ``cursor`` on, moving with ``step``, event by event
        (the reference for the bulk path of `events`)."""
        while remaining:
            rows = []
            for _ in range(min(batch_size, remaining)):
                rows.append(cursor.event())
                step()
            remaining -= len(rows)
            yield EventBatch.from_events(rows)
