"""The CMA threshold decided by minimax regret over paired on/off measurements (pure: no I/O).

Input (``advisor_mpich_cma.pairs.Paired``): per rank pair and message size, CMA-on and CMA-off results taken in pairs
(index ``r`` of ``lat_on``/``lat_off``/``bw_on``/``bw_off`` come from adjacent batches of one
launch in the ``paired`` worker mode, or from the two launches of one interleave round of the
separate-launch sweep).  Latencies in seconds, bandwidths in bytes/s.

Rule (DESIGN.md "Advice (what makes it trustworthy)"):

* Per size the on/off ratio is the median over pairs of the per-pair ratio, oriented so > 1 means
  CMA is better (bandwidth on/off, latency off/on); taking it per adjacent pair cancels the
  machine's fast/slow state, which moves both members of a pair alike.
* A candidate is a threshold ``T`` (sizes >= T use CMA, smaller ones the copy path): the library
  default, CMA off (``T = None``) and every measured size.  At a size, a candidate that uses CMA
  scores ``min(1, ratio)``, one that does not ``min(1, 1/ratio)`` (its performance over the best
  of the two paths: 1 = best); its score at the size is the smaller of latency and bandwidth, and
  its worst ratio the smallest over sizes and rank pairs (regret = 1 - worst ratio).
* ``best`` is the candidate with the highest worst ratio (exact ties: the default, then the
  smaller threshold).  The **tie band** is every candidate within noise of it: the 95 %
  percentile-bootstrap CI (pairs resampled per size) of ``worst(best) - worst(c)`` reaches 0.
  The advice is the tie's member nearest the library default (fewest measured sizes routed
  differently from it; then the higher worst ratio): the default itself whenever it is in the
  band (``kept_default``), so the default is kept when it is within noise of the best.
* Launches: rounds may come from several launches (``Paired.lat_launch``/``bw_launch``; the
  probe measures at least two, issue 25).  Each launch is a column of its own, so the worst
  ratio is the minimax over sizes, rank pairs *and* launches: advice must hold in every
  machine state a launch met.  The bootstrap resamples launches (with replacement) as well as
  the rounds inside each, so the tie band and the stability carry what changes between
  launches, which the rounds of one launch cannot show.
* Stability: the share of ``N_STABILITY`` bootstrap resamples whose decision equals the advice,
  each resample decided by the whole rule, its tie band by a CI of its own (a nested bootstrap
  over launches and rounds: ``advisor_mpich_cma.rerun``), as a probe measured again would
  decide.  (It used one tolerance, the CI half-width found on the full data, for every
  resample: on the 2-core VM a default kept because one launch of six carried the gap read
  0.36, and a 16 KiB advice that two launches barely carried 0.82, where other probes of the
  same hour kept the default.)
* An unstable change is withheld: where the advice is not the default, fewer than
  ``advisor.measure.STABLE_SHARE`` of the resamples choose it and fewer than that change the
  default at all, the default is advised instead, the change named beside
  (``Decision.withheld``), and the stability is the default's share.
* A loss no threshold can fix (the advice measurably below the best at a size: the bootstrap CI
  of its ratio there ends below 1, e.g. CMA losing at the largest sizes where MPICH has no upper
  CMA threshold) is reported as ``losses``, not a reason to give no advice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from advisor.measure import STABLE_SHARE

from advisor_mpich_cma.pairs import Paired
from advisor_mpich_cma.rerun import rerun_picks

#: Resamples of the stability and noise bootstrap.  200 is what the decision can afford in
#: ``recommend`` (milliseconds per resample set); Efron & Tibshirani (1993, ch. 6) give 25-200
#: resamples as enough for a standard error, which is the use here (a share, not a tail quantile).
N_STABILITY = 200
#: Two-sided level of the CI of the improvement and of the per-size ratios.
LEVEL = 0.95
#: Seed of every resampling (fixed: recommend is a pure function).
SEED = 0

OFF = None  # the candidate "CMA off" (no size uses CMA)


@dataclass(frozen=True)
class Decision:
    """Result of ``decide``.

    Attributes:
        advice: chosen threshold in bytes (None: CMA off everywhere).
        default: the library default as a candidate (None: CMA off by default).
        kept_default: the advice is the default (it is the best, or within noise of it).
        best: the candidate with the highest worst ratio (== advice unless the tie band holds a
            member nearer the default).
        tie: the tie band (candidates within noise of ``best``), nearest the default first.
        ratios: ``(pair, bytes) -> (latency off/on, bandwidth on/off)`` median per-pair ratios
            (> 1: CMA better), the input of the scores; for per-traffic-kind winners.
        worst: candidate -> worst ratio over sizes and pairs (1 - regret), full data.
        per_size_default, per_size_advice: ``(pair, bytes) -> ratio`` to the per-size best.
        improvement_ci: 95 % CI of ``worst(best) - worst(default)``.
        stability: share of resamples giving the same advice (0..1).
        losses: ``(pair, bytes, ratio, ci_high)`` where the advice is measurably below the best.
        pairs: number of paired rounds per size (smallest over sizes, pairs and launches).
        launches: launches (repeats) the decision resampled (1: rounds alone).
        one_state: the launches met one state of a two-state copy path: every candidate tied.
        withheld: ``(threshold, share)`` of a change the rule chose but fewer than
            ``advisor.measure.STABLE_SHARE`` of the resamples change the default at all
            (``share``: those that do): not advised, the default is (``stability`` is then
            the default's share of the resamples); None otherwise.
    """

    advice: Optional[int]
    default: Optional[int]
    kept_default: bool
    best: Optional[int]
    worst: Mapping[Optional[int], float]
    per_size_default: Mapping[tuple[str, int], float]
    per_size_advice: Mapping[tuple[str, int], float]
    improvement_ci: tuple[float, float]
    stability: float
    losses: tuple[tuple[str, int, float, float], ...] = field(default_factory=tuple)
    pairs: int = 0
    tie: tuple[Optional[int], ...] = field(default_factory=tuple)
    ratios: Mapping[tuple[str, int], tuple[float, float]] = field(default_factory=dict)
    launches: int = 1
    one_state: bool = False
    withheld: Optional[tuple[Optional[int], float]] = None

    @property
    def regret_default(self) -> float:
        return 1.0 - self.worst[self.default]

    @property
    def regret_advice(self) -> float:
        return 1.0 - self.worst[self.advice]

    def as_values(self) -> dict:
        """Flat ``Evidence.values`` (str -> scalar): thresholds in bytes (-1: CMA off), worst
        ratios, regrets, stability and per-size ratios ``ratio_default:<pair>:<bytes>`` /
        ``ratio_advice:<pair>:<bytes>`` (performance over the per-size best, 1 = best)."""
        def thr(t):
            return -1 if t is None else int(t)

        v: dict = {"advice_threshold_bytes": thr(self.advice),
                   "default_threshold_bytes": thr(self.default),
                   "kept_default": self.kept_default, "best_threshold_bytes": thr(self.best),
                   "worst_ratio_default": self.worst[self.default],
                   "worst_ratio_advice": self.worst[self.advice],
                   "regret_default": self.regret_default, "regret_advice": self.regret_advice,
                   "improvement_ci_low": self.improvement_ci[0],
                   "improvement_ci_high": self.improvement_ci[1],
                   "stability": self.stability, "stability_resamples": N_STABILITY,
                   "paired_rounds": self.pairs, "unfixable_losses": len(self.losses),
                   "launches": self.launches, "one_state": self.one_state,
                   "tie_band_bytes": ",".join(str(thr(t)) for t in self.tie)}
        if self.withheld is not None:
            v["withheld_threshold_bytes"] = thr(self.withheld[0])
            v["withheld_change_share"] = self.withheld[1]
        for (pair, n), r in sorted(self.per_size_default.items()):
            v[f"ratio_default:{pair or 'default'}:{n}"] = r
        for (pair, n), r in sorted(self.per_size_advice.items()):
            v[f"ratio_advice:{pair or 'default'}:{n}"] = r
        return v


def candidates(data: Sequence[Paired], default: Optional[int]) -> list[Optional[int]]:
    """Distinct candidates, default first, then measured sizes ascending, then CMA off.
    Two thresholds are the same candidate when they send every measured size the same way."""
    sizes = sorted({n for p in data for n in p.sizes})
    out: list[Optional[int]] = []
    seen = set()
    for t in [default, *sizes, OFF]:
        sig = tuple(t is not None and n >= t for n in sizes)
        if sig not in seen:
            seen.add(sig)
            out.append(t)
    return out


def _scores(cands: Sequence[Optional[int]], sizes: Sequence[int], lat, bw):
    """``(candidates, sizes)`` matrix of ratios to the per-size best; ``lat``/``bw`` arrays of
    per-size on/off ratios (> 1: CMA better), shape (sizes,) or (resamples, sizes)."""
    import numpy as np

    lat, bw = np.asarray(lat, float), np.asarray(bw, float)
    use = np.array([[t is not None and n >= t for n in sizes] for t in cands])  # (C, S)
    on = np.minimum(np.minimum(1.0, lat), np.minimum(1.0, bw))        # (..., S)
    off = np.minimum(np.minimum(1.0, 1 / lat), np.minimum(1.0, 1 / bw))
    return np.where(use, on[..., None, :], off[..., None, :])          # (..., C, S)


def _launch_columns(data: Sequence[Paired]) -> list:
    """One column per rank pair, size and launch: ``(pair, bytes, launch, latency ratios,
    bandwidth ratios)`` (numpy arrays of the per-pair ratios, > 1: CMA better); sizes with no
    valid pair in a launch are left out."""
    import numpy as np

    cols = []
    for p in data:
        launches = p.launches()
        for j, n in enumerate(p.sizes):
            for launch in launches:
                lat, bw = p.launch_ratios(j, launch)
                if lat and bw:
                    cols.append((p.name, int(n), launch, np.asarray(lat), np.asarray(bw)))
    return cols


def _resampled(cols, n_boot: int, rng):
    """``(latency, bandwidth)`` arrays of shape (n_boot, columns): the median of each column's
    per-pair ratios over ``n_boot`` resamples of its rounds (with replacement)."""
    import numpy as np

    blat = np.empty((n_boot, len(cols)))
    bbw = np.empty((n_boot, len(cols)))
    for j, (_, _, _, lr, br) in enumerate(cols):
        idx = rng.integers(0, lr.size, size=(n_boot, lr.size))
        blat[:, j] = np.median(lr[idx], axis=1)
        idx = rng.integers(0, br.size, size=(n_boot, br.size))
        bbw[:, j] = np.median(br[idx], axis=1)
    return blat, bbw


def per_size_scores(data: Sequence[Paired], thresholds: Sequence[Optional[int]]
                    ) -> dict[Optional[int], dict[tuple[str, int], float]]:
    """Per threshold (bytes, None: CMA off) and ``(pair, bytes)``: its performance over the
    per-size best of CMA on/off (1 = best; regret = 1 - score), scored exactly as ``decide``
    scores its candidates (median of the per-pair ratios of each launch, the smaller of latency
    and bandwidth, the worst launch).  Sizes with no valid pair are left out.  For figures of
    any threshold, not only the advice."""
    return {t: {k: r for k, (r, _, _) in per.items()}
            for t, per in per_size_bounds(data, thresholds, n_boot=0).items()}


def per_size_bounds(data: Sequence[Paired], thresholds: Sequence[Optional[int]], *,
                    n_boot: int = N_STABILITY, seed: int = SEED, level: float = LEVEL
                    ) -> dict[Optional[int], dict[tuple[str, int], tuple[float, float, float]]]:
    """``per_size_scores`` with the noise test of ``decide``'s losses: per threshold and
    ``(pair, bytes)``, ``(score, low, high)``: the score and its 95 % percentile-bootstrap CI at
    the launch where it scores worst (the rounds resampled as ``decide`` resamples them, same
    seed, so the advice's ``high`` is the one of ``Decision.losses``).  ``high`` below 1: worse
    than the per-size best beyond noise.  ``n_boot=0``: no resampling, ``low = high = score``."""
    import numpy as np

    cols = _launch_columns(data)
    if not cols:
        return {t: {} for t in thresholds}
    sizes = [c[1] for c in cols]
    full = _scores(list(thresholds), sizes, [float(np.median(c[3])) for c in cols],
                   [float(np.median(c[4])) for c in cols])               # (T, S)
    low = high = full
    if n_boot:
        rng = np.random.Generator(np.random.PCG64(seed))
        alpha = (1 - level) / 2
        low, high = np.quantile(_scores(list(thresholds), sizes, *_resampled(cols, n_boot, rng)),
                                [alpha, 1 - alpha], axis=0)               # (T, S) each
    out: dict[Optional[int], dict[tuple[str, int], tuple[float, float, float]]] = {}
    for i, t in enumerate(thresholds):
        per: dict[tuple[str, int], tuple[float, float, float]] = {}
        for j, c in enumerate(cols):
            k = (c[0], c[1])
            if k not in per or full[i, j] < per[k][0]:
                per[k] = (float(full[i, j]), float(low[i, j]), float(high[i, j]))
        out[t] = per
    return out


def _pick(worst) -> int:
    """Index of the highest worst ratio; ties go to the default (index 0), then smaller T."""
    import numpy as np

    return int(np.argmax(worst))  # argmax takes the first maximum: default, then ascending


def decide(data: Sequence[Paired], default: Optional[int], *, n_boot: int = N_STABILITY,
           seed: int = SEED, level: float = LEVEL, one_state: bool = False,
           withhold_unstable: bool = True) -> Decision:
    """The minimax-regret threshold with its noise test and stability (see module docstring).

    :param data: paired results of each rank pair (sizes with no valid pair are skipped).
    :param default: the library default threshold in bytes, or None when CMA is off by default.
    :param one_state: every launch met one state of a copy path known to switch between two
        (``advisor_mpich_cma.sequential.machine_states``): what the other state does is unmeasured,
        so every candidate ties and the advice is the default (``Decision.one_state``).
    :param withhold_unstable: an unstable change (fewer than ``advisor.measure.STABLE_SHARE``
        of the resamples choose it) that fewer than ``STABLE_SHARE`` of the resamples make at
        all (choosing any threshold but the default) is not advised: the default is, with the
        change in ``Decision.withheld`` (advice that flips between changing the default and
        keeping it from one probe to the next is a defect, DESIGN.md; the openmpi and
        host-buffer probes withhold theirs alike).  A change whose value alone is unstable
        (resamples choose 64 or 128 KiB, both beating the default beyond noise) stays, at its
        low stability.  False: the rule's choice as it is (each buffer kind's own answer).
    :raises ValueError: no size with paired results.
    """
    import numpy as np

    cols = _launch_columns(data)  # (pair, size, launch, lat/bw pair ratios): one per launch
    pooled: dict[tuple[str, int], tuple[float, float]] = {}
    for p in data:
        for j, n in enumerate(p.sizes):
            lat, bw = p.pair_ratios(j)
            if lat and bw:
                pooled[(p.name, int(n))] = (float(np.median(lat)), float(np.median(bw)))
    if not cols:
        raise ValueError("no message size has paired on/off results")
    cands = candidates(data, default)
    sizes = [c[1] for c in cols]
    lat = np.array([np.median(c[3]) for c in cols])
    bw = np.array([np.median(c[4]) for c in cols])
    full = _scores(cands, sizes, lat, bw)            # (C, S): S columns = (pair, size, launch)
    worst = full.min(axis=1)                         # minimax over sizes, pairs and launches
    b = _pick(worst)
    rng = np.random.Generator(np.random.PCG64(seed))
    blat, bbw = _resampled(cols, n_boot, rng)
    boot = _scores(cands, sizes, blat, bbw)          # (B, C, S)
    launch_ids = list(dict.fromkeys(c[2] for c in cols))
    col_launch = np.array([launch_ids.index(c[2]) for c in cols])
    # a size one launch alone measured (later launches re-measure only the decisive sizes,
    # ``paired.run_paired``) stays in every resample: dropping it would drop the size
    seen: dict[tuple[str, int], int] = {}
    for c in cols:
        seen[(c[0], c[1])] = seen.get((c[0], c[1]), 0) + 1
    always = np.array([seen[(c[0], c[1])] == 1 for c in cols]) if len(launch_ids) > 1 else \
        np.zeros(len(cols), bool)
    if len(launch_ids) > 1:
        # launches resampled too (a cluster bootstrap): each resample draws as many launches
        # as were measured, with replacement, and keeps the columns of the drawn ones, so the
        # stability and the tie band carry what changes from one launch to the next
        drawn = rng.integers(0, len(launch_ids), size=(n_boot, len(launch_ids)))
        keep = (drawn[:, :, None] == col_launch[None, None, :]).any(axis=1)   # (B, S)
        keep |= always[None, :]
        bworst = np.where(keep[:, None, :], boot, np.inf).min(axis=2)         # (B, C)
    else:
        drawn = np.zeros((n_boot, 1), dtype=int)
        bworst = boot.min(axis=2)                    # (B, C)
    alpha = (1 - level) / 2
    # CI of worst(best) - worst(c) for every candidate c; c ties with best when it reaches 0
    gap_lo, gap_hi = np.quantile(bworst[:, [b]] - bworst, [alpha, 1 - alpha], axis=0)
    lo, hi = float(gap_lo[0]), float(gap_hi[0])   # the improvement over the default
    in_tie = [c for c in range(len(cands)) if c == b or gap_lo[c] <= 0.0 or one_state]
    grid = sorted(set(sizes))
    use = [[t is not None and n >= t for n in grid] for t in cands]
    dist = [sum(u != d for u, d in zip(row, use[0])) for row in use]  # sizes routed unlike default

    def nearest(members, w) -> int:
        return min(members, key=lambda c: (dist[c], -w[c], c))

    chosen = nearest(in_tie, worst)
    tie = tuple(cands[c] for c in sorted(in_tie, key=lambda c: (dist[c], -worst[c], c)))
    # stability: the whole rule (best, tie band by its own CI, nearest the default) taken
    # again on every resample, as a probe measured again would take it (``rerun.rerun_picks``)
    picks = rerun_picks(boot, full, col_launch, always, drawn, bworst, dist, alpha,
                         one_state, rng)
    stability = float(np.mean(np.asarray(picks) == chosen))
    withheld = None
    change = float(np.mean(np.asarray(picks) != 0))  # resamples that change the default at all
    if withhold_unstable and chosen != 0 and stability < STABLE_SHARE and change < STABLE_SHARE:
        withheld = (cands[chosen], change)
        chosen = 0
        stability = float(np.mean(np.asarray(picks) == chosen))
    # per (pair, size): the launch where a candidate scores worst (what the minimax saw), and
    # the losses of the advice no threshold fixes: its ratio's CI there ends below 1
    worst_col: dict[tuple[str, int], int] = {}
    for j, c in enumerate(cols):
        k = (c[0], c[1])
        if k not in worst_col or full[chosen, j] < full[chosen, worst_col[k]]:
            worst_col[k] = j
    losses = []
    for (pair, n), j in sorted(worst_col.items()):
        r = float(full[chosen, j])
        r_hi = float(np.quantile(boot[:, chosen, j], 1 - alpha))
        if r_hi < 1.0:
            losses.append((pair, n, r, r_hi))

    def per_size(c: int) -> dict[tuple[str, int], float]:
        out: dict[tuple[str, int], float] = {}
        for j, col in enumerate(cols):
            k = (col[0], col[1])
            out[k] = min(out.get(k, 1.0), float(full[c, j]))
        return out

    return Decision(
        advice=cands[chosen], default=default, kept_default=chosen == 0, best=cands[b],
        worst={t: float(w) for t, w in zip(cands, worst)},
        per_size_default=per_size(0), per_size_advice=per_size(chosen),
        improvement_ci=(lo, hi), stability=stability, losses=tuple(losses),
        pairs=int(min(min(c[3].size, c[4].size) for c in cols)), tie=tie, ratios=pooled,
        launches=len(launch_ids), one_state=one_state, withheld=withheld)
