"""The on-disk container: layout, block codec, streaming writer and lazy reader."""

from .export import ExportFormat, atomic_output, exporter_for, exporters, register_exporter
from .layout import SectionKind
from .reader import Archive, ArchiveStats, open_archive
from .writer import Writer, save_graph, write_trace

__all__ = ["Archive", "ArchiveStats", "ExportFormat", "SectionKind", "Writer", "atomic_output", "exporter_for",
           "exporters", "open_archive", "register_exporter", "save_graph", "write_trace"]
