"""The on-disk container: layout, block codec, streaming writer and lazy reader.

This is the archive layer's public surface for the layers above (formats, query, cli):
they import from here, not from its modules.
"""

from .bulk import write_table
from .export import ExportFormat, ExportProgress, exporter_for, exporters, register_exporter
from .layout import MAGIC, SectionKind
from .merge import MergeProgress, MergeReport, merge
from .queries import register_query, register_query_source
from .reader import Archive, ArchiveStats, open_archive
from .writer import (AGGREGATION_BUDGET, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_LEVEL, DEFAULT_NODES_PER_BLOCK,
                     DEFAULT_NODES_SEARCH, DEFAULT_TABLES_LEVEL, GAP_CODINGS, KeptBlock, Writer, save_graph,
                     write_trace)

__all__ = ["AGGREGATION_BUDGET", "DEFAULT_CHECKPOINT_INTERVAL", "DEFAULT_LEVEL", "DEFAULT_NODES_SEARCH",
           "DEFAULT_NODES_PER_BLOCK", "DEFAULT_TABLES_LEVEL", "GAP_CODINGS", "KeptBlock", "MAGIC", "Archive", "ArchiveStats", "ExportFormat", "ExportProgress", "MergeProgress",
           "MergeReport", "SectionKind", "Writer",
           "exporter_for", "exporters", "merge", "open_archive",
           "register_exporter", "register_query", "register_query_source", "save_graph", "write_table", "write_trace"]
