"""The writer's top block (`write_trace`): a location that makes a block's worth of nodes
or more has its last nodes - its root and the artificial nodes made with it - in a node
block of their own, which every random access to the location decodes; a location of
fewer nodes shares its blocks as before."""

from __future__ import annotations

import sys
from pathlib import Path

import ccgformat as ccg
from ccgformat.archive.layout import NODE_KINDS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402

NODES_PER_BLOCK = 256


def _write(path, jitter: float, locations: int = 3, events: int = 6000) -> ccg.Archive:
    """Three locations of 6,000 events, each more than a checkpoint interval of 500."""
    definitions, streams = synth.synthesize(locations, events, jitter=jitter, seed=5)
    ccg.write_trace(path, definitions, ((location, streams(location)) for location in range(locations)),
                    checkpoint_interval=500, nodes_per_block=NODES_PER_BLOCK)
    return ccg.open(path)


def _block_of(archive: ccg.Archive, node: int):
    return next(e for e in archive.sections if e.kind in NODE_KINDS and e.first <= node < e.first + e.count)


def test_a_large_location_ends_in_a_block_of_its_top_nodes(tmp_path):
    with _write(tmp_path / "j.ccg", jitter=0.2) as archive:
        roots = archive.roots
        for location, root in roots.items():
            block = _block_of(archive, root.root)
            # the root is the last node the location made, alone with the late stage's few
            assert block.first + block.count == root.root + 1 and block.count < 16, (location, block)
            # and the block before it ended early, at the first of those nodes
            earlier = _block_of(archive, block.first - 1)
            assert earlier.first + earlier.count == block.first
        assert max(e.count for e in archive.sections if e.kind in NODE_KINDS) == NODES_PER_BLOCK
        streams = synth.synthesize(3, 6000, jitter=0.2, seed=5)[1]
        for location in roots:
            want = [tuple(row) for batch in streams(location) for row in batch.rows()]
            assert [tuple(row) for batch in archive.location(location).events() for row in batch.rows()] == want


def test_a_location_of_fewer_nodes_shares_its_block(tmp_path):
    with _write(tmp_path / "r.ccg", jitter=0.0) as archive:
        blocks = [e for e in archive.sections if e.kind in NODE_KINDS]
        assert len(blocks) == 1 and archive.stats.n < NODES_PER_BLOCK
