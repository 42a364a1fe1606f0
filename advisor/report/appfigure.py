"""The figure of one ``advisor verify --app`` record: every run of both arms as a dot.

Pure: a ``models.AppVerification`` in, a :class:`~advisor.specs.figures.FigureSpec` out (drawn
by ``advisor.report.draw``; gathered by ``advisor.report.collect.collect_figures`` under
:data:`APP_PROBE`, so ``advisor report -f png`` writes ``verify-app-<id>.png``).

What it shows, per arm (A the baseline, B the environment verified, A2 the A/A repeats of A):
every successful compare run's value in the record's unit (seconds of wall time, or the
``--metric`` figure), spread sideways (a strip, not a bar), the arm's median as a labelled bar,
its failed runs as a cross on the bottom edge with their count, and the A/A floor as a band
around A's median.  The discarded warm-up runs (one of A, one or two of B) are shown apart, as
hollow dots in a category of their own on the left, and never enter a median.  Bisection and
attribution runs are not drawn (the report lists their findings).

Public API: :data:`APP_PROBE`, :func:`app_figure`, :func:`app_figures`, :func:`figure_id`,
:func:`metric_label`.
"""

from __future__ import annotations

import os
import re
from statistics import median
from typing import Optional

from advisor.models_app import AppVerification
from advisor.report.appverify import arm_values, command_text, headline
from advisor.specs.figures import FigureBand, FigureMark, FigureSeries, FigureSpec
from advisor.specs.units import format_value

__all__ = ["APP_PROBE", "app_figure", "app_figures", "figure_id", "metric_label"]

#: The name the figures are filed under in a report (files ``verify-app-<id>.<fmt>``).
APP_PROBE = "verify-app"
#: Longest command shown in a title, characters (a title wider than the figure is cut by it).
TITLE_CHARS = 70
#: Longest metric pattern in an axis label, characters (the axis is 4.8 in high).
LABEL_CHARS = 45
#: Longest note line under the figure, characters (the figure's width at the notes' font).
NOTE_CHARS = 130
#: Longest name of B's env file in a tick label, characters: the four tick labels' widest lines
#: then stay within the 60 characters under which ``draw`` keeps them horizontal.
B_NAME_CHARS = 16
#: Offset of A's (left) and B's (right) warm-up runs from the centre of the warm-up category,
#: x units (categories are 1 apart): apart enough that the two never touch.
WARMUP_OFFSET = 0.2
#: The compare arms in drawing order: arm, series role (colour: A red as the library default,
#: B green as the advice, A2 grey as the control).
ARMS = (("A", "default"), ("B", "advised"), ("A2", "reference"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def figure_id(rec: AppVerification, index: int) -> str:
    """``<index + 1>-<program>``: the figure's id (``[a-z0-9-]``), e.g. ``2-python3``."""
    prog = re.sub(r"[^a-z0-9]+", "-", os.path.basename(rec.command[0]).lower()).strip("-")
    return f"{index + 1}-{prog[:30] or 'command'}"


def metric_label(rec: AppVerification) -> str:
    """The y axis' name: ``wall time per run``, or the ``--metric`` pattern's single named group
    (``(?P<gflops>...)`` -> ``gflops``), else ``metric 'PATTERN'`` (cut to ``LABEL_CHARS``)."""
    if rec.unit == "s":
        return "wall time per run"
    try:
        names = list(re.compile(rec.metric).groupindex)
    except re.error:
        names = []
    return names[0] if len(names) == 1 else _cut(f"metric '{rec.metric}'", LABEL_CHARS)


def _failed(rec: AppVerification, arm: str, phase: str) -> int:
    return sum(1 for r in rec.runs if r.arm == arm and r.phase == phase and r.value is None)


def _arm_names(rec: AppVerification) -> dict[str, str]:
    """Tick lines naming each arm (the run count is added below them)."""
    b = "advisor emit" if rec.environment == "profile" else os.path.basename(rec.environment)
    return {"A": "A\nlibrary defaults" if rec.against == "defaults" else "A\ncurrent env",
            "B": f"B\n{_cut(b, B_NAME_CHARS)}", "A2": "A2\nA again (A/A)"}


def app_figure(rec: AppVerification, index: int = 0) -> Optional[FigureSpec]:
    """The strip figure of ``rec`` (module docstring), id :func:`figure_id`; None when the
    record holds no run with a value (nothing to draw).

    Units: y in ``rec.unit`` (``s``: seconds; ``metric``: the figure as printed, no unit);
    x is categorical (``names``): 0 the warm-up when there is one, then A, B, A2 as run."""
    unit = "s" if rec.unit == "s" else ""
    series: list[FigureSeries] = []
    marks: list[FigureMark] = []
    names: dict[float, str] = {}
    arm_name = _arm_names(rec)
    x = 0.0
    if any(r.phase == "warmup" for r in rec.runs):
        names[x] = "warm-up\n(discarded)\nA left, B right"
        for arm, role, dx in (("A", "default", -WARMUP_OFFSET), ("B", "advised", WARMUP_OFFSET)):
            vals = arm_values(rec, arm, "warmup")
            if vals:
                series.append(FigureSeries(label="warm-up run (discarded, hollow)",
                                           x=[x + dx] * len(vals), y=vals, kind="strip",
                                           role=role, hollow=True))
            failed = _failed(rec, arm, "warmup")
            if failed:
                marks.append(FigureMark(x=x + dx, label=f"{arm}: {failed} failed", shape="x",
                                        role=role))
        x += 1
    medians: dict[str, float] = {}
    for arm, role in ARMS:
        vals = arm_values(rec, arm)
        failed = _failed(rec, arm, "compare")
        if not vals and not failed:
            continue
        names[x] = f"{arm_name[arm]}\n{len(vals)} runs"
        if vals:
            medians[arm] = median(vals)
            series.append(FigureSeries(label="", x=[x] * len(vals), y=vals, kind="strip",
                                       role=role))
            marks.append(FigureMark(x=x, y=medians[arm], role=role,
                                    label=f"median {format_value(medians[arm], unit)}"))
        if failed:
            marks.append(FigureMark(x=x, label=f"{failed} failed", shape="x", role=role))
        x += 1
    if not any(s.y for s in series):
        return None
    bands = []
    if rec.noise_floor is not None and "A" in medians:
        f, m = rec.noise_floor, medians["A"]
        bands.append(FigureBand(axis="y", low=m / (1 + f), high=m * (1 + f),
                                label=f"A/A floor: A's median ±{100 * f:.1f} %"))
    return FigureSpec(
        id=figure_id(rec, index),
        title=_cut(f"verify --app: {command_text(rec.command)}", TITLE_CHARS),
        caption=_caption(rec), x_label="arm", x_unit="", y_label=metric_label(rec),
        y_unit=unit, series=series, marks=marks, bands=bands, names=names,
        notes=_notes(rec))


def app_figures(profile) -> list[FigureSpec]:
    """The figures of ``profile.app_verifications`` in record order (records without a value
    to draw have none)."""
    specs = [app_figure(rec, i) for i, rec in enumerate(profile.app_verifications)]
    return [s for s in specs if s is not None]


def _caption(rec: AppVerification) -> str:
    aa = len({r.round for r in rec.runs if r.arm == "A2" and r.phase == "compare"})
    what = ("its wall time" if rec.unit == "s"
            else f"the number --metric '{rec.metric}' read from its output")
    direction = "higher" if rec.higher_is_better else "lower"
    head = (f"Every run of {command_text(rec.command)} on {rec.hostname or '?'} ({rec.time}): "
            f"{what}, {direction} is better. ")
    warm = "The warm-up runs (hollow, left) were discarded and count nowhere."
    if not any(r.phase == "compare" for r in rec.runs):
        return (head + "No round was run (" + (rec.stop or "none") + "): only the warm-up "
                "runs are drawn, a cross on the axis counting the failed ones. " + warm)
    return (head + f"{rec.rounds} rounds of A and B in alternating order (A B, B A, ...), the "
            f"first {aa} with an A/A repeat of A (A2); one dot per run, the bar is the arm's "
            "median, a cross on the axis counts the failed runs. " + warm + " The verdict's "
            "ratio (> 1: B better) is the median of the per-round pair ratios with its "
            f"{100 * rec.ci_level:.0f} % bootstrap CI, judged against the A/A floor (the band "
            "around A's median).")


def _notes(rec: AppVerification) -> list[str]:
    direction = "higher" if rec.higher_is_better else "lower"
    notes = [_cut(f"{headline(rec)}; {rec.rounds} rounds, {direction} is better", NOTE_CHARS),
             _cut(f"stopped: {rec.stop}", NOTE_CHARS),
             _cut("B sets " + ", ".join(f"{n}={v}" for n, v in sorted(rec.advised.items())),
                  NOTE_CHARS)]
    if rec.bisection is not None:
        b = rec.bisection
        notes.append(_cut(f"breaks with {', '.join(b.settings)} alone ({b.failure}; "
                          f"{b.tests} bisection runs)", NOTE_CHARS))
    return notes
