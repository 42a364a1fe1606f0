"""Work done in a fresh Python process (``advisor.measure.run_python``) with an env overlay.

glibc reads ``GLIBC_TUNABLES`` once, when the dynamic loader starts, so comparing tunables needs
one process per configuration.  Each task here is a pure function of its arguments that returns a
JSON-able dict; :func:`run` dispatches ``{"task": name, **kwargs}``.  Tasks:

- ``sweep(sizes_bytes, min_samples, max_time_s, seed, passes, max_samples, rel_precision)``: memcpy (``numpy.copyto``
  between two random-filled, 64 B-aligned harness buffers from ``placed_pair``: never a power
  of two apart, so no 4K aliasing, and the destination touched before timing; numpy hands
  contiguous copies to libc ``memcpy``) at each size, sizes visited in turn; ``passes`` keeps
  each visit's samples (an A/A repeat inside the process) -> ``{"points": [models.Point as
  dict, bytes/s], "glibc_tunables": str|None, "notes": placement and fills}``.
- ``malloc_touch(nbytes, repeats)``: glibc ``malloc`` + first touch (``memset``) + ``free`` of
  ``nbytes``, seconds per round -> ``{"samples": [...]}``.  This one allocates with libc itself on
  purpose: the subject is glibc malloc's own mmap path (``glibc.malloc.hugetlb``), which the
  harness buffers (plain mmap) bypass.
- ``numa_placement(nbytes, init_cpus, run_cpus, min_samples, max_time_s, seed, more_run_cpus)``:
  first touch by a thread pinned to ``init_cpus``, page placement from ``/proc/self/numa_maps``,
  copy bandwidth from a thread pinned to ``run_cpus`` (and to each of ``more_run_cpus`` in turn)
  -> ``{"pages": {node: n}, "point": Point dict[, "points": [Point dict, ...]],
  "placements": [placed notes per copy]}``.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any, Optional, Sequence


def sweep(sizes_bytes: Sequence[int], min_samples: int = 5, max_time_s: float = 0.2,
          seed: int = 0, passes: int = 2, max_samples: int = 25,
          rel_precision: Optional[float] = None) -> dict[str, Any]:
    """Copy bandwidth (bytes/s) at each size in this process; see module docstring.

    One pair of random-filled buffers of the largest size is made; smaller copies use their
    leading slices (same alignment).  The sizes are visited ``passes`` times in turn, each visit
    taking ``min_samples`` to ``max_samples`` samples within ``max_time_s / passes``, so a burst
    of load from elsewhere spreads over all sizes instead of bending one of them (the cap keeps
    the evidence of small, fast copies from growing to thousands of samples).  With
    ``rel_precision`` a visit also ends once its median is known within that fraction at 95 %
    (``sample``'s adaptive mode: Jain 1991, section 13.9), so small, steady copies no longer
    wait for the time cap.
    """
    import numpy as np

    from advisor.measure import placed_pair, sample, summarize
    from advisor.models import Point

    top = int(max(sizes_bytes))
    # the leading slices keep the pair's distance, so every size is placed the same way
    src, dst, notes = placed_pair(top, src_fill="random", dst_fill="random", seed=seed)
    samples: dict[int, list[float]] = {int(n): [] for n in sizes_bytes}
    warm: dict[int, list[float]] = {int(n): [] for n in sizes_bytes}
    per_pass: dict[int, list[list[float]]] = {int(n): [] for n in sizes_bytes}
    for _ in range(max(1, passes)):
        for n in samples:
            s, d = src[:n], dst[:n]
            res = sample(lambda: np.copyto(d, s), min_samples=min_samples,
                         max_time_s=max_time_s / max(1, passes), max_samples=max_samples,
                         rel_precision=rel_precision)
            bw = [n / t for t in res.samples if t > 0]
            samples[n].extend(bw)
            per_pass[n].append(bw)
            warm[n].extend(n / t for t in res.warmup if t > 0)
    points = [Point(x=float(n), samples=v, warmup=warm[n], stats=summarize(v, seed=seed))
              .model_dump(mode="json") for n, v in samples.items()]
    return {"points": points, "passes": {str(n): v for n, v in per_pass.items()},
            "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "notes": notes}


def malloc_touch(nbytes: int, repeats: int = 5) -> dict[str, Any]:
    """Seconds of ``malloc(nbytes)`` + ``memset(p, 1, nbytes)`` + ``free(p)``, ``repeats`` times.

    Raises:
        MemoryError: malloc returned NULL.
    """
    import ctypes
    import time

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    libc.memset.restype = ctypes.c_void_p
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        p = libc.malloc(nbytes)
        if not p:
            raise MemoryError(f"malloc({nbytes}) returned NULL")
        libc.memset(p, 1, nbytes)  # non-zero: a real store into every page
        libc.free(p)
        out.append((time.perf_counter_ns() - t0) * 1e-9)
    return {"samples": out}


def parse_numa_maps(text: str, address: int) -> dict[str, int]:
    """Pages per NUMA node of the mapping that starts at or contains ``address`` in a
    ``/proc/<pid>/numa_maps`` text (``N<node>=<pages>`` fields; proc(5)) -> ``{"node0": n}``."""
    best: Optional[tuple[int, str]] = None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+)\s", line)
        if not m:
            continue
        start = int(m.group(1), 16)
        if start <= address and (best is None or start > best[0]):
            best = (start, line)
    if best is None:
        return {}
    return {f"node{k}": int(v) for k, v in re.findall(r"\bN(\d+)=(\d+)", best[1])}


def numa_placement(nbytes: int, init_cpus: Sequence[int], run_cpus: Sequence[int],
                   min_samples: int = 5, max_time_s: float = 0.3, seed: int = 0,
                   more_run_cpus: Sequence[Sequence[int]] = ()) -> dict[str, Any]:
    """First touch from ``init_cpus``, copy from ``run_cpus``; see module docstring.

    ``os.sched_setaffinity(0, ...)`` pins the calling *thread* on Linux (sched_setaffinity(2)),
    so the initialising thread and the copying thread are pinned separately.

    ``more_run_cpus``: further CPU sets to copy from, one after the other, in this same process
    (``{"points": [...]}`` then holds one point per set, ``run_cpus`` first; ``"point"`` is
    still the first).  This saves a process start and a source fill per set and stays honest:
    the source's pages were placed once by the first touch from ``init_cpus`` (``pages``), a
    later copy does not move them (no automatic NUMA balancing is asked for), each copying
    thread is pinned to its own set and writes a destination it touched itself, as a run in
    its own process would.
    """
    import numpy as np

    from advisor.measure import host_buffer, placement_of, sample

    box: dict[str, Any] = {}

    def init() -> None:
        os.sched_setaffinity(0, set(init_cpus))
        box["src"] = host_buffer(nbytes, fill="random", seed=seed)

    t = threading.Thread(target=init)
    t.start()
    t.join()
    src = box["src"]
    with open("/proc/self/numa_maps") as fh:
        pages = parse_numa_maps(fh.read(), src.__array_interface__["data"][0])

    points: list[dict[str, Any]] = []
    placements: list[dict[str, Any]] = []

    def run(cpus: Sequence[int]) -> None:
        os.sched_setaffinity(0, set(cpus))
        dst = host_buffer(nbytes, fill="random", seed=seed + 1)
        # two separate mappings: where the kernel put them is recorded (a power-of-two
        # distance would measure 4K aliasing; advisor.measure.relabel reads these notes)
        placements.append({"dst_fill": "random", **placement_of(src, dst).notes()})
        res = sample(lambda: np.copyto(dst, src), min_samples=min_samples, max_time_s=max_time_s)
        points.append(res.to_point(x=float(nbytes), per_call_bytes=nbytes).model_dump(mode="json"))

    for cpus in [run_cpus, *more_run_cpus]:
        t = threading.Thread(target=run, args=(cpus,))
        t.start()
        t.join()
    out: dict[str, Any] = {"pages": pages, "point": points[0], "placements": placements}
    if more_run_cpus:
        out["points"] = points
    return out


TASKS = {"sweep": sweep, "malloc_touch": malloc_touch, "numa_placement": numa_placement}


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Dispatch ``{"task": name, **kwargs}`` to a task.  Raises KeyError for an unknown task."""
    req = dict(request)
    return TASKS[req.pop("task")](**req)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``python -m advisor_host_buffer.workers.memory '<json request>'``: run it and ``report`` the result
    as one JSON line on stdout (the ``run_python`` protocol)."""
    import json
    import sys

    from advisor.measure import report

    args = list(sys.argv[1:] if argv is None else argv)
    report(run(json.loads(args[0])))


if __name__ == "__main__":
    main()
