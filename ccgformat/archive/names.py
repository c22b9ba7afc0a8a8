"""Names split for the LOCATION_TABLE (spec 4.7) and interned, for all names at once:
numpy over the names' characters instead of a regular expression per name (a million
location names in about a second)."""

from __future__ import annotations

import re

import numpy as np

#: a name's last run of ASCII digits without a leading zero, as prefix, number, suffix
NUMBERED = re.compile(r"(.*?)(0|[1-9][0-9]{0,17})([^0-9]*)", re.DOTALL)
_MAX_DIGITS = 18
_ZERO, _NINE = ord("0"), ord("9")
#: `intern_all` compares each string with the one this many places before (the prefix
#: and suffix of a name alternate)
_LAG = 2


def split_names(names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per name, as `NUMBERED` splits it: prefix and suffix (the whole name and "" when
    it holds no digit), whether it is numbered; and the numbers of the numbered ones."""
    if "\x00" in "".join(names):  # numpy's strings end at trailing NULs
        return _split_each(names)
    array = np.array(names, dtype=str) if names else np.zeros(0, "<U1")
    count, width = len(array), array.dtype.itemsize // 4
    codes = array.view(np.uint32).reshape(count, width)
    length = np.strings.str_len(array)
    column = np.arange(width)
    inside = column < length[:, None]
    digit = inside & (codes >= _ZERO) & (codes <= _NINE)
    numbered = digit.any(axis=1)
    last = width - 1 - np.argmax(digit[:, ::-1], axis=1)  # the last digit (where numbered)
    before = ~digit & (column < last[:, None])
    run = np.where(before.any(axis=1), width - np.argmax(before[:, ::-1], axis=1), 0)  # its run's first digit
    # the number: the longest end of the run of at most 18 digits that does not start with 0 ("0" alone else)
    shortest = np.maximum(run, last - (_MAX_DIGITS - 1))
    leading = digit & (codes != _ZERO) & (column >= shortest[:, None]) & (column <= last[:, None])
    start = np.where(leading.any(axis=1), np.argmax(leading, axis=1), last)
    rows = np.arange(count)
    number = np.zeros(count, np.int64)
    for k in range(int((last - start)[numbered].max(initial=-1)) + 1):  # the longest number's digits
        position = last - k
        value = codes[rows, np.maximum(position, 0)].astype(np.int64) - _ZERO
        number += np.where(numbered & (position >= start), value * 10 ** k, 0)
    cut = np.where(numbered, start, length)
    prefix = np.where(column < cut[:, None], codes, 0)
    tail = np.where(numbered, last + 1, length)  # where the suffix starts
    suffix = np.zeros((count, width), np.uint32)
    some = np.flatnonzero(tail < length)  # the names with a suffix (few of them, as a rule)
    after = tail[some, None] + column
    suffix[some] = np.where(after < length[some, None], codes[some[:, None], np.minimum(after, width - 1)], 0)
    as_text = f"<U{width}"
    return (prefix.astype(np.uint32).view(as_text).reshape(count),
            suffix.astype(np.uint32).view(as_text).reshape(count), numbered, number[numbered])


def _split_each(names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`split_names` one name at a time, into arrays of Python strings."""
    matches = [NUMBERED.fullmatch(name) for name in names]
    prefix = np.array([m[1] if m else name for m, name in zip(matches, names)], dtype=object)
    suffix = np.array([m[3] if m else "" for m in matches], dtype=object)
    numbered = np.array([m is not None for m in matches], bool)
    return prefix, suffix, numbered, np.array([int(m[2]) for m in matches if m], np.int64)


def intern_all(texts: dict[str, int], strings: np.ndarray) -> np.ndarray:
    """The ids of ``strings`` in ``texts``, adding the new ones in order of first
    appearance (as ``texts.setdefault(s, len(texts))`` one string after another).

    Only the strings unlike the one `_LAG` places before are sorted: a string equal to
    it takes its id (the prefixes, suffixes and kinds of regular names repeat so)."""
    if not len(strings):
        return np.zeros(0, np.int64)
    count = len(strings)
    repeat = np.zeros(count, bool)
    repeat[_LAG:] = strings[_LAG:] == strings[:-_LAG]
    heads = np.flatnonzero(~repeat)
    source = np.where(repeat, 0, np.arange(count))  # then each string's head: the last before it in its class
    for offset in range(_LAG):
        np.maximum.accumulate(source[offset::_LAG], out=source[offset::_LAG])
    unique, first, inverse = np.unique(strings[heads], return_index=True, return_inverse=True)
    ids = np.empty(len(unique), np.int64)
    for k in np.argsort(first, kind="stable").tolist():
        ids[k] = texts.setdefault(str(unique[k]), len(texts))
    rank = np.empty(count, np.int64)
    rank[heads] = np.arange(len(heads))
    return ids[inverse.reshape(-1)][rank[source]]
