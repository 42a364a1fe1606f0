"""The regret figure of the mpich-cma probe (issue 27; ``figures`` calls it): pure, no I/O.

Per measured message size, the regret of a threshold is 1 - its performance over the better of
CMA on and off at that size (``minimax.per_size_bounds``, the scoring of the decision itself:
the smaller of the latency and bandwidth ratios, the worst over buffer kinds, rank pairs and
launches), in percent.  The figure is built so the decision reads at every size:

* the default's regret (rings) and the advice's (dots): where they are equal the dot sits inside
  the ring, so neither hides the other;
* which path is best at each size: shaded x ranges ``best: CMA off`` / ``best: CMA on`` (``CMA
  on ≈ off`` where the loser is within noise of the winner), split halfway (geometrically)
  between neighbouring measured sizes;
* the noise: the 95 % bootstrap CI of each regret, shaded around its line (a CI reaching 0:
  within noise of the best);
* what is at stake: the regret of the other path at each size (grey), the cost of routing that
  size the wrong way;
* a trade-off, shown as one: the sizes where the advice is worse than the best beyond noise
  (the upper end of its score's CI below 1, ``Decision.losses``' test) are diamonds, and a note
  says whether any threshold is within noise of the best at every size; without such sizes the
  note says the advice is within noise everywhere (no trade-off);
* the default and the advised threshold as vertical markers (one when they are equal).
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Evidence
from advisor.specs.figures import FigureMarker, FigureSeries, FigureSpec
from advisor.specs.regret import (best_bands, best_note, ceiling_markers, diamonds, label_runs,
                                  trade_off_note, verdict)
from advisor.specs.units import format_bytes

from advisor_mpich_cma import minimax
from advisor_mpich_cma.pairs import paired_from_evidence

#: Threshold that sends every size through CMA (the ``cma-on`` path).
EVERY_SIZE = 0

Bound = tuple[float, float, float]  # (score, CI low, CI high): performance over the best, 1 = best


def _per_size(per: dict[tuple[str, int], Bound]) -> dict[int, Bound]:
    """Per size (bytes): the bound of the rank pair (or buffer kind) scoring worst there."""
    out: dict[int, Bound] = {}
    for (_, n), b in per.items():
        if n not in out or b[0] < out[n][0]:
            out[n] = b
    return dict(sorted(out.items()))


def _beyond_noise(b: Bound) -> bool:
    """Worse than the per-size best beyond noise: the CI of the score ends below 1."""
    return b[2] < 1.0


def _best_runs(on: dict[int, Bound], off: dict[int, Bound]) -> list[tuple[str, list[int]]]:
    """Runs of consecutive measured sizes with the same best path: ``("best: CMA on", sizes)``,
    ``"best: CMA off"``, or ``"CMA on ≈ off (within noise)"`` where the losing path's score is
    within noise of the winner's."""
    def name(n: int) -> str:
        loser = min(on[n], off[n], key=lambda b: b[0])
        return ("CMA on ≈ off (within noise)" if not _beyond_noise(loser) else
                "best: CMA on" if on[n][0] > off[n][0] else "best: CMA off")
    return label_runs([(n, name(n)) for n in on if n in off])


def _other_path(on: dict[int, Bound], off: dict[int, Bound]) -> dict[int, float]:
    """Per size: the regret (fraction) of the path that is not the best there, what routing
    that size the wrong way costs (the larger of CMA on's and CMA off's regret)."""
    return {n: 1.0 - min(on[n][0], off[n][0]) for n in on if n in off}


def thr_text(t: Optional[int]) -> str:
    """``"8 KiB"``, or ``"CMA off"`` for the candidate None."""
    return "CMA off" if t is None else "CMA at every size" if t == EVERY_SIZE else format_bytes(t)


def _regret_series(label: str, role: str, marker: str, per: dict[int, Bound],
                   ids: str) -> FigureSeries:
    """A candidate's regret per size (percent) with its CI (regret = 1 - score, so the CI is
    1 - the score's CI, reversed); no CI where it has no width anywhere (nothing to shade)."""
    y = [100.0 * (1.0 - b[0]) for b in per.values()]
    lo = [100.0 * (1.0 - b[2]) for b in per.values()]
    hi = [100.0 * (1.0 - b[1]) for b in per.values()]
    wide = any(h > lw for lw, h in zip(lo, hi))
    return FigureSeries(label=label, role=role, marker=marker, evidence=ids,
                        x=[float(n) for n in per], y=y, lo=lo if wide else None,
                        hi=hi if wide else None)


def _markers(default: Optional[int], advised: tuple[bool, Optional[int]],
             ceilings: dict[str, tuple[float, bool]]) -> list[FigureMarker]:
    """The default and advised thresholds (x; one marker when equal), and each candidate's
    worst regret (y, percent) where it is beyond noise: the ceilings the minimax compares."""
    out = []
    adv = advised[1] if advised[0] else None
    if default is not None and default == adv:
        out.append(FigureMarker(axis="x", value=float(default), role="advised",
                                label="threshold: advice = default"))
    else:
        if default is not None:
            out.append(FigureMarker(axis="x", value=float(default), role="default",
                                    label="default threshold"))
        if adv is not None:
            out.append(FigureMarker(axis="x", value=float(adv), role="advised",
                                    label="advised threshold"))
    return out + ceiling_markers(ceilings)


def regret_figure(evs: list[Evidence], default: Optional[int],
                  advised: tuple[bool, Optional[int]], name: str,
                  fig_id: str = "regret") -> Optional[FigureSpec]:
    """The regret figure (module docstring) of the deciding evidence ``evs``; ``default``: the
    library default as a candidate (None: CMA off), ``advised``: ``(advised?, threshold or None
    for CMA off)``, ``name``: the threshold variable.  None when no size has paired results."""
    data = [paired_from_evidence(e) for e in evs]
    cands = list(dict.fromkeys([default, *([advised[1]] if advised[0] else []), EVERY_SIZE,
                                minimax.OFF, *minimax.candidates(data, default)]))
    raw = minimax.per_size_bounds(data, cands)
    bounds = {t: _per_size(per) for t, per in raw.items()}
    if not bounds[default]:
        return None
    ids = ",".join(e.id for e in evs)
    same = advised[0] and advised[1] == default
    shown = [(f"default ({thr_text(default)})", default, "default", "ring")]
    if advised[0]:
        shown.append((f"advice ({thr_text(advised[1])})", advised[1], "advised", "dot"))
    other = _other_path(bounds[EVERY_SIZE], bounds[minimax.OFF])
    series = [FigureSeries(label="the other path", role="reference", evidence=ids,
                           x=[float(n) for n in other], y=[100.0 * r for r in other.values()])]
    series += [_regret_series(label, role, marker, bounds[t], ids)
               for label, t, role, marker in shown]
    runs = _best_runs(bounds[EVERY_SIZE], bounds[minimax.OFF])
    notes, ceilings, last = [best_note(runs)], {}, []
    for label, t, role, _ in shown:
        regret = {n: 100.0 * (1.0 - b[0]) for n, b in bounds[t].items()}
        clause, bad = verdict(f"default = advice ({thr_text(t)})" if same else label, regret,
                              {n: _beyond_noise(b) for n, b in bounds[t].items()})
        ceilings[role] = (max(regret.values()), bad)
        if role == "default":  # after the advice's lines (the terminal shows three notes)
            last = [] if same else [clause]
            continue
        fine = [thr_text(c) for c in cands
                if not any(_beyond_noise(b) for b in bounds[c].values())]
        notes += [clause, trade_off_note(bad, fine, "threshold")]
        lost = [n for n, b in bounds[t].items() if _beyond_noise(b)]
        if lost:  # under the rings and dots, which stay visible on the larger diamonds
            series.insert(1, diamonds(lost, regret, evidence=ids))
    notes += last
    if not advised[0]:
        notes.append("no CMA threshold advice from this evidence")
    kinds = sorted({p or "base" for p, _ in raw[default]})
    rounds = ("each an adjacent CMA-on/off batch pair of one launch"
              if all(e.values.get("paired") for e in evs) else
              "each one CMA-on and one CMA-off launch")
    return FigureSpec(
        id=fig_id, title="Regret per size: the default, the advice and the best path",
        caption=(
            "Regret at each measured size: 1 - performance over the better of CMA on and off at "
            "that size (the smaller of the latency and bandwidth ratios, median over the rounds "
            f"of each launch of {ids}: {rounds}), the worst over the buffer kinds "
            f"({', '.join(kinds)}), rank pairs and launches, in percent; 0 = the best path. "
            "Rings: the default; dots: the advice (a dot in a ring: both equal); shaded around "
            "them: the 95 % bootstrap CI of the regret (rounds resampled; reaching 0: within "
            "noise). Shaded x ranges: which path is best at those sizes; grey: the regret of "
            "the other path there, what routing the size the wrong way costs. Diamonds: sizes "
            "where the advice is worse than the best beyond noise (a trade-off). Vertical "
            f"markers: the {name} of the default and of the advice; horizontal: a worst regret "
            "beyond noise. The decision minimises the worst regret over sizes (minimax)."),
        x_label="message size", x_unit="bytes", y_label="regret", y_unit="%",
        x_scale="log", y_scale="linear", series=series, bands=best_bands(runs),
        markers=_markers(default, advised, ceilings), notes=notes)
