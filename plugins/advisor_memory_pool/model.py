"""The pure pool model: backing blocks, large-page multiples, waste, grow-by.

Nothing here does I/O or reads the clock; every function is a function of its arguments, so the
advice can be re-derived from recorded evidence.  Sizes are bytes (``int``) throughout.

Pool rules modelled (sources):

* Umpire ``QuickPool`` / ``DynamicPoolList``: a request is rounded up to the pool's ``alignment``;
  when no free chunk fits, the pool takes a new block of ``max(rounded request, minimum block)``
  (``first_minimum_pool_allocation_size`` for the first block, ``next_minimum_...`` afterwards) and
  asks its backing allocator for **block + alignment** bytes (LLNL/Umpire#881).  Defaults:
  512 MiB first block, 1 MiB next block, alignment 16 (Umpire ``QuickPool.hpp``; the alignment
  argument exists since Umpire v4.0.0).
* DLA-Future configures its Umpire pools with 1 GiB initial and next blocks and alignment 16
  (DLA-Future v0.7.0 ``src/init.cpp`` defaults; background.md section 1).
* CuPy ``MemoryPool`` / ``PinnedMemoryPool`` round every allocation to 512 bytes
  (cupy ``cupy/cuda/memory.pyx``, ``ALLOCATION_UNIT_SIZE``) and back each new chunk with its own
  ``cudaMalloc`` of the rounded size.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

#: Umpire QuickPool/DynamicPoolList defaults (Umpire ``QuickPool.hpp``, ``DynamicPoolList.hpp``).
UMPIRE_FIRST_BLOCK_BYTES = 512 * MiB
UMPIRE_NEXT_BLOCK_BYTES = 1 * MiB
UMPIRE_ALIGNMENT_BYTES = 16

#: DLA-Future pool defaults, v0.7.0+ (``DLAF_UMPIRE_*_MEMORY_POOL_*``; background.md section 1).
DLAF_BLOCK_BYTES = 1 * GiB
DLAF_ALIGNMENT_BYTES = 16

#: CuPy MemoryPool rounding unit (cupy ``memory.pyx`` ``ALLOCATION_UNIT_SIZE``).
CUPY_ROUND_BYTES = 512

#: Grow-by floor: DLA-Future draft PR #1143 (2024) found growing the pool by at least 1 GiB (with
#: 2 MiB alignment) removed the multi-second first-use outliers of GPUDirect sends.
GROW_BY_MIN_BYTES = 1 * GiB

#: The GPU's large page on NVIDIA GPUs (cudaMalloc's granularity; the gpudirect-p2p-overalloc
#: reproducer of LLNL/Umpire#881 shows 2 MiB multiples first-send fast, others 50-500x slower).
NVIDIA_DEVICE_LARGE_PAGE_BYTES = 2 * MiB

#: x86-64 PMD (THP) size, used only when the host's ``hpage_pmd_size`` is not known (Linux
#: ``Documentation/admin-guide/mm/transhuge.rst``).
X86_64_PMD_BYTES = 2 * MiB

#: DLA-Future's default tile of the gen_to_std run in PR #1143: 1024 x 1024 doubles (8 bytes).
DEFAULT_TILE = (1024, 1024)
DEFAULT_ELEMENT_BYTES = 8

#: A first use this many times slower than the aligned reference marks a block size misaligned:
#: one order of magnitude, the rule of the pool-overalloc-first-send case (the Umpire#881
#: reproducer shows 12x to 500x for misaligned sizes and < 4x spread among aligned ones).
FIRST_USE_PENALTY_FACTOR = 10.0


def round_up(n: int, unit: int) -> int:
    """Smallest multiple of ``unit`` (bytes, > 0) that is >= ``n`` (bytes, >= 0)."""
    if unit <= 0:
        raise ValueError(f"unit must be positive, got {unit}")
    return -(-n // unit) * unit


def round_down(n: int, unit: int) -> int:
    """Largest multiple of ``unit`` (bytes, > 0) that is <= ``n``."""
    if unit <= 0:
        raise ValueError(f"unit must be positive, got {unit}")
    return (n // unit) * unit


def is_multiple(n: int, unit: int) -> bool:
    """True when ``n`` bytes is a whole number of ``unit``-byte pages."""
    return unit > 0 and n % unit == 0


def umpire_backing_bytes(block_bytes: int, alignment_bytes: int) -> int:
    """Bytes an aligned Umpire pool asks its backing allocator for to create one block.

    ``block + alignment`` (LLNL/Umpire#881): a 1 GiB block at alignment 16 becomes 1 GiB + 16 B.
    """
    return block_bytes + alignment_bytes


@dataclass(frozen=True)
class PoolConfig:
    """One pool configuration.

    ``library``: "umpire" (aligned QuickPool/DynamicPoolList rules) or "cupy" (512 B rounding,
    one backing chunk per rounded request).  Sizes in bytes.
    """

    library: str = "umpire"
    alignment_bytes: int = UMPIRE_ALIGNMENT_BYTES
    first_block_bytes: int = UMPIRE_FIRST_BLOCK_BYTES
    next_block_bytes: int = UMPIRE_NEXT_BLOCK_BYTES
    label: str = "current"

    def footprint(self, size: int) -> int:
        """Bytes one request of ``size`` bytes occupies inside the pool."""
        unit = CUPY_ROUND_BYTES if self.library == "cupy" else self.alignment_bytes
        return round_up(size, max(1, unit))


DLAF_DEFAULT = PoolConfig("umpire", DLAF_ALIGNMENT_BYTES, DLAF_BLOCK_BYTES, DLAF_BLOCK_BYTES,
                          "dla-future default")
UMPIRE_DEFAULT = PoolConfig("umpire", UMPIRE_ALIGNMENT_BYTES, UMPIRE_FIRST_BLOCK_BYTES,
                            UMPIRE_NEXT_BLOCK_BYTES, "umpire default")
CUPY_DEFAULT = PoolConfig("cupy", CUPY_ROUND_BYTES, 0, 0, "cupy MemoryPool")


@dataclass(frozen=True)
class PoolReport:
    """What a configuration does to a workload (all sizes bytes).

    ``backing``: sizes of the backing allocations (blocks) the pool makes when every request of
    the workload is live at once, in order.  ``misaligned``: those that are not multiples of
    ``large_page``.  ``waste_bytes``: sum of footprint - request over the requests;
    ``waste_ratio``: waste_bytes / requested bytes.  ``reserved_bytes``: sum of ``backing``.
    """

    config: PoolConfig
    large_page: int
    requests: tuple[int, ...]
    backing: tuple[int, ...]
    misaligned: tuple[int, ...]
    waste_bytes: int
    waste_ratio: float
    reserved_bytes: int

    @property
    def all_multiples(self) -> bool:
        return not self.misaligned

    @property
    def max_waste_per_request(self) -> int:
        return max((self.config.footprint(s) - s for s in self.requests), default=0)


def backing_blocks(config: PoolConfig, requests: Sequence[int]) -> list[int]:
    """Backing allocation sizes (bytes) for ``requests`` (bytes) all live at once.

    Umpire: blocks are carved first-fit in request order; a request that does not fit the space
    left takes a new block of ``max(footprint, minimum block)`` and the backing request is
    ``block + alignment``.  CuPy: one backing chunk per rounded request.
    """
    if config.library == "cupy":
        return [config.footprint(s) for s in requests]
    blocks: list[int] = []
    free: list[int] = []  # space left in each block
    for s in requests:
        need = config.footprint(s)
        for i, room in enumerate(free):
            if room >= need:
                free[i] -= need
                break
        else:
            minimum = config.first_block_bytes if not blocks else config.next_block_bytes
            block = max(need, minimum)
            blocks.append(block)
            free.append(block - need)
    return [umpire_backing_bytes(b, config.alignment_bytes) for b in blocks]


def evaluate(config: PoolConfig, requests: Sequence[int], large_page: int) -> PoolReport:
    """Report backing blocks, large-page multiples and waste of ``config`` for ``requests``.

    :param requests: allocation sizes in bytes (each > 0).
    :param large_page: the large page in bytes (host THP PMD size or the GPU's, e.g. 2 MiB).
    :raises ValueError: empty workload or a size <= 0.
    """
    reqs = tuple(int(s) for s in requests)
    if not reqs or min(reqs) <= 0:
        raise ValueError("the workload needs at least one allocation size > 0 bytes")
    backing = tuple(backing_blocks(config, reqs))
    waste = sum(config.footprint(s) - s for s in reqs)
    return PoolReport(
        config=config, large_page=large_page, requests=reqs, backing=backing,
        misaligned=tuple(b for b in backing if not is_multiple(b, large_page)),
        waste_bytes=waste, waste_ratio=waste / sum(reqs), reserved_bytes=sum(backing))


@dataclass(frozen=True)
class GrowBy:
    """The grow-by (next block, bytes) allowed by the memory budget, and why."""

    bytes: int
    budget_bytes: Optional[int]
    limited: bool
    reason: str
    feasible: bool = True


def memory_budget(*, device_total: Optional[int] = None, ranks_per_gpu: int = 1,
                  pool_limit: Optional[int] = None) -> Optional[int]:
    """Bytes one rank's pool may hold: min(pool limit, device memory / ranks per GPU); None if
    neither is known."""
    cands = []
    if pool_limit is not None:
        cands.append(pool_limit)
    if device_total is not None:
        cands.append(device_total // max(1, ranks_per_gpu))
    return min(cands) if cands else None


def choose_grow_by(largest_request: int, large_page: int, budget: Optional[int]) -> GrowBy:
    """Grow-by of at least ``GROW_BY_MIN_BYTES`` (DLA-Future #1143) unless the budget forbids it.

    The budget must hold the largest request and one more block (a pool that grows while the
    largest request is live): when ``budget < largest + 1 GiB`` the grow-by is lowered to the
    large-page multiple that fits, and ``feasible`` is False when not even one large page fits.
    """
    if budget is None:
        return GrowBy(GROW_BY_MIN_BYTES, None, False,
                      "grow by >= 1 GiB (DLA-Future PR #1143); no device memory or pool limit "
                      "known to bound it")
    largest = round_up(largest_request, large_page)
    if budget >= largest + GROW_BY_MIN_BYTES:
        return GrowBy(GROW_BY_MIN_BYTES, budget, False,
                      f"budget {budget} B holds the largest request ({largest} B, rounded to the "
                      f"large page) plus 1 GiB")
    room = round_down(budget - largest, large_page) if budget > largest else 0
    if room < large_page:
        return GrowBy(0, budget, True,
                      f"budget {budget} B cannot hold the largest request ({largest} B rounded "
                      f"to the large page) plus one {large_page} B large page: out of memory "
                      f"is certain once the pool grows", feasible=False)
    return GrowBy(room, budget, True,
                  f"grow-by lowered from 1 GiB to {room} B: the budget ({budget} B) must hold "
                  f"the largest request ({largest} B) plus one more block")


@dataclass(frozen=True)
class Choice:
    """The recommended configuration and the candidates it was chosen from.

    ``fits``: False when no candidate's reserved bytes fit the budget (``best`` is then the
    smallest and must not be recommended); ``rejected``: label -> why, for candidates over the
    budget.
    """

    best: PoolReport
    candidates: tuple[PoolReport, ...]
    grow: GrowBy
    why: str = ""
    rejected: dict = field(default_factory=dict)
    fits: bool = True


def workload_demand(requests: Sequence[int]) -> int:
    """Bytes the workload needs with every request live at once (the sum of the requests)."""
    return sum(int(s) for s in requests)


def fits(demand_bytes: int, capacity_bytes: Optional[int]) -> Optional[bool]:
    """True when ``demand_bytes`` fit ``capacity_bytes``; None when the capacity is unknown."""
    return None if capacity_bytes is None else demand_bytes <= capacity_bytes


def reserved_at_peak(config: PoolConfig, requests: Sequence[int], peak: Optional[int] = None) -> int:
    """Bytes ``config`` reserves from its backing allocator for the workload (bytes).

    Without ``peak`` every request is live at once: the sum of ``backing_blocks``.  With
    ``peak`` (the most bytes live at once, the rest freed back to the pool first) the pool must
    at least back one request of ``peak`` bytes: a lower bound that ignores fragmentation, so a
    configuration over the capacity by this measure runs out of memory for certain.
    """
    if peak is None:
        return sum(backing_blocks(config, requests))
    return sum(backing_blocks(config, [peak]))


def overhead_bytes(report: PoolReport) -> int:
    """Bytes a configuration reserves beyond what the workload requests (rounding, unused block
    space and the ``+ alignment`` of each backing request): ``reserved - requested``."""
    return report.reserved_bytes - sum(report.requests)


def candidate_configs(requests: Sequence[int], large_page: int, grow_by: int,
                      base_alignment: int = UMPIRE_ALIGNMENT_BYTES) -> list[PoolConfig]:
    """The Umpire configurations compared.

    * ``large-page alignment``: alignment = large page, blocks = grow-by rounded to the large page
      (DLA-Future #1143's fix: every backing block is a multiple; every request rounds up to a
      large page).
    * ``compensated block``: alignment kept at ``base_alignment``, block = a large-page multiple
      minus the alignment, big enough for the largest request, so block + alignment is a multiple
      and no request gets a block of its own.
    """
    largest = max(requests)
    grow = max(grow_by, large_page)
    a_block = round_up(max(grow, round_up(largest, large_page)), large_page)
    out = [PoolConfig("umpire", large_page, a_block, a_block, "large-page alignment")]
    if base_alignment < large_page and large_page % base_alignment == 0:
        need = round_up(largest, base_alignment) + base_alignment
        b_block = round_up(max(grow, need), large_page) - base_alignment
        out.append(PoolConfig("umpire", base_alignment, b_block, b_block, "compensated block"))
    return out


def choose(requests: Sequence[int], large_page: int, *, budget: Optional[int] = None,
           base_alignment: int = UMPIRE_ALIGNMENT_BYTES, peak: Optional[int] = None,
           rounded: Optional[Mapping[int, int]] = None) -> Choice:
    """Pick the Umpire configuration whose backing blocks are all large-page multiples at the
    least waste, with the grow-by the budget allows, among those whose reserved bytes fit the
    budget (``Choice.fits`` False when none does).

    :param requests: allocation sizes, bytes.
    :param large_page: bytes.
    :param budget: bytes one rank's pool may hold (see ``memory_budget``), or None.
    :param base_alignment: the alignment kept by the compensated-block candidate (bytes).
    :param peak: bytes live at once when not every request is (see ``reserved_at_peak``).
    :param rounded: alignment (bytes) -> the most rounded bytes live at once with it (an
        allocation trace's peak per unit); a candidate needs at least that much.
    :raises ValueError: empty workload.
    """
    if not requests:
        raise ValueError("the workload needs at least one allocation size")
    grow = choose_grow_by(max(requests), large_page, budget)
    configs = candidate_configs(requests, large_page, grow.bytes or large_page, base_alignment)
    reports = [evaluate(c, requests, large_page) for c in configs]
    # never a configuration whose reserved bytes exceed the budget (not even as an alternative)
    need = {r.config.label: max(reserved_at_peak(r.config, requests, peak),
                                (rounded or {}).get(r.config.alignment_bytes, 0))
            for r in reports}
    rejected = {r.config.label: (f"reserves {need[r.config.label]} B at the peak, more than the "
                                 f"{budget} B budget")
                for r in reports if fits(need[r.config.label], budget) is False}
    fitting = [r for r in reports if r.config.label not in rejected]
    if not fitting:
        best = min(reports, key=lambda r: need[r.config.label])
        return Choice(best, tuple(reports), grow, "no candidate fits the budget", rejected, False)
    ok = [r for r in fitting if r.all_multiples]
    # least waste; on a tie prefer the large-page alignment (robust if a library ignores the
    # next-block setting, see DLA-Future note in background.md)
    best = min(ok or fitting, key=lambda r: (r.waste_bytes, r.config.label != "large-page alignment"))
    why = (f"{best.config.label}: waste {best.waste_ratio:.2%} of requested bytes; "
           + "; ".join(f"{r.config.label}: waste {r.waste_ratio:.2%}" for r in fitting if r is not best)
           + "".join(f"; {k} rejected: {v}" for k, v in rejected.items()))
    return Choice(best, tuple(reports), grow, why, rejected)


def parse_thp_mode(value: Optional[str]) -> Optional[str]:
    """``"always [madvise] never"`` or ``"madvise"`` -> ``"madvise"``; None when unknown."""
    if not value:
        return None
    v = value.strip()
    if "[" in v and "]" in v:
        return v[v.index("[") + 1:v.index("]")].strip() or None
    return v if v in ("always", "madvise", "never") else None


def classify_first_use(points: Iterable[tuple[float, Sequence[float], Sequence[float]]],
                       large_page: int, *,
                       factor: float = FIRST_USE_PENALTY_FACTOR) -> dict[float, str]:
    """Classify buffer sizes by their first-use penalty.

    :param points: ``(size_bytes, first_use_seconds, steady_seconds)`` per size; the sizes that
        are large-page multiples serve as the reference.
    :return: size -> ``"ok"`` or ``"misaligned"``.  A size is misaligned when its fastest first
        use is slower than the slowest first use of the large-page-multiple sizes (ranges do not
        overlap) and at least ``factor`` times their median first use.  Without a reference
        (no multiple measured) the steady state is the reference.
    """
    pts = [(float(x), list(f), list(s)) for x, f, s in points]
    ref = [v for x, f, _ in pts if is_multiple(int(x), large_page) for v in f]
    out: dict[float, str] = {}
    for x, first, steady in pts:
        if not first:
            continue
        if ref:
            bad = min(first) > max(ref) and min(first) >= factor * statistics.median(ref)
        else:
            bad = bool(steady) and min(first) >= factor * max(steady)
        out[x] = "misaligned" if bad else "ok"
    return out
