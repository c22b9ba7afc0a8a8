"""How the events of a Paje import record what an export needs beyond their columns.

A GENERIC event ``paje:fields`` right before an event holds, as compact JSON, what it
takes to write that event back: ``d`` the event definition (index into
``extensions["paje"]["eventdefs"]``) when not the first one of its event name, ``f``
fields by canonical name (user fields, and references written differently from the
canonical alias-or-name), ``e`` the Paje event when it cannot be inferred (below), ``v``
the operand of PajeAddVariable / PajeSubVariable. A GENERIC ``paje:record`` is a record
with no event of its own (a PajeResetState of an empty stack): ``e``, ``d`` and ``f``.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from ...model import EventKind

__all__ = ["ENTER_WAYS", "HINT", "LEAVE_WAYS", "RECORD", "explicit_ways", "json_text"]

HINT = "paje:fields"
RECORD = "paje:record"
#: How an ENTER or a LEAVE was written, indexed by its way number.
ENTER_WAYS = ("PajePushState", "PajeSetState")
LEAVE_WAYS = ("PajePopState", "PajeResetState", "none")
PUSH, SET = 0, 1
POP, RESET, IMPLICIT = 0, 1, 2


def json_text(value: Any) -> str:
    """The compact, key-sorted JSON text hints and records are interned as."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def explicit_ways(time: np.ndarray, kind: np.ndarray, ways: Sequence[int]) -> dict[int, str]:
    """The ENTER and LEAVE events whose way of writing differs from the one a writer
    infers, with their actual way (a hint's ``e``).

    A writer infers: an ENTER on an empty stack is a PajeSetState, else a PajePushState;
    a LEAVE is part of a PajeSetState (written as nothing) when, at the same time, only
    LEAVEs without an explicit way separate it from an ENTER written as PajeSetState,
    else it is a PajePopState.
    """
    explicit: dict[int, str] = {}
    kinds, times = kind.tolist(), time.tolist()
    depth = 0
    for i, k in enumerate(kinds):
        if k == EventKind.ENTER:
            if ways[i] != (SET if depth == 0 else PUSH):
                explicit[i] = ENTER_WAYS[ways[i]]
            depth += 1
        elif k == EventKind.LEAVE:
            depth -= 1
    follows_set, at = False, 0
    for i in range(len(kinds) - 1, -1, -1):
        k = kinds[i]
        if k == EventKind.LEAVE:
            if ways[i] != (IMPLICIT if follows_set and times[i] == at else POP):
                explicit[i] = LEAVE_WAYS[ways[i]]
                follows_set = False
        elif k == EventKind.ENTER:
            follows_set, at = ways[i] == SET, times[i]
        else:
            follows_set = False
    return explicit
