"""Device-pool measurement with CuPy (runs only where a CUDA device and CuPy exist).

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

import importlib.util
import time
from typing import Optional

from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from . import model
from .advice import DEVICE_ALLOC, DEVICE_FIRST_USE

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
        res = run_python("advisor_memory_pool.ipc_worker", [bytes(handle).hex()], timeout_s=timeout_s)
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
