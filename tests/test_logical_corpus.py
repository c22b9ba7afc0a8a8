"""Logical time on every corpus trace, by both schemes: happened-before holds - a
receive's step exceeds its send's, a location's steps rise - every matched message is
found among the events, and lateness is 0 for the earliest event of each phase and step."""

from __future__ import annotations

import numpy as np
import pytest

from ccgformat.model import EventKind as K

from .query_support import CORPUS, converted


@pytest.mark.parametrize("scheme", ["lamport", "ravel"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_happened_before_on_the_corpus(tmp_path_factory, name, scheme):
    archive = converted(tmp_path_factory, name)
    result = archive.logical(scheme)
    receives = np.flatnonzero(np.isin(result.kind, (K.RECV, K.IRECV)) & (result.partner >= 0))
    sends = result.partner[receives]
    assert np.all(np.isin(result.kind[sends], (K.SEND, K.ISEND)))
    assert np.all(result.step[receives] > result.step[sends])
    same = result.location[1:] == result.location[:-1]
    assert np.all(result.step[1:][same] > result.step[:-1][same])
    assert np.all(result.event[1:][same] > result.event[:-1][same])
    assert len(receives) == len(archive.messages())
    assert result.lateness.min(initial=0) == 0
    key = result.phase * (result.steps + 1) + result.step
    earliest = np.full(int(key.max(initial=0)) + 1, np.iinfo(np.int64).max)
    np.minimum.at(earliest, key, result.lateness)
    assert set(earliest[key].tolist()) <= {0}
    if scheme == "ravel":
        assert np.all(result.step % 2 == 1)
        assert np.all((result.first_step[result.phase] <= result.step) & (result.step <= result.last_step[result.phase]))
        collective = np.isin(result.kind, (K.COLL_END,))
        assert collective.sum() == sum(len(c.participants) for c in archive.messages().collectives)
