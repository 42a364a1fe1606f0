"""Paired rounds: two configurations measured round by round (A and B close in time), their
oriented ratio with a bootstrap CI, the A/A floor of paired repeats, and where a CI lies
against the A/A band (``advisor verify --app``; ``advisor.appverify.session``).

Only numpy and the standard library's ``statistics.NormalDist``; the bootstrap is
``advisor.measure.stats.bootstrap_median_ci``.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

from advisor.measure.stats import LEVEL, N_BOOT, bootstrap_median_ci

def pair_log_ratios(a: Sequence[float], b: Sequence[float], *,
                    higher_is_better: bool = False) -> list[float]:
    """Oriented log ratios of paired values: ``log(b/a)`` when higher is better, ``log(a/b)``
    for times; > 0 means ``b`` is better.  Pair ``i`` is ``(a[i], b[i])``, measured close in
    time (one round of an interleaved design), so the pairing cancels drift between rounds.

    Raises:
        ValueError: lengths differ, no pairs, or a value that is not positive and finite.
    """
    if len(a) != len(b):
        raise ValueError(f"pairs need equal lengths, got {len(a)} and {len(b)}")
    import numpy as np

    xa, xb = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if xa.size == 0:
        raise ValueError("no pairs: a ratio needs at least one")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
        raise ValueError("values contain NaN or infinite values")
    if (xa <= 0).any() or (xb <= 0).any():
        raise ValueError("ratios need positive values")

    d = np.log(xb / xa) if higher_is_better else np.log(xa / xb)
    return [float(v) for v in d]


def paired_ratio(a: Sequence[float], b: Sequence[float], *, higher_is_better: bool = False,
                 seed: int = 0, level: float = LEVEL,
                 n_boot: int = N_BOOT) -> tuple[float, float, float]:
    """The median of the per-pair oriented ratios (> 1: ``b`` better) and the percentile
    bootstrap CI of that median (``bootstrap_median_ci`` of the log ratios, mapped back).

    Args:
        a, b: paired values in one unit (``pair_log_ratios``).
        higher_is_better: True for rates and ratings, False for times.
        seed, level, n_boot: bootstrap parameters.

    Returns:
        ``(ratio, ci_low, ci_high)``, dimensionless.

    Raises:
        ValueError: what ``pair_log_ratios`` raises.
    """
    import numpy as np

    d = pair_log_ratios(a, b, higher_is_better=higher_is_better)
    lo, hi = bootstrap_median_ci(d, seed=seed, level=level, n_boot=n_boot)
    return float(np.exp(np.median(d))), float(np.exp(lo)), float(np.exp(hi))


def noise_floor_from_pairs(a: Sequence[float], a2: Sequence[float], *,
                           level: float = LEVEL) -> float:
    """The A/A floor of paired repeats of one configuration: the relative difference that two
    runs of the same configuration exceed with probability ``1 - level``.

    Model: the log ratio ``d = log(a2/a)`` of an A/A pair is centred on 0 with scale ``sigma``,
    estimated robustly as 1.4826 x median(|d|) (the median absolute deviation about the known
    centre; 1.4826 = 1 / Phi^-1(3/4) makes it consistent for the normal distribution: Rousseeuw
    & Croux, JASA 88(424), 1993).  The floor is ``exp(z * sigma) - 1`` with ``z`` the two-sided
    normal quantile of ``level`` (1.96 for 95 %).  One outlying pair (a run that met another
    job) does not widen it, as the largest disagreement (``noise_floor_from_aa``) would.

    Returns:
        floor >= 0 (0.05 = 5 %).

    Raises:
        ValueError: what ``pair_log_ratios`` raises, or ``level`` outside (0, 1).
    """
    import numpy as np
    from statistics import NormalDist

    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    d = np.abs(np.asarray(pair_log_ratios(a, a2)))
    nd = NormalDist()
    sigma = float(np.median(d)) / nd.inv_cdf(0.75)
    return float(np.exp(nd.inv_cdf(0.5 + level / 2) * sigma) - 1.0)


def min_pairs_for_median_ci(level: float = LEVEL) -> int:
    """The fewest values for which a distribution-free ``level`` CI of the median exists: with
    ``n`` values the widest order-statistics interval ``(x_(1), x_(n))`` misses the median with
    probability ``2 * 2**-n`` (all values on one side), so ``n >= 1 - log2(1 - level)``: 6 for
    95 % (Le Boudec 2010, Theorem 2.1).  Fewer pairs give a bootstrap interval that claims
    more than the data hold (two pairs below 1 give a "CI" that excludes 1)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return math.ceil(1 - math.log2(1 - level) - 1e-12)


Decision = Literal["better", "worse", "equivalent", "undecided"]


def band_decision(ci_low: float, ci_high: float, noise_floor: float) -> Decision:
    """Where a ratio's CI (> 1: better) lies against the A/A band ``[1/(1+f), 1+f]``:
    wholly above it ``better``, wholly below ``worse``, wholly inside ``equivalent``,
    otherwise ``undecided`` (it overlaps an edge of the band: measure longer)."""
    hi_edge, lo_edge = 1.0 + noise_floor, 1.0 / (1.0 + noise_floor)
    if ci_low > hi_edge:
        return "better"
    if ci_high < lo_edge:
        return "worse"
    if ci_low >= lo_edge and ci_high <= hi_edge:
        return "equivalent"
    return "undecided"


__all__ = ["Decision", "band_decision", "min_pairs_for_median_ci", "noise_floor_from_pairs",
           "pair_log_ratios", "paired_ratio"]
