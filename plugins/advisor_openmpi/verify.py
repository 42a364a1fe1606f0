"""openmpi's part of ``advisor verify``: ``OpenMpiProbe.verify(recommendation, ctx)``.

Re-runs the probe's own ping-pong sweep (``advisor_openmpi.sweep.run_configs``: interleaved
independent launches through ``advisor.measure.interleave`` / ``run_mpi``) with the advised
settings vs the baseline, and decides with ``advisor_openmpi.decide`` (per size and metric the
harness's ``compare`` against the A/A noise floor of the two).

* advised: every variable a path overlay clears (``paths.PATH_VARS``) removed, then the
  recommendation's own ``env`` settings (or, with ``ctx.joint``, the whole emitted environment:
  ``ctx.joint.advised``);
* baseline: those variables removed (library defaults: Open MPI's own selection), or with
  ``ctx.against == "env"`` their current values; with ``ctx.joint``: ``ctx.joint.baseline``.

Sizes: the quick sweep's sizes (``measure.QUICK_SIZES``) plus the recommendation's own limit
values (bytes).  Verdict: ``regression`` when any size is worse beyond noise, ``confirmed``
when some size is better and none worse, else ``no-effect``; the ratio and CI are those of
the deciding size and metric (evidence value ``decided_by``).
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

from advisor.models import Recommendation, Verification
from advisor.baseline import Baseline
from advisor.probe import MeasureContext

from advisor_openmpi import paths
from advisor_openmpi.decide import decide
from advisor_openmpi.evidence import VERIFY
from advisor_openmpi.measure import QUICK_REPEATS, QUICK_SIZES, QUICK_TARGET_S
from advisor_openmpi.sweep import run_configs

ADVISED, BASELINE = "advised", "baseline"
#: Launches per configuration in a full verify (A/A repeats: at least 2).
REPEATS = 3


def overlays(rec: Recommendation, ctx: MeasureContext,
             environ: Mapping[str, str]) -> tuple[dict, dict]:
    """(advised, baseline) env overlays (None removes a variable); see the module docstring."""
    names = set(paths.PATH_VARS) | {s.name for s in rec.settings if s.kind == "env"}
    cleared: dict[str, Optional[str]] = {n: None for n in sorted(names)}
    against_env = ctx.against is Baseline.ENV
    rest = {n: environ.get(n) for n in cleared} if against_env else dict(cleared)
    if ctx.joint is not None:
        return {**rest, **ctx.joint.advised}, {**rest, **ctx.joint.baseline}
    advised = dict(cleared)
    advised.update({s.name: str(s.value) for s in rec.settings if s.kind == "env"})
    return advised, rest


def verify(rec: Recommendation, ctx: MeasureContext,
           environ: Optional[Mapping[str, str]] = None) -> Verification:
    """Re-measure ``rec`` (see the module docstring).  Raises ``LaunchError`` when a launch
    fails (the caller records the recommendation as not measurable)."""
    env_now = os.environ if environ is None else environ
    advised, baseline = overlays(rec, ctx, env_now)
    key = rec.id
    eff_a = {k: v for k, v in {**env_now, **advised}.items() if k in advised}
    eff_b = {k: v for k, v in {**env_now, **baseline}.items() if k in baseline}
    if eff_a == eff_b:
        return Verification(recommendation=key, verdict="no-effect",
                            reason="advised and baseline set the same variables: nothing to "
                                   "measure")
    sizes = set(QUICK_SIZES)
    for s in rec.settings:
        if s.type == "bytes" and isinstance(s.value, int) and s.value > 0:
            sizes |= {int(s.value), 2 * int(s.value)}
    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    ev = run_configs(ctx, {BASELINE: baseline, ADVISED: advised}, sorted(sizes), repeats,
                     QUICK_TARGET_S, ev_id=VERIFY, description="advised settings vs baseline, "
                     "interleaved launches of the openmpi ping-pong sweep",
                     values={"baseline": "environment" if ctx.against is Baseline.ENV
                             else "library defaults", "joint": ctx.joint is not None,
                             "advised_env": ";".join(f"{k}={v}" for k, v in advised.items()
                                                     if v is not None)})
    d = decide(ev, baseline=BASELINE)
    vs = d.verdicts.get(ADVISED, []) if d else []
    if not vs:
        return Verification(recommendation=key, verdict="not-measurable", evidence=[ev])
    losses = [v for v in vs if v.verdict == "worse"]
    wins = [v for v in vs if v.verdict == "better"]
    if losses:
        verdict, pick = "regression", min(losses, key=lambda v: v.ratio)
    elif wins:
        verdict, pick = "confirmed", max(wins, key=lambda v: v.ratio)
    else:
        verdict, pick = "no-effect", vs[0]
    ev = ev.model_copy(update={"values": {**ev.values, **d.as_values(),
                                          "decided_by": f"{pick.metric} at {pick.nbytes} bytes"}})
    return Verification(recommendation=key, verdict=verdict, ratio=pick.ratio,
                        ci_low=pick.ci_low, ci_high=pick.ci_high, noise_floor=pick.noise_floor,
                        reason="; ".join(v.text() for v in vs), evidence=[ev])
