"""Interleaved A/B runs in independent processes.

Drift (thermal state, other jobs, page cache) moves results between runs: on this project's
build machine OSU's CMA-off bandwidth varied 2-3.5x between identical runs.  Running the
configurations in rounds (A B A B ...) spreads drift over all of them, and running each in a
fresh process (``run_one`` calls ``run_python`` / ``run_mpi``) samples the process-level
variance that in-process repeats hide.

When repeats of one configuration disagree (max/min of their medians above
``disagree_factor``), extra rounds are run while the deadline and ``max_extra_rounds`` allow.
The default factor 1.10 is pyperf's instability threshold: pyperf warns that a benchmark "seems
to be unstable" when its standard deviation exceeds 10 % of the mean (pyperf ``_cli.py``,
``format_checks``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Hashable, Optional, Sequence, Union

from advisor.measure.stats import Comparison, compare, noise_floor_from_aa

#: Repeats of one configuration that differ by more than this factor trigger extra rounds.
DISAGREE_FACTOR = 1.10
#: The stability policy of every advising probe (DESIGN.md "Advice that flips on noise is a
#: defect"): the share of resamples (launches and rounds) whose decision equals the advice
#: must reach this before the advice is called stable; below it a probe measures more while
#: its budget allows, then says "confidence low".  A chosen policy: advice that changes in
#: more than one of five resamples of the same evidence flips on noise.
STABLE_SHARE = 0.8

RunResult = Union[float, Sequence[float]]


@dataclass
class InterleaveResult:
    """Runs of every configuration, in the order they were taken.

    Attributes:
        runs: configuration -> list of runs; each run is a list of samples.
        order: (configuration, round) in execution order.
        rounds: rounds completed (a round runs every configuration once).
        extra_rounds: rounds added because repeats disagreed.
        disagreement: configuration -> max/min of its run medians (1.0 for a single run).
        truncated: the deadline stopped the planned rounds.
    """

    runs: dict[Hashable, list[list[float]]]
    order: list[tuple[Hashable, int]] = field(default_factory=list)
    rounds: int = 0
    extra_rounds: int = 0
    disagreement: dict[Hashable, float] = field(default_factory=dict)
    truncated: bool = False

    def pooled(self, config: Hashable) -> list[float]:
        """All samples of ``config`` across its runs."""
        return [v for run in self.runs[config] for v in run]

    def run_medians(self, config: Hashable) -> list[float]:
        """Median of each run of ``config``."""
        import numpy as np

        return [float(np.median(r)) for r in self.runs[config] if len(r)]

    def noise_floor(self, config: Hashable) -> float:
        """A/A noise floor from the repeats of ``config`` (``noise_floor_from_aa``)."""
        return noise_floor_from_aa(self.run_medians(config))

    def compare(self, a: Hashable, b: Hashable, *, higher_is_better: bool = False,
                noise_floor: Optional[float] = None, seed: int = 0) -> Comparison:
        """``compare`` on the pooled samples; the noise floor defaults to the larger A/A floor
        measured from the repeats of ``a`` and ``b``."""
        if noise_floor is None:
            noise_floor = max(self.noise_floor(a), self.noise_floor(b))
        return compare(self.pooled(a), self.pooled(b), noise_floor=noise_floor,
                       higher_is_better=higher_is_better, seed=seed)


def _as_run(value: RunResult) -> list[float]:
    if isinstance(value, (int, float)):
        return [float(value)]
    return [float(v) for v in value]


def interleave(configs: Sequence[Hashable], run_one: Callable[[Hashable, int], RunResult], *,
               repeats: int = 3, deadline: Optional[float] = None,
               disagree_factor: float = DISAGREE_FACTOR, max_extra_rounds: int = 2,
               progress: Optional[Callable[[str, Optional[float]], None]] = None
               ) -> InterleaveResult:
    """Run every configuration ``repeats`` times in rounds: A B A B ...

    Args:
        configs: configuration keys (labels, or hashable settings tuples); at least one.
        run_one: ``run_one(config, round) -> samples`` (a list of floats, or one float); it
            should start an independent process (``run_python`` / ``run_mpi``).
        repeats: planned rounds (>= 1).
        deadline: ``time.monotonic()`` value; a round starts only when the mean duration of the
            rounds so far says it ends before the deadline (the first round always runs).  A
            round that starts is finished, so every configuration has the same number of runs.
        disagree_factor: repeats of a configuration whose medians differ by more than this
            factor (max/min) trigger extra rounds.
        max_extra_rounds: bound on extra rounds.
        progress: ``progress(message, fraction)`` callback (``MeasureContext.progress``).

    Returns:
        ``InterleaveResult``.

    Raises:
        ValueError: no configurations, ``repeats`` < 1 or ``disagree_factor`` < 1.
        Exception: whatever ``run_one`` raises (e.g. ``LaunchError``) propagates.
    """
    if not configs:
        raise ValueError("interleave needs at least one configuration")
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if disagree_factor < 1:
        raise ValueError("disagree_factor must be >= 1")
    result = InterleaveResult(runs={c: [] for c in configs})
    planned = repeats
    rnd = 0
    round_s = 0.0  # total seconds of the rounds run so far

    def spread(c: Hashable) -> float:
        meds = [m for m in result.run_medians(c) if m > 0]
        return max(meds) / min(meds) if len(meds) > 1 else 1.0

    while True:
        if rnd >= planned:
            disagree = [c for c in configs if spread(c) > disagree_factor]
            if disagree and result.extra_rounds < max_extra_rounds:
                planned += 1
                result.extra_rounds += 1
            else:
                break
        if rnd > 0 and deadline is not None and (
                time.monotonic() + round_s / rnd > deadline):
            # the next round would not end before the deadline (mean round time so far)
            result.truncated = rnd < planned
            break
        t_round = time.monotonic()
        for i, c in enumerate(configs):
            if progress is not None:
                frac = (rnd * len(configs) + i) / (planned * len(configs))
                progress(f"round {rnd + 1}/{planned}: {c}", min(1.0, frac))
            result.runs[c].append(_as_run(run_one(c, rnd)))
            result.order.append((c, rnd))
        round_s += time.monotonic() - t_round
        rnd += 1
    result.rounds = rnd
    result.disagreement = {c: spread(c) for c in configs}
    return result


#: Resamples of ``resample_stability`` (a share, not a tail quantile: Efron & Tibshirani (1993,
#: ch. 6) give 25-200 as enough for a standard error).
N_RESAMPLES = 200


def resample_stability(decide: Callable[[Sequence[int]], Hashable], rounds: int, *,
                       n: int = N_RESAMPLES, seed: int = 0) -> Optional[float]:
    """The stability of a decision taken on interleaved rounds: the share of ``n`` resamples of
    the rounds (``rounds`` indices drawn with replacement, the same draw for every
    configuration, since one round runs each once) for which ``decide(indices)`` equals
    ``decide(range(rounds))``, the decision on all of them (0..1, compared with
    ``STABLE_SHARE``).  None with fewer than 2 rounds (nothing to resample).

    :param decide: indices of the rounds to pool -> the decision (any hashable label).
    :raises ValueError: ``n`` < 1.
    """
    import numpy as np

    if n < 1:
        raise ValueError("n must be >= 1")
    if rounds < 2:
        return None
    full = decide(list(range(rounds)))
    draws = np.random.Generator(np.random.PCG64(seed)).integers(0, rounds, size=(n, rounds))
    return sum(decide([int(i) for i in d]) == full for d in draws) / n
