"""Run under ``mpirun``: convert each SOURCE to OUTDIR/<its position>.ccg with
`ccgformat.parallel.convert` on every rank, the way WAY (tests/test_parallel_mpi.py: one
mpirun for many conversions, since each start costs about a second)."""

import sys
from pathlib import Path

from ccgformat.parallel import World, convert

if __name__ == "__main__":
    world = World()
    way, folder, sources = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    for position, source in enumerate(sources):
        convert(source, folder / f"{position}.ccg", world=world, way=way)
