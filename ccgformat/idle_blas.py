"""numpy imported with OpenBLAS's worker threads asleep while they wait.

ccgformat does no linear algebra, but numpy's bundled OpenBLAS starts a worker thread
per core when it is loaded, and each spins for about 2^28 cycles (~0.1 s) before it
sleeps: on a 2-core machine that is a core taken from a conversion's, a merge's or an MPI
rank's own threads in their first 0.1 s (a merge of 2 M events: 9% of its CPU samples).
``OPENBLAS_THREAD_TIMEOUT=4`` (OpenBLAS's documented variable, the log2 of the cycles a
waiting thread spins) makes them sleep at once; BLAS keeps its threads, which wake when
work comes. The variable is set only for numpy's first import, only when the user has not
set it, and removed again (subprocesses do not inherit it).
"""

from __future__ import annotations

import os
import sys

__all__ = ["import_numpy"]

_VARIABLE = "OPENBLAS_THREAD_TIMEOUT"


def import_numpy() -> None:
    """Import numpy, its OpenBLAS threads told not to spin (unless numpy is imported
    already or the user set the variable)."""
    if "numpy" in sys.modules or _VARIABLE in os.environ:
        return
    os.environ[_VARIABLE] = "4"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ[_VARIABLE]
