"""bulkstep.collector_paused: the collector off inside, on again after, and what the block
left alive already in the oldest generation (no collection traverses it again soon)."""

from __future__ import annotations

import gc

from ccgformat.bulkstep import collector_paused


def _generation(obj: object) -> int | None:
    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation)):
            return generation
    return None


def test_what_the_block_allocates_is_in_the_oldest_generation():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        records = [[i, [i, "rank"]] for i in range(1000)]
    assert gc.isenabled()
    assert _generation(records) == 2 and _generation(records[-1][1]) == 2


def test_objects_frozen_by_the_caller_stay_frozen():
    kept = [[1], [2]]
    gc.freeze()
    try:
        with collector_paused():
            made = [[3]]
        assert gc.get_freeze_count() >= 2 and _generation(kept) is None
        assert _generation(made) is not None
    finally:
        gc.unfreeze()


def test_nested_blocks_leave_the_collector_off_until_the_outer_one_ends():
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
