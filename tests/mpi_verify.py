"""Run under ``mpirun``: verify each ARCHIVE with `ccgformat.parallel.queries.verify` on
every rank, the walk making the levels whatever the graph's size (`STREAM_NODES` 0, as
tests/test_parallel_mpi.py's serial verify), and print on rank 0 one JSON line per
archive: its problems, and the share of the locations each rank walked (``[first,
end)``, None for a rank that walked none) - one mpirun for several archives, since each
start costs about a second."""

import importlib
import json
import sys

from ccgformat.parallel import World

if __name__ == "__main__":
    importlib.import_module("ccgformat.query.streaming").STREAM_NODES = 0
    queries = importlib.import_module("ccgformat.parallel.queries")
    walked = []
    walk_part = queries.walk_part

    def recorded(*arguments, between):
        walked.append(between)
        return walk_part(*arguments, between=between)
    queries.walk_part = recorded
    world = World()
    for path in sys.argv[1:]:
        walked.clear()
        problems = queries.verify(world, path)
        shares = world.gather(walked[0] if walked else None)
        if problems is not None:
            print(json.dumps({"problems": [problem.to_dict() for problem in problems], "walked": shares}))
