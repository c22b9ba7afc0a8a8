"""ccgformat: archive parallel-program execution traces as compressed Complete Call Graphs."""

from .backends import ACTIVE as backend
from .archive import Archive, Writer, open_archive as open, save_graph, write_table, write_trace
from .errors import (ArchiveError, CcgError, ChecksumError, CorruptArchiveError, FormatError, InputTraceError,
                     ParameterError, TraceError, TruncatedError, UnsupportedVersionError)
from .formats import convert
from .graph import Graph
from . import query as _query  # noqa: F401 - registers the Archive query methods

if backend == "native":
    from ._native.builder import NativeBuilder as Builder
else:
    from .graph import Builder
from .model import Definitions, Event, EventBatch, EventKind
from .params import Params

from ._version import __version__

__all__ = ["Archive", "ArchiveError", "Builder", "CcgError", "ChecksumError", "CorruptArchiveError", "Definitions",
           "Event", "EventBatch", "EventKind", "FormatError", "Graph", "InputTraceError", "ParameterError", "convert", "Params", "TraceError", "TruncatedError",
           "UnsupportedVersionError", "Writer", "__version__", "backend", "open", "save_graph", "write_table", "write_trace"]
