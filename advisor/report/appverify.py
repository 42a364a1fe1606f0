"""``advisor verify --app`` records as text: the lines the CLI prints and ``show`` lists.

Pure functions of ``models.AppVerification``; the figure of both arms' runs is in
``advisor.report.appfigure`` (gathered by ``advisor.report.collect``).
"""

from __future__ import annotations

import re
import shlex
from statistics import median
from typing import Iterable, Optional

from advisor.models_app import AppVerification


def _fmt(value: Optional[float], unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f} s" if value < 100 else f"{value:.1f} s"
    return f"{value:.6g}"


#: Characters a word may hold and still be written inside double quotes as it is.
_PLAIN_IN_DOUBLE_QUOTES = re.compile(r'^[^"$`\\!]*$')


def command_text(argv: list[str]) -> str:
    """The command as a person writes it: a word with spaces in double quotes when that needs no
    escape (``python3 -c "import os; ..."``), else shell-quoted (``shlex.quote``)."""
    words = []
    for w in argv:
        if w and shlex.quote(w) == w:
            words.append(w)
        elif _PLAIN_IN_DOUBLE_QUOTES.match(w):
            words.append(f'"{w}"')
        else:
            words.append(shlex.quote(w))
    return " ".join(words)


def arm_values(rec: AppVerification, arm: str, phase: str = "compare") -> list[float]:
    """Values of the successful runs of ``arm`` in ``phase``, in run order."""
    return [r.value for r in rec.runs if r.arm == arm and r.phase == phase and r.value is not None]


def run_counts(rec: AppVerification) -> str:
    """Successful runs per arm, compare phase then warm-up, failures in brackets:
    ``A 12, B 12 (1 failed), A2 5, warm-up A 1, warm-up B 0 (2 failed)``."""
    parts = []
    for phase, prefix in (("compare", ""), ("warmup", "warm-up ")):
        for arm in ("A", "B", "A2"):
            runs = [r for r in rec.runs if r.arm == arm and r.phase == phase]
            failed = sum(1 for r in runs if r.value is None)
            if runs:
                parts.append(f"{prefix}{arm} {len(runs) - failed}"
                             + (f" ({failed} failed)" if failed else ""))
    return ", ".join(parts)


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
            verb = "advised by" if rec.environment == "profile" else "set in"
            out.append(f"    {name}={rec.advised.get(name, '?')}  {verb} "
                       f"{'; '.join(b.sources.get(name, [])) or '?'}")
        out.append(f"    failure: {b.failure}")
    for share in rec.attribution:
        if share.ratio is None:
            out.append(f"  share of {share.group}: not measured (no rounds left)")
            continue
        what = {"gain": "carries gain", "loss": "carries loss", "none": "no measurable share",
                "unknown": "undecided"}[share.share]
        which = ("" if share.settings == [share.group]
                 else f" ({', '.join(share.settings)})")
        out.append(f"  share of {share.group}{which}: {what}: B / B "
                   f"without it ×{share.ratio:.3f} [{share.ci_low:.3f}, {share.ci_high:.3f}], "
                   f"{share.rounds} rounds")
    return out


#: Longest command in a ``show`` cell, characters (``show`` is a summary; the report and
#: ``show --json`` hold the command whole).
SHOW_COMMAND_CHARS = 48
#: The title and columns of ``show``'s table (the title says what the ratio means).
SHOW_TITLE = "Application verification (verify --app; ratio > 1: B better)"
SHOW_HEADERS = ("#", "command", "metric", "verdict ×ratio [95 % CI], A/A floor", "rounds",
                "when (UTC)")


def table_rows(records: Iterable[AppVerification]) -> list[tuple[str, ...]]:
    """Rows for ``show`` (``SHOW_HEADERS``): number, command (cut to ``SHOW_COMMAND_CHARS``),
    metric, verdict with ratio, CI and A/A floor, rounds, start time (UTC, to the minute)."""
    rows = []
    for i, r in enumerate(records):
        cmd = command_text(r.command)
        if len(cmd) > SHOW_COMMAND_CHARS:
            cmd = cmd[: SHOW_COMMAND_CHARS - 1] + "…"
        when = r.time.replace("T", " ")[:16]  # ISO 8601 UTC to the minute
        rows.append((str(i + 1), cmd, r.metric, headline(r), str(r.rounds), when))
    return rows


def detail_lines(records: Iterable[AppVerification]) -> list[str]:
    """``show``'s lines under the table, only for records that have them: ``#N breaks with:``
    the bisection's settings (value, what advised them, the failure), ``#N share:`` each
    attribution group's share and ratio."""
    out = []
    for i, r in enumerate(records):
        b = r.bisection
        if b is not None:
            names = ", ".join(f"{n}={r.advised.get(n, '?')} (advised by "
                              f"{'; '.join(b.sources.get(n, [])) or '?'})" for n in b.settings)
            out.append(f"#{i + 1} breaks with: {names}: {b.failure}"
                       + ("" if b.reproduced else " (NOT reproduced on a rerun)"))
        shares = [f"{a.group} {a.share}" + (f" ×{a.ratio:.3f} [{a.ci_low:.3f}, {a.ci_high:.3f}]"
                                            if a.ratio is not None else " (not measured)")
                  for a in r.attribution]
        if shares:
            out.append(f"#{i + 1} share (B / B without it): " + "; ".join(shares))
    return out


__all__ = ["SHOW_HEADERS", "SHOW_TITLE", "arm_values", "command_text", "detail_lines", "headline",
           "lines", "run_counts", "table_rows"]
