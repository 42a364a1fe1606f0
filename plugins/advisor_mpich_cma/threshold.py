"""The issue-4 threshold rule on separate-launch sweeps (``cma-sweep``), pure.

The threshold rule (issue 4): the smallest measured size from which CMA wins on both latency and
bandwidth, each win meaning the bootstrap CI of the on/off ratio of medians lies beyond the
noise floor (``advisor.measure.compare``), at that size and every larger one.  The noise floor
at a size is measured, not chosen: the A/A spread of the independent launches of each
configuration (``noise_floor_from_aa``), the larger of the two.  Where that rule finds no single
threshold, the sweep's rounds (one on and one off launch each) are decided by minimax regret as
well instead of giving no advice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from advisor.models import Evidence

from advisor_mpich_cma.evidence import BW, LAT, OFF, ON

#: The bootstrap seed of every comparison: fixed so recommend is a pure function.
SEED = 0


#: Bootstrap resamples per comparison: 1000, the minimum Efron & Tibshirani (1993, ch. 19)
#: give for percentile intervals; a sweep makes ~40 comparisons, so this bounds recommend's cost.
N_BOOT = 1000


@dataclass(frozen=True)
class SizeVerdict:
    nbytes: int
    lat_ratio: float
    lat_ci: tuple[float, float]
    lat_verdict: str
    lat_floor: float
    bw_ratio: float
    bw_ci: tuple[float, float]
    bw_verdict: str
    bw_floor: float
    runs: int
    #: measured fast/slow state swing across the launches (mode ratio - 1; 0: one mode), which
    #: the noise floors already include (``states``)
    state_swing: float = 0.0

    @property
    def wins(self) -> bool:
        return self.lat_verdict == "better" and self.bw_verdict == "better"

    @property
    def loses(self) -> bool:
        return "worse" in (self.lat_verdict, self.bw_verdict)


def _runs(ev: Evidence, metric: str, config: str) -> dict[int, list[list[float]]]:
    out: dict[int, list[list[float]]] = {}
    for s in ev.series:
        if s.name != f"{metric}:{config}":
            continue
        for p in s.points:
            if p.x is None or not p.samples or p.artefact:
                continue
            out.setdefault(int(p.x), []).append(list(p.samples))
    return out


def kept_runs(runs: Sequence[Sequence[float]], *, higher_is_better: bool) -> list[list[float]]:
    """The least disturbed half of the repeats of one configuration (at least 2, all if fewer).

    Interference from other processes (a rank descheduled on a busy node) only ever adds time,
    so the undisturbed repeats are the fastest ones; Python's ``timeit`` documentation makes the
    same argument for taking the minimum of repeats ("higher values ... are typically ... caused
    by other processes interfering with your timing accuracy").  Both configurations are
    trimmed alike; the noise floor is then the A/A spread among the kept repeats.
    """
    import math

    import numpy as np

    runs = [list(r) for r in runs if len(r)]
    if len(runs) <= 2:
        return runs
    order = sorted(runs, key=lambda r: float(np.median(r)), reverse=higher_is_better)
    return order[:max(2, math.ceil(len(runs) / 2))]


def _kept_swing(all_runs: Sequence[Sequence[float]], kept: Sequence[Sequence[float]]) -> float:
    """The fast/slow swing (mode ratio - 1) of the per-launch medians of ``all_runs`` when they
    are bimodal (``states.bimodality``) and ``kept`` holds launches from both modes, else 0."""
    import numpy as np

    from advisor_mpich_cma.states import bimodality

    runs = [list(r) for r in all_runs if len(r)]
    b = bimodality([float(np.median(r)) for r in runs])
    if not b.bimodal:
        return 0.0
    kept_lists = [list(k) for k in kept]  # kept_runs returns copies: match by content
    in_low = {i in b.low_index for i, r in enumerate(runs) if r in kept_lists}
    return b.mode_ratio - 1.0 if len(in_low) == 2 else 0.0


def analyse_sweep(ev: Evidence, *, on: str = ON, off: str = OFF) -> list[SizeVerdict]:
    """Per message size: CMA on vs off for latency and bandwidth, with CI and noise floor.

    Ratios are oriented so that > 1 means CMA on is better (harness ``compare``).  Separate
    launches may sit in different machine states (background.md §4): where the per-launch
    medians of either configuration are bimodal (``states.bimodality``), the noise floor of
    that size and measure *and the kept runs (``kept_runs``) still hold launches of both
    modes*, the noise floor is widened to the measured swing (mode ratio - 1), so the state is
    never read as a CMA effect (the choice is explained in ``advisor_mpich_cma.states``).  When
    the kept runs all sit in one mode the comparison is already within one mode and the floor
    stays: the trimming has removed the other mode (and interference, which also splits a
    series in two: a descheduled launch is 100x slower, not a machine state).
    :raises ValueError: from the harness on empty or non-positive samples.
    """
    from advisor.measure import compare, noise_floor_from_aa

    lat_on, lat_off = _runs(ev, LAT, on), _runs(ev, LAT, off)
    bw_on, bw_off = _runs(ev, BW, on), _runs(ev, BW, off)
    sizes = sorted(set(lat_on) & set(lat_off) & set(bw_on) & set(bw_off))
    out = []
    for n in sizes:
        res = {}
        swings: dict[str, float] = {}
        for name, a_all, b_all, hib in ((LAT, lat_off[n], lat_on[n], False),
                                        (BW, bw_off[n], bw_on[n], True)):
            a_runs = kept_runs(a_all, higher_is_better=hib)
            b_runs = kept_runs(b_all, higher_is_better=hib)
            floor = max(noise_floor_from_aa(a_runs) if len(a_runs) > 1 else 0.0,
                        noise_floor_from_aa(b_runs) if len(b_runs) > 1 else 0.0)
            swing = max(_kept_swing(a_all, a_runs), _kept_swing(b_all, b_runs))
            floor = max(floor, swing)
            swings[name] = swing
            a = [x for r in a_runs for x in r]
            b = [x for r in b_runs for x in r]
            res[name] = (compare(a, b, noise_floor=floor, higher_is_better=hib, seed=SEED,
                                 n_boot=N_BOOT), floor)
        (lc, lf), (bc, bf) = res[LAT], res[BW]
        out.append(SizeVerdict(n, lc.ratio, (lc.ci_low, lc.ci_high), lc.verdict, lf,
                               bc.ratio, (bc.ci_low, bc.ci_high), bc.verdict, bf,
                               min(len(lat_on[n]), len(lat_off[n])),
                               max(swings.values(), default=0.0)))
    return out


@dataclass(frozen=True)
class Threshold:
    nbytes: Optional[int]
    strict: bool
    verdicts: tuple[SizeVerdict, ...]

    @property
    def any_win(self) -> bool:
        return any(v.wins for v in self.verdicts)

    @property
    def any_loss(self) -> bool:
        return any(v.loses for v in self.verdicts)


def threshold_from(verdicts: Sequence[SizeVerdict]) -> Threshold:
    """The smallest measured size at which CMA wins on both latency and bandwidth and above which
    it loses at no size.

    ``strict`` is True when CMA also wins at every larger size (the rule of issue 4 verbatim);
    sizes above the threshold whose CI does not clear the noise floor (indistinguishable, not
    worse) are tolerated with ``strict=False``, which lowers the confidence: requiring wins at
    every larger size would let one noisy point (e.g. 64 KiB on a busy node) push the threshold
    far above sizes where CMA clearly wins.  ``nbytes`` is None when no size qualifies.
    """
    vs = sorted(verdicts, key=lambda v: v.nbytes)
    for i, v in enumerate(vs):
        if v.wins and not any(w.loses for w in vs[i + 1:]):
            return Threshold(v.nbytes, all(w.wins for w in vs[i:]), tuple(vs))
    return Threshold(None, False, tuple(vs))


def fmt_bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def verdict_table(vs: Sequence[SizeVerdict]) -> str:
    """Per size: each ratio with its CI, the A/A noise floor it was judged against, and the
    verdict (a CI far from 1 is still "indistinguishable" when the repeats of one configuration
    disagree by more than that)."""
    return "; ".join(
        f"{fmt_bytes(v.nbytes)}: latency x{v.lat_ratio:.2f} [{v.lat_ci[0]:.2f}, {v.lat_ci[1]:.2f}]"
        f" A/A floor {v.lat_floor:.1%} {v.lat_verdict}, bandwidth x{v.bw_ratio:.2f} "
        f"[{v.bw_ci[0]:.2f}, {v.bw_ci[1]:.2f}] A/A floor {v.bw_floor:.1%} {v.bw_verdict}"
        for v in vs)


def around(per_pair, thr: int) -> str:
    """Ratios with CI at the threshold and at the size just below it, per pair."""
    out = []
    for ev, t in per_pair:
        vs = list(t.verdicts)
        at = [v for v in vs if v.nbytes == thr] or [v for v in vs if v.nbytes >= thr][:1]
        below = [v for v in vs if v.nbytes < thr][-1:]
        out.append(f"{ev.id}: " + verdict_table(below + at))
    return "Measured (ratio > 1: CMA better, 95 % CI): " + " | ".join(out)
