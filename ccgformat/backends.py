"""Which implementation of the hot paths runs: the native core or the Python reference.

``CCGFORMAT_BACKEND`` chooses, when ccgformat is imported: ``auto`` (the default) uses
the native core when its extension was built and the Python reference otherwise;
``native`` insists on the native core and raises ImportError when it cannot load (no
silent fallback); ``python`` always uses the reference. The choice is
``ccgformat.backend``.
"""

from __future__ import annotations

import os

CHOICES = ("auto", "native", "python")


def _select() -> str:
    wanted = os.environ.get("CCGFORMAT_BACKEND", "auto").strip().lower() or "auto"
    if wanted not in CHOICES:
        raise ImportError(f"CCGFORMAT_BACKEND={wanted!r}: expected one of {', '.join(CHOICES)}")
    if wanted == "python":
        return "python"
    try:
        from ._native import load
        load()
    except ImportError as error:
        if wanted == "native":
            raise ImportError(f"CCGFORMAT_BACKEND=native, but the native core cannot load: {error} "
                              f"(reinstall with a C compiler: pip install -e .)") from error
        return "python"
    return "native"


#: "native" or "python": the implementation in use.
ACTIVE = _select()


def native() -> bool:
    """True when the native core is in use."""
    return ACTIVE == "native"
