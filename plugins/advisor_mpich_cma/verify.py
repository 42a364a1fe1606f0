"""mpich-cma's part of ``advisor verify``: ``CmaProbe.verify(recommendation, ctx)``.

Re-runs the plugin's own sweep (``advisor_mpich_cma.workers.rank sweep`` through ``advisor.measure``
``run_mpi`` and ``interleave``) with the recommended settings vs the library defaults (every CMA
variable and alias removed; with ``ctx.against == "env"``: vs the current environment).  With
``ctx.joint`` (``advisor verify``'s joint verification) the advised side is the whole emitted
environment (e.g. host-buffer's ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``, which changes the pages
MPICH's buffers get) and the baseline has all of it removed; the CMA aliases the environment does
not name are removed on both sides (defaults) or kept as they are (``against == "env"``).  Runs
alternate the two across independent launches, at the message sizes where the two
configurations can differ: from the lower to the upper of the two thresholds (or from the
threshold up, when one side disables CMA), plus one size above both as a control.  The runs are
analysed by the plugin's ``threshold.analyse_sweep`` (least disturbed half of the repeats, A/A noise
floor, bootstrap CI of the median ratio, latency and bandwidth).

Verdict: ``regression`` when any size is worse on latency or bandwidth (CI beyond the noise
floor), ``confirmed`` when some size is better and none worse, else ``no-effect``.  The
verification's ``ratio``/``ci_*``/``noise_floor`` (advised vs baseline, > 1 better) are those of
the deciding size and metric (evidence value ``decided_by``): the worst one for a regression, the
best one for a confirmation, the first size otherwise; every size's figures are in the evidence.
"""

from __future__ import annotations

import os
import time
from typing import Mapping, Optional

from advisor.models import Evidence, Recommendation, Verification
from advisor.probe import Baseline, JointEnv, MeasureContext

from advisor_mpich_cma import knobs as K
from advisor_mpich_cma.launch import clear, launch_estimate
from advisor_mpich_cma.measure import QUICK_TARGET_S, library_evidence, mpi_facts, to_evidence
from advisor_mpich_cma.threshold import analyse_sweep
from advisor_mpich_cma.workers import RANK

ADVISED, BASELINE = "advised", "baseline"
EVIDENCE_ID = "cma-verify"
#: Largest size measured (the sweep's top size, issue 4: 16 MiB).
MAX_BYTES = 1 << 24
#: Factors above a one-sided threshold measured when one configuration disables CMA: the
#: threshold itself, a mid-size and a large message (powers of two as in the sweep).
ONE_SIDED = (1, 4, 64)
#: Launches per configuration (A/A repeats give the noise floor: at least 2).
REPEATS, QUICK_REPEATS = 3, 2


def _cma_state(env: Mapping[str, Optional[str]], flavour: Optional[str],
               defaults: Mapping[str, Optional[int]]) -> tuple[bool, Optional[int]]:
    """(CMA on?, threshold bytes) for an env mapping, defaults where a name is unset."""
    def get(name: str) -> Optional[str]:
        k = K.knob(name)
        for n in [k.name, *k.aliases]:
            if env.get(n) is not None:
                return env[n]
        return None

    def as_int(v: Optional[str], fallback: Optional[int]) -> Optional[int]:
        try:
            return int(str(v).strip()) if v is not None else fallback
        except ValueError:
            return fallback

    if flavour == K.CRAY:
        mode = (get(K.CRAY_MODE) or str(defaults.get("mode") or "XPMEM")).strip().upper()
        gpu = (get(K.CRAY_GPU) or "0").strip() == "1"
        on = mode == "CMA" or (gpu and mode != "NONE")
        return on, as_int(get(K.CRAY_SIZE), defaults.get("threshold"))
    en = get(K.CMA_ENABLE)
    on = (en.strip().lower() in ("1", "yes", "true", "on")) if en is not None else bool(
        defaults.get("enable"))
    return on, as_int(get(K.CMA_THRESHOLD), defaults.get("threshold"))


def sizes_between(a: tuple[bool, Optional[int]], b: tuple[bool, Optional[int]], *,
                  quick: bool = False) -> list[int]:
    """Message sizes (bytes) at which configurations ``a`` and ``b`` ((on, threshold)) send
    differently, plus one size above both thresholds; empty when they never differ."""
    (on_a, t_a), (on_b, t_b) = a, b
    if not on_a and not on_b:
        return []
    if on_a and on_b:
        lo, hi = sorted((int(t_a or 0), int(t_b or 0)))
        if lo == hi:
            return []
        lo = max(lo, 1)
        mid = int((lo * hi) ** 0.5) // 1024 * 1024
        sizes = {lo, 2 * hi if 2 * hi <= MAX_BYTES else hi}
        if not quick and lo < mid < hi:
            sizes.add(mid)
        return sorted(sizes)
    lo = max(1, int((t_a if on_a else t_b) or 0))
    factors = ONE_SIDED[:2] if quick else ONE_SIDED
    return sorted({min(MAX_BYTES, lo * f) for f in factors})


def _overlays(rec: Recommendation, against_env: bool, environ: Mapping[str, str],
              joint: Optional[JointEnv] = None) -> tuple[dict, dict]:
    """(advised, baseline) env overlays for the sweep worker (None removes a variable)."""
    names = [K.CMA_ENABLE, K.CMA_THRESHOLD, K.CRAY_MODE, K.CRAY_SIZE]
    cleared = clear(names)
    if joint is not None:
        rest = {n: environ.get(n) for n in cleared} if against_env else dict(cleared)
        return {**rest, **joint.advised}, {**rest, **joint.baseline}
    advised = dict(cleared)
    advised.update({s.name: str(int(s.value) if isinstance(s.value, bool) else s.value)
                    for s in rec.settings if s.kind == "env"})
    if against_env:  # baseline: what the environment has now; advised: that plus the advice
        baseline = {n: environ.get(n) for n in cleared}
        for n in cleared:
            if n not in advised or advised[n] is None:
                advised[n] = None
        return advised, baseline
    return advised, dict(cleared)


def verify(rec: Recommendation, ctx: MeasureContext,
           environ: Optional[Mapping[str, str]] = None) -> Verification:
    """Re-measure ``rec`` (see the module docstring).  Raises ``LaunchError`` when a launch
    fails (the caller records the recommendation as not measurable)."""
    from advisor.measure import conditions, copy_ceiling, interleave, plausibility, run_mpi

    env_now = os.environ if environ is None else environ
    against_env = ctx.against is Baseline.ENV
    mpi = mpi_facts(ctx.facts)
    lib_ev, _ = library_evidence(mpi)
    lv = lib_ev.values
    defaults = {"enable": lv.get("cma_enable_default"), "threshold": lv.get("threshold_default_bytes"),
                "mode": lv.get("mode_default")}
    advised, baseline = _overlays(rec, against_env, env_now, ctx.joint)
    base_label = "environment" if against_env else "library defaults"
    if ctx.joint is not None:
        base_label = f"joint emitted environment vs {base_label}"

    def eff(overlay: Mapping[str, Optional[str]]) -> dict[str, Optional[str]]:
        return {**env_now, **overlay}

    sizes = sizes_between(_cma_state(eff(advised), mpi.flavour, defaults),
                          _cma_state(eff(baseline), mpi.flavour, defaults), quick=ctx.quick)
    key = rec.id
    if not sizes:
        return Verification(recommendation=key, verdict="no-effect", evidence=[Evidence(
            id=EVIDENCE_ID, description="advised and baseline send every message size the same "
            "way (same CMA state and threshold): nothing to measure", values={
                "advised_env": ";".join(f"{k}={v}" for k, v in advised.items() if v is not None),
                "baseline": base_label})])
    target = QUICK_TARGET_S
    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    t0 = time.monotonic()
    ceiling = copy_ceiling(max(sizes), max_time_s=0.3, deadline=ctx.deadline, seed=ctx.seed)
    t_ceiling = time.monotonic() - t0
    envs = {ADVISED: advised, BASELINE: baseline}
    args = ["sweep", "--sizes", ",".join(map(str, sizes)), "--target-s", str(target)]
    raw: dict = {}
    est = launch_estimate(sizes, target)

    def run_one(config: str, rnd: int) -> list[float]:
        import statistics

        res = run_mpi(RANK, args, env=envs[config], launcher=ctx.launcher,
                      timeout_s=max(10.0, min(ctx.remaining_s() + 10.0, 20 * est)))
        raw[(config, rnd)] = res
        return [statistics.median(s["lat_s"]) for s in res["sizes"]]

    res = interleave((BASELINE, ADVISED), run_one, repeats=repeats,
                     deadline=ctx.deadline - 2 * est, max_extra_rounds=0, progress=ctx.progress)
    plan = {"target_s": target}
    ev = to_evidence("", raw, res.rounds, sizes, envs, ceiling, plausibility, conditions, ctx,
                        None, plan, t_ceiling)
    verdicts = analyse_sweep(ev, on=ADVISED, off=BASELINE)
    values = dict(ev.values)
    for v in verdicts:
        values[f"lat_ratio_{v.nbytes}"] = v.lat_ratio
        values[f"lat_ci_{v.nbytes}"] = f"{v.lat_ci[0]:.4g}..{v.lat_ci[1]:.4g}"
        values[f"lat_verdict_{v.nbytes}"] = v.lat_verdict
        values[f"bw_ratio_{v.nbytes}"] = v.bw_ratio
        values[f"bw_ci_{v.nbytes}"] = f"{v.bw_ci[0]:.4g}..{v.bw_ci[1]:.4g}"
        values[f"bw_verdict_{v.nbytes}"] = v.bw_verdict
    values["baseline"] = base_label
    values["advised_env"] = ";".join(f"{k}={v}" for k, v in advised.items() if v is not None)
    ev = ev.model_copy(update={"id": EVIDENCE_ID, "values": values, "description":
                               "advised settings vs baseline, interleaved launches of the "
                               "mpich-cma sweep at the sizes where they differ"})
    def figures(v, want: str) -> tuple[str, float, tuple[float, float], float]:
        lat = ("latency", v.lat_ratio, v.lat_ci, v.lat_floor)
        bw = ("bandwidth", v.bw_ratio, v.bw_ci, v.bw_floor)
        if v.lat_verdict == want:
            return lat
        if v.bw_verdict == want:
            return bw
        return lat

    losers = [v for v in verdicts if v.loses]
    winners = [v for v in verdicts if not v.loses and "better" in (v.lat_verdict, v.bw_verdict)]
    if losers:
        verdict, want = "regression", "worse"
        pick = min(losers, key=lambda v: figures(v, want)[1])
    elif winners:
        verdict, want = "confirmed", "better"
        pick = max(winners, key=lambda v: figures(v, want)[1])
    elif verdicts:
        verdict, want, pick = "no-effect", "indistinguishable", verdicts[0]
    else:
        return Verification(recommendation=key, verdict="not-measurable", evidence=[ev])
    metric, ratio, ci, floor = figures(pick, want)
    ev = ev.model_copy(update={"values": {**ev.values, "decided_by": f"{metric} at "
                                          f"{pick.nbytes} bytes"}})
    return Verification(recommendation=key, verdict=verdict, ratio=ratio, ci_low=ci[0],
                        ci_high=ci[1], noise_floor=floor, evidence=[ev])
