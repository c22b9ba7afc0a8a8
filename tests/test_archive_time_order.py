"""merge_by_time against a plain sort of all events."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ccgformat.archive.time_order import merge_by_time
from ccgformat.model import EventBatch


def location_times():
    return st.lists(st.integers(0, 30), max_size=25).map(sorted)


@given(st.dictionaries(st.integers(0, 6), location_times(), max_size=5), st.integers(1, 9), st.integers(1, 7),
       st.booleans())
def test_merge_equals_sorting_by_time_location_position(times, read_size, batch_size, counted):
    def batches(location, values):
        for i in range(0, len(values), read_size):
            chunk = values[i:i + read_size]
            # the ref column carries the position, so the order within a location shows
            yield EventBatch.from_columns(chunk, [0] * len(chunk), ref=range(i, i + len(chunk)),
                                          value=[location] * len(chunk))
        yield EventBatch.empty()

    # with ``counted`` a stream says how many events it holds (as the archive's do)
    streams = [(location, batches(location, values), len(values)) if counted else (location, batches(location, values))
               for location, values in reversed(list(times.items()))]
    merged = list(merge_by_time(streams, batch_size))
    got = [(int(t), int(loc), int(ref), int(value)) for locations, batch in merged
           for t, loc, ref, value in zip(batch.time, locations, batch.ref, batch.value)]
    expected = sorted((t, location, position, location) for location, values in times.items()
                      for position, t in enumerate(values))
    assert got == expected
    assert all(len(batch) == batch_size for _, batch in merged[:-1])
    assert all(len(locations) == len(batch) for locations, batch in merged)
