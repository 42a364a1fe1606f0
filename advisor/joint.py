"""Joint verification: the environment ``advisor emit`` writes, as advised/baseline overlays,
and what a verdict that reverses between alone and joint means.

Design: "the unit of advice is the environment we emit".  ``advisor.verify`` measures each
recommendation alone and then in :func:`joint_environment` (every plugin's ``kind="env"``
settings together); a verdict that reverses (:data:`REVERSALS`) gives a :data:`REVERSAL_ID`
finding whose remedy is :func:`redo_command`.  Pure apart from reading the environment.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from advisor.models import Finding, Profile, Recommendation
from advisor.baseline import Baseline
from advisor.probe import JointEnv

if TYPE_CHECKING:  # pragma: no cover
    from advisor.plugins import Registry
    from advisor.verify_outcome import VerifyOutcome

#: Appended to ``Verification.recommendation`` of a joint-environment verdict.
JOINT_SUFFIX = "@joint"
#: Finding id of a verdict that reverses between alone and joint measurement.
REVERSAL_ID = "joint-reversal"
#: (alone, joint) verdict pairs that are a reversal: the sign of the effect changed.  A change
#: to or from ``no-effect`` is not one: it is within the noise floor on one side.
REVERSALS = frozenset({("confirmed", "regression"), ("regression", "confirmed")})


def joint_key(probe: str, recommendation: str) -> str:
    """``Verification.recommendation`` of a joint verdict: ``probe:recommendation@joint``."""
    return f"{probe}:{recommendation}{JOINT_SUFFIX}"


def label(probe: str, recommendation: str) -> str:
    """``probe/recommendation``: how the joint environment names a setting's source."""
    return f"{probe}/{recommendation}"


def joint_environment(profile: Profile, registry: "Registry", *,
                      against: Baseline = Baseline.DEFAULTS,
                      environ: Optional[Mapping[str, str]] = None,
                      without: Optional[tuple[str, str]] = None) -> JointEnv:
    """The environment ``advisor emit`` writes for ``profile``, as advised/baseline overlays.

    Pure apart from reading ``environ``.  The variables and values are exactly those of
    ``advisor.specs.writing.env_items`` of the emit selection (``advisor.emit.decide.select``
    with ``EmitOptions(comments=False)``: every plugin, settings at the library default left
    out, settings the recorded library version excludes left out, list variables merged);
    ``config`` settings have no environment form and are not in it.

    :param registry: the plugin registry (``advisor.plugins.Registry``): its knobs and library
        records decide, as in ``advisor emit``, which settings the recorded versions read.
    :param against: ``Baseline.ENV``: baseline = the current values (``environ``) and list
        variables appended to the current value (``advisor.specs.writing.MERGE_POLICY``), as
        sourcing the emitted file would do; ``Baseline.DEFAULTS``: baseline = every name removed
        (library defaults) and advised = the emitted values alone.
    :param environ: the current environment (default ``os.environ``).
    :param without: ``(probe, recommendation)`` to leave out (the others' environment, for a
        re-probe under it).
    :raises advisor.errors.EmitError: the settings cannot be emitted together (two plugins set
        one variable to different values, a bad name or value); the message names them.
    """
    from advisor.emit.decide import select
    from advisor.specs.selection import EmitOptions
    from advisor.specs.writing import env_items

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
    for item in env_items(select(profile, registry, EmitOptions(comments=False))):
        now = env.get(item.name)
        if against is Baseline.ENV:
            baseline[item.name] = now
            advised[item.name] = (f"{now}{item.separator}{item.value}"
                                  if item.separator and now else item.value)
        else:
            baseline[item.name] = None
            advised[item.name] = item.value
        sources[item.name] = tuple(dict.fromkeys(label(x.probe, x.recommendation)
                                                 for x in item.sources))
    return JointEnv(advised=advised, baseline=baseline, sources=sources)


def own_only(joint: JointEnv, probe: str, rec: str) -> bool:
    """True when every variable of ``joint`` comes only from ``probe``'s ``rec``."""
    me = label(probe, rec)
    return all(set(srcs) == {me} for srcs in joint.sources.values())


def not_emitted(rec: Recommendation, probe: str, joint: JointEnv) -> list[str]:
    """Names of ``rec``'s non-default env settings that the emitted environment leaves out."""
    me = label(probe, rec.id)
    return [s.name for s in rec.settings if s.kind == "env" and not s.is_default
            and me not in joint.sources.get(s.name, ())]


def others(joint: JointEnv, probe: str, rec: str) -> list[str]:
    """``probe/recommendation (NAME)`` for every other setting in ``joint``, sorted."""
    me = label(probe, rec)
    return sorted({f"{src} ({name})" for name, srcs in joint.sources.items()
                   for src in srcs if src != me})


def redo_command(profile: Profile, registry: "Registry", probe: str, rec: str) -> str:
    """Shell command that re-probes ``probe`` under every *other* recommendation's emitted
    environment (the interaction being what reversed the verdict): ``env NAME=VALUE ...
    advisor probe --plugin PROBE -o PROBE-joint.toml``.  Pure; values shell-quoted.  The
    probes' measurements inherit the advisor's environment in every child they start (only the
    variables a probe sweeps are overridden), so this measures under the joint environment."""
    from advisor.errors import AdvisorError
    try:
        env = joint_environment(profile, registry, without=(probe, rec)).advised
    except AdvisorError:  # the others cannot be emitted together: re-probe without them
        env = {}
    pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()) if v is not None)
    prefix = f"env {pairs} " if pairs else ""
    return f"{prefix}advisor probe --plugin {shlex.quote(probe)} -o {shlex.quote(probe)}-joint.toml"


def reversal_finding(alone: "VerifyOutcome", joint: "VerifyOutcome", profile: Profile,
                     env: JointEnv, registry: "Registry") -> Finding:
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
        message=(f"{label(alone.probe, alone.recommendation)}: {fig(alone)} alone but "
                 f"{fig(joint)} in the joint emitted environment with {with_}: the settings "
                 "interact and this advice must be redone under the joint environment"),
        remedy=("re-probe under the other settings: "
                f"{redo_command(profile, registry, alone.probe, alone.recommendation)}; then "
                "'advisor verify' again"),
        evidence=[e.id for e in joint.verification.evidence])


def reversal_findings(profile: Profile, outcomes: Optional[Sequence[VerifyOutcome]] = None
                      ) -> list[Finding]:
    """The :data:`REVERSAL_ID` findings stored in ``profile``; with ``outcomes`` only those of
    the recommendations verified jointly in that run (the message starts with
    ``probe/recommendation:``)."""
    mine = None if outcomes is None else {
        label(o.probe, o.recommendation) for o in outcomes if o.scope == "joint"}
    return [f for r in profile.results for f in r.findings if f.id == REVERSAL_ID
            and (mine is None or f.message.split(":", 1)[0] in mine)]


def has_reversal(outcomes: Sequence[VerifyOutcome]) -> bool:
    """True when a recommendation's alone and joint verdicts are opposite (exit 1)."""
    by = {(o.probe, o.recommendation, o.scope): o for o in outcomes}
    return any((by[(p, r, "alone")].verdict, o.verdict) in REVERSALS
               for (p, r, scope), o in by.items()
               if scope == "joint" and (p, r, "alone") in by)


__all__ = ["JOINT_SUFFIX", "REVERSAL_ID", "REVERSALS", "has_reversal", "joint_environment",
           "joint_key", "label", "not_emitted", "others", "own_only", "redo_command",
           "reversal_finding", "reversal_findings"]
