"""What the memory-pool probes run: ``check`` and ``measure`` of both probes.

Host (``memory-pool-host``):

Host-pool measurement: first touch and pinning of large-page-aligned chunks, huge vs base pages.

A host pool block is modelled by one chunk: a fresh anonymous mapping aligned to the large page
(``host_buffer(..., align=large page, fill="untouched", hugepages=True/False)``: madvise before
first touch).  Per repeat, interleaved huge / nohuge:

* ``first-touch``: seconds to write one byte in every base page of the chunk (the page faults a
  pool pays on the first use of a new block);
* ``register``: seconds of ``mlock`` + ``munlock`` of the touched chunk's first
  ``RLIMIT_MEMLOCK`` bytes, the host side of memory registration (``ibv_reg_mr`` and
  ``cudaHostRegister`` pin pages the same way, through the kernel's pin_user_pages); left out when
  the memlock limit is below one large page.

Faults: this runs in the advisor's own process, and cannot fault it: the writes are numpy
slice assignments inside a ``host_buffer`` array (bounds checked by numpy, a private anonymous
mapping owned here), and ``mlock`` / ``munlock`` are system calls on a range inside that
mapping (``pin_bytes`` <= the chunk): a refusal is an errno, recorded as ``register_skipped``.
The page faults taken are the demand faults being measured.  (The device side's CuPy copies
run in-process too, in driver code: see ``measure_device``.)

Statistics come from the harness (``summarize``, ``compare``); the THP mode and buffer policy are
recorded in the evidence's conditions.

Device (``memory-pool-device``):

Device-pool measurement with CuPy (runs only where a CUDA device and CuPy exist).

Per buffer size ``base + offset`` (offsets 0, 1 B, 64 KiB, one large page: the sizes of the
LLNL/Umpire#881 reproducer), a fresh ``cudaMalloc`` (``cupy.cuda.runtime.malloc``, not a pool,
so every buffer is a new backing allocation):

* ``first-use``: the first and later host-to-device copies of one small message into the buffer
  (``warmup`` holds the first copy, ``samples`` the later ones), and, when the platform allows,
  ``ipc-open``: seconds for a second process to ``cudaIpcOpenMemHandle`` the buffer;
* ``alloc``: ``cudaMalloc`` + ``cudaFree`` latency against size (for the grow-by).

Everything is timed with ``time.perf_counter_ns`` around synchronised calls; statistics come from
the harness.  Nothing here runs without CUDA: ``cupy_available`` says why not.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import mmap
import resource
import time
from typing import Optional

from advisor.measure import REL_PRECISION, compare, conditions, host_buffer, summarize
from advisor.models import Evidence, Facts, Point, Series
from advisor.probe import Applicability, MeasureContext

from . import model
from .stopping import DECIDED_MIN_REPEATS, decided, pair_stability, precise_figures
from .workload import parse_options, to_evidence
from .evidence import (DEVICE_ALLOC, DEVICE_FIRST_USE, HOST_FIRST_TOUCH, device_large_page,
                       host_large_page)
from .workers import IPC

#: Chunk sizes (bytes, multiples of 2 MiB).  Default 128 MiB: big enough that fault cost dominates
#: the mmap/madvise calls (measured here: ~30 ms per base-page chunk, 0.1 ms for the calls), small
#: enough to interleave >= 10 repeats per policy in a few seconds on 2 cores.
CHUNK_BYTES = 128 << 20


QUICK_CHUNK_BYTES = 32 << 20


MIN_REPEATS = 5


QUICK_MIN_REPEATS = 3


#: Wall-time caps of the sweep (seconds); the probe budget of the brief: 10-30 s, quick a few s.
#: Sampling stops earlier, after the minimum repeats, once every median (first touch and
#: register, both policies) is known within ``REL_PRECISION`` (5 %) at 95 % confidence: the
#: sequential form of Jain 1991, section 13.9, "Determining sample size"; or, from
#: ``stopping.DECIDED_MIN_REPEATS``, once the decision is clear (``stopping.decided``).
MAX_TIME_S = 8.0


QUICK_MAX_TIME_S = 1.5


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def memlock_limit() -> Optional[int]:
    """Soft ``RLIMIT_MEMLOCK`` in bytes; None when unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return None if soft == resource.RLIM_INFINITY else soft


def anon_huge_bytes(address: int) -> Optional[int]:
    """``AnonHugePages`` (bytes) of the mapping holding ``address``, from /proc/self/smaps."""
    try:
        with open("/proc/self/smaps") as fh:
            inside = False
            for line in fh:
                head = line.split(None, 1)[0]
                if "-" in head and ":" not in head:
                    lo, hi = (int(v, 16) for v in head.split("-"))
                    inside = lo <= address < hi
                elif inside and head == "AnonHugePages:":
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def measure_host(ctx: MeasureContext) -> list[Evidence]:
    """Interleaved huge/nohuge first-touch and pinning samples; returns ``[host-first-touch]``,
    whose values record the ``repeats`` and why sampling ``stopped``: "precise" (every median
    within ``REL_PRECISION``), "stable" (``stopping.decided``), "time cap" (``MAX_TIME_S``, quick
    ``QUICK_MAX_TIME_S``) or "budget" (the probe's deadline near).

    :raises OSError: the kernel refused a mapping or madvise (the probe is then ``failed``).
    """
    lp, lp_src = host_large_page(ctx.facts)
    chunk = max(lp, (QUICK_CHUNK_BYTES if ctx.quick else CHUNK_BYTES) // lp * lp)
    page = ctx.facts.memory.page_size_bytes or resource.getpagesize()
    lim = memlock_limit()
    pin_bytes = chunk if lim is None else min(chunk, lim // lp * lp)
    libc = _libc() if pin_bytes >= lp else None
    cap = min(QUICK_MAX_TIME_S if ctx.quick else MAX_TIME_S, ctx.remaining_s() / 2)
    min_rep = QUICK_MIN_REPEATS if ctx.quick else MIN_REPEATS
    touch: dict[str, list[float]] = {"huge": [], "nohuge": []}
    pin: dict[str, list[float]] = {"huge": [], "nohuge": []}
    huge_got: dict[str, list[int]] = {"huge": [], "nohuge": []}
    pin_error = None
    start = time.monotonic()
    rep = 0
    precise = False
    stopped = "time cap"
    while rep < min_rep or time.monotonic() - start < cap:
        if rep >= min_rep and ctx.remaining_s() < 1.0:
            stopped = "budget"
            break
        if rep >= min_rep and precise_figures(touch, pin):
            precise = True  # every figure's median is known within REL_PRECISION: stop
            stopped = "precise"
            break
        # the verdicts' stability costs 20-40 ms of bootstrap (a repeat is ~70 ms): read it
        # every MIN_REPEATS repeats, not after each
        if (rep >= max(min_rep, DECIDED_MIN_REPEATS) and rep % MIN_REPEATS == 0
                and decided(ctx.seed, touch, pin)):
            stopped = "stable"  # the verdicts would not change: stop
            break
        for policy in (("huge", "nohuge") if rep % 2 == 0 else ("nohuge", "huge")):
            arr = host_buffer(chunk, align=lp, fill="untouched", hugepages=policy == "huge",
                              seed=ctx.seed + rep)
            t0 = time.perf_counter_ns()
            arr[::page] = 1
            t1 = time.perf_counter_ns()
            touch[policy].append((t1 - t0) * 1e-9)
            addr = arr.__array_interface__["data"][0]
            got = anon_huge_bytes(addr)
            if got is not None:
                huge_got[policy].append(got)
            if libc is not None and pin_error is None:
                p = ctypes.c_void_p(addr)
                t0 = time.perf_counter_ns()
                rc = libc.mlock(p, ctypes.c_size_t(pin_bytes))
                t1 = time.perf_counter_ns()
                if rc != 0:
                    pin_error = f"mlock failed: errno {ctypes.get_errno()}"
                else:
                    libc.munlock(p, ctypes.c_size_t(pin_bytes))
                    pin[policy].append((t1 - t0) * 1e-9)
            del arr
        rep += 1
        ctx.progress(f"host pool chunks: {rep} repeats", min(1.0, (time.monotonic() - start) / cap) if cap else None)

    series, values = [], {"chunk_bytes": chunk, "large_page_bytes": lp, "large_page_source": lp_src,
                          "repeats": rep, "noise_floor": 0.0, "stopped_precise": precise,
                          "stopped": stopped,
                          "rel_precision": REL_PRECISION}
    for name, data, nbytes in (("first-touch", touch, chunk), ("register", pin, pin_bytes)):
        if not data["huge"] or not data["nohuge"]:
            continue
        pts = [Point(x=nbytes, label=k, samples=v, stats=summarize(v, seed=ctx.seed))
               for k, v in data.items()]
        series.append(Series(name=name, unit="s", x_name="chunk", x_unit="bytes", points=pts))
        cmp = compare(data["nohuge"], data["huge"], higher_is_better=False, seed=ctx.seed)
        values.update(cmp.as_values(f"{name}_"))
        stab = pair_stability(cmp, data["nohuge"], data["huge"], seed=ctx.seed)
        if stab is not None:
            values[f"{name}_stability"] = stab
    for k, v in huge_got.items():
        if v:
            values[f"{k}_anon_huge_fraction"] = min(v) / chunk
    if pin_error:
        values["register_skipped"] = pin_error
    elif libc is None:
        values["register_skipped"] = f"RLIMIT_MEMLOCK {lim} B is below one {lp} B large page"
    cond = conditions(buffer_kind="pageable",
                      buffer_fill="untouched", align_bytes=lp,
                      notes={"policies": "huge=MADV_HUGEPAGE, nohuge=MADV_NOHUGEPAGE before first touch"})
    return [Evidence(id=HOST_FIRST_TOUCH,
                     description="first touch and mlock/munlock (registration-like) of "
                                 "large-page-aligned chunks, MADV_HUGEPAGE vs base pages",
                     series=series, conditions=cond, values=values)]


#: Bytes of the message copied into each buffer (the first-send case moved 1 KiB).
MESSAGE_BYTES = 1024


#: Later copies per buffer after the first one.
LATER_COPIES = 20


#: Base buffer size: 1 GiB (the reproducer) or 256 MiB quick; lowered to fit free memory.
BASE_BYTES = model.GiB


QUICK_BASE_BYTES = 256 * model.MiB


OFFSETS = (0, 1, 64 * model.KiB, model.NVIDIA_DEVICE_LARGE_PAGE_BYTES)


#: Repeats per size (fresh allocations): the reproducer used 5.
REPEATS = 5


QUICK_REPEATS = 2


def cupy_available() -> tuple[bool, str]:
    """(True, "") when CuPy imports and sees a CUDA device, else (False, why)."""
    if importlib.util.find_spec("cupy") is None:
        return False, "CuPy is not installed (pip install cupy-cuda12x)"
    try:
        import cupy

        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver missing or broken: not usable, with the reason
        return False, f"CuPy cannot reach a CUDA device: {type(exc).__name__}: {exc}"
    if n < 1:
        return False, "CuPy sees no CUDA device"
    return True, ""


def _ipc_open_seconds(cupy, ptr: int, timeout_s: float) -> Optional[float]:
    """Seconds a fresh process needs to open ``ptr``'s IPC handle; None when IPC is refused."""
    from advisor.measure import LaunchError, run_python

    try:
        handle = cupy.cuda.runtime.ipcGetMemHandle(ptr)
    except Exception:
        return None
    try:
        res = run_python(IPC, [bytes(handle).hex()], timeout_s=timeout_s)
    except LaunchError:
        return None
    return res.get("open_s")


def measure_device(ctx: MeasureContext) -> list[Evidence]:
    """First-use and allocation-latency series on device 0; returns the evidence items.

    :raises cupy.cuda.runtime.CUDARuntimeError: a CUDA call failed (the probe is then failed).
    """
    import cupy
    import numpy as np

    from advisor.measure import conditions, summarize

    rt = cupy.cuda.runtime
    free, total = rt.memGetInfo()
    base = QUICK_BASE_BYTES if ctx.quick else BASE_BYTES
    while base > model.NVIDIA_DEVICE_LARGE_PAGE_BYTES and base + OFFSETS[-1] > free // 4:
        base //= 2
    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    msg = np.ones(MESSAGE_BYTES, dtype=np.uint8)
    stream = cupy.cuda.Stream.null
    points, ipc_points = [], []
    for off in OFFSETS:
        size = base + off
        first, later, ipc = [], [], []
        for _ in range(repeats):
            if ctx.remaining_s() < 2.0:
                break
            ptr = rt.malloc(size)
            try:
                dst = ptr + size - MESSAGE_BYTES  # the buffer's end: the block's last page
                for i in range(1 + LATER_COPIES):
                    t0 = time.perf_counter_ns()
                    rt.memcpy(dst, msg.ctypes.data, MESSAGE_BYTES, rt.memcpyHostToDevice)
                    stream.synchronize()
                    dt = (time.perf_counter_ns() - t0) * 1e-9
                    (first if i == 0 else later).append(dt)
                if not ctx.quick:
                    s = _ipc_open_seconds(cupy, ptr, timeout_s=max(1.0, min(30.0, ctx.remaining_s() / 4)))
                    if s is not None:
                        ipc.append(s)
            finally:
                rt.free(ptr)
        if first:
            points.append(Point(x=size, label=f"+{off}", warmup=first, samples=later,
                                stats=summarize(later, seed=ctx.seed) if later else None))
        if ipc:
            ipc_points.append(Point(x=size, label=f"+{off}", warmup=ipc,
                                    stats=summarize(ipc, seed=ctx.seed)))
        ctx.progress(f"device first use: {size} B", None)
    series = [Series(name="first-use", unit="s", x_name="alloc", x_unit="bytes", points=points)]
    if ipc_points:
        series.append(Series(name="ipc-open", unit="s", x_name="alloc", x_unit="bytes",
                             points=ipc_points))
    cond = conditions(buffer_kind="device", library_versions={"cupy": cupy.__version__},
                      notes={"device_total_bytes": int(total), "device_free_bytes": int(free)})
    out = [Evidence(id=DEVICE_FIRST_USE, series=series, conditions=cond,
                    description="first vs later host-to-device copies (and IPC open) of fresh "
                                "cudaMalloc buffers whose size is or is not a large-page multiple",
                    values={"base_bytes": base, "message_bytes": MESSAGE_BYTES})]

    alloc_pts = []
    size = model.NVIDIA_DEVICE_LARGE_PAGE_BYTES
    while size <= min(model.GiB * 4, free // 4) and ctx.remaining_s() > 2.0:
        ts = []
        for _ in range(3 if ctx.quick else 7):
            t0 = time.perf_counter_ns()
            p = rt.malloc(size)
            rt.deviceSynchronize()
            ts.append((time.perf_counter_ns() - t0) * 1e-9)
            rt.free(p)
        alloc_pts.append(Point(x=size, samples=ts, stats=summarize(ts, seed=ctx.seed)))
        size *= 4
    if alloc_pts:
        out.append(Evidence(id=DEVICE_ALLOC, conditions=cond,
                            description="cudaMalloc latency against size (a bigger grow-by pays "
                                        "it less often)",
                            series=[Series(name="alloc", unit="s", x_name="size", x_unit="bytes",
                                           points=alloc_pts)]))
    return out


def check_host(facts: Facts) -> Applicability:
    """``memory-pool-host`` check: needs ``madvise(MADV_HUGEPAGE)``."""
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        return Applicability(usable=False, reason="this platform has no madvise(MADV_HUGEPAGE)")
    return Applicability(usable=True)


def check_device(facts: Facts) -> Applicability:
    """``memory-pool-device`` check: needs a CUDA device and CuPy."""
    if not facts.cuda:
        return Applicability(usable=False, reason="no CUDA device")
    ok, why = cupy_available()
    if not ok:
        return Applicability(usable=False, reason=f"device measurements need CuPy: {why}")
    return Applicability(usable=True)


def measure(ctx: MeasureContext, side: str) -> list[Evidence]:
    """Both probes' ``measure``: the ``workload`` evidence (``--option`` values) first, then the
    ``side``'s ("host" / "device") measurements.

    :raises advisor.errors.BadInputError: a bad ``--option`` value (``workload.parse_options``).
    """
    w = parse_options(ctx.options)  # bad input (a trace included) refused before measuring
    out = measure_host(ctx) if side == "host" else measure_device(ctx)
    # a trace is modelled for the large page of this side too (the measured GPU granularity)
    lp = host_large_page(ctx.facts)[0] if side == "host" else device_large_page(out)[0]
    return [to_evidence(w, units=(lp,))] + out
