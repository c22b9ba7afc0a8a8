"""Run under ``mpirun``: rank 0 takes a step of SECONDS while the others wait for it in
`World.agree`; every rank prints ``rank cpu-seconds wall-seconds`` of that step
(tests/test_parallel_mpi.py: a waiting rank sleeps, it does not poll)."""

import sys
import time

from ccgformat.parallel import World

if __name__ == "__main__":
    world = World()
    seconds = float(sys.argv[1])
    world.agree(lambda: None)  # every rank started
    wall, cpu = time.perf_counter(), time.process_time()
    world.agree(lambda: time.sleep(seconds) if world.rank == 0 else None)
    print(world.rank, time.process_time() - cpu, time.perf_counter() - wall, flush=True)
