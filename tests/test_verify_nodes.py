"""`verify_nodes.NodeSummaries` checks the import claims the same whatever order the node
blocks come in (`verify` checks them as its walk decodes them) and whatever its budgets:
against a plain comparison of every claim with the node it names (the reference), on the
blocks of a written archive whose import tables tell lies that hypothesis chooses."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ccgformat
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.archive.verify_nodes import BlockSummary, NodeSummaries

from .query_support import ring_archive


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    """The node entries of a ring archive of many blocks, in id order, and their blocks."""
    path = ring_archive(tmp_path_factory.mktemp("summaries"), 3, 3000)
    with ccgformat.open(path) as archive:
        entries = sorted((e for e in archive.sections if e.kind in NODE_KINDS), key=lambda e: e.first)
        decoded = [archive.pool._decoded(index) for index in range(len(entries))]
    assert len(entries) > 10 and sum(len(block.imports.ids) for block in decoded) > 100
    return entries, decoded


class _Lying:
    """A block with another import table (the node columns its own)."""

    def __init__(self, block, imports):
        self.block, self.imports = block, imports

    def __getattr__(self, name):
        return getattr(self.block, name)

    def __len__(self):
        return len(self.block)


def _lie(blocks, rows):
    """The blocks with the event counts of the chosen (block, row) import claims raised by one."""
    out = list(blocks)
    for index, row in rows:
        imports = copy.copy(out[index].imports)
        if not len(imports.ids):
            continue
        imports.events = np.array(imports.events, dtype=np.int64)
        imports.events[row % len(imports.ids)] += 1
        out[index] = _Lying(blocks[index], imports)
    return out


def _reference(entries, blocks, damaged):
    """Every claim of a sound block on a node of a sound block that differs from the node:
    (claiming block offset, child)."""
    owner = {}
    for index, block in enumerate(blocks):
        if index not in damaged:
            for local in range(len(block)):
                owner[block.first + local] = (int(block.events[local]), int(block.total[local]))
    found = set()
    for index, block in enumerate(blocks):
        if index in damaged:
            continue
        imports = block.imports
        for child, events, total in zip(imports.ids.tolist(), imports.events.tolist(), imports.total.tolist()):
            if child in owner and owner[child] != (events, total):
                found.add((entries[index].offset, child))
    return found


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_claims_are_checked_the_same_in_any_order_and_budget(blocks, data):
    entries, decoded = blocks
    count = len(entries)
    lies = data.draw(st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, 1000)), max_size=6))
    damaged = set(data.draw(st.lists(st.integers(0, count - 1), max_size=2)))
    order = data.draw(st.permutations(range(count)))
    summary_bytes = data.draw(st.sampled_from([1, 20_000, 1 << 30]))
    ledger_bytes = data.draw(st.sampled_from([1, 4_000, 1 << 30]))
    lying = _lie(decoded, lies)
    reported: set[tuple[int, int]] = set()
    again = {entry: block for entry, block in zip(entries, lying)}
    summaries = NodeSummaries(entries, lambda entry: again[entry],
                              lambda entry, found: reported.update((entry.offset, child) for child, _ in found),
                              summary_bytes, ledger_bytes)
    for index in order:
        assert not summaries.checked(entries[index])
        if index in damaged:
            summaries.damaged(entries[index])
        else:
            summaries.check_imports(entries[index], lying[index].imports)
            summaries.add(entries[index], BlockSummary.of(lying[index]))
        assert summaries.checked(entries[index])
    summaries.settle()
    assert reported == _reference(entries, lying, damaged)
    for index, block in enumerate(decoded):
        node = block.first + len(block) // 2
        expected = None if index in damaged else (int(block.events[len(block) // 2]),
                                                   int(block.total[len(block) // 2]))
        assert summaries.node(node) == expected
