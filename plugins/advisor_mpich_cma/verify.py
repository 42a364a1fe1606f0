"""mpich-cma's part of ``advisor verify``: ``CmaProbe.verify(recommendation, ctx)``.

Measures the recommended settings vs the library defaults (every CMA variable and alias
removed; with ``ctx.against == "env"``: vs the current environment) at the message sizes where
the two configurations can differ: from the lower to the upper of the two thresholds (or from
the threshold up, when one side disables CMA), plus one size above both as a control.  With
``ctx.joint`` (``advisor verify``'s joint verification) the advised side is the whole emitted
environment (e.g. host-buffer's ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``, which changes the pages
MPICH's buffers get) and the baseline has all of it removed; the CMA aliases the environment does
not name are removed on both sides (defaults) or kept as they are (``against == "env"``).

How (design: "compare configurations paired, inside one process where the library allows a
run-time switch"; background.md section 4: separate launches on this VM confound the copy
path's fast/slow state with the setting):

* **paired** where the switch is trusted (:func:`paired_thresholds`: upstream MPICH, the two
  sides differ only in the CMA variables; and the two thresholds, written through MPI_T in one
  launch under ``strace``, route as they say: ``trust.run_trace_check``, skipped with option
  ``switch_check=0``; MPICH 4.3.2 fails it): each launch starts with CMA enabled (MPICH's init
  check stays in force) and the worker writes the advised and the baseline threshold through
  MPI_T in adjacent batches, round after round (``workers.rank paired --values``; a side
  with CMA disabled is the threshold 2**30, above every size, as the probe's ``cma-off``).
  ``REPEATS`` launches sample the machine's states;
* **launches** otherwise (or when MPI_T cannot switch, or with option ``paired=0``):
  interleaved independent launches of the sweep worker, one per configuration and round.

The verdict is ``advisor_mpich_cma.verdict.decide``: one test per size and metric (latency,
bandwidth), CIs at the Bonferroni level of the family, each judged against its measured A/A
floor; ``regression`` when a test is worse, ``confirmed`` when one is better and none worse,
else ``no-effect``.  The verification's ``ratio``/``ci_*``/``noise_floor`` (advised vs baseline,
> 1 better) are those of the deciding test (evidence value ``decided_by``); every test's
figures are in the evidence.
"""

from __future__ import annotations

import os
import time
from typing import Mapping, Optional

from advisor.facts.mpi import mpi_facts
from advisor.measure.mpi.loops import THRESHOLD_OFF
from advisor.models import Evidence, Point, Recommendation, Series, Verification
from advisor.baseline import Baseline
from advisor.probe import JointEnv, MeasureContext

from advisor_mpich_cma import knobs
from advisor_mpich_cma.evidence import BW, LAT, ON
from advisor_mpich_cma.launch import (LAUNCH_OVERHEAD_S, clear, config_env, launch_estimate,
                                      shown)
from advisor_mpich_cma.measure import QUICK_TARGET_S, library_evidence, to_evidence
from advisor_mpich_cma.paired import FULL_ROUNDS
from advisor_mpich_cma.verdict import ADVISED, BASELINE, LAUNCHES, PAIRED, decide
from advisor_mpich_cma.workers import RANK

EVIDENCE_ID = "cma-verify"
#: Largest size measured (the sweep's top size, issue 4: 16 MiB).
MAX_BYTES = 1 << 24
#: Factors above a one-sided threshold measured when one configuration disables CMA: the
#: threshold itself, a mid-size and a large message (powers of two as in the sweep).
ONE_SIDED = (1, 4, 64)
#: Launches: paired launches (each holds both configurations), or launches per configuration
#: (at least 2: the A/A floor of the launches mode).  The machine's state changes the effect
#: itself from launch to launch (measured on the 2-core VM under load: threshold 16 vs 8 KiB
#: was x1.1-1.4 better at 8-11 KiB in 7 of 24 paired launches and x0.6-0.9 worse in 17), and
#: the verdict's CI holds every launch's ratio (``verdict``): resampling 5 of those 24
#: launches gave regression 13 times in 60 and confirmed never, 3 launches gave 27 and 3 (a
#: contradiction).  ~5 s per launch of 3 sizes.
REPEATS, QUICK_REPEATS = 5, 3
#: Seconds of timed batches per size, metric and configuration in one paired launch (the
#: worker spreads them over ``ROUNDS`` rounds), the same with ``--quick`` (which saves on
#: launches and sizes instead).  Measured on the 2-core VM (bench/bench_verify_aa.py, load
#: average 1-5): at 0.25 s and 32 rounds a launch of 3 sizes took ~5 s, none of 60 A/A runs
#: gave a false alarm and a planted 10 % loss was found in 55 of 60 (16, 19, 20 of 20 in three
#: benches); quick runs with 0.1 s and 16 rounds found it in 15 of 20 (the A/A floor is wider
#: with fewer, shorter batches), quick runs with these batches in 20 of 20, no false alarm.
PAIRED_TARGET_S = 0.25
ROUNDS = FULL_ROUNDS


def _cma_state(env: Mapping[str, Optional[str]], flavour: Optional[str],
               defaults: Mapping[str, Optional[int]]) -> tuple[bool, Optional[int]]:
    """(CMA on?, threshold bytes) for an env mapping, defaults where a name is unset."""
    def get(name: str) -> Optional[str]:
        k = knobs.knob(name)
        for n in [k.name, *k.aliases]:
            if env.get(n) is not None:
                return env[n]
        return None

    def as_int(v: Optional[str], fallback: Optional[int]) -> Optional[int]:
        try:
            return int(str(v).strip()) if v is not None else fallback
        except ValueError:
            return fallback

    if flavour == knobs.CRAY:
        mode = (get(knobs.CRAY_MODE) or str(defaults.get("mode") or "XPMEM")).strip().upper()
        gpu = (get(knobs.CRAY_GPU) or "0").strip() == "1"
        on = mode == "CMA" or (gpu and mode != "NONE")
        return on, as_int(get(knobs.CRAY_SIZE), defaults.get("threshold"))
    en = get(knobs.CMA_ENABLE)
    on = (en.strip().lower() in ("1", "yes", "true", "on")) if en is not None else bool(
        defaults.get("enable"))
    return on, as_int(get(knobs.CMA_THRESHOLD), defaults.get("threshold"))


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
    names = [knobs.CMA_ENABLE, knobs.CMA_THRESHOLD, knobs.CRAY_MODE, knobs.CRAY_SIZE]
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


def paired_thresholds(advised: Mapping[str, Optional[str]], baseline: Mapping[str, Optional[str]],
                      flavour: Optional[str], defaults: Mapping[str, Optional[int]]
                      ) -> tuple[Optional[tuple[int, int]], str]:
    """``((advised, baseline) thresholds in bytes, "")`` to write through MPI_T when the switch
    is trusted for effective environments ``advised`` / ``baseline`` (this process's environment
    with the overlays applied), else ``(None, why not)``.  Trusted: upstream MPICH (the
    threshold CVAR is honoured per message at run time: ``mpit`` module docstring) and no other
    variable differs (those are read at process start).  A side with CMA disabled is written
    as ``THRESHOLD_OFF`` (above every measured size)."""
    if flavour == knobs.CRAY:
        return None, "HPE Cray MPICH: no MPI_T switch of its CMA variables is known"
    cma = set(clear([knobs.CMA_ENABLE, knobs.CMA_THRESHOLD, knobs.CRAY_MODE, knobs.CRAY_SIZE]))
    other = sorted(n for n in set(advised) | set(baseline)
                   if n not in cma and advised.get(n) != baseline.get(n))
    if other:
        return None, (f"the two sides also differ in {', '.join(other)}, read at process start "
                      "(no run-time switch)")
    out = []
    for env in (advised, baseline):
        on, thr = _cma_state(env, flavour, defaults)
        if on and thr is None:
            return None, "the default threshold is unknown"
        out.append(int(thr) if on else THRESHOLD_OFF)
    return (out[0], out[1]), ""


def paired_series(results: list[dict]) -> list[Series]:
    """The ``paired`` layout's series (``advisor_mpich_cma.verdict``) from the worker results of
    paired launches written with ``--values ADVISED,BASELINE`` (``on`` = advised, ``off`` =
    baseline): ``latency:advised`` ... one point per size and launch (label ``launch<k>``),
    one sample per round (seconds one way; bytes/s)."""
    series: dict[str, list[Point]] = {}
    for k, res in enumerate(results):
        for row in res["sizes"]:
            for metric, key, unit in ((LAT, "lat", "s"), (BW, "bw", "Bps")):
                for cfg, side in ((ADVISED, "on"), (BASELINE, "off")):
                    series.setdefault(f"{metric}:{cfg}", []).append(Point(
                        x=int(row["bytes"]), label=f"launch{k}",
                        samples=list(row[f"{key}_{side}_{unit}"])))
    return [Series(name=n, unit="s" if n.startswith(LAT) else "bytes/s", x_name="message size",
                   x_unit="bytes", points=pts) for n, pts in sorted(series.items())]


def measure_paired(ctx: MeasureContext, sizes: list[int], values: tuple[int, int], env: dict,
                   repeats: int) -> tuple[Optional[Evidence], str]:
    """``repeats`` paired launches writing ``values`` (advised, baseline threshold, bytes) at
    ``sizes`` under the overlay ``env``: ``(cma-verify evidence of mode paired, "")``, or
    ``(None, why)`` when MPI_T could not switch in the first launch.  Launches stop early when
    the next would end after ``ctx.deadline``.  :raises LaunchError: a later launch failed.
    ``env``: :func:`paired_env`.  ``values`` equal is an A/A (bench/bench_verify_aa.py)."""
    from advisor.measure import LaunchError, conditions, run_mpi

    rounds = int(ctx.options.get("rounds", ROUNDS))
    target = PAIRED_TARGET_S
    # the planning estimate of one launch (2 configurations per size and metric)
    est = launch_estimate(sizes, 2 * target)
    share = ctx.remaining_s() / max(1, repeats)
    if est > share:  # shorter batches, so that every launch fits its share, but no shorter
        # than the probe's paired mode lets them get (paired.run_paired: a quarter of its target)
        timed = max(0.0, share - LAUNCH_OVERHEAD_S) / (est - LAUNCH_OVERHEAD_S)
        target = max(PAIRED_TARGET_S / 4, target * timed)
        est = launch_estimate(sizes, 2 * target)
    args = ["paired", "--sizes", ",".join(map(str, sizes)), "--target-s", f"{target:.4f}",
            "--rounds", str(rounds), "--values", f"{values[0]},{values[1]}"]
    results: list[dict] = []
    took: list[float] = []
    for k in range(repeats):
        if k and time.monotonic() + sum(took) / len(took) > ctx.deadline:
            break  # the next launch would end after the deadline (mean launch time so far)
        ctx.progress(f"paired launch {k + 1}/{repeats} (advised/baseline threshold switched "
                     "through MPI_T)", k / repeats)
        t0 = time.monotonic()
        res = run_mpi(RANK, args, env=env, launcher=ctx.launcher,
                      timeout_s=max(10.0, min(ctx.remaining_s() + 10.0, 20 * est)))
        took.append(time.monotonic() - t0)
        if res.get("mpit_error") or not res.get("sizes"):
            why = str(res.get("mpit_error") or "no sizes returned")
            if k == 0:
                return None, why
            raise LaunchError(f"paired verify launch {k + 1} returned no sizes: {why}")
        results.append(res)
    cond = conditions(launcher=list(ctx.launcher) if ctx.launcher else None, notes={
        "configs": f"one launch with CMA enabled per repeat; MPI_T threshold {values[0]} "
                   f"(advised) / {values[1]} (baseline) in adjacent batches", **shown(env)})
    return Evidence(id=EVIDENCE_ID, description="advised vs baseline CMA threshold switched "
                    "through MPI_T between adjacent batches of one launch, per round: one-way "
                    "ping-pong seconds, osu_bw-style bytes/s", series=paired_series(results),
                    conditions=cond,
                    values={"mode": PAIRED, "launches": len(took), "rounds": rounds,
                            "target_s": round(target, 4), "advised_threshold_bytes": values[0],
                            "baseline_threshold_bytes": values[1], "quick": bool(ctx.quick)}), ""


def measure_launches(ctx: MeasureContext, sizes: list[int], advised: dict, baseline: dict,
                     repeats: int) -> Evidence:
    """The ``launches`` layout (``advisor_mpich_cma.verdict``): ``repeats`` rounds of one
    sweep launch per configuration (overlays ``advised`` / ``baseline``), interleaved, at
    ``sizes``; ``cma-verify`` evidence with value ``mode = "launches"``.  :raises LaunchError:
    a launch failed."""
    from advisor.measure import conditions, copy_ceiling, interleave, plausibility, run_mpi

    target = QUICK_TARGET_S
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
    ev = to_evidence("", raw, res.rounds, sizes, envs, ceiling, plausibility, conditions, ctx,
                     None, {"target_s": target}, t_ceiling)
    return ev.model_copy(update={"id": EVIDENCE_ID, "values": {**ev.values, "mode": LAUNCHES},
                                 "description": "advised settings vs baseline, interleaved "
                                 "launches of the mpich-cma sweep at the sizes where they differ"})


def paired_env(advised: Mapping[str, Optional[str]], flavour: Optional[str],
               threshold: int) -> dict[str, Optional[str]]:
    """The overlay of a paired launch: ``advised`` without the CMA variables (both sides hold
    the same rest: ``paired_thresholds``), CMA enabled at init from ``threshold`` (MPICH's init
    check stays in force; the worker then writes the thresholds)."""
    cma = clear([knobs.CMA_ENABLE, knobs.CMA_THRESHOLD])
    return {**{n: v for n, v in advised.items() if n not in cma},
            **config_env(flavour, ON, threshold)}


def verify(rec: Recommendation, ctx: MeasureContext,
           environ: Optional[Mapping[str, str]] = None) -> Verification:
    """Re-measure ``rec`` (see the module docstring).  Raises ``LaunchError`` when a launch
    fails (the caller records the recommendation as not measurable)."""
    env_now = os.environ if environ is None else environ
    against_env = ctx.against is Baseline.ENV
    mpi = mpi_facts(ctx.facts)
    lib_ev, _ = library_evidence(mpi)
    lv = lib_ev.values
    defaults = {"enable": lv.get("cma_enable_default"),
                "threshold": lv.get("threshold_default_bytes"), "mode": lv.get("mode_default")}
    advised, baseline = _overlays(rec, against_env, env_now, ctx.joint)
    base_label = "environment" if against_env else "library defaults"
    if ctx.joint is not None:
        base_label = f"joint emitted environment vs {base_label}"

    def eff(overlay: Mapping[str, Optional[str]]) -> dict[str, Optional[str]]:
        return {**env_now, **overlay}

    sizes = sizes_between(_cma_state(eff(advised), mpi.flavour, defaults),
                          _cma_state(eff(baseline), mpi.flavour, defaults), quick=ctx.quick)
    key = rec.id
    labels = {"advised_env": ";".join(f"{k}={v}" for k, v in advised.items() if v is not None),
              "baseline": base_label}
    if not sizes:
        return Verification(recommendation=key, verdict="no-effect", evidence=[Evidence(
            id=EVIDENCE_ID, description="advised and baseline send every message size the same "
            "way (same CMA state and threshold): nothing to measure", values=labels)])
    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    values, why_not = paired_thresholds(eff(advised), eff(baseline), mpi.flavour, defaults)
    if values is not None and ctx.options.get("paired", "1") != "0" and ctx.options.get(
            "switch_check", "1") != "0":
        # the two thresholds it would write, traced first (as the probe does): a release
        # whose run-time switch does not route them (MPICH 4.3.2) is verified by launches
        from advisor_mpich_cma.trust import run_trace_check

        check = run_trace_check(ctx, mpi, values)
        if check is not None and not check.values.get("trusted"):
            values, why_not = None, f"MPI_T switch untrusted: {check.values.get('why')}"
    if values is not None and ctx.options.get("paired", "1") != "0":
        ev, why_not = measure_paired(ctx, sizes, values,
                                     paired_env(advised, mpi.flavour, values[1]), repeats)
        if ev is not None:
            return decide(ev.model_copy(update={"values": {**ev.values, **labels}}), key)
    elif values is not None:
        why_not = "option paired=0"
    ctx.progress(f"separate launches ({why_not})", 0.0)
    ev = measure_launches(ctx, sizes, advised, baseline, repeats)
    return decide(ev.model_copy(update={"values": {**ev.values, **labels,
                                                   "why_not_paired": why_not}}), key)
