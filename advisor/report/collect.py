"""Gather the figures of a report: each probe's own (its optional ``figures`` method), the
core's verify figure and one figure per ``verify --app`` record (``advisor.report.appfigure``,
filed under ``APP_PROBE``), with a warning for every figure left out.  Pure apart from calling the
probes' pure ``figures``; nothing is drawn here (``advisor.report.draw`` draws).

A probe's ``figures(evidence, facts) -> list[FigureSpec]`` (documented in
``advisor.hookspecs.advisor_register_probes``) is called with its recorded evidence through
``advisor.steps.StepRunner.call``, like every call into plugin code.  Whatever goes wrong there
is the plugin's problem and never stops the report: an exception, ``SystemExit``, a call that
overruns ``advisor.steps.GRACE_S``, a return that is not a list of ``FigureSpec``, a duplicate id
or a figure without points becomes a warning naming the probe and the figure (for the call's
own faults, with the step's error text: ``figures of P left out: figures: RuntimeError: ...``),
and that figure is left out.

Public API: :class:`Figures`, :func:`collect_figures`, :func:`verify_figure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional

from advisor.report.appfigure import APP_PROBE, app_figures
from advisor.specs.figures import FigureMarker, FigureSeries, FigureSpec
from advisor.steps import StepRunner, fault_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile

__all__ = ["Figures", "collect_figures", "figure_footer", "profile_date", "verify_figure",
           "VERIFY_PROBE"]

#: The name under which the core's own figures are filed (files ``verify-<id>.png``).
VERIFY_PROBE = "verify"


@dataclass
class Figures:
    """The figures of one report: ``by_probe`` maps a probe name to its specs in the probe's
    order (``VERIFY_PROBE`` for the core's verify figure, ``APP_PROBE`` for the ``verify --app``
    records'); ``warnings`` are one line each."""

    by_probe: dict[str, list[FigureSpec]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: the line under every drawn figure (:func:`figure_footer`), "" for none
    footer: str = ""

    def items(self) -> list[tuple[str, FigureSpec]]:
        """``(probe, spec)`` pairs, probes in report order."""
        return [(p, s) for p, specs in self.by_probe.items() for s in specs]


def profile_date(prof: "Profile") -> str:
    """The day the profile was measured (``YYYY-MM-DD`` of ``provenance.created``), or
    ``"undated"``."""
    return (prof.provenance.created or "")[:10] or "undated"


def figure_footer(prof: "Profile", source: Optional[str] = None) -> str:
    """The line every saved figure carries, so a PNG or SVG found alone says what it shows:
    ``<machine class> · <host> · probed <date> · profile <source>`` (``source``: the profile as
    ``--profile`` named it; else its fingerprint)."""
    host = prof.provenance.hostname or prof.facts.hostname or "?"
    return (f"{prof.facts.class_fingerprint()} · {host} · probed {profile_date(prof)} · "
            f"profile {source or prof.fingerprint}")


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _probe_figures(probe: Any, name: str, result, facts, warnings: list[str],
                   runner: StepRunner) -> list[FigureSpec]:
    fn = getattr(probe, "figures", None)
    if fn is None or not callable(fn):
        return []
    done = runner.call(lambda: fn(list(result.evidence), facts), step="figures", owner=name)
    got = done.value
    error = done.error
    if done.ok and not isinstance(got, (list, tuple)):
        error = fault_text("figures", TypeError(
            f"figures() returned {type(got).__name__}, not a list of FigureSpec"))
    if error is not None:
        warnings.append(f"figures of {name} left out: {_one_line(error)}")
        return []
    specs: list[FigureSpec] = []
    seen: set[str] = set()
    for i, spec in enumerate(got):
        if not isinstance(spec, FigureSpec):
            warnings.append(f"figure #{i + 1} of {name} left out: a {type(spec).__name__}, "
                            "not a FigureSpec")
        elif spec.id in seen:
            warnings.append(f"figure {spec.id} of {name} left out: its id is used twice")
        elif spec.is_empty():
            warnings.append(f"figure {spec.id} of {name} left out: no series has a point "
                            f"({_one_line(spec.caption, 120)})")
        else:
            seen.add(spec.id)
            specs.append(spec)
    return specs


def collect_figures(profile: "Profile", probes: Mapping[str, Any],
                    source: Optional[str] = None) -> Figures:
    """The figures of ``profile``: for each result with evidence, its probe's ``figures``
    (``probes``: probe name -> probe, e.g. ``advisor.plugins.load().probes``), then the verify
    figure when the profile holds verdicts with ratios, then each ``verify --app`` record's
    figure of its runs (``APP_PROBE``).

    A result whose probe is not installed gives the warning ``figures of <probe> need its
    plugin (<plugin>)``; its recommendations and evidence are still in the report.  Probes
    get their evidence through ``advisor.measure.relabel``: an artefact point reaches a figure
    as a label without samples, never as a bandwidth.
    """
    from advisor.measure.artefacts import relabel_profile

    profile = relabel_profile(profile)  # artefact labels from the record, whenever written
    figs = Figures(footer=figure_footer(profile, source))
    with StepRunner() as runner:
        for r in profile.results:
            if not r.evidence:
                continue
            probe = probes.get(r.probe)
            if probe is None:
                figs.warnings.append(f"figures of {r.probe} need its plugin ({r.plugin}), "
                                     "which is not installed here")
                continue
            specs = _probe_figures(probe, r.probe, r, profile.facts, figs.warnings, runner)
            if specs:
                figs.by_probe[r.probe] = specs
    vf = verify_figure(profile)
    if vf is not None:
        figs.by_probe[VERIFY_PROBE] = [vf]
    apps = app_figures(profile)
    if apps:
        figs.by_probe[APP_PROBE] = apps
    return figs


def verify_figure(profile: "Profile") -> Optional[FigureSpec]:
    """The verdicts of ``advisor verify`` stored in ``profile.verifications`` as one figure:
    per verified recommendation, its ratio (advised / baseline, > 1 is better) with its
    bootstrap CI as an error bar, beside its A/A noise floor (the band ``1/(1+f) .. 1+f``
    inside which a ratio is not called a change, ``advisor.measure.stats.compare``).  Verdicts
    without a ratio (not measurable, equal to the default) are named in the notes.  None when
    no verdict has a ratio."""
    rows = [v for v in profile.verifications if v.ratio is not None]
    if not rows:
        return None
    xs = [float(i) for i in range(len(rows))]
    names = {x: v.recommendation.split(":", 1)[-1] for x, v in zip(xs, rows)}
    ratio = FigureSeries(
        label="ratio (advised / baseline) with its CI", x=xs, y=[v.ratio for v in rows],
        lo=[v.ci_low if v.ci_low is not None else v.ratio for v in rows],
        hi=[v.ci_high if v.ci_high is not None else v.ratio for v in rows],
        kind="points", role="advised")
    floors = [v.noise_floor or 0.0 for v in rows]
    floor = FigureSeries(label="A/A noise floor (1/(1+f) .. 1+f)", x=[x + 0.25 for x in xs],
                         y=[1.0] * len(rows), lo=[1 / (1 + f) for f in floors],
                         hi=[1 + f for f in floors], kind="points", role="reference")
    notes = [f"{v.recommendation}: {v.verdict}" + (f" ({_one_line(v.reason, 100)})"
                                                   if v.reason else "")
             for v in profile.verifications if v.ratio is None]
    times = sorted({v.time for v in rows if v.time})
    when = f" on {times[-1]}" if times else ""
    return FigureSpec(
        id="verdicts", title="advisor verify: advised vs baseline",
        caption=(f"Stored verdicts of advisor verify{when}: each recommendation's settings "
                 "against the baseline, measured interleaved in fresh processes; the ratio's "
                 "bootstrap CI (error bar) must clear the A/A noise floor of identical runs "
                 "(grey) for a verdict of confirmed or regression."),
        x_label="recommendation", x_unit="", y_label="advised / baseline (> 1 better)",
        y_unit="ratio",
        series=[ratio, floor], names=names,
        markers=[FigureMarker(axis="y", value=1.0, label="no change", role="note")],
        notes=notes[:6])
