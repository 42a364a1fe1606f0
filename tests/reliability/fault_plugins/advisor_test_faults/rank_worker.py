"""MPI worker for the fault probes: ``ok`` reports the rank count from rank 0; ``killrank``
makes rank 1 SIGKILL itself after a barrier while rank 0 waits for a message that never comes."""

import json
import os
import signal
import sys

from mpi4py import MPI


def main(mode: str) -> None:
    comm = MPI.COMM_WORLD
    comm.Barrier()
    if mode == "killrank":
        if comm.rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        comm.recv(source=1)
    if comm.rank == 0:
        print(json.dumps({"ranks": comm.size}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ok")
