"""`BlockAhead` decodes the blocks near each one asked for in a thread: every block asked
for is the one its decoder gives, whatever the order; without ``again`` no block is
decoded twice; at most ``keep`` wait; what decoding raises is raised to the asker. An
archive decodes ahead only where another core may run the thread."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat
from ccgformat.archive import reader, save_graph
from ccgformat.archive.block_ahead import BlockAhead
from ccgformat.archive.layout import BLOCK_HEADER, NODE_KINDS
from ccgformat.archive.verify import verify
from ccgformat.errors import CorruptArchiveError

from .query_support import ring_graph


class Decoder:
    """Decodes block k as ("block", k), counting each call; block ``bad`` raises."""

    def __init__(self, bad: int = -1):
        self.calls: dict[int, int] = {}
        self.lock = threading.Lock()
        self.bad = bad

    def __call__(self, index: int):
        with self.lock:
            self.calls[index] = self.calls.get(index, 0) + 1
        if index == self.bad:
            raise CorruptArchiveError(f"block {index} is damaged")
        return ("block", index)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 29), min_size=1, max_size=60), st.integers(0, 3), st.integers(0, 5),
       st.integers(0, 8), st.booleans())
def test_every_block_asked_for_is_its_own(asked, before, after, keep, again):
    decode = Decoder()
    ahead = BlockAhead(decode, 30, before, after, keep, again)
    try:
        for index in asked:
            assert ahead.block(index, held=()) == ("block", index)
            assert len(ahead._ahead) <= keep
    finally:
        ahead.close()
    assert set(asked) <= set(decode.calls)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 29), min_size=1, max_size=60, unique=True), st.integers(0, 3), st.integers(0, 5))
def test_without_again_a_block_is_decoded_once(asked, before, after):
    decode = Decoder()
    ahead = BlockAhead(decode, 30, before, after, keep=30, again=False)  # nothing let go before it is asked for
    try:
        for index in asked:
            assert ahead.block(index, held=()) == ("block", index)
    finally:
        ahead.close()
    assert all(count == 1 for count in decode.calls.values())


def test_blocks_held_elsewhere_are_not_decoded_ahead():
    decode = Decoder()
    ahead = BlockAhead(decode, 10, 1, 3, 8)
    ahead.block(4, held={5, 6})
    assert set(ahead._ahead) == {3, 7}
    ahead.close()
    assert decode.calls[4] == 1


def test_what_decoding_ahead_raises_is_raised_to_the_asker():
    decode = Decoder(bad=2)
    ahead = BlockAhead(decode, 10, 0, 2, 4)
    assert ahead.block(1, held=()) == ("block", 1)
    with pytest.raises(CorruptArchiveError, match="block 2"):
        ahead.block(2, held=())
    ahead.close()


@pytest.mark.parametrize("cores", [1, 2])
def test_an_archive_decodes_ahead_only_with_another_core(tmp_path, monkeypatch, cores):
    """`verify`'s walk decodes node blocks ahead in a thread when the process may run on
    more than one core (`compression.default_threads`: ``mpirun`` binds a rank to one,
    where the thread would only take turns with the walk); the problems found are the
    same either way (a damaged node block among them)."""
    graph = ring_graph(4, 400, seed=5)
    path = tmp_path / "ring.ccg"
    save_graph(graph, path, nodes_per_block=16)
    with ccgformat.open(path) as archive:
        entry = next(e for e in archive.sections if e.kind in NODE_KINDS)
    data = bytearray(path.read_bytes())
    data[entry.offset + BLOCK_HEADER.size + 3] ^= 0x40
    damaged = tmp_path / "damaged.ccg"
    damaged.write_bytes(bytes(data))
    made = []

    class Recorded(BlockAhead):
        def __init__(self, *args, **kwargs):
            made.append(True)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(reader, "BlockAhead", Recorded)
    expected = [verify(path), verify(damaged)]
    monkeypatch.setattr(reader, "default_threads", lambda: cores)
    made.clear()
    assert [verify(path), verify(damaged)] == expected and expected[0] == [] and expected[1]
    assert bool(made) == (cores > 1)
