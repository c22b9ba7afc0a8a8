"""Functions imported at their first call.

A registry that names every input format and exporter (`ccgformat.formats`) would
otherwise import every reader and writer, though a command uses one: `Deferred` stands in
for such a function until it is called, so that ``import ccgformat`` and ``ccg convert``
load only the modules they use (start-up, docs/parallel.md).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ["Deferred"]


class Deferred:
    """The function ``name`` of the module ``module`` (a full module name), imported at the
    first call; every call goes to it with the same arguments."""

    __slots__ = ("module", "name", "_function")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._function: Callable[..., Any] | None = None

    @property
    def function(self) -> Callable[..., Any]:
        """The function itself (its module imported now if it was not yet)."""
        if self._function is None:
            self._function = getattr(importlib.import_module(self.module), self.name)
        return self._function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({self.module!r}, {self.name!r})"
