"""ccgformat: archive parallel-program execution traces as compressed Complete Call Graphs."""

from .backends import ACTIVE as backend
from .archive import (Archive, MergeProgress, MergeReport, Writer, merge, open_archive as open, save_graph, write_table,
                      write_trace)
from .errors import (ArchiveError, CcgError, ChecksumError, CorruptArchiveError, FormatError, InputTraceError,
                     MergeConflictError, ParallelError,
                     MissingExtraError, MissingToolError, ParameterError, TraceError, TruncatedError, UnsupportedVersionError)
from .formats import convert
from .graph import Graph
from . import query as _query  # noqa: F401 - registers the Archive query methods
from . import interop as _interop  # noqa: F401 - registers the Archive table methods (to_arrow, ...)
from .analysis import Topology  # registers Archive.topology
from .aggregate_model import AggregateModel, Hierarchy
from .query import CallTree, Logical, Messages, MessageStream, Overview, Profile, Timeline
from .query.metric_integrals import MetricIntegrals

if backend == "native":
    from ._native.builder import NativeBuilder as Builder
else:
    from .graph import Builder
from .model import Definitions, Event, EventBatch, EventKind
from .params import Params

from ._version import __version__

__all__ = ["AggregateModel", "Archive", "ArchiveError", "Builder", "CallTree", "CcgError", "ChecksumError", "CorruptArchiveError",
           "Definitions", "Event", "EventBatch", "EventKind", "FormatError", "Graph", "Hierarchy", "InputTraceError",
           "Logical", "MergeConflictError", "MergeProgress", "MergeReport", "MessageStream", "Messages", "MetricIntegrals", "MissingExtraError", "MissingToolError", "Overview", "ParallelError", "ParameterError", "Params", "Profile", "Timeline", "Topology", "TraceError",
           "TruncatedError", "UnsupportedVersionError", "Writer", "__version__", "backend", "convert", "merge", "open",
           "save_graph", "write_table", "write_trace"]
