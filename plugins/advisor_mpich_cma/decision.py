"""The minimax-regret decision (``advisor_mpich_cma.minimax``) on this plugin's evidence.

Shared by ``paired`` (which records the decision as ``cma-decision`` evidence) and
``recommend`` (which turns it into advice); pure.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.models import Evidence

from advisor_mpich_cma import minimax
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma.evidence import Library, buffer_pages
from advisor_mpich_cma.story import DecisionRecord, default_measured, measuring_clause

def default_candidate(lib: Library) -> Optional[int]:
    """The library's default as a ``minimax.decide`` candidate: its threshold in bytes when it
    uses CMA by default, None (CMA off) otherwise."""
    on = lib.mode_default == "CMA" if lib.cray else lib.cma_enable_default == 1
    return lib.threshold_default if on and lib.threshold_default is not None else None


def decision_of(evs: Sequence[Evidence], lib: Library, withhold_unstable: bool = True):
    """``minimax.decide`` on the paired (or round-paired sweep) evidence ``evs``, or None when
    no size has paired results; ``withhold_unstable`` as ``minimax.decide`` takes it."""
    data = [paired_from_evidence(ev) for ev in evs]
    one = any(ev.values.get("machine_states") == "one" for ev in evs)
    try:
        return minimax.decide(data, default_candidate(lib), one_state=one,
                              withhold_unstable=withhold_unstable)
    except ValueError:
        return None


def record_of(evs: Sequence[Evidence], lib: Library,
              substituted: Optional[str] = None) -> Optional[DecisionRecord]:
    """The ``DecisionRecord`` (decision, buffer kinds, whether the default is measured as itself)
    that the advice's texts and the ``cma-decision`` evidence are both drawn from; None when no
    size has paired results.  ``substituted``: why ``sane_library`` replaced the default."""
    d = decision_of(evs, lib)
    if d is None:
        return None
    ok, note = default_measured(lib, substituted)
    seq = next((e.values for e in evs if "stopped" in e.values), {})
    return DecisionRecord(d, tuple(sorted({buffer_pages(e) for e in evs})), ok, note,
                          measuring_clause(seq), str(seq.get("stopped", "")))


def kind_values(evs: Sequence[Evidence], lib: Library) -> dict:
    """``buffer_kinds`` ("base,thp") and ``advice_threshold_bytes:<kind>`` (bytes, -1: CMA off)
    / ``stability:<kind>``: the decision on each kind alone, as the rule chose it (an unstable
    change is shown, not withheld: it is each kind's own answer beside the advice)."""
    kinds = sorted({buffer_pages(e) for e in evs})
    v: dict = {"buffer_kinds": ",".join(kinds)}
    for k in kinds:
        d = decision_of([e for e in evs if buffer_pages(e) == k], lib, withhold_unstable=False)
        if d is not None:
            v[f"advice_threshold_bytes:{k}"] = -1 if d.advice is None else int(d.advice)
            v[f"stability:{k}"] = d.stability
    return v


def decisive_sizes(d, default: Optional[int], sizes: Sequence[int]) -> list[int]:
    """The sizes (bytes, of ``sizes``) where later launches can still move the decision ``d``
    (``minimax.Decision``): where the candidates still in contention (its tie band, advice and
    best, and the library ``default``; None = CMA off) route messages differently, widened by
    one measured size on each side, and the size where the default's and the advice's worst
    ratio lies (``per_size_default`` / ``per_size_advice``).  Every contender routes the other
    sizes alike (a threshold ``T`` sends ``n >= T`` by CMA; off sends none), so their scores
    there are equal and cannot reorder them; but a loss they share sets how far their worst
    ratios lie apart, so where it lies is measured again too (without it, a loss one launch saw
    at 1 MiB stood against differences every launch re-measured at 8-24 KiB, and the stability
    fell below the policy in 4 of 9 probes on the 2-core VM).  Pure.  Example: tie band
    {8192, 16384}, default 8192, sizes 4, 8, 12, 16, 64 KiB, worst ratios at 64 KiB -> 4, 8,
    12, 16, 64 KiB.
    """
    contenders = {*d.tie, d.advice, d.best, default}
    ts = sorted(t for t in contenders if t is not None)
    srt = sorted(set(int(n) for n in sizes))
    if not srt:
        return []
    lo = ts[0] if ts else srt[-1] + 1
    hi = float("inf") if None in contenders else (ts[-1] if ts else lo)
    inside = [i for i, n in enumerate(srt) if lo <= n < hi]
    # one size on each side: the last below the smallest contender and the first at or above
    # the largest, so the crossover stays bracketed
    below = [i for i, n in enumerate(srt) if n < lo][-1:]
    above = [i for i, n in enumerate(srt) if n >= hi][:1]
    worst = {min(per, key=per.get)[1] for per in (getattr(d, "per_size_default", None),
                                                  getattr(d, "per_size_advice", None)) if per}
    return sorted({*(srt[i] for i in (*below, *inside, *above)), *(n for n in worst if n in srt)})
