"""The MPI side of the openmpi probe: runs under Open MPI's ``mpiexec -n 2`` and prints one JSON
object from rank 0 on stdout (``advisor.measure.worker.report``).

Usage::

    python -m advisor_openmpi.workers.pingpong smoke --sizes 1024,65536,1048576
    python -m advisor_openmpi.workers.pingpong sweep --sizes 1024,4096 --target-s 0.02

* ``smoke``: one exchange (``MPI_Sendrecv``) per size between ranks 0 and 1, content checked
  (random bytes, seeded per rank).  Run with Open MPI's verbose variables, its stderr shows
  which PML / BTL / smsc component carried the messages (``advisor_openmpi.selection``).
  Returns ``ok``, ``sizes``, ``library_version`` (``MPI_Get_library_version``, first line).
* ``sweep``: per size, ping-pong latency (one-way seconds, ``osu_latency``'s definition) and
  ``osu_bw``-style windows; this is the mpich-cma worker's sweep
  (``advisor_mpich_cma.workers.rank``, same distribution), which is MPI-neutral (mpi4py
  point-to-point only), reused rather than copied.  Result: ``sizes`` = list of
  ``{"bytes", "lat_s", "lat_warmup_s", "lat_batch", "window", "bw_window_s", "bw_warmup_s"}``
  and ``buffer`` (buffer conditions).

Statistics are not computed here: rank 0 returns raw seconds and the probe summarises them with
the harness.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence


def _smoke(comm, sizes: Sequence[int]) -> dict:
    import numpy as np

    from advisor_mpich_cma.workers.rank import _smoke as smoke_one

    ok = True
    seconds = {}
    for n in sizes:
        r = smoke_one(None, comm, int(n))
        ok = ok and bool(r["ok"])
        seconds[str(n)] = float(r["seconds"])
    return {"ok": bool(np.all(ok)), "sizes": list(map(int, sizes)), "seconds": seconds}


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m advisor_openmpi.workers.pingpong")
    ap.add_argument("mode", choices=("smoke", "sweep"))
    ap.add_argument("--sizes", default="1024,65536,1048576", help="message sizes, bytes")
    ap.add_argument("--target-s", type=float, default=0.02,
                    help="seconds of steady-state timing per size and measure")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-samples", type=int, default=10)
    args = ap.parse_args(list(argv))
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]

    from mpi4py import MPI

    from advisor.measure.worker import report

    comm = MPI.COMM_WORLD
    result: dict = {"mode": args.mode, "nprocs": comm.Get_size(),
                    "library_version": MPI.Get_library_version().strip("\x00 \n").splitlines()[0]}
    if comm.Get_size() != 2:
        result["error"] = "needs exactly 2 ranks"
    elif args.mode == "smoke":
        result.update(_smoke(comm, sizes))
    else:
        from advisor_mpich_cma.workers.rank import _sweep

        result.update(_sweep(MPI, comm, sizes, args.target_s, args.warmup, args.min_samples))
    shm = comm.Split_type(MPI.COMM_TYPE_SHARED)
    result["placement_per_rank"] = comm.gather(
        {"host": MPI.Get_processor_name(), "shm_size": shm.Get_size()}, root=0)
    shm.Free()
    report(result, comm=comm)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
