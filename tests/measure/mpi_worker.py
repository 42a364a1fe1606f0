"""MPI worker for the harness tests: run as ``python -m mpi_worker MODE`` under mpiexec.

Modes: ``ping`` (rank 0 reports size, env var ADVISOR_TEST_VAR and a library version),
``hang`` (every rank sleeps forever after a barrier; rank 0 reports its pid first),
``fail`` (rank 1 writes to stderr and aborts with status 3).
"""

import os
import sys
import time

from mpi4py import MPI

from advisor.measure.worker import report

comm = MPI.COMM_WORLD
mode = sys.argv[1] if len(sys.argv) > 1 else "ping"
if mode == "ping":
    comm.Barrier()
    report({"size": comm.Get_size(), "var": os.environ.get("ADVISOR_TEST_VAR"),
            "pids": comm.gather(os.getpid(), root=0),
            "library": MPI.Get_library_version().splitlines()[0]}, comm=comm)
elif mode == "hang":
    pids = comm.gather(os.getpid(), root=0)
    if comm.Get_rank() == 0:
        sys.stderr.write(f"hanging ranks {pids}\n")
        sys.stderr.flush()
    while True:
        time.sleep(1)
elif mode == "fail":
    if comm.Get_rank() == 1:
        sys.stderr.write("rank 1: deliberate failure for the harness test\n")
        sys.stderr.flush()
        # the launcher forwards a rank's stderr on its own schedule, and the abort tears the
        # job down: a fresh-clone CI run lost the line once (2209 passed, this one failed)
        time.sleep(0.5)
        comm.Abort(3)
    comm.Barrier()
