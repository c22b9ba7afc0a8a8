"""One node block's own checks (`verify`), made wherever the block is decoded: the node
ids the footer lists for it, its keys against the definitions, and what the checks
across blocks need of it - its columns and its import table (`verify_nodes`). So the
ranks of ``ccg verify --mpi`` check the blocks their walks decode and send rank 0 only
this (`BlockCheck`), instead of rank 0 decoding every block again."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CcgError
from ..graph.pool import NodeKind
from ..model import PEER_KINDS, Definitions, EventKind
from .codec import ImportTable, NodeBlock
from .problems import Problem, problem_of
from .sections import DirectoryEntry
from .verify_nodes import BlockSummary

__all__ = ["BlockCheck", "Defined", "block_check"]


@dataclass(frozen=True)
class Defined:
    """How many regions, locations and metrics the definitions define: what node keys
    are checked against."""

    regions: int
    locations: int
    metrics: int

    @classmethod
    def of(cls, definitions: Definitions) -> Defined:
        return cls(len(definitions.regions), len(definitions.locations), len(definitions.metrics))


@dataclass(frozen=True)
class BlockCheck:
    """A node block checked on its own: its problems, and - when it is sound - its
    columns and import table, which the checks across blocks read (None: damaged);
    ``defined``: what its keys were checked against (None: not checked)."""

    entry: DirectoryEntry
    defined: Defined | None
    problems: list[Problem]
    summary: BlockSummary | None
    imports: ImportTable | None


def block_check(entry: DirectoryEntry, block: NodeBlock | CcgError, defined: Defined | None) -> BlockCheck:
    """Block ``entry`` as decoded (or why it does not decode) checked on its own: the
    ids the footer lists, and with ``defined`` (sound definitions) its keys."""
    if isinstance(block, CcgError):
        return BlockCheck(entry, defined, [problem_of(block, entry.kind, entry.offset)], None, None)
    if block.first != entry.first or len(block) != entry.count:
        reason = (f"the block holds nodes {block.first}..{block.first + len(block) - 1}, the footer says "
                  f"{entry.first}..{entry.first + entry.count - 1}")
        return BlockCheck(entry, defined, [Problem(entry.offset, entry.kind, reason)], None, None)
    problems = [] if defined is None else _key_problems(entry, block, defined)
    return BlockCheck(entry, defined, problems, BlockSummary.of(block), block.imports)


def _key_problems(entry: DirectoryEntry, block: NodeBlock, defined: Defined) -> list[Problem]:
    """Regions of call nodes, peers of point-to-point nodes and metrics of metric nodes
    must be defined."""
    if not len(block.key):
        return []
    kind = block.kind
    starts = block.key_start[:-1]
    has_key = block.key_start[1:] > starts
    first_key = np.where(has_key, block.key[np.minimum(starts, len(block.key) - 1)], 0)
    problems = []
    for selected, count, what in (
            (kind == NodeKind.CALL, defined.regions, "region"),
            (np.isin(kind, [int(k) for k in PEER_KINDS]), defined.locations, "peer location"),
            (kind == EventKind.METRIC, defined.metrics, "metric")):
        bad = np.flatnonzero(selected & has_key & ((first_key < 0) | (first_key >= count)))
        if len(bad):
            i = int(bad[0])
            more = f" (and {len(bad) - 1} more nodes in this block)" if len(bad) > 1 else ""
            problems.append(Problem(entry.offset, entry.kind, f"node {block.first + i}: {what} {int(first_key[i])} "
                                                              f"is not defined ({count} defined){more}"))
    return problems
