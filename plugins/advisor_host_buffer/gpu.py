"""Host<->device copies through CuPy on a CUDA device (only where one exists).

``measure_cupy`` times ``cupy.ndarray.set`` (host-to-device) and ``.get(out=...)``
(device-to-host), each followed by a device synchronisation, from an untouched and a
random-filled pageable host buffer (``advisor.measure.host_buffer``) and from pinned host memory
(``cupyx.empty_pinned``, page-locked by ``cudaHostAlloc``).  The series unit is bytes/s.
"""

from __future__ import annotations

from typing import Any, Callable

from advisor.models import Point, Series

from .evidence import BPS, RANDOM, UNTOUCHED


def cupy_available() -> bool:
    """True when cupy imports and sees at least one CUDA device (never raises)."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no driver, no device, no cupy: all mean "not here"
        return False


def measure_cupy(nbytes: int, sampler: Callable[[Callable[[], Any]], Any], *,
                 seed: int = 0) -> tuple[list[Series], dict[str, str]]:
    """Run the transfers on CUDA device 0.

    :param nbytes: bytes per transfer.
    :param sampler: ``sampler(fn) -> SampleResult`` (sample counts and deadline bound).
    :return: ``([Series h2d, Series d2h], {"device": name})``.
    :raises RuntimeError: no CUDA device (cupy's own errors propagate).
    """
    import cupy
    import cupyx
    import numpy as np

    from advisor.measure import host_buffer

    if not cupy_available():
        raise RuntimeError("no CUDA device")
    dev = cupy.empty(nbytes, dtype=np.uint8)
    sync = cupy.cuda.runtime.deviceSynchronize

    def point(fn: Callable[[], Any], label: str) -> Point:
        return sampler(fn).to_point(x=float(nbytes), label=label, per_call_bytes=nbytes, seed=seed)

    def h2d(host: Any) -> Callable[[], None]:
        return lambda: (dev.set(host), sync())

    def d2h(host: Any) -> Callable[[], None]:
        return lambda: (dev.get(out=host), sync())

    untouched = host_buffer(nbytes, fill="untouched")
    h2d_pts = [point(h2d(untouched), UNTOUCHED)]
    del untouched
    pageable = host_buffer(nbytes, fill="random", seed=seed)
    h2d_pts.append(point(h2d(pageable), RANDOM))
    d2h_pts = [point(d2h(pageable), RANDOM)]
    pinned = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    pinned[:] = pageable
    h2d_pts.append(point(h2d(pinned), "pinned"))
    d2h_pts.append(point(d2h(pinned), "pinned"))
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return ([Series(name="h2d", unit=BPS, x_name="nbytes", x_unit="bytes", points=h2d_pts),
             Series(name="d2h", unit=BPS, x_name="nbytes", x_unit="bytes", points=d2h_pts)],
            {"device": name})
