"""Queries: the registry behind `Archive.profile`, `Archive.timeline` and
`Archive.messages`.

The query layer sits above the archive and registers its functions here with
`register_query`, as format modules register exporters (archive/export.py); the archive
only looks them up, so imports keep flowing one way (query -> archive).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["register_query", "run_query"]

_QUERIES: dict[str, Callable[..., Any]] = {}


def register_query(name: str, function: Callable[..., Any]) -> None:
    """Make ``function(archive, ...)`` the archive's query ``name``."""
    if name in _QUERIES:
        raise ValueError(f"query {name!r} is already registered")
    _QUERIES[name] = function


def run_query(name: str, archive: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the registered query ``name`` on ``archive``."""
    try:
        function = _QUERIES[name]
    except KeyError:
        raise RuntimeError(f"no {name!r} query is registered; import ccgformat.query") from None
    return function(archive, *args, **kwargs)
