"""Which configuration to advise, from interleaved launches (pure: no I/O, no clock).

Input: an ``ompi-paths`` / ``ompi-limits`` / ``ompi-verify`` evidence (series
``latency:<config>`` in seconds and ``bandwidth:<config>`` in bytes/s, one point per message
size and launch).  Rule (DESIGN.md "Advice (what makes it trustworthy)", the minimax-regret
idea of ``advisor_mpich_cma.minimax`` applied to whole configurations instead of thresholds):

* per size and metric, every configuration is compared with the baseline by the harness's
  ``compare`` (median ratio, > 1 = better than the baseline, percentile-bootstrap 95 % CI)
  against the A/A noise floor of the two (``noise_floor_from_aa`` of each one's per-launch
  medians: identical launches already differed that much);
* a configuration's score at a size and metric is its median over the best median there
  (1 = best); its worst score over sizes and metrics is ``1 - regret``;
* ``best`` is the configuration with the highest worst score (exact ties: the baseline, then
  the listed order).  The **tie band** is every configuration within noise of it: the 95 %
  percentile interval, over ``N_STABILITY`` resamples of the launches, of
  ``worst(best) - worst(c)`` reaches 0.  When the baseline is in the band, the baseline stays
  (the tie's member nearest the library default, as ``advisor_mpich_cma.minimax`` does);
* otherwise ``best`` is advised, but only when it is better than the baseline beyond noise at
  some size and worse beyond noise at none; otherwise the baseline stays (advice that flips on
  noise is a defect);
* stability: the share of ``N_STABILITY`` resamples of the launches (rounds drawn with
  replacement, the same rounds for every configuration, since one round launches each once)
  whose decision by the same rule equals the advice; "within noise" there is the half-width of
  the full data's band interval, and "beyond noise" is ``compare``'s rule with the full data's
  CI, relative to its ratio, moved to the resample's ratio.  A change whose stability is below
  ``advisor.measure.STABLE_SHARE``, or that rests on fewer than ``MIN_CHANGE_LAUNCHES``
  launches (two launches give three distinct resamples: no interval), is not advised: the
  baseline stays (Open MPI advice flipped between two quick probes in a row, issue 25).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from advisor.measure.interleave import STABLE_SHARE
from advisor.models import Evidence

from advisor_openmpi.evidence import BW, LAT, configs_of

#: Resamples of the stability bootstrap (a share, not a tail quantile: Efron & Tibshirani
#: (1993, ch. 6) give 25-200 as enough for a standard error).
N_STABILITY = 200
#: Fewest launches per configuration a change of configuration is advised from (above).
MIN_CHANGE_LAUNCHES = 3
#: Level of the tie band's interval: the project's CI level (DESIGN.md "Measurement hygiene").
LEVEL = 0.95


@dataclass(frozen=True)
class SizeVerdict:
    """``config`` vs the baseline at ``nbytes`` on ``metric`` (``latency``/``bandwidth``):
    ``ratio`` > 1 means better than the baseline; CI of the ratio; verdict of ``compare``."""

    config: str
    nbytes: int
    metric: str
    ratio: float
    ci_low: float
    ci_high: float
    verdict: str
    noise_floor: float

    def text(self) -> str:
        return (f"{fmt_bytes(self.nbytes)} {self.metric} x{self.ratio:.2f} "
                f"[{self.ci_low:.2f}, {self.ci_high:.2f}] {self.verdict}")


@dataclass
class Decision:
    """Result of ``decide``.

    Attributes:
        baseline: the configuration compared against (``default``).
        advice: the configuration advised (== baseline when none beats it beyond noise).
        best: the configuration with the highest worst score (the minimax-regret choice).
        worst: config -> worst score over sizes and metrics (1 - regret).
        verdicts: config -> its ``SizeVerdict`` list against the baseline.
        rounds: launches per configuration (smallest).
        why: one line on why the advice is what it is.
        stability: share of launch resamples giving the same advice (0..1).
        tie: the tie band: configurations within noise of ``best`` (the baseline first when in
            it); ``(best,)`` when none is, empty when there were too few launches to tell.
    """

    baseline: str
    advice: str
    best: str
    worst: dict[str, float]
    verdicts: dict[str, list[SizeVerdict]] = field(default_factory=dict)
    rounds: int = 0
    why: str = ""
    stability: float = 1.0
    tie: tuple[str, ...] = ()

    def wins(self, config: str) -> list[SizeVerdict]:
        return [v for v in self.verdicts.get(config, []) if v.verdict == "better"]

    def losses(self, config: str) -> list[SizeVerdict]:
        return [v for v in self.verdicts.get(config, []) if v.verdict == "worse"]

    def as_values(self) -> dict:
        v: dict = {"advice": self.advice, "best": self.best, "baseline": self.baseline,
                   "rounds": self.rounds, "stability": round(self.stability, 4),
                   "stability_resamples": N_STABILITY, "tie_band": ",".join(self.tie)}
        for c, w in self.worst.items():
            v[f"regret:{c}"] = round(1.0 - w, 6)
        return v


def fmt_bytes(n: int) -> str:
    """1024 -> '1 KiB', 1048576 -> '1 MiB', 100 -> '100 B'."""
    for unit, k in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << k and n % (1 << k) == 0:
            return f"{n >> k} {unit}"
    return f"{n} B"


def _table(ev: Evidence) -> dict[tuple[str, str, int], list[list[float]]]:
    """(metric, config, bytes) -> per-launch sample lists (artefact points left out)."""
    out: dict[tuple[str, str, int], list[list[float]]] = {}
    for s in ev.series:
        metric, _, config = s.name.partition(":")
        if metric not in (LAT, BW):
            continue
        for pt in s.points:
            if pt.x is None or pt.artefact or not pt.samples:
                continue
            out.setdefault((metric, config, int(pt.x)), []).append(list(pt.samples))
    return out


def _cell_scores(table, configs: list[str], metric: str, n: int) -> dict[str, float]:
    """At one size and metric: each configuration's median (pooled over its launches) over the
    best median there (1 = best), the score ``decide`` takes the worst of."""
    import numpy as np

    med = {c: float(np.median([x for r in table[(metric, c, n)] for x in r])) for c in configs}
    best = min(med.values()) if metric == LAT else max(med.values())
    return {c: best / m if metric == LAT else m / best for c, m in med.items()}


def per_size_scores(ev: Evidence) -> dict[str, dict[int, float]]:
    """Per configuration and message size (bytes, ascending): its score as ``decide`` scores
    it, the smaller of the latency and bandwidth scores there (1 = the best configuration at
    that size; regret = 1 - score).  Sizes where a configuration lacks either metric are left
    out for it."""
    table = _table(ev)
    configs = [c for c in configs_of(ev) if any(k[1] == c for k in table)]
    out: dict[str, dict[int, float]] = {c: {} for c in configs}
    for metric, n in sorted({(m, n) for (m, _, n) in table}):
        present = [c for c in configs if (metric, c, n) in table]
        for c, score in _cell_scores(table, present, metric, n).items():
            out[c][n] = min(out[c].get(n, 1.0), score)
    both = {c: {n for (m, cc, n) in table if cc == c and m == LAT}
            & {n for (m, cc, n) in table if cc == c and m == BW} for c in configs}
    return {c: {n: per[n] for n in sorted(per) if n in both[c]} for c, per in out.items()}


def decide(ev: Evidence, baseline: str = "default", *, seed: int = 0) -> Optional[Decision]:
    """The decision on ``ev`` (see the module docstring); None when the baseline or every other
    configuration lacks samples."""
    import numpy as np

    from advisor.measure import compare, noise_floor_from_aa

    table = _table(ev)
    configs = [c for c in configs_of(ev) if any(k[1] == c for k in table)]
    if baseline not in configs:
        return None
    others = [c for c in configs if c != baseline]
    cells = sorted({(m, n) for (m, c, n) in table if c == baseline})
    verdicts: dict[str, list[SizeVerdict]] = {c: [] for c in others}
    scores: dict[str, list[float]] = {c: [] for c in configs}
    for metric, n in cells:
        present = [c for c in configs if (metric, c, n) in table]
        for c, score in _cell_scores(table, present, metric, n).items():
            scores[c].append(score)
        base_runs = table[(metric, baseline, n)]
        for c in present:
            if c == baseline:
                continue
            runs = table[(metric, c, n)]
            floor = max(noise_floor_from_aa(base_runs), noise_floor_from_aa(runs))
            cmp = compare([x for r in base_runs for x in r], [x for r in runs for x in r],
                          noise_floor=floor, higher_is_better=metric == BW, seed=seed)
            verdicts[c].append(SizeVerdict(c, n, metric, cmp.ratio, cmp.ci_low, cmp.ci_high,
                                           cmp.verdict, floor))
    worst = {c: min(s) for c, s in scores.items() if s}
    if len(worst) < 2:
        return None
    best = max(worst, key=lambda c: (worst[c], c == baseline, -configs.index(c)))
    rounds = min(len(v) for v in table.values())
    d = Decision(baseline, baseline, best, worst, verdicts, rounds)
    rs = _resamples(table, configs, baseline, seed)
    half: dict[str, float] = {}
    if rs:
        # the tie band: the interval of worst(best) - worst(c) over the launch resamples
        alpha = (1 - LEVEL) / 2
        gap = {c: np.quantile([w[best] - w[c] for w, _ in rs], [alpha, 1 - alpha])
               for c in worst}
        d.tie = tuple(sorted((c for c in worst if c == best or gap[c][0] <= 0.0),
                             key=lambda c: (c != baseline, -worst[c], configs.index(c))))
        half = {c: float(np.quantile([w[c] - w[baseline] for w, _ in rs], 1 - alpha)
                         - np.quantile([w[c] - w[baseline] for w, _ in rs], alpha)) / 2
                for c in others}
    if best == baseline:
        d.why = f"the baseline {baseline} has the smallest regret"
    elif baseline in d.tie:
        lo, hi = gap[baseline]
        d.why = (f"{best} has the smallest regret, but {baseline} is within noise of it "
                 f"(worst score {best} {worst[best]:.2f}, {baseline} {worst[baseline]:.2f}; 95 % "
                 f"interval of the difference over launch resamples [{lo:+.2f}, {hi:+.2f}] "
                 f"reaches 0): {baseline} is kept, the member of the tie nearest the default")
    elif d.losses(best):
        d.why = (f"{best} has the smallest regret but is worse than {baseline} beyond noise "
                 f"at " + "; ".join(v.text() for v in d.losses(best)))
    elif not d.wins(best):
        d.why = (f"{best} has the smallest regret but beats {baseline} beyond noise nowhere "
                 f"(every CI within the A/A noise floor)")
    else:
        d.advice = best
        d.why = (f"{best} beats {baseline} beyond noise at "
                 + "; ".join(v.text() for v in d.wins(best)) + " and is worse nowhere")
    picks = _resampled_advice(rs, configs, baseline, d, half)
    d.stability = sum(p == d.advice for p in picks) / len(picks) if picks else 0.0
    if d.advice != baseline and rounds < MIN_CHANGE_LAUNCHES:
        d.why = (f"{d.advice} beats {baseline} beyond noise in these {rounds} launches, but a "
                 f"change needs at least {MIN_CHANGE_LAUNCHES} to tell it from the "
                 f"launch-to-launch state: {baseline} is kept")
        d.advice = baseline
        d.stability = 0.0
    elif d.advice != baseline and d.stability < STABLE_SHARE:
        # a change that resampled launches do not keep flips from one probe to the next: the
        # baseline stays, and its own stability is what the launches say of keeping it
        d.why = (f"{d.advice} beats {baseline} beyond noise in these launches, but only "
                 f"{d.stability:.0%} of {len(picks)} launch resamples agree (policy "
                 f"{STABLE_SHARE:.0%}): {baseline} is kept")
        d.advice = baseline
        d.stability = sum(p == baseline for p in picks) / len(picks)
    return d


def _resamples(table, configs: list[str], baseline: str, seed: int
               ) -> list[tuple[dict[str, float], dict[tuple[str, str, int], float]]]:
    """Per launch resample (``N_STABILITY`` draws of the launches with replacement, the same
    for every configuration): ``(worst score per configuration, ratio vs the baseline per
    (config, metric, bytes))``; empty when a configuration has fewer than 2 launches."""
    import numpy as np

    cells = sorted({(m, n) for (m, c, n) in table if c == baseline})
    runs = min(len(v) for v in table.values())
    if runs < 2:
        return []
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.integers(0, runs, size=(N_STABILITY, runs))
    out = []
    for pick in draws:
        scores: dict[str, list[float]] = {c: [] for c in configs}
        ratio: dict[tuple[str, str, int], float] = {}
        for metric, n in cells:
            med = {c: float(np.median(np.concatenate([table[(metric, c, n)][i] for i in pick])))
                   for c in configs if (metric, c, n) in table}
            top = min(med.values()) if metric == LAT else max(med.values())
            for c, m in med.items():
                scores[c].append(top / m if metric == LAT else m / top)
                b = med[baseline]
                ratio[(c, metric, n)] = b / m if metric == LAT else m / b
        out.append(({c: min(v) for c, v in scores.items() if v}, ratio))
    return out


def _resampled_advice(rs, configs: list[str], baseline: str, d: Decision,
                      half: dict[str, float]) -> list[str]:
    """The decision on each launch resample of ``rs`` (``_resamples``; module docstring):
    a tie within ``half`` (config -> half-width of the full data's band interval) keeps the
    baseline."""
    from advisor.measure.stats import Comparison

    # per cell the full data's comparison: a resample's verdict is its rule with the CI moved
    # to the resample's ratio (``Comparison.verdict_at``): on the full data the two agree
    cmps = {(v.config, v.metric, v.nbytes): Comparison(v.ratio, v.ci_low, v.ci_high, v.verdict,
                                                       v.noise_floor, LEVEL, 0, 0)
            for vs in d.verdicts.values() for v in vs if v.ratio > 0}
    out = []
    for worst, ratio in rs:
        best = max(worst, key=lambda c: (worst[c], c == baseline, -configs.index(c)))
        advice = baseline
        if best != baseline and worst[best] - worst[baseline] > half.get(best, 0.0):
            mine = {cmps[k].verdict_at(r) for k, r in ratio.items()
                    if k[0] == best and k in cmps and r > 0}
            if "better" in mine and "worse" not in mine:
                advice = best
        out.append(advice)
    return out


def traffic_split(ev: Evidence, d: Decision, *, seed: int = 0) -> dict[str, list[SizeVerdict]]:
    """Where the advice does not win everywhere: per metric (``latency`` = latency-bound
    traffic, ``bandwidth`` = bandwidth-bound), the other configurations' verdicts against the
    advice that are ``better`` beyond noise (from ``decide`` with the advice as the baseline);
    an empty dict when none is (the advice wins or ties at every size and metric)."""
    vs = decide(ev, baseline=d.advice, seed=seed) if d.advice != d.baseline else d
    out: dict[str, list[SizeVerdict]] = {}
    for verdicts in (vs.verdicts if vs is not None else {}).values():
        for v in verdicts:
            if v.verdict == "better":
                out.setdefault(v.metric, []).append(v)
    return {m: sorted(v, key=lambda x: (x.config, x.nbytes)) for m, v in sorted(out.items())}

