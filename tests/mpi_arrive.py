"""Run under ``mpirun``: rank 0 takes a step of SECONDS while the others wait for it in
`World.agree`; every rank writes ``cpu-seconds wall-seconds`` of that step to the file
``rank<r>`` of the folder FOLDER (a file each: mpirun may join the ranks' stdout lines)
(tests/test_parallel_mpi.py: a waiting rank sleeps, it does not poll)."""

import sys
import time
from pathlib import Path

from ccgformat.parallel import World

if __name__ == "__main__":
    world = World()
    seconds = float(sys.argv[1])
    world.agree(lambda: None)  # every rank started
    wall, cpu = time.perf_counter(), time.process_time()
    world.agree(lambda: time.sleep(seconds) if world.rank == 0 else None)
    step = f"{time.process_time() - cpu} {time.perf_counter() - wall}"
    (Path(sys.argv[2]) / f"rank{world.rank}").write_text(step)
