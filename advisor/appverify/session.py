"""The measuring part of ``advisor verify --app``: warm-up, interleaved rounds with an A/A
floor, adaptive stop, bisection of a breaking environment, leave-one-out attribution.

Design (docs/verify-app.md says it for users):

* **Warm-up.** One run of A, then one of B, discarded (page cache, first-touch of the binary's
  pages, a launcher's first start).  A failing A warm-up is bad input: the command does not work
  without our environment, so there is nothing to compare.
* **Rounds.** Round ``r`` runs A and B, the order flipped every round (A B, B A, A B, ...: ABBA
  over two rounds), so a drift or an order effect falls on both arms alike.  The first
  ``aa_rounds`` rounds also run A a second time (A B A2, then A2 B A): the A/A pairs.
* **Statistics.** Each round gives one pair; the ratio is the median of the pair ratios
  oriented > 1 = B better, with the percentile bootstrap CI of that median
  (``advisor.measure.pairs.paired_ratio``).  The A/A floor ``f`` is the disagreement two runs of
  A exceed one time in twenty, from the A/A pairs' median absolute log ratio
  (``noise_floor_from_pairs``): measured, never assumed.
* **Stop** after each round once there are ``min_rounds`` pairs, and never before the fewest
  pairs a distribution-free 95 % CI of the median needs (six:
  ``pairs.min_pairs_for_median_ci``), when the CI lies wholly above the band
  ``[1/(1+f), 1+f]`` (better), wholly below it (regression) or wholly inside it (no
  difference); or when ``max_rounds`` rounds are done or the next round would overrun the time
  budget (the mean run time so far predicts it): then the verdict is ``inconclusive`` unless the
  CI already decides.
* **Breaks.** A round where B fails and A succeeds runs B once more at once; a second failure
  (then or in a later round) is a break: measuring stops and the settings are bisected
  (``advisor.appverify.bisect.ddmin``), each test one run of A with some of B's settings.
* **Attribution** (asked, and only when B differs from A beyond the floor): rounds of B and of
  each leave-one-out arm (B without one group), the order rotated every round; each group's
  share is the paired ratio of B over B-without-it, judged against the same floor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from advisor.appverify.arms import Arms, Overlay
from advisor.appverify.bisect import ddmin
from advisor.appverify.command import AppCommand, RunOutcome, run_once
from advisor.errors import BadInputError
from advisor.measure.pairs import (band_decision, min_pairs_for_median_ci,
                                   noise_floor_from_pairs, paired_ratio)
from advisor.models_app import AppBisection, AppRun, AppShare

#: A run is killed as hung after this many times the baseline warm-up's wall time.  The widest
#: launch-to-launch spread measured here is x7.2 (background.md: five launches of one osu_bw
#: setting gave 0.22 to 1.59 GB/s at 1 KiB); ten times stays beyond it.
RUN_TIMEOUT_FACTOR = 10.0
#: ... and never below this many seconds: the start-up of a 2-rank Hydra job alone varies by
#: about a second on the loaded 2-core VM (measured: 0.25 to 1.4 s for ``mpiexec -n 2 true``
#: with one core busy), which a tiny command's ten-fold budget would not cover.
RUN_TIMEOUT_MIN_S = 10.0
#: Baseline failures (A failing in a round) after which the command counts as unreliable.
MAX_BASELINE_FAILURES = 3

Event = Callable[[str], None]


@dataclass(frozen=True)
class Design:
    """How many rounds: at most ``max_rounds`` (``--runs``: runs of each arm), the first
    ``aa_rounds`` with an A/A pair, no decision before ``min_rounds`` pairs; CI ``level``."""

    max_rounds: int = 20
    aa_rounds: int = 5
    min_rounds: int = 6
    level: float = 0.95
    seed: int = 12345

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise BadInputError(f"--runs {self.max_rounds}: at least one run of each arm")
        if self.aa_rounds < 1:
            raise BadInputError(f"--aa-rounds {self.aa_rounds}: the A/A floor needs at least "
                                "one A/A pair")


@dataclass
class CompareResult:
    verdict: str
    ratio: Optional[float] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    noise_floor: Optional[float] = None
    rounds: int = 0
    stop: str = ""
    failure: Optional[str] = None  # B's failure, when it broke


@dataclass
class Session:
    """One ``verify --app`` measurement: the command, the arms, the budget and the record."""

    cmd: AppCommand
    arms: Arms
    design: Design
    end: float  # time.monotonic() deadline of the whole verification
    run_timeout_s: Optional[float] = None
    on_event: Optional[Event] = None
    runs: list[AppRun] = field(default_factory=list)

    # ------------------------------------------------------------------ running

    def _say(self, msg: str) -> None:
        if self.on_event is not None:
            self.on_event(msg)

    def run(self, arm: str, overlay: Overlay, phase: str, rnd: int,
            settings: tuple[str, ...] = (), quiet_failure: bool = False) -> RunOutcome:
        timeout = self.run_timeout_s or max(RUN_TIMEOUT_MIN_S, self.end - time.monotonic())
        out = run_once(self.cmd, overlay, timeout_s=timeout)
        self.runs.append(AppRun(arm=arm, phase=phase, round=rnd, value=out.value,
                                wall_s=round(out.wall_s, 6), returncode=out.returncode,
                                failure=out.failure, settings=list(settings)))
        shown = (f"{out.value:.6g}" if out.ok else f"FAILED ({out.failure})")
        where = {"warmup": "warm-up", "compare": f"round {rnd + 1}",
                 "attribute": f"attribution round {rnd + 1}", "bisect": f"bisect test {rnd + 1}"}
        what = f"A + {', '.join(settings) or 'nothing'}" if phase == "bisect" else arm
        if out.ok or not quiet_failure:
            self._say(f"{where[phase]}: {what}: {shown} ({out.wall_s:.2f} s)")
        return out

    def _fits(self, n_runs: int) -> bool:
        walls = [r.wall_s for r in self.runs]
        mean = sum(walls) / len(walls) if walls else 0.0
        return time.monotonic() + mean * n_runs <= self.end

    # ------------------------------------------------------------------ phases

    def warm_up(self) -> Optional[RunOutcome]:
        """The discarded warm-up of A then B.  Returns B's failure (confirmed by a second run),
        or None.  Sets the run timeout from A's warm-up when none was given.

        :raises BadInputError: A fails, or its output lacks the metric (nothing to compare).
        """
        a = self.run("A", self.arms.baseline, "warmup", -1, quiet_failure=True)  # the error says it
        if not a.ok:
            last = (a.tail.strip().splitlines()[-1:] or ["(no output)"])[0][:200]
            if a.returncode == 0 and self.cmd.metric is not None and "--metric" in (a.failure or ""):
                raise BadInputError(f"--metric {self.cmd.metric.pattern!r} matches no number in "
                                    f"the output of the baseline run A; its output ends: {last}")
            raise BadInputError(f"the command fails in the baseline environment A ({a.failure}); "
                                f"it must work without the settings to compare them; its output "
                                f"ends: {last}")
        if self.run_timeout_s is None:
            self.run_timeout_s = max(RUN_TIMEOUT_MIN_S, RUN_TIMEOUT_FACTOR * a.wall_s)
        b = self.run("B", self.arms.advised, "warmup", -1)
        if not b.ok:
            again = self.run("B", self.arms.advised, "warmup", -1)
            if not again.ok:
                return again
        return None

    @staticmethod
    def order(rnd: int, aa: bool) -> list[str]:
        """Arms of round ``rnd``: A B / B A alternately; with an A/A pair A B A2 / A2 B A."""
        if aa:
            return ["A", "B", "A2"] if rnd % 2 == 0 else ["A2", "B", "A"]
        return ["A", "B"] if rnd % 2 == 0 else ["B", "A"]

    def compare(self) -> CompareResult:
        """The rounds of A and B until a decision, a break, ``max_rounds`` or the budget."""
        d = self.design
        overlay = {"A": self.arms.baseline, "A2": self.arms.baseline, "B": self.arms.advised}
        pairs_a: list[float] = []
        pairs_b: list[float] = []
        aa_a: list[float] = []
        aa_a2: list[float] = []
        b_failures = a_failures = 0
        res = CompareResult("inconclusive")
        rnd = 0
        while True:
            if rnd >= d.max_rounds:
                res.stop = f"--runs: {d.max_rounds} runs of each arm done"
                break
            arms = self.order(rnd, rnd < d.aa_rounds)
            if rnd > 0 and not self._fits(len(arms)):
                res.stop = f"time budget spent after {rnd} rounds"
                break
            got = {arm: self.run(arm, overlay[arm], "compare", rnd) for arm in arms}
            a, b = got["A"], got["B"]
            if not a.ok:
                a_failures += 1
                if a_failures >= MAX_BASELINE_FAILURES:
                    res.stop = (f"the baseline A failed in {a_failures} rounds: the command is "
                                "unreliable without the settings too")
                    rnd += 1
                    break
            elif not b.ok:
                b_failures += 1
                if b_failures == 1:
                    b = self.run("B", overlay["B"], "compare", rnd)
                    b_failures += 0 if b.ok else 1
                if b_failures >= 2:
                    res.verdict, res.failure = "breaks", b.failure or got["B"].failure
                    res.stop = "B failed where A succeeded, twice"
                    rnd += 1
                    break
            if a.ok and b.ok:
                pairs_a.append(a.value)
                pairs_b.append(b.value)
            if "A2" in got and a.ok and got["A2"].ok:
                aa_a.append(a.value)
                aa_a2.append(got["A2"].value)
            rnd += 1
            res.rounds = rnd
            if len(pairs_a) >= self.min_pairs and aa_a:
                self._judge(res, pairs_a, pairs_b, aa_a, aa_a2)
                if res.verdict not in ("inconclusive",):
                    res.stop = (f"decided after {rnd} rounds: the 95 % CI lies "
                                f"{_where(res.verdict)} the A/A band")
                    break
        res.rounds = rnd
        if res.verdict == "inconclusive" and pairs_a and aa_a:
            self._judge(res, pairs_a, pairs_b, aa_a, aa_a2)
            if len(pairs_a) < self.min_pairs:  # the figures are kept, no verdict is claimed
                res.verdict = "inconclusive"
                res.stop += (f"; {len(pairs_a)} complete pairs, fewer than the "
                             f"{self.min_pairs} a 95 % CI of the median needs: no verdict")
        return res

    @property
    def min_pairs(self) -> int:
        """Pairs before any verdict: ``min_rounds``, and at least the fewest a distribution-free
        CI of the median at the design's level needs."""
        return max(self.design.min_rounds, min_pairs_for_median_ci(self.design.level))

    def _judge(self, res: CompareResult, a: list[float], b: list[float], aa: list[float],
               aa2: list[float]) -> None:
        hib = self.cmd.higher_is_better
        ratio, lo, hi = paired_ratio(a, b, higher_is_better=hib, seed=self.design.seed,
                                     level=self.design.level)
        floor = noise_floor_from_pairs(aa, aa2)
        res.ratio, res.ci_low, res.ci_high, res.noise_floor = ratio, lo, hi, floor
        decision = band_decision(lo, hi, floor)
        if decision == "equivalent" and not lo <= 1.0 <= hi:
            # inside the band but B and A differ (the CI excludes 1): a real difference smaller
            # than the run-to-run noise is no "no difference"; measure on, and say so at the end
            decision = "undecided"
        res.verdict = {"better": "better", "worse": "regression", "equivalent": "no-difference",
                       "undecided": "inconclusive"}[decision]

    def bisect(self, failure: str) -> Optional[AppBisection]:
        """The smallest set of B's settings that breaks the command (``ddmin``), or None when
        B has a single setting (it is the culprit, nothing to bisect) and it is named as is."""
        names = self.arms.names
        tests = 0

        def fails(sub: list[str]) -> bool:
            nonlocal tests
            tests += 1
            return not self.run("bisect", self.arms.with_only(sub), "bisect", tests - 1,
                                tuple(sub)).ok

        culprit = ddmin(names, fails) if len(names) > 1 else list(names)
        again = self.run("bisect", self.arms.with_only(culprit), "bisect", tests, tuple(culprit))
        tests += 1
        last = (again.tail.strip().splitlines() or [""])[-1].strip()[:200]
        why = again.failure or failure
        return AppBisection(settings=culprit,
                            sources={n: self.arms.sources.get(n, []) for n in culprit},
                            failure=f"{why}; its output ends: {last}" if last else why,
                            tests=tests, reproduced=not again.ok)

    def attribute(self, by: str, floor: float) -> list[AppShare]:
        """Leave-one-out rounds: B and B without each group, rotated; each group's share."""
        groups = self.arms.groups(by)
        labels = ["B"] + [f"B-{g}" for g in groups]
        overlay = {"B": self.arms.advised}
        overlay.update({f"B-{g}": self.arms.without(ns) for g, ns in groups.items()})
        values: dict[str, list[Optional[float]]] = {lab: [] for lab in labels}
        shares = {g: AppShare(group=g, settings=ns) for g, ns in groups.items()}
        d = self.design
        for rnd in range(d.max_rounds):
            k = rnd % len(labels)
            order = labels[k:] + labels[:k]
            if rnd % 2:
                order.reverse()
            if rnd > 0 and not self._fits(len(order)):
                break
            for lab in order:
                values[lab].append(self.run(lab, overlay[lab], "attribute", rnd).value)
            decided = True
            for g in groups:
                pairs = [(w, b) for w, b in zip(values[f"B-{g}"], values["B"])
                         if w is not None and b is not None]
                if len(pairs) < self.min_pairs:
                    decided = False
                    continue
                ratio, lo, hi = paired_ratio([p[0] for p in pairs], [p[1] for p in pairs],
                                             higher_is_better=self.cmd.higher_is_better,
                                             seed=d.seed, level=d.level)
                dec = band_decision(lo, hi, floor)
                share = {"better": "gain", "worse": "loss", "equivalent": "none"}.get(dec, "unknown")
                shares[g] = AppShare(group=g, settings=groups[g], ratio=ratio, ci_low=lo,
                                     ci_high=hi, share=share, rounds=len(pairs))
                decided = decided and share != "unknown"
            if decided:
                break
        return list(shares.values())


def _where(verdict: str) -> str:
    return {"better": "above", "regression": "below", "no-difference": "inside"}.get(
        verdict, "across")


__all__ = ["Design", "Session", "CompareResult", "RUN_TIMEOUT_FACTOR", "RUN_TIMEOUT_MIN_S",
           "MAX_BASELINE_FAILURES"]
