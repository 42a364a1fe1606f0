"""Where CMA on starts to beat CMA off, read from paired on/off measurements
(``advisor_mpich_cma.pairs.Paired``): the per-size verdicts (``cma_better``), the bracket of
measured sizes around the crossover that the paired refinement bisects (``bracket``,
``midpoint``; ``advisor_mpich_cma.paired``) and that the figures draw.  Pure.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor_mpich_cma.pairs import Paired


def cma_better(data: Sequence[Paired]) -> dict[int, bool]:
    """Per measured size (bytes): True when CMA on scores higher than off on the median per-pair
    ratios (the ``_scores`` of a threshold at that size vs CMA off), in every rank pair that
    measured the size; sizes where pairs disagree are left out."""
    import numpy as np

    votes: dict[int, set[bool]] = {}
    for p in data:
        for j, n in enumerate(p.sizes):
            lat, bw = p.pair_ratios(j)
            if not (lat and bw):
                continue
            lr, br = float(np.median(lat)), float(np.median(bw))
            on = min(1.0, lr, br)
            off = min(1.0, 1 / lr, 1 / br)
            votes.setdefault(int(n), set()).add(on > off)
    return {n: v.pop() for n, v in votes.items() if len(v) == 1}


def bracket(data: Sequence[Paired], threshold: Optional[int]) -> Optional[tuple[int, int]]:
    """The measured sizes ``(lo, hi)`` (bytes) around a crossover to refine: ``hi`` is the
    chosen ``threshold`` (a measured size), ``lo`` the next smaller measured size, and the
    on/off verdicts (``cma_better``) differ there (off better at ``lo``, on at ``hi``).
    None when the threshold is CMA off, the smallest size, or the verdicts agree (the
    threshold then sits on a grid point for a reason other than a crossover)."""
    if threshold is None:
        return None
    better = cma_better(data)
    below = [n for n in better if n < threshold]
    if threshold not in better or not below:
        return None
    lo = max(below)
    return (lo, int(threshold)) if better[threshold] and not better[lo] else None


def midpoint(lo: int, hi: int, quantum: int) -> Optional[int]:
    """The geometric midpoint of ``lo`` and ``hi`` (bytes; bisection in log2 size) rounded to a
    multiple of ``quantum`` (the base page size: ``process_vm_readv`` works on pages, so a
    finer point says nothing new about the crossover); None when no such
    multiple lies strictly between them (the interval cannot be split further).

    :raises ValueError: non-positive arguments or ``lo >= hi``.
    """
    import math

    if lo <= 0 or hi <= lo or quantum <= 0:
        raise ValueError(f"need 0 < lo < hi and quantum > 0, got {lo}, {hi}, {quantum}")
    m = int(round(math.sqrt(lo * hi) / quantum)) * quantum
    return m if lo < m < hi else None
