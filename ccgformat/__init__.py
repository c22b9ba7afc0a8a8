"""ccgformat: archive parallel-program execution traces as compressed Complete Call Graphs.

The query, table and analysis packages behind the `Archive` methods and the query result
types (`Profile`, ...) are imported at their first use, the readers and writers of the
formats at their first call (`ccgformat.deferred`): ``import ccgformat`` loads what
reading and writing archives needs, and a command what it uses.
"""

import importlib as _importlib
import typing as _typing

from .idle_blas import import_numpy as _import_numpy

_import_numpy()  # before any module of ours imports numpy

from .backends import ACTIVE as backend
from .archive import (Archive, MergeProgress, MergeReport, Writer, merge, open_archive as open, save_graph, write_table,
                      write_trace)
from .archive import register_query_source as _register_query_source
from .errors import (ArchiveError, CcgError, ChecksumError, CorruptArchiveError, FormatError, InputTraceError,
                     MergeConflictError, ParallelError,
                     MissingExtraError, MissingToolError, ParameterError, TraceError, TruncatedError, UnsupportedVersionError)
from .formats import convert
from .graph import Graph
from .aggregate_model import AggregateModel, Hierarchy

if backend == "native":
    from ._native.builder import NativeBuilder as Builder
else:
    from .graph import Builder
from .model import Definitions, Event, EventBatch, EventKind
from .params import Params

from ._version import __version__

if _typing.TYPE_CHECKING:
    from .analysis import Topology
    from .query import CallTree, Logical, Messages, MessageStream, Overview, Profile, Timeline
    from .query.metric_integrals import MetricIntegrals

#: names imported at their first use (PEP 562 `__getattr__`): the module that defines each
_LATER = {**{name: "query" for name in ("CallTree", "Logical", "Messages", "MessageStream", "Overview", "Profile",
                                         "Timeline")},
          "MetricIntegrals": "query.metric_integrals", "Topology": "analysis"}
#: subpackages that ``import ccgformat`` no longer imports, still reached as attributes
_SUBPACKAGES = ("analysis", "figures", "interop", "query")


def __getattr__(name: str) -> _typing.Any:
    """A query result type (`_LATER`) or subpackage, imported now (first use)."""
    if name in _SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(_importlib.import_module(f"{__name__}.{_LATER[name]}"), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LATER, *_SUBPACKAGES})


def _queries() -> None:
    from . import query  # noqa: F401 - registers the Archive query methods


def _tables() -> None:
    from . import interop  # noqa: F401 - registers the Archive table methods (to_arrow, ...)


def _analysis() -> None:
    from . import analysis  # noqa: F401 - registers Archive.topology


for _source in (_queries, _tables, _analysis):
    _register_query_source(_source)

__all__ = ["AggregateModel", "Archive", "ArchiveError", "Builder", "CallTree", "CcgError", "ChecksumError", "CorruptArchiveError",
           "Definitions", "Event", "EventBatch", "EventKind", "FormatError", "Graph", "Hierarchy", "InputTraceError",
           "Logical", "MergeConflictError", "MergeProgress", "MergeReport", "MessageStream", "Messages", "MetricIntegrals", "MissingExtraError", "MissingToolError", "Overview", "ParallelError", "ParameterError", "Params", "Profile", "Timeline", "Topology", "TraceError",
           "TruncatedError", "UnsupportedVersionError", "Writer", "__version__", "backend", "convert", "merge", "open",
           "save_graph", "write_table", "write_trace"]
