"""S-lists as priority caches (4.2.2, Fig. 4.7), and the exact-match fast path."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ccgformat.graph.slist import SList


def equal_to(softs: dict, wanted):
    return lambda node: True if softs[node] == wanted else None


def run(slist: SList, softs: dict, operations: list, limit: int) -> list[int | None]:
    """Search for each soft value; insert a new node on a miss. Returns the hits."""
    hits = []
    for wanted in operations:
        if slist.exact is not None:
            found = slist.find_equal(wanted)
        else:
            match = slist.search(equal_to(softs, wanted))
            found = None if match is None else match[0]
        hits.append(found)
        if found is None:
            node = len(softs)
            softs[node] = wanted
            slist.insert(node, wanted, limit, softs.__getitem__)
    return hits


def test_hit_swaps_with_its_predecessor():
    softs = {}
    slist = SList(exact=False)
    run(slist, softs, ["a", "b", "c"], limit=10)
    assert slist.entries == [0, 1, 2]
    assert run(slist, softs, ["c"], limit=10) == [2]
    assert slist.entries == [0, 2, 1]
    run(slist, softs, ["c", "c"], limit=10)
    assert slist.entries == [2, 0, 1]  # the front entry stays in front


def test_miss_takes_the_last_place_of_a_full_cache():
    softs = {}
    slist = SList(exact=False)
    run(slist, softs, ["a", "b", "c"], limit=3)
    run(slist, softs, ["d"], limit=3)
    assert slist.entries == [0, 1, 3]  # c (node 2) left the cache area
    assert run(slist, softs, ["c"], limit=3) == [None]  # no longer found: a new node
    assert slist.entries == [0, 1, 4]


def test_first_match_in_front_to_back_order_wins():
    softs = {0: 5, 1: 6, 2: 7}
    slist = SList(exact=False)
    for node in softs:
        slist.insert(node, softs[node], 10, softs.__getitem__)
    match = slist.search(lambda node: node if softs[node] >= 6 else None)
    assert match == (1, 1)
    assert slist.entries == [1, 0, 2]


@given(st.lists(st.integers(0, 12), max_size=200), st.integers(1, 6))
def test_exact_lookup_equals_the_front_to_back_scan(operations, limit):
    scan, fast = SList(exact=False), SList(exact=True)
    scan_softs, fast_softs = {}, {}
    assert run(scan, scan_softs, operations, limit) == run(fast, fast_softs, operations, limit)
    assert scan.entries == fast.entries
    assert fast.exact == {fast_softs[node]: node for node in fast.entries}
