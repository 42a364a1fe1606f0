"""``advisor verify --app`` records as text: the lines the CLI prints and ``show`` lists.

Pure functions of ``models.AppVerification``; the figure of both arms' runs is in
``advisor.report.collect`` (``app_figures``).
"""

from __future__ import annotations

import shlex
from statistics import median
from typing import Iterable, Optional

from advisor.models import AppVerification


def _fmt(value: Optional[float], unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f} s" if value < 100 else f"{value:.1f} s"
    return f"{value:.6g}"


def arm_values(rec: AppVerification, arm: str, phase: str = "compare") -> list[float]:
    """Values of the successful runs of ``arm`` in ``phase``, in run order."""
    return [r.value for r in rec.runs if r.arm == arm and r.phase == phase and r.value is not None]


def headline(rec: AppVerification) -> str:
    """``verdict ×ratio [lo, hi] (A/A ±f %)``: one cell for tables."""
    if rec.ratio is None:
        return rec.verdict
    floor = f", A/A ±{100 * rec.noise_floor:.1f} %" if rec.noise_floor is not None else ""
    return (f"{rec.verdict} ×{rec.ratio:.3f} [{rec.ci_low:.3f}, {rec.ci_high:.3f}]{floor}")


def lines(rec: AppVerification) -> list[str]:
    """The record in a few human lines: command, metric, verdict, arms' medians, the stop
    reason, the bisection and attribution (each setting with the plugin that advised it)."""
    out = [f"app-verify: {shlex.join(rec.command)}",
           f"  metric: {rec.metric} ({'higher' if rec.higher_is_better else 'lower'} is better)"
           + (f", read from {rec.metric_file}" if rec.metric_file else ""),
           f"  A: {'library defaults' if rec.against == 'defaults' else 'current environment'}"
           f"; B: {'advisor emit' if rec.environment == 'profile' else rec.environment} "
           f"({', '.join(f'{k}={v}' for k, v in sorted(rec.advised.items()))})"]
    for arm in ("A", "B"):
        vals = arm_values(rec, arm)
        failed = sum(1 for r in rec.runs if r.arm == arm and r.phase == "compare"
                     and r.value is None)
        if vals or failed:
            out.append(f"  {arm}: median {_fmt(median(vals) if vals else None, rec.unit)} over "
                       f"{len(vals)} runs" + (f", {failed} failed" if failed else ""))
    out.append(f"  verdict: {rec.verdict.upper()}: {rec.reason or ''}")
    if rec.stop:
        out.append(f"  stopped: {rec.stop}")
    if rec.bisection is not None:
        b = rec.bisection
        out.append(f"  finding app-breaks: the smallest set of settings that breaks it "
                   f"({b.tests} runs{'' if b.reproduced else ', NOT reproduced on a rerun'}):")
        for name in b.settings:
            out.append(f"    {name}={rec.advised.get(name, '?')}  advised by "
                       f"{'; '.join(b.sources.get(name, [])) or '?'}")
        out.append(f"    failure: {b.failure}")
    for share in rec.attribution:
        if share.ratio is None:
            out.append(f"  share of {share.group}: not measured (no rounds left)")
            continue
        what = {"gain": "carries gain", "loss": "carries loss", "none": "no measurable share",
                "unknown": "undecided"}[share.share]
        out.append(f"  share of {share.group} ({', '.join(share.settings)}): {what}: B / B "
                   f"without it ×{share.ratio:.3f} [{share.ci_low:.3f}, {share.ci_high:.3f}], "
                   f"{share.rounds} rounds")
    return out


def table_rows(records: Iterable[AppVerification]) -> list[tuple[str, ...]]:
    """Rows for ``show``: command, metric, verdict with ratio and CI, rounds, time."""
    return [(shlex.join(r.command), r.metric, headline(r), str(r.rounds), r.time)
            for r in records]


__all__ = ["arm_values", "headline", "lines", "table_rows"]
