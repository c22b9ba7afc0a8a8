"""`Profile.to_pandas` and `Messages.to_pandas`: every table holds the result's rows, for
random traces with every kind and for the corpus traces."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings

import ccgformat as ccg
from ccgformat.errors import MissingExtraError

from .corpus import corpus_path
from .query_support import CORPUS, converted
from .traces import batches, definitions, traces

pd = pytest.importorskip("pandas")


def records(frame) -> list[tuple]:
    """A frame's rows as tuples of plain values, missing ones as None."""
    return [tuple(None if value is pd.NA or (isinstance(value, float) and value != value) else value
                  for value in row) for row in frame.itertuples(index=False, name=None)]


def check_profile(profile: ccg.Profile) -> None:
    regions = profile.to_pandas()
    assert list(regions.columns) == ["region", "id", "group", "calls", "inclusive", "exclusive", "min", "max", "mean"]
    assert records(regions) == [(r.name, r.region, r.group, r.calls, r.inclusive, r.exclusive, r.min, r.max, r.mean)
                                for r in profile.regions]
    assert records(profile.to_pandas("groups")) == [(g.group, g.calls, g.inclusive, g.exclusive)
                                                    for g in profile.groups]
    assert records(profile.to_pandas("messages")) == [(m.sender, m.receiver, m.sent, m.sent_bytes, m.received,
                                                       m.received_bytes) for m in profile.messages]
    assert records(profile.to_pandas("collectives")) == [(c.operation, c.count, c.bytes_sent, c.bytes_received)
                                                         for c in profile.collectives]
    assert records(profile.to_pandas("metrics")) == list(profile.metrics.items())
    with pytest.raises(ValueError, match="no table 'calls'"):
        profile.to_pandas("calls")


def check_messages(messages: ccg.Messages) -> None:
    frame = messages.to_pandas()
    assert len(frame) == len(messages)
    assert frame.to_dict("records") == list(messages.rows())
    assert records(messages.to_pandas("unmatched")) == [(u.location, u.time, u.kind, u.peer, u.comm, u.tag, u.size)
                                                        for u in messages.unmatched]
    participants = messages.to_pandas("collectives")
    assert records(participants) == [(c.comm, c.index, c.operation, c.complete, *p)
                                     for c in messages.collectives for p in c.participants]
    with pytest.raises(ValueError, match="no table 'pairs'"):
        messages.to_pandas("pairs")


@given(traces())
@settings(max_examples=25)
def test_random_traces(tmp_path_factory, trace):
    path = tmp_path_factory.mktemp("results") / "t.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()))
    with ccg.open(path) as archive:
        check_profile(archive.profile())
        check_messages(archive.messages())


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_traces(tmp_path_factory, name):
    corpus_path(*CORPUS[name])
    archive = converted(tmp_path_factory, name)
    check_profile(archive.profile())
    check_messages(archive.messages())


def test_a_missing_pandas_names_its_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.ccg"
    ccg.write_trace(path, definitions(), [(0, [ccg.EventBatch.from_events([(1, 0, 0), (2, 1, 0)])])])
    with ccg.open(path) as archive:
        profile, messages = archive.profile(), archive.messages()
    monkeypatch.setitem(sys.modules, "pandas", None)
    for result in (profile, messages):
        with pytest.raises(MissingExtraError, match=r"ccgformat\[pandas\]"):
            result.to_pandas()
