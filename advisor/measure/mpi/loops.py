"""The timed loops and constants the modes of the shared 2-rank worker use
(``advisor.measure.mpi.rank``: smoke and sweep; ``advisor.measure.mpi.paired``: the paired
mode): osu_latency's ping-pong, osu_bw's window of non-blocking sends, and the batch
calibration.  Runs inside the MPI ranks; mpi4py point-to-point only, so any MPI library.
"""

from __future__ import annotations

import time

#: osu_bw's window of non-blocking sends (OSU micro-benchmarks 7.x, ``osu_bw.c``: window 64).
OSU_WINDOW = 64
#: Cap on the bytes per window so a 16 MiB point costs a window of <= 64 MiB (a time-budget
#: choice for small machines, not a physical constant; the window used is recorded per size).
MAX_WINDOW_BYTES = 64 << 20
#: Cap on the steady-state samples per size, measure and launch: bounds the evidence size and
#: the cost of the bootstrap in recommend (a budget choice; the median needs far fewer).
MAX_SAMPLES = 400
#: Page alignment of the buffers (the base page size of x86-64 and most aarch64 kernels).
BUFFER_ALIGN = 4096
#: Threshold values the paired mode writes through its run-time switch: 1 byte (every message
#: >= 1 byte takes the single-copy path) and 2**30 bytes (no message of a sweep, at most
#: 16 MiB, reaches it: the copy path).
THRESHOLD_ON, THRESHOLD_OFF = 1, 1 << 30
#: Most rounds of the paired mode: a profile keeps at most 48 samples per point
#: (``advisor.measure.thinning.MAX_SAMPLES_PER_POINT``), so every round survives in the profile.
MAX_ROUNDS = 48



def calibrate(comm, fn, target_s: float, lo: int, hi: int) -> int:
    """Rank 0 times one call of ``fn`` and broadcasts how many calls fill ``target_s``."""
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    n = max(lo, min(hi, int(target_s / one))) if comm.Get_rank() == 0 else 0
    return comm.bcast(n, root=0)


def pingpong(comm, s, r, k: int = 1) -> None:
    """``k`` ping-pongs of ``s``/``r`` between ranks 0 and 1 (osu_latency's loop).  ``s`` and
    ``r`` may be lists of buffers (a buffer per message): ping-pong ``i`` then uses the
    ``i``-th of each, cyclically."""
    peer = 1 - comm.Get_rank()
    ss = s if isinstance(s, list) else [s]
    rr = r if isinstance(r, list) else [r]
    for i in range(k):
        si, ri = ss[i % len(ss)], rr[i % len(rr)]
        if comm.Get_rank() == 0:
            comm.Send(si, dest=peer, tag=1)
            comm.Recv(ri, source=peer, tag=1)
        else:
            comm.Recv(ri, source=peer, tag=1)
            comm.Send(si, dest=peer, tag=1)


def windows(MPI, comm, s, r, window: int, ack, k: int = 1) -> None:
    """``k`` windows of ``window`` non-blocking sends of ``s`` (receives into ``r``), each
    closed by a 4-byte acknowledgement (osu_bw's loop).  ``s`` and ``r`` may be lists of
    buffers (a buffer per message, as halo exchanges send): message ``j`` of a window then
    uses the ``j``-th of each, cyclically."""
    peer = 1 - comm.Get_rank()
    ss = s if isinstance(s, list) else [s]
    rr = r if isinstance(r, list) else [r]
    for _ in range(k):
        if comm.Get_rank() == 0:
            reqs = [comm.Isend(ss[j % len(ss)], dest=peer, tag=2) for j in range(window)]
            MPI.Request.Waitall(reqs)
            comm.Recv(ack, source=peer, tag=3)
        else:
            reqs = [comm.Irecv(rr[j % len(rr)], source=peer, tag=2) for j in range(window)]
            MPI.Request.Waitall(reqs)
            comm.Send(ack, dest=peer, tag=3)
