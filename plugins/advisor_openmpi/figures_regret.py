"""The regret figure of the openmpi probe (issue 27; ``figures`` calls it): pure, no I/O.

Per measured message size, the regret of a path (a configuration of ``ompi-paths``) is 1 - its
score there as ``advisor_openmpi.decide`` scores it (its median over the best path's median, the
smaller of latency and bandwidth; ``decide.per_size_scores``), in percent.  Drawn with the
grammar of ``advisor.specs.regret``:

* the default path's regret as rings, the advice's as dots (a dot inside a ring where the
  advice keeps the default), the other paths as plain lines (what choosing them would cost);
* which path is best at each size, as shaded x ranges: a path named where it beats the advice
  beyond noise (``compare``'s CI against the A/A noise floor, the verdicts of the decision),
  elsewhere ``best: the advice (or within noise)``;
* a trade-off, shown as one: diamonds where another path beats the advice beyond noise, the
  worst regrets beyond noise as horizontal markers, and a note naming who wins there.
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Evidence
from advisor.specs.figures import FigureSeries, FigureSpec
from advisor.specs.regret import (best_bands, best_note, ceiling_markers, diamonds, label_runs,
                                  sizes_text, trade_off_note, verdict)

from advisor_openmpi.decide import Decision, per_size_scores, traffic_split


def _beaten_by(ev: Evidence, d: Decision) -> dict[int, set[str]]:
    """Per size (bytes): the paths better than the advice beyond noise there, on latency or
    bandwidth (the decision's verdicts against the baseline when the advice is the baseline,
    else ``traffic_split``'s against the advice)."""
    if d.advice == d.baseline:
        found = [v for vs in d.verdicts.values() for v in vs if v.verdict == "better"]
    else:
        found = [v for vs in traffic_split(ev, d).values() for v in vs]
    out: dict[int, set[str]] = {}
    for v in found:
        out.setdefault(v.nbytes, set()).add(v.config)
    return out


def _lost_sizes(d: Decision, config: str, beaten: dict[int, set[str]]) -> set[int]:
    """Sizes where ``config`` is worse than some path beyond noise, as far as the decision's
    verdicts tell: the advice's from ``beaten``, the baseline's (when not the advice) where
    another path beats it, another path's where it is worse than the baseline."""
    if config == d.advice:
        return set(beaten)
    if config == d.baseline:
        return {v.nbytes for vs in d.verdicts.values() for v in vs if v.verdict == "better"}
    return {v.nbytes for v in d.verdicts.get(config, []) if v.verdict == "worse"}


def regret_figure(ev: Evidence, d: Decision, labels: dict[str, str]) -> Optional[FigureSpec]:
    """The regret figure (module docstring) of ``ompi-paths`` evidence ``ev`` and its decision
    ``d``; ``labels``: display names of configurations (``default`` -> ``"default (ob1+sm)"``).
    None when the baseline has no scored size."""
    scores = per_size_scores(ev)
    if not scores.get(d.baseline):
        return None
    regret = {c: {n: 100.0 * (1.0 - s) for n, s in per.items()} for c, per in scores.items()}
    beaten = _beaten_by(ev, d)
    same = d.advice == d.baseline
    name = {c: labels.get(c, c) for c in scores}
    shown = [(d.baseline, "default", "ring", name[d.baseline]),
             (d.advice, "advised", "dot",
              "advice (keeps the default)" if same else f"advice ({name[d.advice]})")]
    series = [FigureSeries(label=name[c], evidence=ev.id, x=[float(n) for n in regret[c]],
                           y=list(regret[c].values()))
              for c in scores if c not in (d.baseline, d.advice)]
    series += [FigureSeries(label=label, role=role, marker=marker, evidence=ev.id,
                            x=[float(n) for n in regret[c]], y=list(regret[c].values()))
               for c, role, marker, label in shown]
    sizes = sorted(scores[d.baseline])

    def best(n: int) -> str:
        wins = [c for c in beaten.get(n, ()) if n in scores.get(c, {})]
        return (f"best: {name[max(wins, key=lambda c: scores[c][n])]}" if wins else
                "best: the advice (or within noise)")
    runs = label_runs([(n, best(n)) for n in sizes])
    notes, ceilings, last = [best_note(runs)], {}, []
    lost_any = {c: _lost_sizes(d, c, beaten) for c in scores}
    for c, role, _, label in shown:
        clause, bad = verdict("advice = default path" if same else label, regret[c],
                              {n: n in lost_any[c] for n in regret[c]})
        ceilings[role] = (max(regret[c].values()), bad)
        if role == "default":  # after the advice's lines (the terminal shows three notes)
            last = [] if same else [clause]
            continue
        lost = sorted(n for n in beaten if n in regret[c])
        winners = ", ".join(
            f"{name[w]} wins at {sizes_text(sizes, [w in beaten.get(n, ()) for n in sizes])}"
            for w in sorted({w for n in lost for w in beaten[n]}))
        # the verdicts show every path's losses against the baseline only: "no path wins
        # everywhere" is known when each loses somewhere, otherwise it is left unsaid (None)
        fine = [] if all(lost_any[x] for x in scores) else None
        notes += [clause, trade_off_note(bool(lost), fine, "path", winners)]
        if lost:  # under the rings and dots, which stay visible on the larger diamonds
            series.insert(len(series) - 2, diamonds(lost, regret[c], evidence=ev.id))
    notes += last
    return FigureSpec(
        id="regret", title="Regret per size: the default path, the advice and the best path",
        caption=(
            "Regret at each measured size: 1 - a path's median over the best path's median "
            "there (latency: best / own, bandwidth: own / best; the smaller of the two), the "
            f"medians pooled over the interleaved launches of {ev.id}, in percent; 0 = the best "
            "path. Rings: the default path; dots: the advice (a dot in a ring: the advice keeps "
            "the default); plain lines: the other paths. Shaded x ranges: which path is best "
            "there, named where it beats the advice beyond noise (95 % bootstrap CI of the "
            "ratio beyond the A/A noise floor of the launches). Diamonds: sizes where the "
            "advice is worse than a path beyond noise (a trade-off); horizontal markers: a "
            "worst regret beyond noise. The decision minimises the worst regret over sizes "
            "(minimax), keeping the default unless a path beats it beyond noise and loses "
            "nowhere."),
        x_label="message size", x_unit="bytes", y_label="regret", y_unit="%",
        x_scale="log", y_scale="linear", series=series, bands=best_bands(runs),
        markers=ceiling_markers(ceilings), notes=notes)
