"""When the host pool's interleaved huge / base-page sampling (``measure.measure_host``) may
stop: every median precise, or every verdict stable over resampled repeats (issue 25 item 1:
stop early when the decision is clear).  Pure.
"""

from __future__ import annotations

from typing import Optional

from advisor.measure import REL_PRECISION, compare, precise_enough

#: Fewest repeats before the huge-vs-base verdicts may stop the sampling (``decided``): twice
#: ``measure.MIN_REPEATS`` (5), so a verdict stands on at least 10 interleaved pairs.  On the
#: 2-core AMD VM the verdicts were "better" at stability 1.00 in every full probe (first touch
#: x8.2-8.5, register x22-26), while reaching 5 % precision on every median took 49-91 repeats
#: and 4.6-8.1 s of a 46 s whole probe (issue 25: stop early when the decision is clear).
DECIDED_MIN_REPEATS = 10


def precise_figures(*figures: dict[str, list[float]]) -> bool:
    """True when every non-empty sample list (seconds) has its median known within
    ``REL_PRECISION`` at 95 % (``advisor.measure.precise_enough``: Jain 1991, section 13.9)."""
    lists = [v for f in figures for v in f.values() if v]
    return bool(lists) and all(precise_enough(v, REL_PRECISION) for v in lists)


def decided(seed: int, *figures: dict[str, list[float]]) -> bool:
    """True when every figure with both policies measured has a verdict (``compare`` of
    nohuge against huge, times) that holds in at least ``STABLE_SHARE`` of the resamples of
    the interleaved repeats (``pair_stability``, issue 25 item 1): measuring longer would
    sharpen the medians, not change what is recommended."""
    from advisor.measure import STABLE_SHARE

    pairs = [(f["nohuge"], f["huge"]) for f in figures if f["huge"] and f["nohuge"]]
    for base, huge in pairs:
        cmp = compare(base, huge, higher_is_better=False, seed=seed)
        stab = pair_stability(cmp, base, huge, seed=seed)
        if stab is None or stab < STABLE_SHARE:
            return False
    return bool(pairs)


def pair_stability(cmp, base: list[float], huge: list[float], *, seed: int = 0
                   ) -> Optional[float]:
    """The stability of ``cmp``'s verdict (``compare(base, huge)``, times) over resamples of
    the interleaved repeats (repeat ``i`` measured both policies):
    ``advisor.measure.resample_stability`` of ``cmp.verdict_at`` the resample's ratio (issue 25
    item 1).  None with fewer than 2 paired repeats."""
    import numpy as np

    from advisor.measure import resample_stability

    n = min(len(base), len(huge))

    def verdict(idx) -> str:
        return cmp.verdict_at(float(np.median([base[i] for i in idx]))
                              / float(np.median([huge[i] for i in idx])))

    return resample_stability(verdict, n, seed=seed)
