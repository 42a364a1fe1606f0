"""``advisor verify``: does the advice help on this machine?  Re-measure and give a verdict.

For each recommendation of a profile (optionally only some probes):

* every setting equal to the library default -> verdict ``no-effect`` without measuring (a value
  equal to the default cannot change what the library does);  against ``Baseline.ENV`` also
  when the current environment already holds every recommended value;
* ``verifiable=False``, probe not installed, probe without ``verify``, or ``check`` says the
  feature is unusable here -> ``not-measurable`` (with the reason in ``VerifyOutcome.note``);
* otherwise the owning probe's ``verify(recommendation, ctx)`` re-runs its measurement in fresh
  processes, recommended settings vs the library defaults (``ctx.against is Baseline.ENV``: vs
  the current environment), interleaved through ``advisor.measure``, and returns a
  ``models.Verification`` (verdict confirmed / no-effect / regression, ratio advised/baseline > 1
  better, bootstrap CI, noise floor, evidence).

Joint verification (``joint=True``; the default of ``advisor verify``; design: "the unit of advice
is the environment we emit"; ``advisor.joint``): the emitted environment is built from the whole
profile exactly as ``advisor emit`` writes it (:func:`joint_environment` -> ``advisor.specs.writing.env_items``: the
same selection, version filter and list merging, e.g. one ``GLIBC_TUNABLES`` holding every
plugin's items).  Each measured recommendation is then measured a second time by its own probe
with ``ctx.joint`` = that environment (advised: every plugin's env settings; baseline: all of
them removed, i.e. library defaults), stored as ``probe:recommendation@joint``.  Only
``kind="env"`` settings can be applied to a process: a recommendation made only of ``config``
settings (Umpire arguments, a pool's madvise) is applied by its own plugin's code, so its joint
verdict is ``not-measurable`` with that reason.  When the joint environment holds nothing but the
recommendation's own settings, the alone measurement *is* the joint one and is reused.  A verdict
that reverses (``confirmed`` alone and ``regression`` jointly, or the reverse) gives a
:data:`REVERSAL_ID` finding naming the other settings and the command that re-probes under them;
it is stored with the probe's findings and in the joint verification's reason.

The time budget (seconds) is shared like ``advisor probe``'s: each measurement (alone and joint)
gets an equal share of what is left (``StepRunner.deadline``).  What is done with each
recommendation is decided first, without running plugin code (``advisor.verify_plan``).  A
probe's ``check`` and ``verify`` run through ``advisor.steps.StepRunner``, the executor
``advisor probe`` uses: one that raises, exits, returns the wrong type or overruns its share
(plus ``advisor.steps.GRACE_S``) gives ``not-measurable`` with ``VerifyOutcome.error`` set to
the same text ``advisor probe`` records for that fault, and the processes an abandoned step
started are killed; the others still run.  The verifications
are returned in an updated profile for the caller to save.

Where a verdict holds (design: "verify's verdicts feed emit"): every verification records
``Verification.class_fingerprint``, the machine class of ``facts`` (where it was measured).
One verification is kept per recommendation and class: older ones of the same class (or of no
recorded class) are replaced, those of other classes kept.  A regression on the profile's own
class makes ``advisor emit`` leave the recommendation out (``advisor.emit.veto``); a verdict
measured on another class says so in its note and vetoes nothing.  The joint environment is
built as emit would write it once this run's verdicts replace the stored ones (a stored
regression does not keep a recommendation out of its own re-test).

The host's rule on a probe's figures: a CI wholly below 1 beyond the noise floor
(``ci_high < 1/(1 + noise_floor)``) is stored as ``regression``, whatever the probe called it,
with a note; the probes judge many sizes as one family (``advisor.measure.family``).  The
outcome type is ``advisor.verify_outcome.VerifyOutcome``; the rows of the tables and ``--json``
are in ``advisor.report.verify``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from advisor.baseline import Baseline, all_default
from advisor.joint import (REVERSAL_ID, REVERSALS, has_reversal, joint_environment, label, others,
                           redo_command, reversal_finding)
from advisor.knobs import Knob
from advisor.models import Facts, Finding, Profile, Verification
from advisor.probe import Applicability, JointEnv, MeasureContext
# Default budgets (seconds) are those of ``advisor probe``: verify repeats a part of the same
# measurements.
from advisor.measure.thinning import thin_evidence
from advisor.runner import DEFAULT_BUDGET_S, QUICK_BUDGET_S
from advisor.steps import StepRunner
from advisor.verify_outcome import VerifyOutcome
from advisor.verify_plan import Task, plan_tasks

if TYPE_CHECKING:  # pragma: no cover
    from advisor.plugins import Registry

#: ``on_event(key, message, fraction)``: key is ``probe:recommendation`` (``@joint`` appended
#: for the joint measurement).
EventCallback = Callable[[str, str, Optional[float]], None]

#: ``VerifyOutcome.note`` of a step that did not give a result, by ``StepOutcome.kind``; the
#: step's error text (``advisor.steps``, the same as ``advisor probe``'s) is ``error``.
FAILED_NOTES = {"timeout": "verification ran out of time", "aborted": "verification aborted",
                "failed": "verification failed"}


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def verify_profile(
    profile: Profile,
    probes: Mapping[str, Any],
    *,
    facts: Facts,
    knobs: Sequence[Knob] = (),
    libraries: Mapping[str, Any],
    plugins: Optional[set[str]] = None,
    time_budget_s: Optional[float] = None,
    quick: bool = False,
    against: Baseline = Baseline.DEFAULTS,
    joint: bool = False,
    launcher: Optional[list[str]] = None,
    options: Optional[dict[str, str]] = None,
    seed: int = 12345,
    on_event: Optional[EventCallback] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> tuple[Profile, list[VerifyOutcome]]:
    """Verify the recommendations of ``profile``; return the updated profile and the outcomes.

    :param probes: the installed probes by name (``Registry.probes``).
    :param facts: facts of *this* machine (verification measures here).
    :param knobs: knob records, for defaults a setting does not carry.
    :param libraries: library records (``Registry.libraries``) that say which version of each
        library is here (plugin-registered ones included).
    :param plugins: probe or plugin names to verify (None: all).  The joint environment is
        always the whole profile's.
    :param time_budget_s: seconds for all measurements (default ``DEFAULT_BUDGET_S``, with
        ``quick`` ``QUICK_BUDGET_S``).
    :param against: the baseline: ``Baseline.DEFAULTS`` (the library defaults) or
        ``Baseline.ENV`` (the current environment, ``environ``).
    :param joint: also verify each recommendation in the joint emitted environment (module
        docstring; ``advisor verify`` passes True unless ``--alone``); False: alone only, the
        outcomes of earlier versions.
    :param environ: the current environment (default ``os.environ``).
    :return: ``(profile with verifications, outcomes)``: the alone outcomes in profile order,
        then the joint ones (``scope="joint"``) in the same order.  The profile's probe results
        carry a :data:`REVERSAL_ID` finding per reversed recommendation (earlier ones of the
        verified recommendations are replaced).  Never raises for a probe's own faults.
    """
    env = os.environ if environ is None else environ
    budget = time_budget_s if time_budget_s is not None else (
        QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    steps = StepRunner(budget_s=budget)  # the budget counts from here, as it always did
    records = _records(knobs, libraries)
    plan, plan_error = (_joint_plan(profile, records, plugins, against, env) if joint
                        else (None, None))
    alone, together = plan_tasks(profile, probes, facts=facts, knobs=knobs, libraries=libraries,
                                 plugins=plugins, against=against, env=env, joint=joint,
                                 plan=plan, plan_error=plan_error)
    tasks = alone + together
    outcomes = {t.key: _settled(t, t.verdict, t.note) for t in tasks if t.action == "settle"}
    run = _Measure(probes, facts, quick, launcher, options, seed, against, plan, on_event)
    todo = [t for t in tasks if t.action == "measure"]  # every alone measurement first
    with steps:  # on leaving: what the steps left running is killed
        for i, task in enumerate(todo):
            outcomes[task.key] = run.one(steps, task, steps.deadline(1.0, len(todo) - i))
    for task in tasks:
        if task.action in ("copy", "reuse"):
            outcomes[task.key] = _as_alone(task, outcomes, plan, profile, facts, records)
    here_class = facts.class_fingerprint()
    other_class = here_class != profile.facts.class_fingerprint()
    outcomes = {k: _on_class(o, here_class, other_class) for k, o in outcomes.items()}
    findings = _reversals(outcomes, [t.key for t in together], profile, plan, records)
    result = [outcomes[t.key] for t in tasks]
    return _updated(profile, result, findings, here_class), result


def _settled(task: Task, verdict: str, note: str, error: Optional[str] = None) -> VerifyOutcome:
    """The outcome of ``task`` without a measurement: ``verdict`` and why."""
    return VerifyOutcome(task.res.probe, task.rec.id, task.rec.title, Verification(
        recommendation=task.key, verdict=verdict, time=_now()), note, error, task.scope)


def _joint_plan(profile: Profile, records: "Registry", plugins: Optional[set[str]],
                against: Baseline, env: Mapping[str, str]
                ) -> tuple[Optional[JointEnv], Optional[str]]:
    """The joint environment: what emit writes once this run's verdicts replace the stored
    ones (a regression stored for a recommendation verified now does not keep it out of its own
    test); ``(None, why)`` when the profile's settings cannot be emitted together."""
    from advisor.errors import AdvisorError

    try:
        return joint_environment(_without_verdicts(profile, plugins), records, against=against,
                                 environ=env), None
    except AdvisorError as exc:
        return None, f"the profile's settings cannot be emitted together: {exc}"


@dataclass(frozen=True)
class _Measure:
    """What measuring one task needs beside the runner: the probes and the run's options."""

    probes: Mapping[str, Any]
    facts: Facts
    quick: bool
    launcher: Optional[list[str]]
    options: Optional[dict[str, str]]
    seed: int
    against: Baseline
    plan: Optional[JointEnv]
    on_event: Optional[EventCallback]
    #: ``check``'s answer per probe, asked once per run (a failed check is asked again)
    checked: dict[str, Applicability] = field(default_factory=dict)

    def one(self, steps: StepRunner, task: Task, deadline: Optional[float]) -> VerifyOutcome:
        """Measure ``task`` by its probe's ``check`` (once per probe) and ``verify``, each a
        step of ``steps`` until ``deadline``."""
        res, rec, key = task.res, task.rec, task.key
        probe = self.probes[res.probe]

        def progress(message: str, fraction: Optional[float]) -> None:
            if self.on_event is not None:
                self.on_event(key, message, fraction)

        beside = steps.still_running()
        if res.probe not in self.checked:
            done = steps.run(lambda: probe.check(self.facts), step="check", owner=key,
                             deadline=deadline, expect=Applicability)
            if not done.ok:
                progress("done", 1.0)
                return _settled(task, "not-measurable", FAILED_NOTES[done.kind], done.error)
            self.checked[res.probe] = done.value
        app = self.checked[res.probe]
        if not app.usable:
            return _settled(task, "not-measurable", f"not usable here: {app.reason or '?'}")
        joint = self.plan if task.scope == "joint" else None
        ctx = MeasureContext(facts=self.facts, deadline=deadline, quick=self.quick,
                             launcher=self.launcher, options=dict(self.options or {}),
                             progress=progress, seed=self.seed, applicability=app,
                             against=self.against, joint=joint)
        progress("verifying", 0.0)
        done = steps.run(lambda: probe.verify(rec, ctx), step="verify", owner=key,
                         deadline=deadline, expect=Verification)
        if not done.ok:
            progress("done", 1.0)
            return _settled(task, "not-measurable", FAILED_NOTES[done.kind], done.error)
        got = done.value.model_copy(update={
            "recommendation": key, "time": done.value.time or _now(),
            "evidence": [thin_evidence(e) for e in done.value.evidence]})
        note = _measured_note(self.against, joint, got.reason, steps.reap(), beside)
        progress("done", 1.0)
        return VerifyOutcome(res.probe, rec.id, rec.title, got, note, None, task.scope)


def _measured_note(against: Baseline, joint: Optional[JointEnv], reason: Optional[str],
                   left: list[str], beside: list[str]) -> str:
    """The note of a measured verdict: the baseline, the joint environment, the probe's
    reason, the processes the step ``left`` running (killed) and the abandoned steps still
    running ``beside`` it."""
    note = ("against the current environment" if against is Baseline.ENV else
            "against library defaults")
    if joint is not None:
        note = f"joint emitted environment ({', '.join(sorted(joint.advised))}) {note}"
    if reason:
        note += f"; {reason}"
    if left:  # a well-behaved verify leaves nothing running
        note += (f"; it left {len(left)} process(es) running "
                 f"({', '.join(sorted(set(left)))}); advisor killed them")
    if beside:
        note += (f"; measured while the abandoned step of {', '.join(beside)} was "
                 "still running (its load may have slowed this measurement)")
    return note


def _as_alone(task: Task, outcomes: Mapping[str, VerifyOutcome], plan: Optional[JointEnv],
              profile: Profile, facts: Facts, records: "Registry") -> VerifyOutcome:
    """The joint outcome of a ``copy`` or ``reuse`` task: its alone outcome, and why
    (``records``: the knobs and library records, :func:`_records`)."""
    res, rec = task.res, task.rec
    alone = outcomes[f"{res.probe}:{rec.id}"]
    why = ("the joint environment holds only this recommendation's own settings: the alone "
           "measurement is the joint one" if task.action == "reuse" else
           f"as alone: {alone.note}")
    other = others(plan, res.probe, rec.id) if plan is not None else []
    redo = ""
    if other and all_default(rec, facts, records.knobs, records.libraries):
        # advised == baseline for its own settings: no A/B can test it under the others
        why = (f"not measured jointly: {alone.note}; whether the default still wins with "
               f"{', '.join(other)} only a re-probe under them can tell")
        redo = redo_command(profile, records, res.probe, rec.id)
    return VerifyOutcome(res.probe, rec.id, rec.title, alone.verification.model_copy(
        update={"recommendation": task.key}), why, alone.error, "joint", redo)


def _reversals(outcomes: dict[str, VerifyOutcome], joint_keys: Sequence[str],
               profile: Profile, plan: Optional[JointEnv],
               records: "Registry") -> dict[str, list[Finding]]:
    """Mark each joint outcome whose verdict reverses the alone one (in ``outcomes``, in
    place); the :data:`REVERSAL_ID` findings by probe (their redo command selected with
    ``records``, the knob and library records)."""
    findings: dict[str, list[Finding]] = {}
    for jkey in joint_keys:
        j = outcomes[jkey]
        a = outcomes[f"{j.probe}:{j.recommendation}"]
        if plan is not None and (a.verdict, j.verdict) in REVERSALS:
            f = reversal_finding(a, j, profile, plan, records)
            findings.setdefault(j.probe, []).append(f)
            outcomes[jkey] = VerifyOutcome(
                j.probe, j.recommendation, j.title, j.verification,
                f"REVERSED ({a.verdict} alone): advice to be redone ({REVERSAL_ID}): "
                f"{f.remedy}; {j.note}", j.error, "joint")
    return findings


def _updated(profile: Profile, result: Sequence[VerifyOutcome],
             findings: Mapping[str, list[Finding]], here_class: str) -> Profile:
    """``profile`` with this run's verdicts stored and its reversal findings replaced."""
    new = {o.verification.recommendation for o in result}
    # one verdict per recommendation and machine class: a verdict taken on another class
    # (advisor.emit.veto: it vetoes nothing) does not replace the profile class's
    kept = [v for v in profile.verifications if v.recommendation not in new
            or v.class_fingerprint not in (None, here_class)]
    stored = [o.verification.model_copy(update={"reason": o.error or o.note or None})
              for o in result]
    verified = {(o.probe, o.recommendation) for o in result if o.scope == "joint"}
    results = []
    for r in profile.results:
        if any(p == r.probe for p, _ in verified):
            mine = {label(r.probe, rid) for p, rid in verified if p == r.probe}
            old = [f for f in r.findings if not (
                f.id == REVERSAL_ID and f.message.split(":", 1)[0] in mine)]
            r = r.model_copy(update={"findings": old + findings.get(r.probe, [])})
        results.append(r)
    return profile.model_copy(update={"verifications": kept + stored, "results": results})


def _records(knobs: Sequence[Knob], libraries: Mapping[str, Any]) -> "Registry":
    """A registry holding only ``knobs`` and ``libraries``: what the joint environment's
    selection (``advisor.emit.decide``) reads."""
    from advisor.plugins import Registered, Registry

    return Registry(entries=[Registered("knob", f"{k.library}:{k.name}", k, "") for k in knobs]
                    + [Registered("library", n, lib, "") for n, lib in libraries.items()])


def _without_verdicts(profile: Profile, plugins: Optional[set[str]]) -> Profile:
    """``profile`` without the stored verdicts of the recommendations this run verifies (all,
    or those of ``plugins``): they are about to be replaced."""
    mine = {f"{r.probe}:" for r in profile.results
            if not plugins or r.probe in plugins or r.plugin in plugins}
    return profile.model_copy(update={"verifications": [
        v for v in profile.verifications if not any(v.recommendation.startswith(p)
                                                    for p in mine)]})


def _on_class(o: VerifyOutcome, here: str, other: bool) -> VerifyOutcome:
    """``o`` with the machine class it was judged on (``Verification.class_fingerprint``), a
    note when that is not the profile's class, and the host's rule on the figures: a CI wholly
    below 1 beyond the noise floor is a ``regression``, whatever the probe called it."""
    v = o.verification.model_copy(update={"class_fingerprint": here})
    note = o.note
    if (v.verdict in ("no-effect", "confirmed") and v.ci_high is not None
            and v.ci_high < 1.0 / (1.0 + (v.noise_floor or 0.0))):
        note = (f"the probe said {v.verdict}, but its CI [{v.ci_low:.3f}, {v.ci_high:.3f}] "
                f"lies wholly below 1 beyond the noise floor: a regression; {note}")
        v = v.model_copy(update={"verdict": "regression"})
    if other:
        note += (f"; measured on machine class {here}, not the profile's: stored as such, it "
                 "leaves nothing out of advisor emit")
    return VerifyOutcome(o.probe, o.recommendation, o.title, v, note, o.error, o.scope, o.redo)


def has_regression(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a verdict (alone or joint) is ``regression`` or a verdict reverses between
    alone and joint (``advisor verify`` then exits 1)."""
    return any(o.verdict == "regression" for o in outcomes) or has_reversal(outcomes)


def has_failure(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a probe's verify raised or overran (``advisor verify`` exits 3 then)."""
    return any(o.error for o in outcomes)


__all__ = ["verify_profile", "has_regression", "has_failure", "FAILED_NOTES"]
