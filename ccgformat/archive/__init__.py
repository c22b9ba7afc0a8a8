"""The on-disk container: layout, block codec, streaming writer and lazy reader."""

from .layout import SectionKind
from .reader import Archive, ArchiveStats, open_archive
from .writer import Writer, save_graph, write_trace

__all__ = ["Archive", "ArchiveStats", "SectionKind", "Writer", "open_archive", "save_graph", "write_trace"]
