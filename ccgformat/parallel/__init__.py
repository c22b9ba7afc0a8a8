"""Conversion and queries on MPI ranks (``ccg ... --mpi``, mpi4py: the ``mpi`` extra).

Imported only under ``--mpi``: nothing else in ccgformat imports this package, and
mpi4py is imported when a `World` is made. `convert` splits a conversion by locations
and merges the parts (dissertation 4.7, 4.4); `queries` splits ``profile``,
``aggregate``, ``messages`` and ``verify`` by locations and reduces the partial results
(4.7.5). docs/parallel.md: the design, measured, and its projection to 10,000 ranks.
"""

from .convert import convert
from .world import World, split

__all__ = ["World", "convert", "split"]
