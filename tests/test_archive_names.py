"""The LOCATION_TABLE's name split and interning for all names at once (archive/names.py)
against the regular expression one name at a time and ``dict.setdefault``."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ccgformat.archive.names import NUMBERED, intern_all, split_names

# names rich in digit runs, leading zeros, long numbers, NULs and non-ASCII digits
names = st.lists(st.text(st.sampled_from("0123456789ab _\x00é٣"), max_size=25) |
                 st.builds(lambda p, n, s: f"{p}{n}{s}", st.sampled_from(["rank ", "n", "", "0"]),
                           st.integers(0, 10**20), st.sampled_from(["", "x", " thread"])), max_size=30)


@given(names)
def test_split_names_splits_as_the_expression(names):
    prefix, suffix, numbered, numbers = split_names(names)
    matches = [NUMBERED.fullmatch(name) for name in names]
    assert [str(p) for p in prefix] == [m[1] if m else name for m, name in zip(matches, names)]
    assert [str(s) for s in suffix] == [m[3] if m else "" for m in matches]
    assert numbered.tolist() == [m is not None for m in matches]
    assert numbers.tolist() == [int(m[2]) for m in matches if m]


@given(st.lists(st.sampled_from(["", "a", "b", "rank ", "é"]), max_size=5),
       st.lists(st.sampled_from(["", "a", "b", "c", "rank ", "é"]), max_size=30))
def test_intern_all_adds_in_order_of_first_appearance(known, strings):
    texts = {text: i for i, text in enumerate(dict.fromkeys(known))}
    expected = dict(texts)
    ids = [expected.setdefault(s, len(expected)) for s in strings]
    assert intern_all(texts, np.array(strings, dtype=str)).tolist() == ids
    assert texts == expected and list(texts) == list(expected)
