"""`ahead.read_ahead_each`: every source's items in its order, whatever order they are
asked for in, at most ``depth`` ahead of their consumer; errors raised to the consumer;
the thread stops when told."""

from __future__ import annotations

import heapq
import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.ahead import read_ahead_each


def counted(items, made):
    """``items``, counting in ``made`` how many were made."""
    for item in items:
        made.append(item)
        yield item


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 50), max_size=12).map(sorted), min_size=1, max_size=6),
       st.integers(1, 3), st.data())
def test_each_source_is_read_whole_in_its_order_whatever_the_asking_order(lists, depth, data):
    made: list[list[int]] = [[] for _ in lists]
    each, stop = read_ahead_each([counted(items, made[k]) for k, items in enumerate(lists)], lambda x: x, depth)
    got: list[list[int]] = [[] for _ in lists]
    try:
        open_ = list(range(len(lists)))
        while open_:
            k = data.draw(st.sampled_from(open_))
            try:
                got[k].append(next(each[k]))
            except StopIteration:
                open_.remove(k)
                continue
            # a source is never more than depth items ahead of what was asked of it
            assert len(made[k]) <= len(got[k]) + depth
    finally:
        stop()
    assert got == lists


def test_a_merge_by_the_order_gets_the_merged_items():
    lists = [[1, 4, 9, 12], [2, 3, 5], [], [7, 8, 10, 11]]
    each, stop = read_ahead_each([iter(items) for items in lists], lambda x: x)
    try:
        assert list(heapq.merge(*each)) == sorted(x for items in lists for x in items)
    finally:
        stop()


def test_what_a_source_raises_reaches_its_consumers():
    def failing():
        yield 1
        raise ccgformat.CorruptArchiveError("broken block")

    each, stop = read_ahead_each([failing(), iter([5, 6])], lambda x: x)
    try:
        with pytest.raises(ccgformat.CorruptArchiveError, match="broken block"):
            for source in each:
                list(source)
    finally:
        stop()


def test_stop_ends_the_thread_and_the_consumer_gets_what_was_made():
    made: list[int] = []
    each, stop = read_ahead_each([counted(itertools.count(), made)], lambda x: x, depth=2)
    assert [next(each[0]) for _ in range(3)] == [0, 1, 2]
    time.sleep(0.1)
    assert len(made) <= 3 + 2
    stop()
    count = len(made)
    time.sleep(0.2)
    assert len(made) == count
    assert list(each[0]) == list(range(3, count))


def test_an_order_that_raises_reaches_the_consumer():
    each, stop = read_ahead_each([iter([[]])], lambda batch: batch[-1])
    try:
        with pytest.raises(IndexError):
            list(each[0])
    finally:
        stop()


def test_no_source_at_all():
    each, stop = read_ahead_each([], lambda x: x)
    assert each == []
    stop()
