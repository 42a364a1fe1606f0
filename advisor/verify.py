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
gets an equal share of what is left.  A probe's ``check`` and ``verify`` run through
``advisor.steps.StepRunner``, the executor ``advisor probe`` uses: one that raises, exits, returns
the wrong type or overruns its share (plus ``advisor.steps.GRACE_S``) gives ``not-measurable``
with ``VerifyOutcome.error`` set to the same text ``advisor probe`` records for that fault, and
the processes an abandoned step started are killed; the others still run.  The verifications
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
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from advisor.baseline import Baseline, all_default, all_in_env, setting_default
from advisor.joint import (JOINT_SUFFIX, REVERSAL_ID, REVERSALS, has_reversal,
                           joint_environment, joint_key, label, not_emitted, others, own_only,
                           redo_command, reversal_finding, reversal_findings)
from advisor.knobs import Knob
from advisor.models import Facts, Finding, Profile, Recommendation, Verification
from advisor.probe import Applicability, JointEnv, MeasureContext
# Default budgets (seconds) are those of ``advisor probe``: verify repeats a part of the same
# measurements.
from advisor.runner import DEFAULT_BUDGET_S, QUICK_BUDGET_S, thin_evidence
from advisor.steps import StepRunner
from advisor.verify_outcome import Scope, VerifyOutcome

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
    from advisor.errors import AdvisorError

    env = os.environ if environ is None else environ
    budget = time_budget_s if time_budget_s is not None else (
        QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    end = time.monotonic() + budget
    outcomes: dict[str, VerifyOutcome] = {}
    order: list[str] = []
    joint_order: list[str] = []
    todo: list[tuple[Any, Recommendation, Scope]] = []
    reuse: list[tuple[Any, Recommendation]] = []  # joint == alone measurement
    copy_alone: list[tuple[Any, Recommendation]] = []

    def settle(res, rec, verdict: str, note: str, error: Optional[str] = None,
               scope: Scope = "alone") -> None:
        key = f"{res.probe}:{rec.id}" if scope == "alone" else joint_key(res.probe, rec.id)
        outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, Verification(
            recommendation=key, verdict=verdict, time=_now()), note, error, scope)

    here_class = facts.class_fingerprint()
    records = _records(knobs, libraries)
    plan: Optional[JointEnv] = None
    plan_error: Optional[str] = None
    if joint:
        try:  # what emit writes once this run's verdicts replace the stored ones (a regression
            # stored for a recommendation verified now does not keep it out of its own test)
            plan = joint_environment(_without_verdicts(profile, plugins), records,
                                     against=against, environ=env)
        except AdvisorError as exc:
            plan_error = f"the profile's settings cannot be emitted together: {exc}"

    for res in profile.results:
        if plugins and res.probe not in plugins and res.plugin not in plugins:
            continue
        for rec in res.recommendations:
            order.append(f"{res.probe}:{rec.id}")
            measured = False
            if all_default(rec, facts, knobs, libraries):
                settle(res, rec, "no-effect", "every setting equals the library default: "
                       "nothing to measure")
            elif against is Baseline.ENV and all_in_env(rec, env):
                settle(res, rec, "no-effect", "the current environment already has these values")
            elif not rec.verifiable:
                settle(res, rec, "not-measurable", "the plugin marks it not re-measurable")
            elif res.probe not in probes:
                settle(res, rec, "not-measurable", f"probe {res.probe} is not installed here")
            elif not callable(getattr(probes[res.probe], "verify", None)):
                settle(res, rec, "not-measurable", f"probe {res.probe} has no verify()")
            else:
                todo.append((res, rec, "alone"))
                measured = True
            if not joint:
                continue
            joint_order.append(joint_key(res.probe, rec.id))
            if not measured:
                copy_alone.append((res, rec))
            elif plan is None:
                settle(res, rec, "not-measurable", plan_error or "no joint environment",
                       scope="joint")
            elif not any(s.kind == "env" and not s.is_default for s in rec.settings):
                settle(res, rec, "not-measurable", "only config settings: they are applied by "
                       "the plugin's own code, no environment carries them, so the joint "
                       "environment cannot change its measurement's advised side", scope="joint")
            elif not getattr(probes[res.probe], "joint_verify", False):
                settle(res, rec, "not-measurable", f"probe {res.probe}'s verify() does not take "
                       "a joint environment (no joint_verify)", scope="joint")
            elif not_emitted(rec, res.probe, plan):
                settle(res, rec, "not-measurable", "advisor emit leaves out "
                       f"{', '.join(not_emitted(rec, res.probe, plan))} (library version or "
                       "flavour recorded in the profile)", scope="joint")
            elif own_only(plan, res.probe, rec.id):
                reuse.append((res, rec))
            else:
                todo.append((res, rec, "joint"))
    todo.sort(key=lambda t: t[2] == "joint")  # every alone measurement first (stable)

    checked: dict[str, Applicability] = {}
    base_note = "against the current environment" if against is Baseline.ENV else \
        "against library defaults"
    with StepRunner() as steps:  # on leaving: what the steps left running is killed
        for i, (res, rec, scope) in enumerate(todo):
            key = f"{res.probe}:{rec.id}" if scope == "alone" else joint_key(res.probe, rec.id)
            probe = probes[res.probe]

            def progress(message: str, fraction: Optional[float], _key: str = key) -> None:
                if on_event is not None:
                    on_event(_key, message, fraction)

            share = max(0.0, end - time.monotonic()) / (len(todo) - i)
            deadline = time.monotonic() + share
            beside = steps.still_running()
            if res.probe not in checked:
                done = steps.run(lambda: probe.check(facts), step="check", owner=key,
                                 deadline=deadline, expect=Applicability)
                if not done.ok:
                    settle(res, rec, "not-measurable", FAILED_NOTES[done.kind], done.error,
                           scope)
                    progress("done", 1.0)
                    continue
                checked[res.probe] = done.value
            app = checked[res.probe]
            if not app.usable:
                settle(res, rec, "not-measurable", f"not usable here: {app.reason or '?'}",
                       scope=scope)
                continue
            ctx = MeasureContext(facts=facts, deadline=deadline, quick=quick, launcher=launcher,
                                 options=dict(options or {}), progress=progress, seed=seed,
                                 applicability=app, against=against,
                                 joint=plan if scope == "joint" else None)
            progress("verifying", 0.0)
            done = steps.run(lambda: probe.verify(rec, ctx), step="verify", owner=key,
                             deadline=deadline, expect=Verification)
            if not done.ok:
                settle(res, rec, "not-measurable", FAILED_NOTES[done.kind], done.error, scope)
                progress("done", 1.0)
                continue
            got = done.value.model_copy(update={
                "recommendation": key, "time": done.value.time or _now(),
                "evidence": [thin_evidence(e) for e in done.value.evidence]})
            note = base_note
            if scope == "joint":
                names = ", ".join(sorted(plan.advised)) if plan else ""
                note = f"joint emitted environment ({names}) {base_note}"
            if got.reason:
                note += f"; {got.reason}"
            left = steps.reap()
            if left:  # a well-behaved verify leaves nothing running
                note += (f"; it left {len(left)} process(es) running "
                         f"({', '.join(sorted(set(left)))}); advisor killed them")
            if beside:
                note += (f"; measured while the abandoned step of {', '.join(beside)} was "
                         "still running (its load may have slowed this measurement)")
            outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, got, note, None, scope)
            progress("done", 1.0)

    for res, rec in copy_alone + reuse:
        alone = outcomes[f"{res.probe}:{rec.id}"]
        key = joint_key(res.probe, rec.id)
        why = ("the joint environment holds only this recommendation's own settings: the alone "
               "measurement is the joint one" if (res, rec) in reuse else
               f"as alone: {alone.note}")
        other = others(plan, res.probe, rec.id) if plan is not None else []
        redo = ""
        if other and all_default(rec, facts, knobs, libraries):
            # advised == baseline for its own settings: no A/B can test it under the others
            why = (f"not measured jointly: {alone.note}; whether the default still wins with "
                   f"{', '.join(other)} only a re-probe under them can tell")
            redo = redo_command(profile, records, res.probe, rec.id)
        outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, alone.verification.model_copy(
            update={"recommendation": key}), why, alone.error, "joint", redo)

    other_class = here_class != profile.facts.class_fingerprint()
    outcomes = {k: _on_class(o, here_class, other_class) for k, o in outcomes.items()}
    findings: dict[str, list[Finding]] = {}
    for jkey in joint_order:
        j = outcomes[jkey]
        a = outcomes[f"{j.probe}:{j.recommendation}"]
        if plan is not None and (a.verdict, j.verdict) in REVERSALS:
            f = reversal_finding(a, j, profile, plan, records)
            findings.setdefault(j.probe, []).append(f)
            outcomes[jkey] = VerifyOutcome(
                j.probe, j.recommendation, j.title, j.verification,
                f"REVERSED ({a.verdict} alone): advice to be redone ({REVERSAL_ID}): "
                f"{f.remedy}; {j.note}", j.error, "joint")

    result = [outcomes[k] for k in order + joint_order]
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
    updated = profile.model_copy(update={"verifications": kept + stored, "results": results})
    return updated, result


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


__all__ = ["verify_profile", "all_default", "all_in_env", "setting_default", "has_regression",
           "has_reversal", "has_failure", "joint_environment", "joint_key", "redo_command",
           "reversal_finding", "reversal_findings", "others", "Baseline", "JOINT_SUFFIX",
           "REVERSAL_ID", "REVERSALS", "FAILED_NOTES"]
