"""``advisor verify``: does the advice help on this machine?  Re-measure and give a verdict.

For each recommendation of a profile (optionally only some probes):

* every setting equal to the library default -> verdict ``no-effect`` without measuring (a value
  equal to the default cannot change what the library does);  with ``against_env`` also when the
  current environment already holds every recommended value;
* ``verifiable=False``, probe not installed, probe without ``verify``, or ``check`` says the
  feature is unusable here -> ``not-measurable`` (with the reason in ``VerifyOutcome.note``);
* otherwise the owning probe's ``verify(recommendation, ctx)`` re-runs its measurement in fresh
  processes, recommended settings vs the library defaults (``ctx.against == "env"``: vs the
  current environment), interleaved through ``advisor.measure``, and returns a
  ``models.Verification`` (verdict confirmed / no-effect / regression, ratio advised/baseline > 1
  better, bootstrap CI, noise floor, evidence).

Joint verification (``joint=True``; the default of ``advisor verify``; design: "the unit of advice
is the environment we emit"): the emitted environment is built from the whole profile exactly as
``advisor emit`` writes it (:func:`joint_environment` -> ``advisor.emit.common.env_items``: the
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
gets an equal share of what is left.  A probe's ``verify`` runs through ``advisor.steps.call_with_timeout``:
one that raises or overruns its share (plus ``advisor.runner.GRACE_S``) gives ``not-measurable``
with ``VerifyOutcome.error`` set; the others still run.  The verifications are returned in an updated profile (older verifications of the same
recommendation are replaced) for the caller to save.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Literal, Mapping, Optional, Sequence

from advisor.knobs import Knob
from advisor.models import Facts, Finding, Profile, Recommendation, Setting, Verification
from advisor.probe import Applicability, JointEnv, MeasureContext
# Default budgets (seconds) are those of ``advisor probe``: verify repeats a part of the same
# measurements.  GRACE_S: how long a step may overrun before it is abandoned.
from advisor.runner import DEFAULT_BUDGET_S, GRACE_S, QUICK_BUDGET_S, thin_evidence

#: ``on_event(key, message, fraction)``: key is ``probe:recommendation`` (``@joint`` appended
#: for the joint measurement).
EventCallback = Callable[[str, str, Optional[float]], None]

#: Appended to ``Verification.recommendation`` of a joint-environment verdict.
JOINT_SUFFIX = "@joint"
#: Finding id of a verdict that reverses between alone and joint measurement.
REVERSAL_ID = "joint-reversal"
#: (alone, joint) verdict pairs that are a reversal: the sign of the effect changed.  A change
#: to or from ``no-effect`` is not one: it is within the noise floor on one side.
REVERSALS = frozenset({("confirmed", "regression"), ("regression", "confirmed")})
Scope = Literal["alone", "joint"]


@dataclass(frozen=True)
class VerifyOutcome:
    """One recommendation's verification plus what the table shows and the profile does not
    store: the probe, the recommendation's title, why (``note``) and a failure (``error``)."""

    probe: str
    recommendation: str
    title: str
    verification: Verification
    note: str = ""
    error: Optional[str] = None
    scope: Scope = "alone"
    #: a shell command that re-probes this recommendation under the others' emitted settings,
    #: when only a re-probe can say whether it still holds jointly (printed on its own line)
    redo: str = ""

    @property
    def verdict(self) -> str:
        return self.verification.verdict

    def to_dict(self) -> dict[str, Any]:
        v = self.verification
        return {"probe": self.probe, "recommendation": self.recommendation, "title": self.title,
                "scope": self.scope, "measured": measured(self), "verdict": v.verdict,
                "ratio": v.ratio, "ci_low": v.ci_low, "ci_high": v.ci_high,
                "noise_floor": v.noise_floor, "evidence": [e.id for e in v.evidence],
                "note": self.note, "error": self.error, "redo": self.redo or None}


def _norm(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    low = text.lower()
    if low in ("true", "yes", "on"):
        return "1"
    if low in ("false", "no", "off"):
        return "0"
    try:
        f = float(text)
        return str(int(f)) if f.is_integer() else repr(f)
    except ValueError:
        return text


def setting_default(s: Setting, facts: Optional[Facts], knobs: Sequence[Knob] = ()) -> Any:
    """The library default ``s`` replaces: ``Setting.default``, else the knob record's default
    for the detected version of the library (None when unknown)."""
    if s.default is not None:
        return s.default
    from advisor.lint import library_version

    version = library_version(facts, s.library)
    for k in knobs:
        if k.library == s.library and (s.name == k.name or s.name in k.aliases) and (
                k.flavour is None or s.flavour is None or k.flavour == s.flavour):
            return k.default_for(version)
    return None


def all_default(rec: Recommendation, facts: Optional[Facts], knobs: Sequence[Knob] = ()) -> bool:
    """True when ``rec`` has settings and each equals its library default (``is_default`` or
    value == default): applying it cannot change anything."""
    if not rec.settings:
        return False
    for s in rec.settings:
        if s.is_default:
            continue
        d = setting_default(s, facts, knobs)
        if d is None or _norm(d) != _norm(s.value):
            return False
    return True


def all_in_env(rec: Recommendation, environ: Mapping[str, str]) -> bool:
    """True when every env setting of ``rec`` already has its value in ``environ``."""
    env = [s for s in rec.settings if s.kind == "env"]
    if not env or len(env) != len(rec.settings):
        return False
    for s in env:
        cur = environ.get(s.name)
        if cur is None:
            return False
        if s.separator:
            if _norm(s.value) not in [_norm(x) for x in cur.split(s.separator)]:
                return False
        elif _norm(cur) != _norm(s.value):
            return False
    return True


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _why(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def joint_key(probe: str, recommendation: str) -> str:
    """``Verification.recommendation`` of a joint verdict: ``probe:recommendation@joint``."""
    return f"{probe}:{recommendation}{JOINT_SUFFIX}"


def _label(probe: str, recommendation: str) -> str:
    return f"{probe}/{recommendation}"


def joint_environment(profile: Profile, *, against_env: bool = False,
                      environ: Optional[Mapping[str, str]] = None,
                      without: Optional[tuple[str, str]] = None) -> JointEnv:
    """The environment ``advisor emit`` writes for ``profile``, as advised/baseline overlays.

    Pure apart from reading ``environ``.  The variables and values are exactly those of
    ``advisor.emit.common.env_items(profile, EmitOptions())`` (every plugin, settings at the
    library default left out, settings the recorded library version excludes left out, list
    variables merged); ``config`` settings have no environment form and are not in it.

    :param against_env: baseline = the current values (``environ``) and list variables appended
        to the current value (``advisor.emit.common.MERGE_POLICY``), as sourcing the emitted
        file would do; otherwise baseline = every name removed (library defaults) and advised =
        the emitted values alone.
    :param environ: the current environment (default ``os.environ``).
    :param without: ``(probe, recommendation)`` to leave out (the others' environment, for a
        re-probe under it).
    :raises advisor.errors.EmitError: the settings cannot be emitted together (two plugins set
        one variable to different values, a bad name or value); the message names them.
    """
    from advisor.emit import EmitOptions
    from advisor.emit.common import env_items

    env = os.environ if environ is None else environ
    if without is not None:
        probe, rec_id = without
        results = [r.model_copy(update={"recommendations": [
            x for x in r.recommendations if not (r.probe == probe and x.id == rec_id)]})
            for r in profile.results]
        profile = profile.model_copy(update={"results": results})
    advised: dict[str, Optional[str]] = {}
    baseline: dict[str, Optional[str]] = {}
    sources: dict[str, tuple[str, ...]] = {}
    for item in env_items(profile, EmitOptions(comments=False)):
        now = env.get(item.name)
        if against_env:
            baseline[item.name] = now
            advised[item.name] = (f"{now}{item.separator}{item.value}"
                                  if item.separator and now else item.value)
        else:
            baseline[item.name] = None
            advised[item.name] = item.value
        sources[item.name] = tuple(dict.fromkeys(_label(x.probe, x.recommendation)
                                                 for x in item.sources))
    return JointEnv(advised=advised, baseline=baseline, sources=sources)


def _own_only(joint: JointEnv, probe: str, rec: str) -> bool:
    """True when every variable of ``joint`` comes only from ``probe``'s ``rec``."""
    me = _label(probe, rec)
    return all(set(srcs) == {me} for srcs in joint.sources.values())


def _not_emitted(rec: Recommendation, probe: str, joint: JointEnv) -> list[str]:
    """Names of ``rec``'s non-default env settings that the emitted environment leaves out."""
    me = _label(probe, rec.id)
    return [s.name for s in rec.settings if s.kind == "env" and not s.is_default
            and me not in joint.sources.get(s.name, ())]


def others(joint: JointEnv, probe: str, rec: str) -> list[str]:
    """``probe/recommendation (NAME)`` for every other setting in ``joint``, sorted."""
    me = _label(probe, rec)
    return sorted({f"{src} ({name})" for name, srcs in joint.sources.items()
                   for src in srcs if src != me})


def redo_command(profile: Profile, probe: str, rec: str) -> str:
    """Shell command that re-probes ``probe`` under every *other* recommendation's emitted
    environment (the interaction being what reversed the verdict): ``env NAME=VALUE ...
    advisor probe --plugin PROBE -o PROBE-joint.toml``.  Pure; values shell-quoted.  The
    probes' measurements inherit the advisor's environment in every child they start (only the
    variables a probe sweeps are overridden), so this measures under the joint environment."""
    from advisor.errors import AdvisorError
    try:
        env = joint_environment(profile, without=(probe, rec)).advised
    except AdvisorError:  # the others cannot be emitted together: re-probe without them
        env = {}
    pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()) if v is not None)
    prefix = f"env {pairs} " if pairs else ""
    return f"{prefix}advisor probe --plugin {shlex.quote(probe)} -o {shlex.quote(probe)}-joint.toml"


def reversal_finding(alone: VerifyOutcome, joint: VerifyOutcome, profile: Profile,
                     env: JointEnv) -> Finding:
    """The :data:`REVERSAL_ID` finding for one recommendation whose alone and joint verdicts
    are opposite (see :data:`REVERSALS`).  Severity ``error``: the advice no longer holds in the
    environment users get; the remedy is :func:`redo_command`."""
    def fig(o: VerifyOutcome) -> str:
        v = o.verification
        if v.ratio is None:
            return o.verdict
        ci = f", CI {v.ci_low:.3f}-{v.ci_high:.3f}" if v.ci_low is not None else ""
        return f"{o.verdict} (ratio {v.ratio:.3f}{ci})"

    with_ = ", ".join(others(env, alone.probe, alone.recommendation)) or "no other setting"
    return Finding(
        id=REVERSAL_ID, severity="error",
        message=(f"{_label(alone.probe, alone.recommendation)}: {fig(alone)} alone but "
                 f"{fig(joint)} in the joint emitted environment with {with_}: the settings "
                 "interact and this advice must be redone under the joint environment"),
        remedy=("re-probe under the other settings: "
                f"{redo_command(profile, alone.probe, alone.recommendation)}; then "
                "'advisor verify' again"),
        evidence=[e.id for e in joint.verification.evidence])


def verify_profile(
    profile: Profile,
    probes: Mapping[str, Any],
    *,
    facts: Facts,
    knobs: Sequence[Knob] = (),
    plugins: Optional[set[str]] = None,
    time_budget_s: Optional[float] = None,
    quick: bool = False,
    against_env: bool = False,
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
    :param plugins: probe or plugin names to verify (None: all).  The joint environment is
        always the whole profile's.
    :param time_budget_s: seconds for all measurements (default ``DEFAULT_BUDGET_S``, with
        ``quick`` ``QUICK_BUDGET_S``).
    :param against_env: baseline is the current environment instead of the library defaults.
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
    from advisor.steps import StepAborted, StepTimeout, call_with_timeout

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

    plan: Optional[JointEnv] = None
    plan_error: Optional[str] = None
    if joint:
        try:
            plan = joint_environment(profile, against_env=against_env, environ=env)
        except AdvisorError as exc:
            plan_error = f"the profile's settings cannot be emitted together: {exc}"

    for res in profile.results:
        if plugins and res.probe not in plugins and res.plugin not in plugins:
            continue
        for rec in res.recommendations:
            order.append(f"{res.probe}:{rec.id}")
            measured = False
            if all_default(rec, facts, knobs):
                settle(res, rec, "no-effect", "every setting equals the library default: "
                       "nothing to measure")
            elif against_env and all_in_env(rec, env):
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
            elif _not_emitted(rec, res.probe, plan):
                settle(res, rec, "not-measurable", "advisor emit leaves out "
                       f"{', '.join(_not_emitted(rec, res.probe, plan))} (library version or "
                       "flavour recorded in the profile)", scope="joint")
            elif _own_only(plan, res.probe, rec.id):
                reuse.append((res, rec))
            else:
                todo.append((res, rec, "joint"))
    todo.sort(key=lambda t: t[2] == "joint")  # every alone measurement first (stable)

    checked: dict[str, Applicability] = {}
    for i, (res, rec, scope) in enumerate(todo):
        key = f"{res.probe}:{rec.id}" if scope == "alone" else joint_key(res.probe, rec.id)
        probe = probes[res.probe]

        def progress(message: str, fraction: Optional[float], _key: str = key) -> None:
            if on_event is not None:
                on_event(_key, message, fraction)

        share = max(0.0, end - time.monotonic()) / (len(todo) - i)
        deadline = time.monotonic() + share
        base_note = "against the current environment" if against_env else \
            "against library defaults"
        try:
            if res.probe not in checked:
                app = call_with_timeout(lambda: probe.check(facts), share + GRACE_S)
                if not isinstance(app, Applicability):
                    raise TypeError(f"check() returned {type(app).__name__}, not Applicability")
                checked[res.probe] = app
            app = checked[res.probe]
            if not app.usable:
                settle(res, rec, "not-measurable", f"not usable here: {app.reason or '?'}",
                       scope=scope)
                continue
            ctx = MeasureContext(facts=facts, deadline=deadline, quick=quick, launcher=launcher,
                                 options=dict(options or {}), progress=progress, seed=seed,
                                 applicability=app,
                                 against="env" if against_env else "defaults",
                                 joint=plan if scope == "joint" else None)
            progress("verifying", 0.0)
            got = call_with_timeout(lambda: probe.verify(rec, ctx),
                                     max(0.0, deadline - time.monotonic()) + GRACE_S)
            if not isinstance(got, Verification):
                raise TypeError(f"verify() returned {type(got).__name__}, not Verification")
            got = got.model_copy(update={"recommendation": key, "time": got.time or _now(),
                                         "evidence": [thin_evidence(e) for e in got.evidence]})
            note = base_note
            if scope == "joint":
                names = ", ".join(sorted(plan.advised)) if plan else ""
                note = f"joint emitted environment ({names}) {base_note}"
            outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, got,
                                          note + (f"; {got.reason}" if got.reason else ""),
                                          None, scope)
        except StepTimeout as exc:
            settle(res, rec, "not-measurable", "verification ran out of time", f"{exc}", scope)
        except StepAborted as exc:
            settle(res, rec, "not-measurable", "verification aborted", f"{exc}", scope)
        except Exception as exc:
            settle(res, rec, "not-measurable", "verification failed", _why(exc), scope)
        progress("done", 1.0)

    for res, rec in copy_alone + reuse:
        alone = outcomes[f"{res.probe}:{rec.id}"]
        key = joint_key(res.probe, rec.id)
        why = ("the joint environment holds only this recommendation's own settings: the alone "
               "measurement is the joint one" if (res, rec) in reuse else
               f"as alone: {alone.note}")
        other = others(plan, res.probe, rec.id) if plan is not None else []
        redo = ""
        if other and all_default(rec, facts, knobs):
            # advised == baseline for its own settings: no A/B can test it under the others
            why = (f"not measured jointly: {alone.note}; whether the default still wins with "
                   f"{', '.join(other)} only a re-probe under them can tell")
            redo = redo_command(profile, res.probe, rec.id)
        outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, alone.verification.model_copy(
            update={"recommendation": key}), why, alone.error, "joint", redo)

    findings: dict[str, list[Finding]] = {}
    for jkey in joint_order:
        j = outcomes[jkey]
        a = outcomes[f"{j.probe}:{j.recommendation}"]
        if plan is not None and (a.verdict, j.verdict) in REVERSALS:
            f = reversal_finding(a, j, profile, plan)
            findings.setdefault(j.probe, []).append(f)
            outcomes[jkey] = VerifyOutcome(
                j.probe, j.recommendation, j.title, j.verification,
                f"REVERSED ({a.verdict} alone): advice to be redone ({REVERSAL_ID}): "
                f"{f.remedy}; {j.note}", j.error, "joint")

    result = [outcomes[k] for k in order + joint_order]
    new = {o.verification.recommendation for o in result}
    kept = [v for v in profile.verifications if v.recommendation not in new]
    stored = [o.verification.model_copy(update={"reason": o.error or o.note or None})
              for o in result]
    verified = {(o.probe, o.recommendation) for o in result if o.scope == "joint"}
    results = []
    for r in profile.results:
        if any(p == r.probe for p, _ in verified):
            mine = {_label(r.probe, rid) for p, rid in verified if p == r.probe}
            old = [f for f in r.findings if not (
                f.id == REVERSAL_ID and f.message.split(":", 1)[0] in mine)]
            r = r.model_copy(update={"findings": old + findings.get(r.probe, [])})
        results.append(r)
    updated = profile.model_copy(update={"verifications": kept + stored, "results": results})
    return updated, result


def reversal_findings(profile: Profile, outcomes: Optional[Sequence[VerifyOutcome]] = None
                      ) -> list[Finding]:
    """The :data:`REVERSAL_ID` findings stored in ``profile``; with ``outcomes`` only those of
    the recommendations verified jointly in that run (the message starts with
    ``probe/recommendation:``)."""
    mine = None if outcomes is None else {
        _label(o.probe, o.recommendation) for o in outcomes if o.scope == "joint"}
    return [f for r in profile.results for f in r.findings if f.id == REVERSAL_ID
            and (mine is None or f.message.split(":", 1)[0] in mine)]


def has_reversal(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a recommendation's alone and joint verdicts are opposite (exit 1)."""
    by = {(o.probe, o.recommendation, o.scope): o for o in outcomes}
    return any((by[(p, r, "alone")].verdict, o.verdict) in REVERSALS
               for (p, r, scope), o in by.items()
               if scope == "joint" and (p, r, "alone") in by)


def has_regression(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a verdict (alone or joint) is ``regression`` or a verdict reverses between
    alone and joint (``advisor verify`` then exits 1)."""
    return any(o.verdict == "regression" for o in outcomes) or has_reversal(outcomes)


def has_failure(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a probe's verify raised or overran (``advisor verify`` exits 3 then)."""
    return any(o.error for o in outcomes)


def _fmt(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.3f}"


def measured(o: VerifyOutcome) -> str:
    """What the outcome's measurement compared: the recommendation id, plus the deciding size
    and metric when the probe's evidence names it (evidence value ``decided_by``)."""
    for e in o.verification.evidence:
        by = e.values.get("decided_by")
        if by:
            return f"{o.recommendation}: {_sizes_readable(str(by))}"
    return o.recommendation


def _sizes_readable(text: str) -> str:
    """``'268435456 bytes'`` -> ``'256 MiB'`` inside a text (binary units; exact or one decimal)."""
    def one(m: "re.Match[str]") -> str:
        n = int(m.group(1))
        for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
            if n >= 1 << shift:
                v = n / (1 << shift)
                return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
        return f"{n} B"

    return re.sub(r"\b(\d+) ?(?:bytes|B)\b", one, text)


def _cells(o: VerifyOutcome) -> dict[str, str]:
    """The printable cells of one outcome: ratio, CI, noise floor, note (with the error)."""
    v = o.verification
    return {"ratio": _fmt(v.ratio),
            "ci": f"[{_fmt(v.ci_low)}, {_fmt(v.ci_high)}]" if v.ci_low is not None else "",
            "floor": _fmt(v.noise_floor), "note": o.note + (f" ({o.error})" if o.error else "")}


def table_rows(outcomes: Sequence[VerifyOutcome]) -> list[list[str]]:
    """Rows for the per-recommendation (alone) table: probe, recommendation, verdict, ratio,
    CI, noise floor, note."""
    return [[o.probe, o.recommendation, o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "alone" for c in [_cells(o)]]


def joint_rows(outcomes: Sequence[VerifyOutcome]) -> list[list[str]]:
    """Rows for the joint-environment table, one per plugin recommendation, in the alone
    table's order: probe, what was measured, verdict, ratio advised/baseline, CI, A/A noise
    floor, note."""
    return [[o.probe, measured(o), o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "joint" for c in [_cells(o)]]


def to_json(outcomes: Sequence[VerifyOutcome], findings: Sequence[Finding] = ()) -> str:
    """JSON object ``{"verifications": [alone outcomes], "joint": [joint outcomes],
    "findings": [reversal findings]}`` (outcomes as ``VerifyOutcome.to_dict``)."""
    data = {"verifications": [o.to_dict() for o in outcomes if o.scope == "alone"],
            "joint": [o.to_dict() for o in outcomes if o.scope == "joint"],
            "findings": [f.model_dump(mode="json") for f in findings]}
    return json.dumps(data, indent=2) + "\n"


__all__ = ["VerifyOutcome", "verify_profile", "all_default", "all_in_env", "setting_default",
           "has_regression", "has_reversal", "has_failure", "table_rows", "joint_rows",
           "to_json", "joint_environment", "joint_key", "redo_command", "reversal_finding",
           "reversal_findings", "measured", "others", "JOINT_SUFFIX", "REVERSAL_ID",
           "REVERSALS"]
