"""Host-pool measurement: first touch and pinning of large-page-aligned chunks, huge vs base pages.

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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
import time
from typing import Optional

from advisor.measure import REL_PRECISION, compare, conditions, host_buffer, precise_enough, summarize
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from .advice import HOST_FIRST_TOUCH, host_large_page

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
#: sequential form of Jain 1991, section 13.9, "Determining sample size".
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


def _precise(*figures: dict[str, list[float]]) -> bool:
    """True when every non-empty sample list (seconds) has its median known within
    ``REL_PRECISION`` at 95 % (``advisor.measure.precise_enough``: Jain 1991, section 13.9)."""
    lists = [v for f in figures for v in f.values() if v]
    return bool(lists) and all(precise_enough(v, REL_PRECISION) for v in lists)


def measure_host(ctx: MeasureContext) -> list[Evidence]:
    """Interleaved huge/nohuge first-touch and pinning samples; returns ``[host-first-touch]``.

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
    while rep < min_rep or time.monotonic() - start < cap:
        if rep >= min_rep and ctx.remaining_s() < 1.0:
            break
        if rep >= min_rep and _precise(touch, pin):
            precise = True  # every figure's median is known within REL_PRECISION: stop
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
                          "rel_precision": REL_PRECISION}
    for name, data, nbytes in (("first-touch", touch, chunk), ("register", pin, pin_bytes)):
        if not data["huge"] or not data["nohuge"]:
            continue
        pts = [Point(x=nbytes, label=k, samples=v, stats=summarize(v, seed=ctx.seed))
               for k, v in data.items()]
        series.append(Series(name=name, unit="s", x_name="chunk", x_unit="bytes", points=pts))
        cmp = compare(data["nohuge"], data["huge"], higher_is_better=False, seed=ctx.seed)
        values.update(cmp.as_values(f"{name}_"))
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
