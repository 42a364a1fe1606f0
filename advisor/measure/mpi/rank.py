"""The shared 2-rank MPI worker: runs under the launcher (``mpiexec -n 2``) and prints one JSON
object from rank 0 on stdout (``advisor.measure.worker.report``).  MPI-neutral (mpi4py
point-to-point only): every MPI plugin launches it with ``advisor.measure.run_mpi(RANK, ...)``
(``advisor.measure.mpi.RANK``), or through its own entry module that passes the library's
run-time switch and extra modes to ``main`` (MPICH: ``advisor_mpich_cma.workers.rank``).

Usage::

    python -m advisor.measure.mpi.rank identity
    python -m advisor.measure.mpi.rank smoke --bytes N[,N2,...]
    python -m advisor.measure.mpi.rank sweep --sizes 1024,2048 --target-s 0.05 [--cpus 0/1]
    python -m advisor.measure.mpi.rank paired --sizes 4096,131072 --target-s 0.05 --rounds 16 \
        [--pages base|thp] [--values ON,OFF]
    python -m advisor.measure.mpi.rank paired --pages base,thp --sizes '4096,131072;131072' \
        --target-s '0.05;0.05' --rounds '16;8'

* ``identity``: the library's own strings (``MPI_Get_library_version``, ``MPI_Get_version``).
* ``smoke``: one message of each size of ``--bytes`` each way between ranks 0 and 1
  (``MPI_Sendrecv``), content checked (random bytes, seeded per rank).  Run with CMA forced on
  and a size above the threshold, it fails the way applications fail when CMA is blocked
  ("process_vm_readv failed (errno 1)"); run at a library's verbose level, its stderr shows the
  path that carried the messages.  Result: ``ok`` (every size, every rank), ``bytes`` and
  ``seconds`` (one per size).
* ``sweep``: for each size, ping-pong latency (seconds one way, ``osu_latency``'s definition) and
  streaming bandwidth (a window of non-blocking sends then one acknowledgement, as ``osu_bw``
  does; bytes/s = size * window / seconds per window).  Buffers come from
  ``advisor.measure.host_buffer`` (random fill, every page touched, 4096-byte alignment).  The
  first iterations are reported apart as warm-up.  Iteration counts are decided by rank 0 from
  the time of one warm iteration and broadcast, so both ranks run the same loop.  Result:
  ``sizes`` = list of ``{"bytes", "lat_s", "lat_warmup_s", "lat_batch", "window",
  "bw_window_s", "bw_warmup_s"}``, ``buffer`` (buffer conditions) and ``dst_fill``.
* ``paired``: a threshold switched at run time between adjacent timed batches of one launch
  (``advisor.measure.mpi.paired``, whose docstring describes the result); needs the library's
  switch (``main(..., open_switch=...)``), else the result has ``mpit_error``.

Every mode adds ``affinity_per_rank`` (each rank's CPUs) and ``placement_per_rank`` (processor
name and the size of the shared-memory communicator, ``MPI_Comm_split_type(COMM_TYPE_SHARED)``:
the ranks that share this node's memory), which ``placement_values`` reads.  Before any
communication every rank writes its security state (Seccomp, CapEff, user namespace) to stderr as
one ``advisor-rank-security {json}`` line (``rank_security`` reads them): when CMA kills the job,
the launcher's error output still tells why.

Statistics are not computed here: rank 0 returns raw seconds and the probe summarises them with
the harness.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Mapping, Optional, Sequence

from advisor.facts.util import parse_cpulist
from advisor.measure.mpi import loops
from advisor.measure.mpi.loops import (BUFFER_ALIGN, MAX_SAMPLES, MAX_WINDOW_BYTES, OSU_WINDOW,
                                       THRESHOLD_OFF, THRESHOLD_ON)

#: Marker of the per-rank security line on stderr.
RANK_SECURITY_MARK = "advisor-rank-security "
PROG = "python -m advisor.measure.mpi.rank"
#: A mode a plugin's entry adds: ``(MPI, comm, argv left after the common options) -> result``.
ExtraMode = Callable[[Any, Any, list], dict]


def _security_line(rank: int) -> None:
    from advisor.measure.mpi.sibling import self_security

    info = self_security()
    info["rank"] = rank
    sys.stderr.write(RANK_SECURITY_MARK + json.dumps(info) + "\n")
    sys.stderr.flush()


def rank_security(stderr: str) -> list[dict]:
    """The ranks' security lines (``RANK_SECURITY_MARK``) in a launch's ``stderr``: one dict per
    rank that wrote one (``pid``, ``seccomp``, ``cap_eff``, ``user_ns``, ``rank``, ...)."""
    out = []
    for line in (stderr or "").splitlines():
        i = line.find(RANK_SECURITY_MARK)
        if i >= 0:
            try:
                out.append(json.loads(line[i + len(RANK_SECURITY_MARK):]))
            except ValueError:
                pass
    return out


def _identity(MPI) -> dict:
    """The ``identity`` mode: the library's own strings."""
    return {"library_version": MPI.Get_library_version(),
            "mpi_version": "%d.%d" % MPI.Get_version(),
            "vendor": list(MPI.get_vendor()) if hasattr(MPI, "get_vendor") else None}


def smoke(comm, sizes: Sequence[int]) -> dict:
    """The ``smoke`` mode on ``comm`` (ranks 0 and 1): ``{"ok", "bytes": [...], "seconds":
    [...]}``, one exchange per size (module docstring)."""
    results = [_smoke_one(comm, int(n)) for n in sizes]
    return {"ok": all(r[0] for r in results), "bytes": [int(n) for n in sizes],
            "seconds": [r[1] for r in results]}


def _smoke_one(comm, nbytes: int) -> tuple[bool, float]:
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
    return (bool(all(oks)) if rank == 0 else ok), elapsed


def sweep(MPI, comm, sizes: Sequence[int], target_s: float, warmup: int,
          min_samples: int) -> dict:
    """The ``sweep`` mode (module docstring): latency and bandwidth samples per size."""
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


def parser(prog: str = PROG, extra: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The worker's command line: the shared modes, ``extra`` mode names and their options."""
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("mode", choices=("identity", "smoke", "sweep", "paired", *extra))
    ap.add_argument("--bytes", default=str(1 << 20),
                    help="smoke mode: message sizes, bytes, comma-separated")
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
    ap.add_argument("--cpus", default=None,
                    help="per-rank CPU lists 'A/B' (rank 0 on A, rank 1 on B), e.g. '0/8-15'")
    return ap


def _paired(ap, args, MPI, comm, open_switch) -> dict:
    from advisor.measure.mpi.paired import paired, paired_kinds

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
    if len(jobs) == 1:
        return paired(MPI, comm, jobs[0][1], jobs[0][2], jobs[0][3], jobs[0][0], values,
                      open_switch=open_switch)
    return paired_kinds(MPI, comm, jobs, values, open_switch=open_switch)


def main(argv: Sequence[str], *, open_switch: Optional[Callable[[], Any]] = None,
         extra: Optional[Mapping[str, ExtraMode]] = None,
         env_of: Optional[Callable[[], dict]] = None, prog: str = PROG) -> int:
    """Run one mode in this rank (module docstring); rank 0 prints the result.  A plugin's
    entry module passes the library's parts: ``open_switch`` (the paired mode's run-time switch,
    ``advisor.measure.mpi.paired``), ``extra`` modes (name -> ``ExtraMode``, given the argv
    the shared options leave) and ``env_of`` (the library settings of the environment to record
    as ``env``).  Returns the exit status (argparse exits 2 on a bad command line)."""
    extra = dict(extra or {})
    ap = parser(prog, tuple(extra))
    args, rest = ap.parse_known_args(list(argv))
    if rest and args.mode not in extra:
        ap.error("unrecognized arguments: " + " ".join(rest))

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    _security_line(rank)
    if args.cpus:
        parts = args.cpus.split("/")
        mine = parts[min(rank, len(parts) - 1)]
        os.sched_setaffinity(0, parse_cpulist(mine))
    result: dict = {"mode": args.mode, "nprocs": comm.Get_size(),
                    "affinity": sorted(os.sched_getaffinity(0))}
    if env_of is not None:
        result["env"] = env_of()
    if comm.Get_size() < 2 and args.mode != "identity":
        result["error"] = "needs 2 ranks"
    elif args.mode == "identity":
        result.update(_identity(MPI))
    elif args.mode == "smoke":
        sub = comm.Split(0 if rank < 2 else MPI.UNDEFINED, rank)
        if rank < 2:
            result.update(smoke(sub, [int(x) for x in args.bytes.split(",") if x]))
    elif args.mode == "paired":
        result.update(_paired(ap, args, MPI, comm, open_switch))
    elif args.mode in extra:
        result.update(extra[args.mode](MPI, comm, rest))
    else:
        sizes = [int(x) for x in args.sizes.split(",") if x]
        result.update(sweep(MPI, comm, sizes, float(args.target_s), args.warmup,
                            args.min_samples))
    from advisor.measure.worker import report

    result["affinity_per_rank"] = comm.gather(result["affinity"], root=0)
    shm = comm.Split_type(MPI.COMM_TYPE_SHARED)
    result["placement_per_rank"] = comm.gather(
        {"host": MPI.Get_processor_name(), "shm_size": shm.Get_size()}, root=0)
    shm.Free()
    report(result, comm=comm)
    return 0


def placement_values(res: Mapping[str, Any]) -> dict:
    """Evidence values from a worker result's ``placement_per_rank`` and
    ``affinity_per_rank`` (empty when it did not report them): ``rank_hosts``,
    ``rank_shm_size``, ``ranks_one_node`` (same host and a shared-memory communicator of every
    rank), ``rank_cpus`` ("A/B" CPU lists) and ``ranks_share_one_cpu``."""
    out: dict = {}
    ranks = res.get("placement_per_rank") or []
    if ranks:
        hosts = [str(r.get("host")) for r in ranks]
        shm = min(int(r.get("shm_size") or 0) for r in ranks)
        out.update(rank_hosts=",".join(hosts), rank_shm_size=shm,
                   ranks_one_node=len(set(hosts)) == 1 and shm >= len(ranks))
    aff = res.get("affinity_per_rank") or []
    if aff:
        cpus = set().union(*[set(a) for a in aff])
        out.update(rank_cpus="/".join(",".join(map(str, a)) for a in aff),
                   ranks_share_one_cpu=len(cpus) < 2)
    return out


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
