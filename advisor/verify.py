"""``advisor verify``: does the advice help on this machine?  Re-measure and give a verdict.

For each recommendation of a profile (optionally only some probes):

* every setting equal to the library default -> verdict ``no-effect`` without measuring (a value
  equal to the default cannot change what the library does);  with ``against_env`` also when the
  current environment already holds every recommended value;
* ``verifiable=False``, probe not installed, probe without ``verify``, or ``check`` says the
  feature is unusable here -> ``not-measurable`` (with the reason in ``VerifyOutcome.note``);
* otherwise the owning probe's ``verify(recommendation, ctx)`` re-runs its measurement in fresh
  processes, recommended settings vs the library defaults (``ctx.options["against"] == "env"``:
  vs the current environment), interleaved through ``advisor.measure``, and returns a
  ``models.Verification`` (verdict confirmed / no-effect / regression, ratio advised/baseline > 1
  better, bootstrap CI, noise floor, evidence).

The time budget (seconds) is shared like ``advisor probe``'s: each measured recommendation gets an
equal share of what is left.  A probe's ``verify`` runs through ``advisor.steps.call_with_timeout``:
one that raises or overruns its share (plus ``advisor.runner.GRACE_S``) gives ``not-measurable``
with ``VerifyOutcome.error`` set; the others still run.  The verifications are returned in an updated profile (older verifications of the same
recommendation are replaced) for the caller to save.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Optional, Sequence

from advisor.knobs import Knob
from advisor.models import Facts, Profile, Recommendation, Setting, Verification
from advisor.probe import Applicability, MeasureContext
# Default budgets (seconds) are those of ``advisor probe``: verify repeats a part of the same
# measurements.  GRACE_S: how long a step may overrun before it is abandoned.
from advisor.runner import DEFAULT_BUDGET_S, GRACE_S, QUICK_BUDGET_S, thin_evidence

#: ``on_event(key, message, fraction)``: key is ``probe:recommendation``.
EventCallback = Callable[[str, str, Optional[float]], None]


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

    @property
    def verdict(self) -> str:
        return self.verification.verdict

    def to_dict(self) -> dict[str, Any]:
        v = self.verification
        return {"probe": self.probe, "recommendation": self.recommendation, "title": self.title,
                "verdict": v.verdict, "ratio": v.ratio, "ci_low": v.ci_low, "ci_high": v.ci_high,
                "noise_floor": v.noise_floor, "evidence": [e.id for e in v.evidence],
                "note": self.note, "error": self.error}


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
    :param plugins: probe or plugin names to verify (None: all).
    :param time_budget_s: seconds for all measurements (default ``DEFAULT_BUDGET_S``, with
        ``quick`` ``QUICK_BUDGET_S``).
    :param against_env: baseline is the current environment instead of the library defaults.
    :param environ: the current environment (default ``os.environ``).
    :return: ``(profile with verifications, outcomes in profile order)``.  Never raises for a
        probe's own faults.
    """
    from advisor.steps import StepAborted, StepTimeout, call_with_timeout

    env = os.environ if environ is None else environ
    budget = time_budget_s if time_budget_s is not None else (
        QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    end = time.monotonic() + budget
    todo: list[tuple[Any, Recommendation]] = []
    outcomes: dict[tuple[str, str], VerifyOutcome] = {}
    order: list[tuple[str, str]] = []

    def settle(res, rec, verdict: str, note: str, error: Optional[str] = None) -> None:
        key = (res.probe, rec.id)
        outcomes[key] = VerifyOutcome(res.probe, rec.id, rec.title, Verification(
            recommendation=f"{res.probe}:{rec.id}", verdict=verdict, time=_now()), note, error)

    for res in profile.results:
        if plugins and res.probe not in plugins and res.plugin not in plugins:
            continue
        for rec in res.recommendations:
            order.append((res.probe, rec.id))
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
                todo.append((res, rec))

    checked: dict[str, Applicability] = {}
    for i, (res, rec) in enumerate(todo):
        key = f"{res.probe}:{rec.id}"
        probe = probes[res.probe]

        def progress(message: str, fraction: Optional[float], _key: str = key) -> None:
            if on_event is not None:
                on_event(_key, message, fraction)

        share = max(0.0, end - time.monotonic()) / (len(todo) - i)
        deadline = time.monotonic() + share
        try:
            if res.probe not in checked:
                app = call_with_timeout(lambda: probe.check(facts), share + GRACE_S)
                if not isinstance(app, Applicability):
                    raise TypeError(f"check() returned {type(app).__name__}, not Applicability")
                checked[res.probe] = app
            app = checked[res.probe]
            if not app.usable:
                settle(res, rec, "not-measurable", f"not usable here: {app.reason or '?'}")
                continue
            opts = dict(options or {})
            if against_env:
                opts["against"] = "env"
            ctx = MeasureContext(facts=facts, deadline=deadline, quick=quick, launcher=launcher,
                                 options=opts, progress=progress, seed=seed, applicability=app)
            progress("verifying", 0.0)
            got = call_with_timeout(lambda: probe.verify(rec, ctx),
                                     max(0.0, deadline - time.monotonic()) + GRACE_S)
            if not isinstance(got, Verification):
                raise TypeError(f"verify() returned {type(got).__name__}, not Verification")
            got = got.model_copy(update={"recommendation": key, "time": got.time or _now(),
                                         "evidence": [thin_evidence(e) for e in got.evidence]})
            outcomes[(res.probe, rec.id)] = VerifyOutcome(
                res.probe, rec.id, rec.title, got,
                "against the current environment" if against_env else "against library defaults")
        except StepTimeout as exc:
            settle(res, rec, "not-measurable", "verification ran out of time", f"{exc}")
        except StepAborted as exc:
            settle(res, rec, "not-measurable", "verification aborted", f"{exc}")
        except Exception as exc:
            settle(res, rec, "not-measurable", "verification failed", _why(exc))
        progress("done", 1.0)

    result = [outcomes[k] for k in order]
    new = {o.verification.recommendation for o in result}
    kept = [v for v in profile.verifications if v.recommendation not in new]
    stored = [o.verification.model_copy(update={"reason": o.error or o.note or None})
              for o in result]
    updated = profile.model_copy(update={"verifications": kept + stored})
    return updated, result


def has_regression(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a verdict is ``regression`` (``advisor verify`` then exits 1)."""
    return any(o.verdict == "regression" for o in outcomes)


def has_failure(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a probe's verify raised or overran (``advisor verify`` exits 3 then)."""
    return any(o.error for o in outcomes)


def _fmt(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.3f}"


def table_rows(outcomes: Sequence[VerifyOutcome]) -> list[list[str]]:
    """Rows for the human table: probe, recommendation, verdict, ratio, CI, noise floor, note."""
    rows = []
    for o in outcomes:
        v = o.verification
        ci = f"[{_fmt(v.ci_low)}, {_fmt(v.ci_high)}]" if v.ci_low is not None else ""
        note = o.note + (f" ({o.error})" if o.error else "")
        rows.append([o.probe, o.recommendation, v.verdict, _fmt(v.ratio), ci,
                     _fmt(v.noise_floor), note])
    return rows


def to_json(outcomes: Sequence[VerifyOutcome]) -> str:
    """JSON array of outcomes (see ``VerifyOutcome.to_dict``)."""
    return json.dumps([o.to_dict() for o in outcomes], indent=2) + "\n"


__all__ = ["VerifyOutcome", "verify_profile", "all_default", "all_in_env", "setting_default",
           "has_regression", "has_failure", "table_rows", "to_json"]
