"""What ``advisor verify`` does with each recommendation, decided before anything is measured.

:func:`plan_tasks` reads the profile once and gives one :class:`Task` per recommendation and
scope (``alone``; with joint verification also ``joint``), in the order the outcomes are
listed: settled at once with a verdict and its reason (every setting equal to the default, not
re-measurable, probe missing or without ``verify``, nothing a joint environment can change),
measured by the probe, or copied from the alone outcome once that is known (not measured alone,
or a joint environment that holds only the recommendation's own settings).  Pure: no plugin code
runs here (``advisor.verify`` measures through ``advisor.steps.StepRunner``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Optional, Sequence

from advisor.baseline import Baseline, all_default, all_in_env
from advisor.joint import joint_key, not_emitted, own_only
from advisor.knobs import Knob
from advisor.models import Facts, PluginResult, Profile, Recommendation
from advisor.probe import JointEnv
from advisor.verify_outcome import Scope

__all__ = ["Action", "Task", "plan_tasks"]

#: ``settle``: the verdict is known without measuring; ``measure``: the probe's ``verify``
#: runs; ``copy``: the joint outcome is the alone one (not measured alone); ``reuse``: the
#: joint environment holds only the recommendation's own settings, so the alone measurement is
#: the joint one.
Action = Literal["settle", "measure", "copy", "reuse"]


@dataclass(frozen=True)
class Task:
    """One recommendation in one scope, and what verify does with it.

    Attributes:
        res: the probe result holding the recommendation.
        rec: the recommendation.
        scope: ``alone`` or ``joint``.
        action: see :data:`Action`.
        verdict: the verdict of a ``settle`` task (``no-effect`` or ``not-measurable``).
        note: why (a ``settle`` task's reason).
    """

    res: PluginResult
    rec: Recommendation
    scope: Scope
    action: Action
    verdict: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        """``probe:recommendation``, ``@joint`` appended in the joint scope."""
        if self.scope == "alone":
            return f"{self.res.probe}:{self.rec.id}"
        return joint_key(self.res.probe, self.rec.id)


def _alone(res: PluginResult, rec: Recommendation, probes: Mapping[str, Any], facts: Facts,
           knobs: Sequence[Knob], libraries: Mapping[str, Any], against: Baseline,
           env: Mapping[str, str]) -> Task:
    def settle(verdict: str, note: str) -> Task:
        return Task(res, rec, "alone", "settle", verdict, note)

    if all_default(rec, facts, knobs, libraries):
        return settle("no-effect", "every setting equals the library default: nothing to "
                      "measure")
    if against is Baseline.ENV and all_in_env(rec, env):
        return settle("no-effect", "the current environment already has these values")
    if not rec.verifiable:
        return settle("not-measurable", "the plugin marks it not re-measurable")
    if res.probe not in probes:
        return settle("not-measurable", f"probe {res.probe} is not installed here")
    if not callable(getattr(probes[res.probe], "verify", None)):
        return settle("not-measurable", f"probe {res.probe} has no verify()")
    return Task(res, rec, "alone", "measure")


def _joint(res: PluginResult, rec: Recommendation, probes: Mapping[str, Any], measured: bool,
           plan: Optional[JointEnv], plan_error: Optional[str]) -> Task:
    def settle(note: str) -> Task:
        return Task(res, rec, "joint", "settle", "not-measurable", note)

    if not measured:
        return Task(res, rec, "joint", "copy")
    if plan is None:
        return settle(plan_error or "no joint environment")
    if not any(s.kind == "env" and not s.is_default for s in rec.settings):
        return settle("only config settings: they are applied by the plugin's own code, no "
                      "environment carries them, so the joint environment cannot change its "
                      "measurement's advised side")
    if not getattr(probes[res.probe], "joint_verify", False):
        return settle(f"probe {res.probe}'s verify() does not take a joint environment (no "
                      "joint_verify)")
    if not_emitted(rec, res.probe, plan):
        return settle(f"advisor emit leaves out {', '.join(not_emitted(rec, res.probe, plan))} "
                      "(library version or flavour recorded in the profile)")
    if own_only(plan, res.probe, rec.id):
        return Task(res, rec, "joint", "reuse")
    return Task(res, rec, "joint", "measure")


def plan_tasks(profile: Profile, probes: Mapping[str, Any], *, facts: Facts,
               knobs: Sequence[Knob], libraries: Mapping[str, Any],
               plugins: Optional[set[str]], against: Baseline, env: Mapping[str, str],
               joint: bool, plan: Optional[JointEnv], plan_error: Optional[str]
               ) -> tuple[list[Task], list[Task]]:
    """The tasks of one ``advisor verify``: ``(alone, joint)``, each in profile order (the
    joint list empty unless ``joint``).  ``plugins``: probe or plugin names to verify (None:
    all); ``plan``: the joint emitted environment (None: it could not be built, ``plan_error``
    says why)."""
    alone: list[Task] = []
    together: list[Task] = []
    for res in profile.results:
        if plugins and res.probe not in plugins and res.plugin not in plugins:
            continue
        for rec in res.recommendations:
            first = _alone(res, rec, probes, facts, knobs, libraries, against, env)
            alone.append(first)
            if joint:
                together.append(_joint(res, rec, probes, first.action == "measure", plan,
                                       plan_error))
    return alone, together
