"""The paired mode of the shared 2-rank worker (``advisor.measure.mpi.rank paired``, whose
docstring describes it): a threshold switched at run time between adjacent timed batches of one
launch, the value written for ``on`` and ``off`` being 1 and 2**30 (``THRESHOLD_ON`` /
``THRESHOLD_OFF``) or two given thresholds (``advisor verify``: ``--values``).  Runs inside the
MPI ranks; imported by ``rank.main`` only for that mode.

The switch is the library's: a plugin's worker entry passes ``open_switch`` (MPICH: the CH4 CMA
threshold CVAR written through MPI_T, ``advisor_mpich_cma.workers.rank``).  It returns an object
with ``read() -> int``, ``write(int)``, ``close()`` and ``path`` (what was loaded, recorded as
``mpit_library``), or raises ``SwitchError``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

from advisor.measure.mpi import loops
from advisor.measure.mpi.loops import (BUFFER_ALIGN, MAX_ROUNDS, MAX_WINDOW_BYTES, OSU_WINDOW,
                                       THRESHOLD_OFF, THRESHOLD_ON)


class SwitchError(RuntimeError):
    """The run-time switch cannot be opened, read or written on this rank (the message says
    why); the paired result then has ``mpit_error`` and no sizes."""


def thp_pmd_bytes(path: str = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") -> int:
    """The THP (PMD) page size in bytes from sysfs; 2 MiB (x86-64's PMD size) if unreadable."""
    try:
        with open(path) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 2 << 20


def window_of(n: int) -> int:
    """Messages per bandwidth window at ``n`` bytes: osu_bw's 64, capped at MAX_WINDOW_BYTES."""
    return max(1, min(OSU_WINDOW, MAX_WINDOW_BYTES // max(1, n)))


def _stride(n: int) -> int:
    """Bytes between two per-message buffers of ``n`` bytes: ``n`` rounded up to a page."""
    return -(-n // BUFFER_ALIGN) * BUFFER_ALIGN


def paired_buffers(top: int, rank: int, pages: str):
    """Send/receive buffers of the paired mode.  ``pages``: "base" (MADV_NOHUGEPAGE: 4 KiB
    pages whatever the THP mode), "msgbuf" (base pages, room for a buffer per message of a
    window: ``top`` is then the largest window's bytes), "thp" (MADV_HUGEPAGE, aligned to and
    a multiple of the THP size, so the kernel can back every message with huge pages) or
    "default" (kernel mode)."""
    from advisor.measure import host_buffer

    huge = {"base": False, "msgbuf": False, "thp": True, "default": None}[pages]
    align, length = BUFFER_ALIGN, top
    if pages == "thp":
        align = thp_pmd_bytes()
        length = -(-top // align) * align
    sbuf = host_buffer(length, align=align, fill="random", seed=rank + 11, hugepages=huge)
    rbuf = host_buffer(length, align=align, fill="random", seed=rank + 21, hugepages=huge)
    return sbuf, rbuf


def paired(MPI, comm, sizes: Sequence[int], target_s: float, rounds: int,
           pages: str = "default", values: Optional[dict] = None, *,
           open_switch: Optional[Callable[[], Any]] = None) -> dict:
    """The paired measurement of one buffer kind (see the module docstring)."""
    res = paired_kinds(MPI, comm, [(pages, sizes, target_s, rounds)], values,
                       open_switch=open_switch)
    if "kinds" in res:
        res.update(res.pop("kinds")[0])
    return res


def paired_kinds(MPI, comm, jobs: Sequence[tuple], values: Optional[dict] = None, *,
                 open_switch: Optional[Callable[[], Any]] = None) -> dict:
    """The paired measurement of several buffer kinds in this one launch, one after the other:
    ``jobs`` = ``[(pages, sizes, target_s, rounds), ...]`` -> ``{"kinds": [result per job]}``
    (each as ``paired`` returns it), or ``{"mpit_error": ...}``.  ``values``: the threshold
    (bytes) written for ``on`` and ``off`` (default ``THRESHOLD_ON`` / ``THRESHOLD_OFF``;
    ``advisor verify`` passes the advised and the baseline threshold); ``open_switch``: the
    library's switch (module docstring; None: ``mpit_error`` "no run-time switch").  Each
    kind allocates and fills its own buffers and pairs its own on/off batches round by round,
    exactly as a launch of its own would; what is shared is only the MPI start
    (``LAUNCH_OVERHEAD_S`` in the probe) and the switch (verified once)."""
    err = None
    try:
        if open_switch is None:
            raise SwitchError("this worker has no run-time switch (the library's plugin "
                              "launches the paired mode through its own worker entry)")
        thr = open_switch()
        initial = thr.read()
        thr.write(THRESHOLD_OFF)
        verified = thr.read() == THRESHOLD_OFF  # the library took the write
        thr.write(initial)
    except SwitchError as exc:
        err = str(exc)
    errs = comm.allgather(err)
    if any(errs):
        return {"mpit_error": "; ".join(f"rank {i}: {e}" for i, e in enumerate(errs) if e)}
    out = [paired_one(MPI, comm, thr, sizes, target_s, rounds, pages, values)
           for pages, sizes, target_s, rounds in jobs]
    thr.write(initial)
    thr.close()
    ok = bool(all(comm.allgather(verified)))
    return {"kinds": [{**r, "mpit_library": thr.path, "threshold_initial": initial,
                       "switch_read_back": ok} for r in out]}


def paired_one(MPI, comm, thr, sizes: Sequence[int], target_s: float, rounds: int,
               pages: str, values: Optional[dict] = None) -> dict:
    """One buffer kind of the paired measurement, the switch ``thr`` open."""
    from advisor.measure import buffer_conditions, thp_backed_bytes

    rank = comm.Get_rank()
    rounds = max(2, min(MAX_ROUNDS, rounds))
    values = dict(values or {"on": THRESHOLD_ON, "off": THRESHOLD_OFF})
    per_message = pages == "msgbuf"
    top = max(_stride(n) * window_of(n) for n in sizes) if per_message else max(sizes)
    sbuf, rbuf = paired_buffers(top, rank, pages)
    # what the kernel really gave (AnonHugePages of the mappings), both buffers, every rank
    thp = [thp_backed_bytes(b) for b in (sbuf, rbuf)]
    thp_all = comm.gather(None if None in thp else int(sum(thp)), root=0)
    ack = bytearray(4)
    out = []
    # per size, measure and configuration: target_s spread over the rounds
    per_batch_s = target_s / rounds
    for n in sizes:
        window = window_of(n)
        if per_message:  # a buffer per message of the window, page-aligned slices
            stride = _stride(n)
            count = max(1, min(window, len(sbuf) // stride))
            s = [sbuf[j * stride:j * stride + n] for j in range(count)]
            r = [rbuf[j * stride:j * stride + n] for j in range(count)]
        else:
            s, r = sbuf[:n], rbuf[:n]

        def pingpong(k: int = 1, s=s, r=r) -> None:
            loops.pingpong(comm, s, r, k)

        def windows(k: int = 1, s=s, r=r, window=window) -> None:
            loops.windows(MPI, comm, s, r, window, ack, k)

        res: dict[str, list[float]] = {"lat_on_s": [], "lat_off_s": [], "bw_on_Bps": [],
                                       "bw_off_Bps": []}
        batches = {}
        for measure, fn in (("lat", pingpong), ("bw", windows)):
            for cfg in ("on", "off"):  # warm both paths up, calibrate on the slower
                thr.write(values[cfg])
                fn(2)
            k = loops.calibrate(comm, fn, per_batch_s, 1, 100000)
            batches[measure] = k
            for rnd in range(rounds):
                order = ("on", "off") if rnd % 2 == 0 else ("off", "on")
                for cfg in order:
                    thr.write(values[cfg])
                    # the first message after a switch is not timed: one ping-pong of the size
                    # (not a whole bandwidth window, which at 2-16 MiB is 4-64 MiB of traffic
                    # and doubled the cost of a round there)
                    pingpong(1)
                    comm.Barrier()
                    t0 = time.perf_counter()
                    fn(k)
                    dt = time.perf_counter() - t0
                    if measure == "lat":
                        res[f"lat_{cfg}_s"].append(dt / (2 * k))
                    else:
                        res[f"bw_{cfg}_Bps"].append(n * window * k / dt)
        out.append({"bytes": n, "lat_batch": batches["lat"], "bw_batch": batches["bw"],
                    "window": window, **res})
    return {"sizes": out, "rounds": rounds, "thresholds": values,
            "buffer": buffer_conditions(sbuf), "pages": pages,
            "dst_fill": buffer_conditions(rbuf).get("buffer_fill"),
            "buffer_bytes": int(sbuf.nbytes + rbuf.nbytes),
            "thp_backed_bytes_per_rank": thp_all}
