"""What the host-buffer measurement stages share: the buffer sizes, the budget of the stages,
the sampler, the THP mode and huge page size the conditions record, and this run's copy ceiling.

Sizes: ``DEFAULT_NBYTES`` and ``QUICK_NBYTES`` are 128 MiB (see there).  Two buffers of the
largest size stay below ``1 / MEMORY_FRACTION`` of physical memory.  The stages themselves
live in ``measure_zero_page`` (1, 3), ``measure_touch`` (2, 5), ``measure_sweep`` (4) and
``measure_numa`` (6); ``measure`` runs them.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from advisor.measure import REL_PRECISION, Ceiling, conditions, sample, shared_ceiling
from advisor.models import Conditions, Facts
from advisor.probe import MeasureContext

from . import thp
from .workers import MEMORY

MiB = 1 << 20
GiB = 1 << 30
#: Bytes of the single-size stages (zero page, OpenCL, first touch): far above the last-level
#: cache, so a copy streams from memory.  128 MiB, half the size of the issue's numpy and PoCL
#: measurements (256 MiB): on the 2-core AMD VM that halved those stages (host-buffer 12.9 s ->
#: 7.4 s of a whole probe aiming at 30 s, issue 25) with the same verdicts and advice (zero-page
#: inflation x1.17-1.34, first-touch speed-up x4.7-5.6, malloc hugetlb x6.4-6.6).  Neither
#: size is above glibc's non-temporal threshold there (288 MiB): the memcpy sweep, not this
#: size, measures the copy path on both sides of it.
DEFAULT_NBYTES = 128 * MiB
#: --quick: the same size (its stages take fewer samples)
QUICK_NBYTES = 128 * MiB
#: the sweep's largest buffers (two of them) stay below this fraction of physical memory
MEMORY_FRACTION = 16

#: the child-process worker of the sweep, malloc and NUMA stages
#: (:mod:`advisor_host_buffer.workers.memory`)
WORKER = MEMORY


class Budget:
    """Deadline bookkeeping: ``ok(est_s)`` says whether a stage estimated at ``est_s`` seconds
    still fits before ``ctx.deadline``."""

    def __init__(self, ctx: MeasureContext):
        self.ctx = ctx
        self.skipped: list[str] = []

    def ok(self, stage: str, est_s: float) -> bool:
        if self.ctx.remaining_s() >= est_s:
            return True
        self.skipped.append(stage)
        return False


def sampler(ctx: MeasureContext, quick: bool) -> Callable[[Callable[[], Any]], Any]:
    """``sample`` with this probe's minimum count and time cap, stopping early once the median's
    95 % interval is within ``REL_PRECISION`` (5 %, Jain 1991 section 13.9) of the median."""
    return lambda fn: sample(fn, min_samples=5 if quick else 7,
                             max_time_s=0.15 if quick else 0.6, deadline=ctx.deadline,
                             rel_precision=REL_PRECISION)


def thp_in_effect(facts: Facts) -> Optional[str]:
    """The THP mode the conditions record: from ``facts``, else read now (None when unknown)."""
    from advisor.measure import thp_mode

    return thp.thp_mode(facts.memory.thp_enabled) or thp_mode()


def pmd_bytes(facts: Facts) -> int:
    """Bytes of a THP huge page (``hpage_pmd_size``); else the smallest huge page size the
    facts list; else 2 MiB."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        sizes = [h for h in facts.memory.huge_page_sizes_bytes if h]
        return min(sizes) if sizes else 2 * MiB



def run_ceiling(ctx: MeasureContext, nbytes: int, stage: str) -> Ceiling:
    """This run's copy ceiling at ``nbytes``: the zero-page stage's random-source copy when it
    ran (``shared_ceiling`` then returns it, noted ``ceiling_shared_with``), else measured now."""
    return shared_ceiling(nbytes, source=f"host-buffer {stage}", min_samples=5, max_time_s=0.3,
                          deadline=ctx.deadline, seed=ctx.seed)


def ceiling_notes(ceil: Ceiling) -> dict[str, Any]:
    """``Conditions.notes`` fields telling where the ceiling came from."""
    out: dict[str, Any] = {}
    if "ceiling_shared_with" in ceil.notes:
        out["ceiling_shared_with"] = ceil.notes["ceiling_shared_with"]
    return out


def random_buffer_conditions(ctx: MeasureContext, notes: dict[str, Any]) -> Conditions:
    """``Conditions`` of a copy between random-filled, 64 B-aligned pageable buffers (the
    sweep's, the transfers' and the NUMA stage's), with this run's THP mode and ``notes``."""
    return conditions(thp_enabled=thp_in_effect(ctx.facts), buffer_kind="pageable",
                      buffer_fill="random", align_bytes=64, notes=notes)
