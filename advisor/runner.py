"""Run the registered probes into a Profile, isolating faults and sharing one time budget.

Order per probe: ``check(facts)``; when usable, ``measure(ctx)``; always ``recommend(evidence,
facts)`` (see ``advisor.probe``).  Each step runs through ``advisor.steps.StepRunner`` (the
executor ``advisor verify`` uses too) so that a probe that hangs past its deadline (plus a grace
period) is abandoned and recorded as ``failed`` with the processes it started killed; the
remaining probes still run and the profile is still written.  Subprocesses started through the
harness carry their own timeouts and are killed with their process group.
"""

from __future__ import annotations

import socket
import time
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Optional, Sequence

from advisor import __version__
from advisor.measure.artefacts import (ARTEFACT_LOWERED, ARTEFACT_WITHDRAWN, relabel,
                                       relabel_all, veto)
from advisor.measure.thinning import thin_evidence
from advisor.models import (Advice, Evidence, Facts, Finding, PluginResult, Profile,
                            Provenance)
from advisor.probe import AIM_OUTSIDE_S, FULL_AIM_S, QUICK_AIM_S, Applicability, MeasureContext
from advisor.steps import StepRunner

#: ``on_event(probe, message, fraction)``; fraction of that probe's work in [0, 1] or None.
EventCallback = Callable[[str, str, Optional[float]], None]

#: The messages ``run_probe`` sends at the start of each step of a probe (``check``,
#: ``measure``, ``recommend``) and at its end; between them the probe's own progress messages.
STEP_EVENTS = ("checking", "measuring", "recommending", "done")

#: Default total budget of ``advisor probe`` in seconds, and with ``--quick``.  Chosen so a full
#: probe of the three built-ins fits a batch job's epilogue on the 2-core reference machine.
DEFAULT_BUDGET_S = 300.0
QUICK_BUDGET_S = 60.0

def run_probe(
    name: str,
    probe: Any,
    plugin: str,
    facts: Facts,
    *,
    deadline: float,
    quick: bool = False,
    launcher: Optional[list[str]] = None,
    options: Optional[dict[str, str]] = None,
    on_event: Optional[EventCallback] = None,
    seed: int = 12345,
    runner: Optional[StepRunner] = None,
    aim: Optional[float] = None,
) -> PluginResult:
    """Run one probe; never raises for the probe's own faults (they become ``failed`` with the
    step's error text, ``advisor.steps``).

    :param deadline: ``time.monotonic()`` value by which ``check`` and ``measure`` must return
        (each step may overrun it by ``runner.grace_s``; ``recommend`` gets ``grace_s`` alone).
    :param runner: the ``StepRunner`` of the whole run (``run_probes``: it remembers abandoned
        steps, to flag later measurements taken beside them); None: one of its own, entered
        and left here.
    :param aim: ``time.monotonic()`` value the whole run aims to have measured by
        (``MeasureContext.aim``); None: none.
    """
    if runner is None:
        with StepRunner() as own:
            return run_probe(name, probe, plugin, facts, deadline=deadline, quick=quick,
                             launcher=launcher, options=options, on_event=on_event, seed=seed,
                             runner=own, aim=aim)
    t0 = time.monotonic()
    findings: list = []
    evidence: list[Evidence] = []
    status = "ok"
    reason: Optional[str] = None

    def progress(message: str, fraction: Optional[float]) -> None:
        if on_event is not None:
            on_event(name, message, fraction)

    progress(STEP_EVENTS[0], 0.0)
    checked = runner.run(lambda: probe.check(facts), step="check", owner=name,
                         deadline=deadline, expect=Applicability)
    app = checked.value
    if not checked.ok:
        status, reason = "failed", checked.error
    else:
        findings.extend(app.findings)
        evidence.extend(relabel(e) for e in app.evidence)
        if not app.usable:
            status = "failed" if app.failed else "not-applicable"
            reason = app.reason or "not usable here"
        else:
            ctx = MeasureContext(facts=facts, deadline=deadline, quick=quick, launcher=launcher,
                                 options=dict(options or {}), progress=progress, seed=seed,
                                 applicability=app, aim=aim)
            progress(STEP_EVENTS[1], 0.0)
            measured = runner.run(lambda: probe.measure(ctx), step="measure", owner=name,
                                  deadline=deadline, each=Evidence)
            if measured.ok:
                # stored artefact points carry no bandwidth, whatever the plugin wrote
                evidence.extend(thin_evidence(relabel(e)) for e in measured.value)
            else:
                status, reason = "failed", measured.error

    recs: list = []
    progress(STEP_EVENTS[2], None)
    advice = runner.call(lambda: probe.recommend(list(evidence), facts), step="recommend",
                         owner=name, expect=Advice)
    if advice.ok:
        # an artefact in the evidence withdraws or lowers the advice drawn from it
        vetoed = veto(advice.value, evidence)
        findings.extend(vetoed.findings)
        recs = list(vetoed.recommendations)
    elif status != "failed":
        status, reason = "failed", advice.error
    left = runner.reap()
    if left:  # a well-behaved probe leaves nothing running: say what was left, and killed
        findings.append(Finding(
            id="advisor-leftover-processes", severity="warning",
            message=f"the probe left {len(left)} process(es) running "
                    f"({', '.join(sorted(set(left)))}); advisor killed them"))
    progress(STEP_EVENTS[3], 1.0)
    return PluginResult(plugin=plugin, probe=name, status=status, reason=reason,
                        duration_s=round(time.monotonic() - t0, 3), findings=findings,
                        recommendations=recs, evidence=evidence)


def _beside_finding(names: list[str]) -> Finding:
    return Finding(
        id="advisor-abandoned-step-running", severity="warning",
        message=(f"measured while the abandoned step of {', '.join(names)} was still running "
                 "(it passed its deadline and did not stop); its load may have slowed these "
                 "measurements: probe this plugin again on its own (--plugin NAME)"))


def run_probes(
    probes: dict[str, Any],
    probe_plugin: dict[str, str],
    facts: Facts,
    *,
    time_budget_s: Optional[float] = None,
    quick: bool = False,
    launcher: Optional[list[str]] = None,
    options: Optional[dict[str, str]] = None,
    on_event: Optional[EventCallback] = None,
    command: str = "advisor probe",
    seed: int = 12345,
    libraries: Optional[Mapping[str, Any]] = None,
    busy_cores_before: Optional[float] = None,
) -> Profile:
    """Run ``probes`` (name -> probe) in name order and return the Profile.

    The budget (seconds; default ``DEFAULT_BUDGET_S`` or ``QUICK_BUDGET_S``) is shared: each probe
    gets a slice of what is left, in proportion to its optional ``budget_weight`` attribute
    (default 1.0), so time a fast probe leaves unused goes to the next.  The run aims to end
    sooner: ``MeasureContext.aim`` is ``advisor.probe.FULL_AIM_S`` (``QUICK_AIM_S``) from the
    start, or ``time_budget_s`` when given, less ``AIM_OUTSIDE_S``; a probe that measures
    sequentially may stop adding rounds there.

    A step abandoned at its deadline that is still running when a later probe starts (it
    ignores the deadline and started no process that could be killed) cannot be stopped from
    here: every later probe that measured something gets an ``advisor-abandoned-step-running``
    warning naming it, since its load may have slowed those measurements.

    Processes that probes started and left running (a step abandoned at its deadline, a daemon
    a probe forked off) are killed before the profile is returned, so none outlives ``advisor
    probe``; on Linux the run makes this process a child subreaper so orphans stay findable.

    A ``KeyboardInterrupt`` in the calling thread (SIGINT; the CLI raises it for SIGTERM and
    SIGHUP too) stops the run: the probes that completed keep their results, the running one and
    those not started are ``failed`` with the signal named, and the profile is still returned.

    ``libraries`` (``Registry.libraries``): when given, the known bad combinations of their
    advisories (``advisor.libraries.advisories``) that match the facts and the settings the
    results recommend become the findings of one more result, probe ``advisories`` of the core
    (:func:`advisory_result`), added only when something matched.

    ``busy_cores_before``: other processes' CPU use the caller measured just before
    (``advisor.measure.load``), recorded in the provenance.
    """
    budget = time_budget_s if time_budget_s is not None else (
        QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    t0 = time.monotonic()
    aim = t0 - AIM_OUTSIDE_S + (time_budget_s if time_budget_s is not None else
                                QUICK_AIM_S if quick else FULL_AIM_S)
    names = sorted(probes)
    weights = {n: float(getattr(probes[n], "budget_weight", 1.0) or 1.0) for n in names}
    results: list[PluginResult] = []
    interrupted: Optional[str] = None
    with StepRunner(budget_s=budget) as runner:  # on leaving: what steps left running is killed
        for i, name in enumerate(names):
            plugin = probe_plugin.get(name, "?")
            if interrupted is not None:
                results.append(PluginResult(
                    plugin=plugin, probe=name, status="failed",
                    reason=f"not run: advisor was interrupted ({interrupted})"))
                continue
            t_start = time.monotonic()
            try:
                deadline = runner.deadline(weights[name], sum(weights[n] for n in names[i:]))
                beside = runner.still_running()
                res = run_probe(name, probes[name], plugin, facts,
                                deadline=deadline, quick=quick,
                                launcher=launcher, options=options, on_event=on_event,
                                seed=seed, runner=runner, aim=aim)
                if beside and res.evidence:
                    res = res.model_copy(update={"findings": [*res.findings,
                                                              _beside_finding(beside)]})
                results.append(res)
            except KeyboardInterrupt as exc:
                # SIGINT, or SIGTERM/SIGHUP (a batch system's time limit) turned into
                # KeyboardInterrupt by the CLI: keep what completed, record the rest as failed
                interrupted = str(exc) or "SIGINT"
                results.append(PluginResult(
                    plugin=plugin, probe=name, status="failed",
                    reason=f"interrupted ({interrupted}) while running",
                    duration_s=round(time.monotonic() - t_start, 3)))
    if libraries is not None:
        adv = advisory_result(facts, libraries, results)
        if adv is not None:
            results.append(adv)
    prov = Provenance(advisor_version=__version__, command=command, created=created,
                      duration_s=round(time.monotonic() - t0, 3),
                      hostname=facts.hostname or socket.gethostname(),
                      busy_cores_before=busy_cores_before)
    return Profile(provenance=prov, fingerprint=facts.fingerprint(), facts=facts, results=results)


def summary(profile: Profile, path: Any) -> dict:
    """What ``advisor probe --json`` prints: a JSON-ready mapping.

    Shape: ``{"profile": str(path), "partial": bool, "duration_s": float, "fingerprint": str,
    "probes": [{"probe", "plugin", "status", "reason", "recommendations": int,
    "findings": int, "warnings": int, "evidence": int, "seconds": float}, ...]}``; ``warnings``
    counts findings of severity warning or error; seconds are the probe's wall time
    (``PluginResult.duration_s``).
    """
    return {
        "profile": str(path), "partial": partial(profile),
        "duration_s": profile.provenance.duration_s, "fingerprint": profile.fingerprint,
        "probes": [{"probe": r.probe, "plugin": r.plugin, "status": r.status, "reason": r.reason,
                    "recommendations": len(r.recommendations), "findings": len(r.findings),
                    "warnings": sum(f.severity in ("warning", "error") for f in r.findings),
                    "evidence": len(r.evidence), "seconds": r.duration_s}
                   for r in profile.results],
    }


#: The ``PluginResult.plugin`` of the core's own result (as ``advisor plugins`` names the core).
CORE_PLUGIN = "hpc-advisor (core)"


def advisory_result(facts: Facts, libraries: Mapping[str, Any],
                    results: Sequence[PluginResult]) -> Optional[PluginResult]:
    """The ``advisories`` result: one finding per advisory that matches ``facts`` and the env
    settings ``results`` recommend (an unset name counts as the library default); None when
    none matches."""
    from advisor.libraries.advisories import finding, matches, setting_value

    env = {s.name: str(s.value) for res in results for rec in res.recommendations
           for s in rec.settings if s.kind == "env" and not s.is_default}
    found = []
    for adv, version, name in matches(facts, libraries, env, written_only=False):
        lib = libraries.get(adv.library)
        value = setting_value(adv, lib, env) if lib is not None and name else None
        found.append(finding(adv, version, name, value))
    if not found:
        return None
    return PluginResult(plugin=CORE_PLUGIN, probe="advisories", status="ok", findings=found)


def partial(profile: Profile) -> bool:
    """True when a probe failed: ``advisor probe`` then exits with ``ExitCode.PARTIAL``."""
    return any(r.status == "failed" for r in profile.results)


def rerecommend(profile: Profile, probes: dict[str, Any]) -> Profile:
    """Re-derive advice from the recorded evidence with the installed probes (no measuring).

    Each ``recommend`` runs through ``StepRunner.call`` (as in ``advisor probe``): one that
    raises, exits, returns the wrong type or overruns ``advisor.steps.GRACE_S`` makes that
    result ``failed`` with the step's error text and no recommendations (a result already
    ``failed`` keeps its reason); the other results are still re-derived.  Never raises for a
    probe's faults."""
    out: list[PluginResult] = []
    with StepRunner() as runner:
        for res in profile.results:
            probe = probes.get(res.probe)
            if probe is None:
                out.append(res)
                continue
            evidence = relabel_all(res.evidence)
            done = runner.call(lambda: probe.recommend(list(evidence), profile.facts),
                               step="recommend", owner=res.probe, expect=Advice)
            if not done.ok:
                out.append(res.model_copy(update={
                    "recommendations": [], "status": "failed",
                    "reason": res.reason if res.status == "failed" else done.error}))
                continue
            advice: Advice = veto(done.value, evidence)
            # the veto's findings say why a recommendation is gone or lowered: never silently
            said = {(f.id, f.message) for f in res.findings}
            added = [f for f in advice.findings if f.id in (ARTEFACT_WITHDRAWN, ARTEFACT_LOWERED)
                     and (f.id, f.message) not in said]
            out.append(res.model_copy(update={"recommendations": advice.recommendations,
                                              "findings": [*res.findings, *added]}))
    return profile.model_copy(update={"results": out})


__all__: Sequence[str] = ["run_probes", "run_probe", "partial", "rerecommend",
                          "DEFAULT_BUDGET_S", "QUICK_BUDGET_S"]
