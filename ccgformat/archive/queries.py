"""Queries: the registry behind `Archive.profile`, `Archive.timeline` and
`Archive.messages`.

The query layer sits above the archive and registers its functions here with
`register_query`, as format modules register exporters (archive/export.py); the archive
only looks them up, so imports keep flowing one way (query -> archive). The packages
that register them are imported at the first query asked for that is not registered
yet (`register_query_source`), and a query registered by the path of its function is
imported at its first run, so that ``import ccgformat`` loads none of them and a merge
or a command only the queries it runs.
"""

from __future__ import annotations

import threading
from importlib import import_module
from typing import Any, Callable

__all__ = ["register_query", "register_query_source", "run_query"]

_QUERIES: dict[str, Callable[..., Any] | str] = {}
#: what imports the registering packages, those not run yet, in the order given
_SOURCES: list[Callable[[], None]] = []
_LOADING = threading.RLock()


def register_query(name: str, function: Callable[..., Any] | str) -> None:
    """Make ``function(archive, ...)`` the archive's query ``name``; ``function`` may be
    given as ``"package.module:function"``, imported when the query first runs."""
    if name in _QUERIES:
        raise ValueError(f"query {name!r} is already registered")
    _QUERIES[name] = function


def register_query_source(load: Callable[[], None]) -> None:
    """Make ``load()``, which imports modules that call `register_query`, run when a query
    not registered yet is asked for (each source once, in the order given, until the
    query is found)."""
    _SOURCES.append(load)


def _lookup(name: str) -> Callable[..., Any]:
    function = _QUERIES.get(name)
    if callable(function):
        return function
    with _LOADING:
        while name not in _QUERIES and _SOURCES:
            _SOURCES.pop(0)()
        function = _QUERIES.get(name)
        if function is None:
            raise RuntimeError(f"no {name!r} query is registered; import ccgformat.query")
        if isinstance(function, str):
            module, attribute = function.split(":")
            function = _QUERIES[name] = getattr(import_module(module), attribute)
    return function


def run_query(name: str, archive: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the registered query ``name`` on ``archive``."""
    return _lookup(name)(archive, *args, **kwargs)
