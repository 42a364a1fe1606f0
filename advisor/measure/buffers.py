"""Host buffers with a known fill, alignment and page policy.

Why this module exists: reads from untouched anonymous memory are served by the kernel's shared
zero page, so copies from a fresh buffer overstate bandwidth (clpeak commit 784e673: 34.18 vs
13.44 GB/s; on this project's build machine numpy copies from untouched buffers ran 1.5-2.1x
faster than from initialised ones).  ``np.zeros`` does not help: numpy allocates it with
``calloc``, which hands out the same lazy zero mapping (inikep/lzbench#29: the compiler turned a
``memset(0)`` into ``calloc`` the same way).

Every buffer is a fresh private anonymous ``mmap`` (never recycled heap memory, so "untouched"
really is untouched) viewed as a numpy ``uint8`` array.  Huge pages are asked for or refused
explicitly with ``madvise`` *before* the first touch; ``hugepages=None`` leaves the kernel's THP
mode alone (numpy's own ``MADV_HUGEPAGE`` for arrays >= 4 MiB, numpy PR #14216, never applies
because numpy does not allocate these buffers).

Residency is read from ``/proc/self/pagemap`` (Documentation/admin-guide/mm/pagemap.rst): 8 bytes
per virtual page; bit 63 "present", bit 56 "exclusively mapped" (since Linux 4.2).  A page
written by this process is present *and* exclusive; a page only read from untouched memory is
present but maps the shared zero page, so it is not exclusive; a page never accessed is not
present.  ``mincore(2)`` cannot tell the zero page from a private page (it reports both as
resident), so it is only the fallback when pagemap cannot be read (then ``private_pages`` is None).
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

Fill = Literal["random", "zeros", "untouched"]
FILLS: tuple[str, ...] = ("random", "zeros", "untouched")

#: Size of the pseudo-random block that "random" repeats across the buffer, in bytes.  Only
#: speed depends on it: numpy's PCG64 produces ~0.3 GB/s on the build machine (measured, see
#: bench/bench_harness.py) while a block copy runs at memory bandwidth.  Every page also gets its
#: own pseudo-random first 8 bytes, so no two pages are equal (nothing for KSM to merge) and the
#: block is far larger than any compression granule.
RANDOM_BLOCK_BYTES = 1 << 20

_PM_PRESENT = 1 << 63
_PM_EXCLUSIVE = 1 << 56


def page_size() -> int:
    """Base page size of this system in bytes (``sysconf(SC_PAGE_SIZE)``)."""
    return os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class BufferInfo:
    """What ``host_buffer`` did; ``buffer_conditions`` turns it into ``models.Conditions`` fields.

    Attributes:
        nbytes: usable size in bytes.
        align_bytes: alignment asked (the data pointer is a multiple of it).
        fill: "random", "zeros" or "untouched".
        hugepages: "huge" (MADV_HUGEPAGE), "nohuge" (MADV_NOHUGEPAGE) or "default" (kernel THP mode).
        page_size_bytes: base page size used for touching and residency.
        seed: seed of the random pattern (None for other fills).
        resident_fraction: fraction of pages present right after filling (None if unknown).
        private_fraction: fraction of pages present and exclusively mapped (None if pagemap
            cannot be read).
        thp_backed_bytes: transparent huge page bytes in the buffer's mappings after the fill
            (``thp_backed_bytes``; None if unknown or untouched).
    """

    nbytes: int
    align_bytes: int
    fill: str
    hugepages: str
    page_size_bytes: int
    seed: Optional[int]
    resident_fraction: Optional[float]
    private_fraction: Optional[float]
    thp_backed_bytes: Optional[int] = None


_lock = threading.Lock()
#: data start address -> (weakref to the owning array, end address, info)
_registry: dict[int, tuple[Any, int, BufferInfo]] = {}


def _register(owner: "np.ndarray", start: int, end: int, info: BufferInfo) -> None:
    def _drop(_ref: Any, key: int = start) -> None:
        with _lock:
            _registry.pop(key, None)

    with _lock:
        _registry[start] = (weakref.ref(owner, _drop), end, info)


def buffer_info(arr: "np.ndarray") -> Optional[BufferInfo]:
    """The ``BufferInfo`` of the ``host_buffer`` that ``arr`` (or any view into it) lives in,
    or None for memory that ``host_buffer`` did not allocate."""
    ptr = arr.__array_interface__["data"][0]
    with _lock:
        for start, (ref, end, info) in _registry.items():
            if start <= ptr < end and ref() is not None:
                return info
    return None


def buffer_conditions(arr: "np.ndarray") -> dict[str, Any]:
    """Fields for ``models.Conditions`` describing a host buffer.

    Returns:
        ``{"buffer_kind": "pageable", "buffer_fill": ..., "hugepages": ..., "align_bytes": ...}``
        plus ``notes`` with the page size and residency.  For an array that ``host_buffer`` did
        not make, fill and hugepages are ``"unknown"`` and align_bytes is the largest power of
        two (up to the page size) dividing the data pointer.
    """
    info = buffer_info(arr)
    if info is None:
        ptr = arr.__array_interface__["data"][0]
        align = ptr & -ptr if ptr else 0
        return {"buffer_kind": "pageable", "buffer_fill": "unknown", "hugepages": "unknown",
                "align_bytes": min(align, page_size()) if align else None}
    notes: dict[str, Any] = {"page_size_bytes": info.page_size_bytes}
    if info.resident_fraction is not None:
        notes["resident_fraction"] = info.resident_fraction
    if info.private_fraction is not None:
        notes["private_fraction"] = info.private_fraction
    if info.seed is not None:
        notes["fill_seed"] = info.seed
    if info.thp_backed_bytes is not None:
        notes["thp_backed_bytes"] = info.thp_backed_bytes
    return {"buffer_kind": "pageable", "buffer_fill": info.fill, "hugepages": info.hugepages,
            "align_bytes": info.align_bytes, "notes": notes}


@dataclass(frozen=True)
class Residency:
    """Page residency of a memory range.

    Attributes:
        pages: pages spanned.
        present: pages with a page-table entry (zero page included).
        private: pages present and exclusively mapped by this process (written pages); None
            when /proc/self/pagemap could not be read (mincore fallback).
        source: "pagemap" or "mincore".
    """

    pages: int
    present: int
    private: Optional[int]
    source: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def residency(arr: "np.ndarray") -> Residency:
    """Residency of the pages under ``arr``'s data (see module docstring for the method).

    Raises:
        OSError: neither /proc/self/pagemap nor mincore(2) could be used.
    """
    import numpy as np

    ps = page_size()
    ptr = arr.__array_interface__["data"][0]
    nbytes = arr.nbytes
    first = ptr // ps
    last = (ptr + max(nbytes, 1) - 1) // ps
    pages = last - first + 1
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as fh:
            fh.seek(first * 8)
            raw = b""
            want = pages * 8
            while len(raw) < want:
                chunk = fh.read(want - len(raw))
                if not chunk:
                    break
                raw += chunk
        if len(raw) != pages * 8:
            raise OSError("short read from /proc/self/pagemap")
        ent = np.frombuffer(raw, dtype="<u8")
        present = (ent & np.uint64(_PM_PRESENT)) != 0
        private = present & ((ent & np.uint64(_PM_EXCLUSIVE)) != 0)
        return Residency(pages, int(present.sum()), int(private.sum()), "pagemap")
    except OSError:
        pass
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    vec = (ctypes.c_ubyte * pages)()
    rc = libc.mincore(ctypes.c_void_p(first * ps), ctypes.c_size_t(pages * ps), vec)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mincore failed: {os.strerror(err)}")
    present_n = sum(b & 1 for b in vec)
    return Residency(pages, int(present_n), None, "mincore")


def thp_backed_bytes(arr: "np.ndarray") -> Optional[int]:
    """Bytes of transparent huge pages in the mappings that hold ``arr`` (``AnonHugePages`` of
    the overlapping VMAs in /proc/self/smaps, see proc(5)), or None if smaps is unreadable.

    The kernel may merge a buffer's mapping with an adjacent one of the same flags, so this
    counts whole VMAs: it says whether THP took effect, not an exact per-buffer size.
    """
    lo = arr.__array_interface__["data"][0]
    hi = lo + max(arr.nbytes, 1)
    total, inside = 0, False
    try:
        with open("/proc/self/smaps") as fh:
            for line in fh:
                head = line.split(None, 2)
                if len(head) >= 2 and "-" in head[0] and len(head[1]) == 4 and ":" not in head[0]:
                    a, b = (int(v, 16) for v in head[0].split("-"))
                    inside = a < hi and lo < b
                elif inside and head and head[0] == "AnonHugePages:":
                    total += int(head[1]) * 1024
    except (OSError, ValueError):
        return None
    return total


def _fill_random(arr: "np.ndarray", seed: int, ps: int) -> None:
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    n = arr.size
    block_len = min(n, RANDOM_BLOCK_BYTES)
    block = rng.integers(1, 256, size=block_len, dtype=np.uint8)  # every byte non-zero
    full = n // block_len
    if full:
        arr[: full * block_len].reshape(full, block_len)[...] = block
    rest = n - full * block_len
    if rest:
        arr[full * block_len:] = block[:rest]
    # a page-unique non-zero first word for every page that starts inside the array
    ptr = arr.__array_interface__["data"][0]
    offset = (-ptr) % ps
    npages = (n - offset - 8) // ps + 1 if n - offset >= 8 else 0
    if npages > 0:
        words = rng.integers(0, 2**63, size=npages, dtype=np.uint64) | np.uint64(
            0x0101010101010101)
        stride = np.lib.stride_tricks.as_strided(arr[offset:], shape=(npages, 8),
                                                 strides=(ps, 1), writeable=True)
        stride[...] = words.view(np.uint8).reshape(npages, 8)


def host_buffer(nbytes: int, *, align: int = 64, fill: Fill = "random",
                hugepages: Optional[bool] = None, seed: int = 0,
                verify: bool = True) -> "np.ndarray":
    """A fresh host buffer as a 1-D numpy ``uint8`` array of ``nbytes`` bytes.

    Args:
        nbytes: size in bytes (>= 1).
        align: alignment of the data pointer in bytes, a power of two (64 B is a cache line;
            pass 2 MiB for huge-page-aligned buffers).
        fill: "random" (default) writes a non-zero pseudo-random pattern to every byte, with a
            page-unique first word per page, then checks that every page is resident and
            private; "zeros" writes zeros (pages resident and private, but compressible);
            "untouched" writes nothing: reads hit the shared zero page.  Only ask for
            "untouched" to *demonstrate* the zero-page artefact.
        hugepages: True -> ``madvise(MADV_HUGEPAGE)``, False -> ``madvise(MADV_NOHUGEPAGE)``,
            None -> kernel default (THP mode in /sys/kernel/mm/transparent_hugepage/enabled).
            Applied before the first touch.
        seed: seed of the random pattern (PCG64).
        verify: check residency (pagemap, < 1 ms per 64 MiB) and read the THP-backed bytes
            (smaps, ~15 ms) after the fill.  Pass False only when the allocation itself is
            what is timed; the buffer's info then has None for those fields.

    Returns:
        ``numpy.ndarray`` (dtype uint8, shape ``(nbytes,)``) whose data pointer is a multiple of
        ``align``; ``buffer_conditions(arr)`` / ``buffer_info(arr)`` describe it.

    Raises:
        ValueError: bad size, alignment, fill or hugepages value.
        RuntimeError: a "random" or "zeros" buffer is not fully resident and private after
            filling (memory pressure or swapping would make its timings meaningless).
        OSError: the kernel refused the mapping or the madvise call.
    """
    import numpy as np

    if not isinstance(nbytes, int) or nbytes < 1:
        raise ValueError(f"nbytes must be a positive int, got {nbytes!r}")
    if not isinstance(align, int) or align < 1 or align & (align - 1):
        raise ValueError(f"align must be a power of two in bytes, got {align!r}")
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {', '.join(FILLS)}, got {fill!r}")
    if hugepages not in (None, True, False):
        raise ValueError(f"hugepages must be True, False or None, got {hugepages!r}")
    ps = page_size()
    extra = max(0, align - ps)  # mmap is page aligned already
    length = nbytes + extra
    length = -(-length // ps) * ps
    mm = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                   prot=mmap.PROT_READ | mmap.PROT_WRITE)
    policy = "default"
    if hugepages is not None:
        advice = mmap.MADV_HUGEPAGE if hugepages else mmap.MADV_NOHUGEPAGE
        mm.madvise(advice, 0, length)
        policy = "huge" if hugepages else "nohuge"
    raw = np.frombuffer(mm, dtype=np.uint8)
    base = raw.__array_interface__["data"][0]
    off = (-base) % align
    arr = raw[off: off + nbytes]
    if fill == "random":
        _fill_random(arr, seed, ps)
    elif fill == "zeros":
        arr.fill(0)  # a real store into every page (unlike np.zeros, which is calloc)
    res_frac = priv_frac = thp = None
    if fill != "untouched" and verify:
        thp = thp_backed_bytes(arr)
        try:
            r = residency(arr)
            res_frac = r.present / r.pages
            priv_frac = None if r.private is None else r.private / r.pages
        except OSError:
            pass
        if res_frac is not None and res_frac < 1.0:
            raise RuntimeError(
                f"host_buffer({nbytes}): only {res_frac:.1%} of pages resident after the "
                f"{fill} fill (memory pressure or swap); timings from it would be wrong")
        if priv_frac is not None and priv_frac < 1.0:
            raise RuntimeError(
                f"host_buffer({nbytes}): only {priv_frac:.1%} of pages private after the "
                f"{fill} fill (shared or merged pages); timings from it would be wrong")
    info = BufferInfo(nbytes=nbytes, align_bytes=align, fill=fill, hugepages=policy,
                      page_size_bytes=ps, seed=seed if fill == "random" else None,
                      resident_fraction=res_frac, private_fraction=priv_frac,
                      thp_backed_bytes=thp)
    _register(raw, base, base + length, info)
    return arr
