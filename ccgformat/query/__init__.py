"""Queries on the compressed graph, without decompressing the trace (dissertation 3.4,
4.5): `profile` (the cached summary query), `calltree` (the same per call path),
`timeline` (per-pixel exclusive-time shares and their colour blending), `messages` and
`iter_messages` (send/receive and collective matching), `aggregate` (the microscopic model
of paper 000), `overview` (its optimal aggregation, papers 000 and 002) and `logical`
(logical time and lateness, paper 003).

Each takes a `ccgformat.Graph` or an open `ccgformat.Archive` (`overview`: an archive);
`Archive` has them as methods, registered here (`ccgformat.archive.register_query`).
Importing this package imports none of them: each name below is imported from its module
at its first use (PEP 562), each query at its first run, so that a command or a merge
loads only the queries it runs. A module is named apart from the function it exports
(`profile_query.profile`): importing a submodule binds its name in the package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..archive import register_query

if TYPE_CHECKING:
    from .aggregate_query import aggregate
    from .calltree_query import calltree
    from .calltree_result import CallTree
    from .logical_query import logical
    from .logical_result import Logical
    from .messages_query import Messages, MessageStream, iter_messages, messages
    from .overview_query import Overview, overview
    from .profile_query import Profile, profile
    from .timeline_query import Timeline, timeline

#: the names this package exports -> the module that defines each
_EXPORTS = {"CallTree": "calltree_result", "Logical": "logical_result", "MessageStream": "messages_query",
            "Messages": "messages_query", "Overview": "overview_query", "Profile": "profile_query",
            "Timeline": "timeline_query", "aggregate": "aggregate_query", "calltree": "calltree_query",
            "iter_messages": "messages_query", "logical": "logical_query", "messages": "messages_query",
            "overview": "overview_query", "profile": "profile_query", "timeline": "timeline_query"}

#: the queries of `Archive` (`ccgformat.archive.run_query`) -> their module and function
_QUERIES = {"profile": ("profile_query", "profile"), "timeline": ("timeline_query", "timeline"),
            "calltree": ("calltree_query", "calltree"), "messages": ("messages_query", "messages"),
            "iter_messages": ("messages_query", "iter_messages"), "aggregate": ("aggregate_query", "aggregate"),
            "overview": ("overview_query", "overview"), "logical": ("logical_query", "logical"),
            "streamed_logical": ("logical_spool", "streamed_logical"),
            "aggregation_levels": ("aggregate_tables", "levels"),
            "metric_integrals": ("metric_integrals", "metric_integrals"),
            "metric_levels": ("metric_integrals", "metric_levels"), "verify_walk": ("verify_walk", "verify_walk"),
            "table_rows": ("table_rows", "table_rows"), "walked_window": ("table_rows", "walked_window")}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """An exported name (`_EXPORTS`), imported from its module now (first use)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(import_module(f"{__name__}.{module}"), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


for _name, (_module, _function) in _QUERIES.items():
    register_query(_name, f"{__name__}.{_module}:{_function}")
