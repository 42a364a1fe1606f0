"""The MPI side of the mpich-cma probe: runs under the launcher (``mpiexec -n 2``) and prints one
JSON object from rank 0 on stdout.

Usage::

    python -m advisor_mpich_cma.workers.rank identity
    python -m advisor_mpich_cma.workers.rank smoke --bytes N
    python -m advisor_mpich_cma.workers.rank sweep --sizes 1024,2048 --target-s 0.05 [--cpus 0/1]
    python -m advisor_mpich_cma.workers.rank paired --sizes 4096,131072 --target-s 0.05 --rounds 16 \
        [--pages base|thp]
    python -m advisor_mpich_cma.workers.rank route --checks 1:16384,16384:16384,16384:16383
    python -m advisor_mpich_cma.workers.rank paired --pages base,thp --sizes '4096,131072;131072' \
        --target-s '0.05;0.05' --rounds '16;8'

* ``identity``: the library's own strings (``MPI_Get_library_version``, ``MPI_Get_version``).
* ``smoke``: one message of ``N`` bytes each way between ranks 0 and 1, content checked.  Run with
  CMA forced on and ``N`` above the threshold, it fails the way applications fail when CMA is
  blocked ("process_vm_readv failed (errno 1)").
* ``sweep``: for each size, ping-pong latency (seconds one way, ``osu_latency``'s definition) and
  streaming bandwidth (a window of non-blocking sends then one acknowledgement, as ``osu_bw``
  does; bytes/s = size * window / seconds per window).  Buffers come from
  ``advisor.measure.host_buffer`` (random fill, every page touched, 4096-byte alignment).  The
  first iterations are reported apart as warm-up.  Iteration counts are decided by rank 0 from
  the time of one warm iteration and broadcast, so both ranks run the same loop.

* ``paired``: CMA on vs off at each size inside ONE launch, switched at run time through MPI_T
  (``advisor_mpich_cma.mpit``): launched with CMA enabled, it writes the threshold
  ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` = 1 (CMA at every size: ``cma-on``) or 2**30 (the copy
  path: ``cma-off``) on both ranks (``--values ON,OFF``: other thresholds; ``advisor verify``
  writes the advised and the baseline threshold), and runs one small timed batch per
  configuration, round after round (on off on off ...; the order inside a round alternates
  too), first for latency then for bandwidth.  Returns per size ``lat_on_s``/``lat_off_s`` (one-way seconds, mean of a batch of
  ping-pongs) and ``bw_on_Bps``/``bw_off_Bps`` (bytes/s of a batch of osu_bw windows), one value
  per round and index-aligned, so a ratio is taken per round between two adjacent batches and the
  machine's fast/slow state cancels.  ``--pages base|thp`` picks the buffer kind (base 4 KiB
  pages, or THP-backed: MADV_HUGEPAGE on THP-size-aligned buffers); the result's
  ``thp_backed_bytes_per_rank`` says how many huge-page bytes the kernel really gave (smaps
  AnonHugePages of both buffers; None where smaps is unreadable).  ``--pages base,thp`` measures
  the kinds one after the other in this launch (each with its own buffers and rounds; ``--sizes``,
  ``--target-s`` and ``--rounds`` then ';'-separated per kind) and returns ``kinds``, one such
  result per kind: the probe saves an MPI start per kind (code: ``workers.paired``).  When MPI_T is missing or a write fails on any rank the
  result has ``mpit_error`` and no sizes (the probe then falls back to separate launches).
* ``route``: ``--checks T:N,...``; per phase the threshold ``T`` written through MPI_T and
  messages of ``N`` bytes each way, nothing timed: the probe runs it under ``strace`` and counts
  each phase's CMA calls (``advisor_mpich_cma.trust``, code: ``workers.paired.route``).

Before any communication every rank writes its security state (Seccomp, CapEff, user
namespace) to stderr as one ``advisor-rank-security {json}`` line: when CMA kills the job, the
launcher's error output still tells why.

Statistics are not computed here: rank 0 returns raw seconds and the probe summarises them with
the harness.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Sequence

from advisor_mpich_cma.workers import loops
from advisor_mpich_cma.workers.loops import (BUFFER_ALIGN, MAX_SAMPLES, MAX_WINDOW_BYTES,
                                             OSU_WINDOW, THRESHOLD_OFF, THRESHOLD_ON)

#: Marker of the per-rank security line on stderr.
RANK_SECURITY_MARK = "advisor-rank-security "

def _security_line(rank: int) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from advisor_mpich_cma.sibling import self_security

    info = self_security()
    info["rank"] = rank
    sys.stderr.write(RANK_SECURITY_MARK + json.dumps(info) + "\n")
    sys.stderr.flush()


def _env_cvars() -> dict:
    keys = ("MPIR_CVAR_", "MPICH_", "MPIR_PARAM_")
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith(keys) and ("CMA" in k or "SINGLE_COPY" in k or "IPC" in k
                                       or "CELL_SIZE" in k or "GPU_SUPPORT" in k)}


def _identity(MPI) -> dict:
    return {"library_version": MPI.Get_library_version(),
            "mpi_version": "%d.%d" % MPI.Get_version(),
            "vendor": list(MPI.get_vendor()) if hasattr(MPI, "get_vendor") else None}


def _smoke(MPI, comm, nbytes: int) -> dict:
    import numpy as np

    from advisor.measure import host_buffer

    rank = comm.Get_rank()
    send = host_buffer(nbytes, align=BUFFER_ALIGN, fill="random", seed=rank + 1)
    recv = host_buffer(nbytes, align=BUFFER_ALIGN, fill="zeros")
    peer = 1 - rank
    t0 = time.perf_counter()
    comm.Sendrecv(send, dest=peer, sendtag=7, recvbuf=recv, source=peer, recvtag=7)
    elapsed = time.perf_counter() - t0
    expect = host_buffer(nbytes, align=BUFFER_ALIGN, fill="random", seed=peer + 1)
    ok = bool(np.array_equal(recv, expect))
    oks = comm.gather(ok, root=0)
    return {"ok": bool(all(oks)) if rank == 0 else ok, "bytes": nbytes, "seconds": elapsed}


def _sweep(MPI, comm, sizes: Sequence[int], target_s: float, warmup: int,
           min_samples: int) -> dict:
    from advisor.measure import buffer_conditions, host_buffer

    rank = comm.Get_rank()
    top = max(sizes)
    # one send and one receive buffer reused by every message of a window, as osu_bw does
    sbuf = host_buffer(top, align=BUFFER_ALIGN, fill="random", seed=rank + 11)
    rbuf = host_buffer(top, align=BUFFER_ALIGN, fill="random", seed=rank + 21)
    ack = bytearray(4)
    out = []
    for n in sizes:
        # ---- latency: ping-pong, one-way time = round trip / 2
        s, r = sbuf[:n], rbuf[:n]

        def pingpong(k: int = 1, s=s, r=r) -> None:
            loops.pingpong(comm, s, r, k)

        warm_lat = []
        for _ in range(warmup):
            t0 = time.perf_counter()
            pingpong()
            warm_lat.append((time.perf_counter() - t0) / 2)
        # batch so one sample lasts >= ~100 us, well above perf_counter's resolution
        batch = loops.calibrate(comm, pingpong, 100e-6, 1, 1000)
        n_samples = loops.calibrate(comm, lambda: pingpong(batch), target_s, min_samples, MAX_SAMPLES)
        lat = []
        comm.Barrier()
        for _ in range(n_samples):
            t0 = time.perf_counter()
            pingpong(batch)
            lat.append((time.perf_counter() - t0) / (2 * batch))
        # ---- bandwidth: a window of Isend/Irecv, then a 4-byte ack (osu_bw)
        window = max(1, min(OSU_WINDOW, MAX_WINDOW_BYTES // max(1, n)))

        def one_window(s=s, r=r, window=window) -> None:
            loops.windows(MPI, comm, s, r, window, ack)

        warm_bw = []
        for _ in range(warmup):
            t0 = time.perf_counter()
            one_window()
            warm_bw.append(time.perf_counter() - t0)
        n_windows = loops.calibrate(comm, one_window, target_s, min_samples, MAX_SAMPLES)
        bw = []
        comm.Barrier()
        for _ in range(n_windows):
            t0 = time.perf_counter()
            one_window()
            bw.append(time.perf_counter() - t0)
        out.append({"bytes": n, "lat_s": lat, "lat_warmup_s": warm_lat, "lat_batch": batch,
                    "window": window, "bw_window_s": bw, "bw_warmup_s": warm_bw})
    # the receive buffer's fill: a destination untouched before timing would put first-touch
    # page faults in the timed region (advisor.measure.first_touch_artefact reads it)
    return {"sizes": out, "buffer": buffer_conditions(sbuf),
            "dst_fill": buffer_conditions(rbuf).get("buffer_fill")}


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m advisor_mpich_cma.workers.rank")
    ap.add_argument("mode", choices=("identity", "smoke", "sweep", "paired", "route"))
    ap.add_argument("--bytes", type=int, default=1 << 20)
    ap.add_argument("--sizes", default="1024")
    ap.add_argument("--target-s", default="0.05",
                    help="seconds of steady-state timing per size and measure (paired: one per "
                         "kind of --pages, ';'-separated)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-samples", type=int, default=10)
    ap.add_argument("--rounds", default="16",
                    help="paired mode: rounds of (on, off) batches per size and measure (one per "
                         "kind of --pages, ';'-separated)")
    ap.add_argument("--pages", default="default",
                    help="paired mode: buffer pages (base: MADV_NOHUGEPAGE, msgbuf: base pages "
                         "and a buffer per message, thp: MADV_HUGEPAGE "
                         "with THP-size alignment, default: the kernel's THP mode); several kinds "
                         "comma-separated, measured one after the other in this launch, with "
                         "--sizes, --target-s and --rounds then ';'-separated per kind; the "
                         "result then has 'kinds' (one paired result per kind)")
    ap.add_argument("--values", default=None, metavar="ON,OFF",
                    help="paired mode: the threshold bytes written for 'on' and 'off' (default "
                         f"{THRESHOLD_ON},{THRESHOLD_OFF}; advisor verify: advised,baseline)")
    ap.add_argument("--checks", default=f"{THRESHOLD_ON}:1024",
                    help="route mode: phases 'THRESHOLD:BYTES,...' (threshold written through "
                         "MPI_T, then messages of BYTES each way)")
    ap.add_argument("--env-form", action="store_true",
                    help="route mode: do not write the threshold; the environment's stands and "
                         "each phase's THRESHOLD only labels it")
    ap.add_argument("--cpus", default=None,
                    help="per-rank CPU lists 'A/B' (rank 0 on A, rank 1 on B), e.g. '0/8-15'")
    args = ap.parse_args(list(argv))

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    _security_line(rank)
    if args.cpus:
        parts = args.cpus.split("/")
        mine = parts[min(rank, len(parts) - 1)]
        os.sched_setaffinity(0, _cpulist(mine))
    result: dict = {"mode": args.mode, "nprocs": comm.Get_size(), "env": _env_cvars(),
                    "affinity": sorted(os.sched_getaffinity(0))}
    if comm.Get_size() < 2 and args.mode != "identity":
        result["error"] = "needs 2 ranks"
    elif args.mode == "identity":
        result.update(_identity(MPI))
    elif args.mode == "smoke":
        if rank < 2:
            sub = comm.Split(0 if rank < 2 else MPI.UNDEFINED, rank)
            result.update(_smoke(MPI, sub, args.bytes))
        else:
            comm.Split(MPI.UNDEFINED, rank)
    elif args.mode == "route":
        from advisor_mpich_cma.workers.paired import route

        checks = [tuple(int(x) for x in c.split(":")) for c in args.checks.split(",") if c]
        result.update(route(MPI, comm, checks, write=not args.env_form))
    elif args.mode == "paired":
        kinds = args.pages.split(",")
        for k in kinds:
            if k not in ("default", "base", "msgbuf", "thp"):
                ap.error(f"--pages: unknown kind {k!r}")

        def per_kind(text: str) -> list[str]:
            parts = text.split(";")
            return parts if len(parts) == len(kinds) else parts[:1] * len(kinds)

        jobs = [(k, [int(x) for x in sz.split(",") if x], float(t), int(r))
                for k, sz, t, r in zip(kinds, per_kind(args.sizes), per_kind(args.target_s),
                                       per_kind(args.rounds))]
        values = None
        if args.values:
            on, off = (int(x) for x in args.values.split(","))
            values = {"on": on, "off": off}
        from advisor_mpich_cma.workers.paired import paired, paired_kinds

        if len(jobs) == 1:
            result.update(paired(MPI, comm, jobs[0][1], jobs[0][2], jobs[0][3], jobs[0][0],
                                 values))
        else:
            result.update(paired_kinds(MPI, comm, jobs, values))
    else:
        sizes = [int(x) for x in args.sizes.split(",") if x]
        result.update(_sweep(MPI, comm, sizes, float(args.target_s), args.warmup,
                             args.min_samples))
    from advisor.measure.worker import report

    result["affinity_per_rank"] = comm.gather(result["affinity"], root=0)
    # co-location: processor name and the size of the shared-memory communicator (MPI 3.0
    # MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks that share this node's memory)
    shm = comm.Split_type(MPI.COMM_TYPE_SHARED)
    result["placement_per_rank"] = comm.gather(
        {"host": MPI.Get_processor_name(), "shm_size": shm.Get_size()}, root=0)
    shm.Free()
    report(result, comm=comm)
    return 0


def _cpulist(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
