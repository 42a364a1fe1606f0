"""One verdict from a family of tests (message sizes x metrics), with a controlled family-wise
false-alarm rate; shared by every probe's ``verify``.

A *test* (a :class:`Contrast`) is one comparison advised vs baseline: a ratio (> 1: the
advice is better), its confidence interval and the A/A noise floor measured for it.  It decides
only when the whole
interval lies beyond the A/A band ``[1/(1+f), 1+f]`` (``pairs.band_decision``): ``worse``,
``better``, else ``equivalent`` (inside the band) or ``undecided`` (overlapping an edge).

Family-wise error: a verdict of ``regression`` says "worse at *some* size or metric", so one
false "worse" among m tests is a false alarm.  Each test's interval is taken at level
``1 - alpha/m`` (:func:`family_level`; Bonferroni): by Boole's inequality the chance that any of
the m intervals misses its true ratio is at most alpha, whatever the dependence between sizes
(Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979,
whose first step this is; Holm's later steps need p-values, which percentile bootstrap
intervals do not give).  alpha is ``1 - stats.LEVEL`` (5 %): design, "A/A runs must pass 19
times in 20".  Requiring the interval to clear the floor as well only lowers that rate.  The
m intervals are thus simultaneous 95 % intervals: what tables label "95 % CI".

Verdict (:func:`family_verdict`): ``regression`` when any test is worse; ``confirmed`` when
some test is better and none worse; otherwise ``no-effect``, whose figures are those of the test
with the lowest ratio (the loss that comes closest; its reason says when the interval reaches
below 1 but not beyond the floor: a loss neither shown nor ruled out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from advisor.measure.pairs import Decision, band_decision
from advisor.measure.stats import LEVEL

#: Family-wise false-alarm rate (design: A/A runs must pass 19 times in 20).
ALPHA = 1.0 - LEVEL


def family_level(m: int, alpha: float = ALPHA) -> float:
    """Confidence level of each of ``m`` tests so that the family-wise false-alarm rate is at
    most ``alpha`` (Bonferroni: ``1 - alpha/m``).  :raises ValueError: ``m < 1`` or ``alpha``
    outside (0, 1)."""
    if m < 1 or not 0 < alpha < 1:
        raise ValueError(f"family_level needs m >= 1 and 0 < alpha < 1, got {m}, {alpha}")
    return 1.0 - alpha / m


@dataclass(frozen=True)
class Contrast:
    """One comparison of a family.

    :ivar label: what was compared, e.g. ``"latency at 8192 bytes"``.
    :ivar ratio: advised / baseline, oriented so that > 1 is better (dimensionless).
    :ivar ci_low, ci_high: its confidence interval at the family level.
    :ivar noise_floor: measured A/A floor, relative (0.05 = 5 %), >= 0.
    """

    label: str
    ratio: float
    ci_low: float
    ci_high: float
    noise_floor: float

    @property
    def decision(self) -> Decision:
        """``band_decision`` of the interval against the A/A band."""
        return band_decision(self.ci_low, self.ci_high, self.noise_floor)

    def text(self) -> str:
        """``latency at 8192 bytes x0.912 [0.880, 0.941], A/A floor 1.2 %``."""
        return (f"{self.label} x{self.ratio:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}], "
                f"A/A floor {self.noise_floor:.1%}")


def family_verdict(tests: Sequence[Contrast], level: Optional[float] = None
                   ) -> tuple[str, Optional[Contrast], str]:
    """The verdict over ``tests`` (module docstring).

    :param level: the per-test level the intervals were taken at (for the reason text;
        default ``family_level(len(tests))``).
    :return: ``(verdict, deciding test, reason)``: verdict ``regression`` / ``confirmed`` /
        ``no-effect`` with the test whose figures stand for it (the worst worse one, the best
        better one, or the lowest ratio), or ``("not-measurable", None, reason)`` when there
        is no test.
    """
    if not tests:
        return "not-measurable", None, "no size gave a comparison"
    m = len(tests)
    lvl = family_level(m) if level is None else level
    family = (f"{m} test(s), each CI at {lvl:.2%} (Bonferroni: family-wise false-alarm rate "
              f"<= {ALPHA:.0%})")
    worse = [t for t in tests if t.decision == "worse"]
    better = [t for t in tests if t.decision == "better"]
    if worse:
        t = min(worse, key=lambda x: x.ratio)
        return "regression", t, (f"worse beyond the A/A floor in {len(worse)} of {family}: "
                                 f"{t.text()}")
    if better:
        t = max(better, key=lambda x: x.ratio)
        return "confirmed", t, (f"better beyond the A/A floor in {len(better)} of {family}, "
                                f"worse in none: {t.text()}")
    t = min(tests, key=lambda x: x.ratio)
    if t.decision == "undecided" and t.ci_high < 1.0:
        why = ("its CI lies below 1 but not beyond the A/A floor: a loss is neither shown "
               "nor ruled out")
    elif all(x.decision == "equivalent" for x in tests):
        why = "every CI lies inside its A/A band"
    else:
        why = "no CI lies beyond its A/A band"
    return "no-effect", t, f"none of {family} beyond the A/A floor; lowest: {t.text()}: {why}"


def floor_from_ci(ci_low: float, ci_high: float) -> float:
    """The A/A floor a CI of an A/A ratio gives: the largest relative difference it cannot rule
    out, ``exp(max(|log low|, |log high|)) - 1`` (>= 0).  :raises ValueError: a bound that is
    not positive and finite."""
    if not (ci_low > 0 and ci_high > 0 and math.isfinite(ci_low) and math.isfinite(ci_high)):
        raise ValueError(f"an A/A CI needs positive finite bounds, got [{ci_low}, {ci_high}]")
    return math.exp(max(abs(math.log(ci_low)), abs(math.log(ci_high)))) - 1.0


def launch_contrast(label: str, baseline: Sequence[Sequence[float]],
                    advised: Sequence[Sequence[float]], *, higher_is_better: bool,
                    level: float, seed: int = 0) -> tuple[Contrast, list[float]]:
    """A test from interleaved independent launches: ``baseline[r]`` and ``advised[r]`` are the
    samples of the two launches of round ``r`` (any unit, positive).  Each launch is reduced to
    its median and each round to the ratio of its two medians, so the launch is the unit: the
    CI (``pairs.paired_ratio`` over the rounds, at ``level``) resamples launches and holds the
    machine's state changes between them, widened to hold every round's own ratio.  The floor
    is the A/A spread of each configuration's launch medians (``stats.noise_floor_from_aa``,
    the larger; 0 with one round).

    :return: ``(contrast, [ratio of each round])``.
    :raises ValueError: no rounds, lengths differ, or a sample that is not positive.
    """
    import numpy as np

    from advisor.measure.pairs import pair_log_ratios, paired_ratio
    from advisor.measure.stats import noise_floor_from_aa

    if not baseline or len(baseline) != len(advised):
        raise ValueError(f"launch_contrast needs equal, non-empty rounds, got {len(baseline)} "
                         f"and {len(advised)}")
    b = [float(np.median(r)) for r in baseline]
    a = [float(np.median(r)) for r in advised]
    ratio, lo, hi = paired_ratio(b, a, higher_is_better=higher_is_better, level=level, seed=seed)
    own = [float(np.exp(d)) for d in pair_log_ratios(b, a, higher_is_better=higher_is_better)]
    floor = max(noise_floor_from_aa(b), noise_floor_from_aa(a))
    return Contrast(label, ratio, min([lo, *own]), max([hi, *own]), floor), own


__all__ = ["ALPHA", "Contrast", "family_level", "family_verdict", "floor_from_ci",
           "launch_contrast"]
