"""The native core: the hot paths of the engine in C, reached through cffi (API mode).

The pure-Python modules stay the reference and the fallback (shared/DESIGN.md: the
python-zstandard pattern); `ccgformat.backends` decides which one runs. `load` gives
the compiled module's ``(ffi, lib)``, or raises ImportError when it was not built.
"""

from __future__ import annotations

from typing import Any


def load() -> tuple[Any, Any]:
    """The compiled extension's ``ffi`` and ``lib``; ImportError when it is missing."""
    from ._ccg import ffi, lib  # type: ignore[import-not-found]
    return ffi, lib
