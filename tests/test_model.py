"""The event model: batches, and validation errors that name their position."""

from __future__ import annotations

import numpy as np
import pytest

from ccgformat import Builder, CcgError, Params, ParameterError, TraceError
from ccgformat.model import Definitions, Event, EventBatch, EventKind as K, KIND_FIELDS, Location, Metric, Region

from .traces import validate


def batch(*rows) -> EventBatch:
    return EventBatch.from_events(rows)


def test_every_kind_declares_its_columns():
    assert set(KIND_FIELDS) == set(K)
    for kind, fields in KIND_FIELDS.items():
        assert not set(fields.hard) & set(fields.soft)


def test_batch_constructors_agree():
    rows = [Event(1, K.ENTER, 3), Event(2, K.SEND, 1, 2, 3, 0, 64), Event(4, K.LEAVE, 3)]
    a = EventBatch.from_events(rows)
    b = EventBatch.from_columns([1, 2, 4], [0, 2, 1], ref=[3, 1, 3], comm=[0, 2, 0], tag=[0, 3, 0],
                                size=[0, 64, 0])
    assert a.equals(b) and list(a.rows()) == rows
    assert a.event(1) == rows[1]
    assert EventBatch.concat([a[:1], a[1:]]).equals(a)
    assert len(EventBatch.empty()) == 0
    with pytest.raises(ValueError):
        EventBatch.from_columns([1], [0], bogus=[1])


def error_of(rows, definitions=None, batches=1) -> TraceError:
    data = EventBatch.from_events(rows)
    cut = len(rows) // 2 if batches == 2 else len(rows)
    with pytest.raises(TraceError) as info:
        validate(3, [data[:cut], data[cut:]], definitions)
    return info.value


@pytest.mark.parametrize("batches", [1, 2])
def test_decreasing_timestamp(batches):
    error = error_of([(10, K.ENTER, 0), (9, K.LEAVE, 0)], batches=batches)
    assert (error.location, error.index, error.time) == (3, 1, 9)
    assert "decreases" in str(error) and "location 3, event 1, time 9" in str(error)


def test_leave_of_another_region():
    error = error_of([(1, K.ENTER, 0), (2, K.ENTER, 1), (3, K.LEAVE, 0)])
    assert (error.index, error.time) == (2, 3)
    assert "region 1 is open" in error.reason


def test_leave_with_nothing_open():
    error = error_of([(1, K.ENTER, 0), (2, K.LEAVE, 0), (3, K.LEAVE, 0)], batches=2)
    assert (error.index, error.time) == (2, 3)
    assert "no region open" in error.reason


def test_regions_open_at_the_end():
    error = error_of([(1, K.ENTER, 0), (2, K.ENTER, 1), (5, K.SEND, 0)])
    assert (error.index, error.time) == (3, 5)
    assert "2 region(s) still open" in error.reason


def test_unknown_kind_and_unused_columns():
    assert "unknown event kind 99" in error_of([(1, 99, 0)]).reason
    assert "'size' must be 0 for ENTER" in error_of([(1, K.ENTER, 0, 0, 0, 0, 5)]).reason
    assert "must not be negative" in error_of([(1, K.SEND, 0, 0, 0, 0, -5)]).reason


def test_references_are_checked_against_the_definitions():
    defs = Definitions(regions=[Region("main")], locations=[Location("rank 0")], metrics=[Metric("m")])
    assert "region 1 is not defined" in error_of([(1, K.ENTER, 1), (2, K.LEAVE, 1)], defs).reason
    assert "peer location 4 is not defined" in error_of([(1, K.SEND, 4)], defs).reason
    assert "metric 2 is not defined" in error_of([(1, K.METRIC, 2)], defs).reason
    assert validate(0, [batch((1, K.ENTER, 0), (2, K.METRIC, 0, 0, 0, 0, 0, 0, 7), (3, K.LEAVE, 0))],
                    defs) == []


def test_trace_error_is_a_ccg_error_and_a_value_error():
    error = error_of([(10, K.ENTER, 0), (9, K.LEAVE, 0)])
    assert isinstance(error, CcgError) and isinstance(error, ValueError)


def test_builder_rejects_invalid_input_with_the_position():
    builder = Builder()
    builder.add(0, batch((1, K.ENTER, 0), (2, K.ENTER, 1)))
    with pytest.raises(TraceError) as info:
        builder.add(0, batch((3, K.LEAVE, 0)))
    assert (info.value.location, info.value.index, info.value.time) == (0, 2, 3)
    builder = Builder()
    builder.add(1, batch((1, K.ENTER, 0)))
    with pytest.raises(TraceError, match="still open"):
        builder.finish()


def test_repair_closes_open_regions_at_the_last_timestamp():
    builder = Builder(repair=True)
    builder.add(2, batch((1, K.ENTER, 0), (2, K.ENTER, 1), (5, K.SEND, 0, 0, 0, 0, 8)))
    graph = builder.finish()
    assert [(r.location, r.region, r.time) for r in builder.repairs] == [(2, 1, 5), (2, 0, 5)]
    events = [e for b in graph.location(2).events() for e in b.rows()]
    assert [(e.time, e.kind, e.ref) for e in events][-2:] == [(5, K.LEAVE, 1), (5, K.LEAVE, 0)]
    assert len(events) == 5


def test_a_finished_location_takes_no_more_events():
    builder = Builder()
    builder.add(0, batch((1, K.SEND, 0)))
    builder.end_location(0)
    with pytest.raises(ValueError, match="already been finished"):
        builder.add(0, batch((2, K.SEND, 0)))


def test_empty_location_has_an_empty_root():
    builder = Builder()
    builder.add(0, EventBatch.empty())
    graph = builder.finish()
    walker = graph.location(0)
    assert len(walker) == 0 and walker.find(5) == 0 and walker.call_stack(5) == []
    assert list(walker.events()) == []


@pytest.mark.parametrize("bad", [dict(abs_dev=-1), dict(rel_dev=-0.1), dict(branching=1),
                                 dict(search_length=0), dict(rel_size=float("nan"))])
def test_bad_parameters(bad):
    with pytest.raises(ParameterError):
        Params(**bad)


def test_double_metrics_stay_exact_under_a_metric_bound():
    bits = np.array([1.0, 1.5, 2.25, 2.26], dtype=np.float64).view(np.int64)
    defs = Definitions(metrics=[Metric("flops", value_type="double")], regions=[Region("r")])
    rows = [(i, K.METRIC, 0, 0, 0, 0, 0, 0, int(v)) for i, v in enumerate(bits)]
    builder = Builder(Params(rel_metric=0.5), defs)
    builder.add(0, batch(*rows))
    got = [e.value for b in builder.finish().location(0).events() for e in b.rows()]
    assert got == bits.tolist()


def test_repair_drops_leaves_that_match_no_open_region():
    builder = Builder(repair=True)
    builder.add(0, batch((1, K.LEAVE, 3), (2, K.ENTER, 0), (3, K.LEAVE, 2), (4, K.LEAVE, 0)))
    builder.add(0, batch((5, K.LEAVE, 0)))
    graph = builder.finish()
    assert [(r.region, r.time, r.action) for r in graph.repairs] == [(3, 1, "dropped"), (2, 3, "dropped"),
                                                                     (0, 5, "dropped")]
    events = [(e.time, e.kind, e.ref) for b in graph.location(0).events() for e in b.rows()]
    assert events == [(2, K.ENTER, 0), (4, K.LEAVE, 0)]


def test_repair_never_invents_leaves_for_a_region_open_further_out():
    builder = Builder(repair=True)
    with pytest.raises(TraceError, match="region 1 is open"):
        builder.add(0, batch((1, K.ENTER, 0), (2, K.ENTER, 1), (3, K.LEAVE, 0)))


def test_without_repair_an_unmatched_leave_fails():
    with pytest.raises(TraceError, match="no region open"):
        Builder().add(0, batch((1, K.LEAVE, 0)))
