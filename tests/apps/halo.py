"""A halo exchange, written for hpc-advisor's tests: the "user's application" of ``advisor
verify --app`` tests, next to HPCC (tests/apps/hpcc.py).

Run it as ``mpiexec -n 2 python tests/apps/halo.py [--bytes B] [--iters N] [--buffers KIND]``.
The ranks form a 1-D ring; every iteration each rank sends one halo of ``--bytes`` to each
neighbour and receives one from each (non-blocking, then wait), then does a little compute: the
next halos it sends are computed from the ones it received (one multiply-add pass over them).

``--buffers per-message`` (the default) takes fresh arrays for every message, as an
application that allocates its halos per step does; ``reused`` allocates them once.  Either
way the data sent is non-zero: the reused buffers are filled with a pseudo-random pattern
before timing, the fresh ones are written by the compute step (DESIGN.md, measurement
hygiene: zero pages flatter reads).  ``--warmup`` iterations run untimed first.

Rank 0 prints one line (the metric ``verify --app`` reads with a regex)::

    halo: bytes=2097152 iters=200 time_s=0.123456 bandwidth_GBps=12.34 buffers=per-message ranks=2 warmup_s=0.0123

``time_s`` is the slowest rank's time for the timed iterations; ``bandwidth_GBps`` is the
bytes one rank sends in them (2 halos per iteration) over ``time_s``, in 1e9 bytes/s.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from mpi4py import MPI


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # 2 MiB: a size where MPICH's intra-node path (CMA single copy or shared-memory cells)
    # shows in the time; 200 iterations: 0.65 s of wall time with mpiexec -n 2 on a quiet
    # 2-core VM (both measured: tests/apps/README.md)
    ap.add_argument("--bytes", type=int, default=2 * 1024 * 1024, help="halo size in bytes")
    ap.add_argument("--iters", type=int, default=200, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=5, help="untimed iterations before them")
    ap.add_argument("--buffers", choices=("per-message", "reused"), default="per-message",
                    help="fresh arrays for every message, or one set allocated once")
    args = ap.parse_args(argv)
    if args.bytes < 8 or args.iters < 1 or args.warmup < 0:
        ap.error("--bytes must be >= 8, --iters >= 1, --warmup >= 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    left, right = (rank - 1) % size, (rank + 1) % size
    count = args.bytes // 8  # float64 elements; a halo is whole doubles
    nbytes = count * 8
    rng = np.random.default_rng(1234 + rank)
    # one pattern: non-zero (offset keeps it away from 0), every page written
    pattern = rng.random(count) + 1.0

    def fresh() -> tuple[np.ndarray, ...]:
        return tuple(np.empty(count) for _ in range(4))

    send_l, send_r, recv_l, recv_r = fresh()
    for buf in (send_l, send_r, recv_l, recv_r):
        buf[:] = pattern

    def step() -> tuple[np.ndarray, np.ndarray]:
        nonlocal send_l, send_r, recv_l, recv_r
        # tags tell the two halos apart when left == right (2 ranks)
        reqs = [comm.Irecv(recv_l, source=left, tag=1), comm.Irecv(recv_r, source=right, tag=0),
                comm.Isend(send_r, dest=right, tag=1), comm.Isend(send_l, dest=left, tag=0)]
        MPI.Request.Waitall(reqs)
        got_l, got_r = recv_l, recv_r
        if args.buffers == "per-message":
            send_l, send_r, recv_l, recv_r = fresh()
        # the compute: next halos from the received ones (a relaxation-like update)
        np.multiply(got_l, 0.5, out=send_l)
        send_l += 0.25
        np.multiply(got_r, 0.5, out=send_r)
        send_r += 0.25
        return got_l, got_r

    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(args.warmup):
        step()
    comm.Barrier()
    t1 = MPI.Wtime()
    for _ in range(args.iters):
        got = step()
    t2 = MPI.Wtime()
    warm = comm.allreduce(t1 - t0, op=MPI.MAX)
    elapsed = comm.allreduce(t2 - t1, op=MPI.MAX)
    # the data really travelled: the pattern is in [1, 2) and x -> x/2 + 1/4 keeps every
    # value in [0.5, 2); zeros or garbage from a halo never written fall outside
    if not all(np.all((g >= 0.5) & (g < 2.0)) for g in got):
        print(f"halo: rank {rank}: received values outside [0.5, 2)", file=sys.stderr)
        comm.Abort(2)
    if rank == 0:
        gbps = 2 * nbytes * args.iters / elapsed / 1e9
        print(f"halo: bytes={nbytes} iters={args.iters} time_s={elapsed:.6f} "
              f"bandwidth_GBps={gbps:.2f} buffers={args.buffers} ranks={size} "
              f"warmup_s={warm:.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
