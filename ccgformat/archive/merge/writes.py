"""How a merge writes the merged archive: the writer's options, as `ccgformat.convert`
takes them (an MPI conversion hands its own to the merge of its parts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..writer import AGGREGATION_BUDGET, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_NODES_PER_BLOCK


@dataclass(frozen=True)
class Writes:
    """The merged file's zstd ``level`` (None: the writer's default), ``checkpoint_interval``,
    ``nodes_per_block`` and ``gaps`` (`writer.GAP_CODINGS`) of the node blocks the merge
    encodes, and whether it holds the ``aggregation`` tables (spec 4.10). Node blocks
    copied from a source (the blocks way, docs/merge.md) keep the blocking and gap coding
    their source gave them; with a ``level`` they are compressed again at it."""

    level: int | None = None
    checkpoint_interval: int = DEFAULT_CHECKPOINT_INTERVAL
    nodes_per_block: int = DEFAULT_NODES_PER_BLOCK
    gaps: str = "auto"
    aggregation: bool = True

    def writer(self) -> dict[str, Any]:
        """The options as `writer.Writer`, `write_trace` and `save_graph` take them."""
        return {"level": self.level, "checkpoint_interval": self.checkpoint_interval,
                "nodes_per_block": self.nodes_per_block, "gaps": self.gaps,
                "aggregation": AGGREGATION_BUDGET if self.aggregation else None}
