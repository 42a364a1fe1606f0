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
* the advice is the configuration with the highest worst score (ties: the baseline, then the
  listed order), but only when it is better than the baseline beyond noise at some size and
  worse beyond noise at none; otherwise the baseline stays (advice that flips on noise is a
  defect).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from advisor.models import Evidence

from advisor_openmpi.evidence import BW, LAT, configs_of


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
    """

    baseline: str
    advice: str
    best: str
    worst: dict[str, float]
    verdicts: dict[str, list[SizeVerdict]] = field(default_factory=dict)
    rounds: int = 0
    why: str = ""

    def wins(self, config: str) -> list[SizeVerdict]:
        return [v for v in self.verdicts.get(config, []) if v.verdict == "better"]

    def losses(self, config: str) -> list[SizeVerdict]:
        return [v for v in self.verdicts.get(config, []) if v.verdict == "worse"]

    def as_values(self) -> dict:
        v: dict = {"advice": self.advice, "best": self.best, "baseline": self.baseline,
                   "rounds": self.rounds}
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
        med = {c: float(np.median([x for r in table[(metric, c, n)] for x in r]))
               for c in present}
        best = min(med.values()) if metric == LAT else max(med.values())
        for c in present:
            scores[c].append(best / med[c] if metric == LAT else med[c] / best)
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
    if best == baseline:
        d.why = f"the baseline {baseline} has the smallest regret"
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
    return d
