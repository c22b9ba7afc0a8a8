"""The native core: the hot paths of the engine in C, reached through cffi (API mode).

The pure-Python modules stay the reference and the fallback (shared/DESIGN.md: the
python-zstandard pattern); `ccgformat.backends` decides which one runs. `load` gives
the compiled module's ``(ffi, lib)``, or raises ImportError when it was not built.
"""

from __future__ import annotations

from typing import Any

from ..errors import CorruptArchiveError

#: The status codes of ccg.h.
CCG_OK, CCG_ERR_MEMORY, CCG_ERR_INPUT, CCG_ERR_CALLBACK = 0, 1, 2, 3


def failure(code: int, message: str) -> Exception:
    """The exception for a C call on archive data that returned ``code``: MemoryError when
    an allocation failed, else CorruptArchiveError."""
    return MemoryError(message) if code == CCG_ERR_MEMORY else CorruptArchiveError(message)


def load() -> tuple[Any, Any]:
    """The compiled extension's ``ffi`` and ``lib``; ImportError when it is missing."""
    from ._ccg import ffi, lib  # type: ignore[import-not-found]
    return ffi, lib
