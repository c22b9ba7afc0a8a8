"""Run under ``mpirun``: verify each ARCHIVE with `ccgformat.parallel.queries.verify` on
every rank, the walk making the levels whatever the graph's size (`STREAM_NODES` 0, as
tests/test_parallel_mpi.py's serial verify), and print on rank 0 one JSON line per
archive: its problems, the share of the locations each rank walked (``[first, end)``,
None for a rank that walked none) and how many node blocks each rank other than 0
checked on its own for rank 0 (`verify_blocks.block_check`; $CHECKS_BYTES: the bytes of
their columns it holds at most) - one mpirun for several archives, since each start costs
about a second."""

import importlib
import json
import os
import sys

from ccgformat.parallel import World

if __name__ == "__main__":
    importlib.import_module("ccgformat.query.streaming").STREAM_NODES = 0
    queries = importlib.import_module("ccgformat.parallel.queries")
    queries.VERIFY_CHECKS_BYTES = int(os.environ.get("CHECKS_BYTES", queries.VERIFY_CHECKS_BYTES))
    walked = []
    walk_part = queries.walk_part

    def recorded(*arguments, between):
        walked.append(between)
        return walk_part(*arguments, between=between)
    queries.walk_part = recorded
    checked = []
    block_check = queries.block_check

    def counted(*arguments):
        checked.append(arguments[0])
        return block_check(*arguments)
    queries.block_check = counted
    world = World()
    for path in sys.argv[1:]:
        walked.clear()
        checked.clear()
        problems = queries.verify(world, path)
        shares = world.gather(walked[0] if walked else None)
        checks = world.gather(len(checked))
        if problems is not None:
            print(json.dumps({"problems": [problem.to_dict() for problem in problems], "walked": shares,
                              "checked": checks}))
