"""Host<->device copies through OpenCL (pyopencl, any platform present; PoCL on CPU-only hosts).

``measure_opencl`` times ``enqueue_copy`` (blocking) of one ``nbytes`` buffer:

- ``h2d``: from an untouched pageable host buffer (zero page), from a random-filled pageable
  one, from pinned host memory (``CL_MEM_ALLOC_HOST_PTR`` buffer, mapped; the usual way to get
  page-locked memory in OpenCL), and a ``mapped`` point: map + unmap of a device buffer for
  writing, which moves no data on a CPU device (zero-copy; clpeak's reason for the 3x rule);
- ``d2h``: into a random-filled pageable buffer and into pinned memory.

Pageable buffers come from ``advisor.measure.host_buffer`` (64 B aligned, fill recorded); the
series unit is bytes/s (bytes moved per second, each byte counted once).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from advisor.models import Point, Series

from .evidence import BPS, RANDOM, UNTOUCHED


def platforms() -> list[tuple[str, str]]:
    """``[(platform name, device name)]`` of every OpenCL device pyopencl sees ([] if none).

    Raises nothing: a missing pyopencl or ICD loader gives [].
    """
    try:
        import pyopencl as cl

        return [(p.name, d.name) for p in cl.get_platforms() for d in p.get_devices()]
    except Exception:  # noqa: BLE001 - any ICD/loader failure means "no OpenCL here"
        return []


def measure_opencl(nbytes: int, sampler: Callable[[Callable[[], Any]], Any], *,
                   seed: int = 0) -> tuple[list[Series], dict[str, str]]:
    """Run the transfers on the first OpenCL device; see module docstring.

    :param nbytes: bytes per transfer.
    :param sampler: ``sampler(fn) -> advisor.measure.SampleResult`` (the caller binds sample
        counts and the deadline).
    :return: ``([Series h2d, Series d2h], {"platform": ..., "device": ...})``.
    :raises RuntimeError: no OpenCL device.
    """
    import numpy as np
    import pyopencl as cl

    from advisor.measure import host_buffer

    plats = [p for p in cl.get_platforms() if p.get_devices()]
    if not plats:
        raise RuntimeError("no OpenCL device")
    dev = plats[0].get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)

    def point(fn: Callable[[], Any], label: str) -> Point:
        return sampler(fn).to_point(x=float(nbytes), label=label, per_call_bytes=nbytes, seed=seed)

    def h2d(host: np.ndarray) -> Callable[[], Any]:
        return lambda: cl.enqueue_copy(q, dbuf, host, is_blocking=True)

    def d2h(host: np.ndarray) -> Callable[[], Any]:
        return lambda: cl.enqueue_copy(q, host, dbuf, is_blocking=True)

    h2d_pts: list[Point] = []
    d2h_pts: list[Point] = []
    untouched = host_buffer(nbytes, fill="untouched")
    h2d_pts.append(point(h2d(untouched), UNTOUCHED))
    del untouched
    pageable = host_buffer(nbytes, fill="random", seed=seed)
    h2d_pts.append(point(h2d(pageable), RANDOM))
    d2h_pts.append(point(d2h(pageable), RANDOM))

    pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    pinned, _ev = cl.enqueue_map_buffer(q, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                        (nbytes,), np.uint8)
    pinned[:] = pageable  # every page written with the random pattern
    h2d_pts.append(point(h2d(pinned), "pinned"))
    d2h_pts.append(point(d2h(pinned), "pinned"))

    def map_unmap() -> None:
        arr, _ = cl.enqueue_map_buffer(q, dbuf, cl.map_flags.WRITE, 0, (nbytes,), np.uint8,
                                       is_blocking=True)
        arr.base.release(q).wait()

    h2d_pts.append(point(map_unmap, "mapped"))
    pinned.base.release(q).wait()
    q.finish()
    info = {"platform": plats[0].name.strip(), "device": dev.name.strip()}
    return ([Series(name="h2d", unit=BPS, x_name="nbytes", x_unit="bytes", points=h2d_pts),
             Series(name="d2h", unit=BPS, x_name="nbytes", x_unit="bytes", points=d2h_pts)],
            info)


def first_device_name() -> Optional[str]:
    p = platforms()
    return f"{p[0][0]} / {p[0][1]}" if p else None
