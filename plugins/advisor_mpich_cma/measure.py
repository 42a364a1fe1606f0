"""What the mpich-cma probe runs through the harness: the check-time probes and the sweep.

* ``check``: library identity and effective defaults (``mpivars``), the live sibling
  ``process_vm_readv`` test, then a 2-rank MPI run with CMA forced on above the threshold; a
  failure is recorded as evidence (its cause is worked out by ``recommend``), never raised.
* ``measure``: CMA on vs off at every size, latency and bandwidth, switched through MPI_T in
  adjacent batches of each launch (``cma-paired``, ``advisor_mpich_cma.paired``), the switch
  checked first by tracing which path each written threshold sends by (one launch under
  ``strace``), or, where that cannot be traced, afterwards against fresh launches at a few
  sizes (``cma-switch-check``, ``advisor_mpich_cma.trust``); where MPI_T cannot switch it, or
  the check finds that the switch does not route as written, interleaved across independent
  launches (``cma-sweep``,
  ``run_sweeps``); one per rank pair (same / cross NUMA node when there are several).
  ``--option switch_check=0`` skips the check.  The advised threshold is then traced in the
  form emit writes (``cma-emitted-route``, ``advisor_mpich_cma.emitted``;
  ``--option emitted_check=0`` skips it).
"""

from __future__ import annotations

import time
from typing import Optional

from advisor.facts.mpi import mpi_facts
from advisor.facts.util import parse_cpulist
from advisor.libraries.mpich import find_mpivars, run_mpivars
from advisor.measure import shared_ceiling
from advisor.measure.mpi.causes import classify_log
from advisor.measure.mpi.rank import placement_values, rank_security
from advisor.measure.mpi.sweep import plan as sweep_plan
from advisor.measure.mpi.usability import sibling_evidence
from advisor.models import Conditions, Evidence, Facts, MpiFacts, Point, Series
from advisor.probe import Applicability, MeasureContext

from advisor_mpich_cma import knobs
from advisor_mpich_cma.evidence import BW, LAT, LIBRARY, OFF, ON, SIBLING, SMOKE, SWEEP
from advisor_mpich_cma.identity import cma_applicability, cvar_defaults, library_defaults
from advisor_mpich_cma.launch import config_env, launch_estimate, shown
from advisor_mpich_cma.paired import run_paired
from advisor_mpich_cma.records import decision_evidence
from advisor_mpich_cma.usability import usability
from advisor_mpich_cma.workers import RANK

#: Message sizes of the full sweep: powers of two from 1 KiB to 16 MiB (issue 4) plus points
#: between them near the crossovers reported for MPICH (8 KiB cell size / default threshold and
#: 16 KiB in 4.3.x; the AMD dip at 16 KiB in pmodels/mpich#7639).
FULL_SIZES = tuple(sorted({1 << k for k in range(10, 25)} | {6144, 12288, 24576}))
#: Quick sweep: a handful of sizes around the crossover and two large ones, plus 128 and
#: 256 KiB: the crossover measured on this project's 2-core AMD VM is 128 KiB (background.md §4),
#: which 64 KiB and 1 MiB alone cannot place.
QUICK_SIZES = (4096, 8192, 16384, 65536, 131072, 262144, 1 << 20)
#: Independent launches per configuration (A/A repeats give the noise floor: at least 2).
FULL_REPEATS, QUICK_REPEATS = 5, 3
#: Seconds of steady-state timing per size and measure inside one launch.  The full probe's
#: 0.03 s is the openmpi probe's; on the 2-core VM 10 full probes at 0.04 s and 10 at 0.03 s
#: gave the same advice (8 KiB, tie band 8 KiB alone, stability 1.00 in all 20, also with the
#: one-state rule set aside) at a median of 16.2 s and 14.9 s (bench_advice_stability.py).
FULL_TARGET_S, QUICK_TARGET_S = 0.03, 0.02
#: Message of the smoke run: well above every default threshold (16384 max, see knobs).
SMOKE_BYTES = 1 << 20
#: Sampling of the copy ceiling every bandwidth point is judged against (the 3x rule): the
#: host-buffer and openmpi probes' values for the same rule (``measure_common.run_ceiling``,
#: ``advisor_openmpi.sweep``).
CEILING_MIN_SAMPLES, CEILING_MAX_S = 5, 0.3
#: Timeouts (seconds) of one smoke / identity launch: a 2-rank MPICH start takes ~0.4 s here.
SMOKE_TIMEOUT_S = 60.0


def library_evidence(mpi: MpiFacts) -> tuple[Evidence, Optional[dict[str, str]]]:
    """The ``cma-library`` evidence: identity and defaults read with ``mpivars``."""
    cvars = None
    err = None
    if (mpi.implementation or "") == "mpich" and mpi.flavour != knobs.CRAY:
        path = find_mpivars()
        if path:
            try:
                cvars = cvar_defaults(run_mpivars(path))
            except Exception as exc:  # lenient: fall back to the labelled table
                err = f"{type(exc).__name__}: {exc}"
        else:
            err = "mpivars not found next to the interpreter or on PATH"
    d = library_defaults(mpi, cvars)
    values = {"implementation": mpi.implementation, "flavour": mpi.flavour,
              "version": mpi.version, "device": mpi.device,
              "library_version": mpi.library_version,
              "cma_enable_default": d.get("cma_enable"),
              "threshold_default_bytes": d.get("threshold_bytes"),
              "cell_size_default_bytes": d.get("cell_size_bytes"),
              "mode_default": d.get("mode"), "defaults_source": d["source"],
              "mpivars_error": err}
    ev = Evidence(id=LIBRARY, description="MPI library identity and the effective defaults of "
                  "its CMA settings (read from the installed library where possible)",
                  values={k: v for k, v in values.items() if v is not None})
    return ev, cvars


def smoke_evidence(flavour: Optional[str], threshold: int, *, launcher=None,
                   timeout_s: float = SMOKE_TIMEOUT_S, ev_id: str = SMOKE) -> Evidence:
    """A 2-rank run with CMA forced on from ``threshold`` and a message above it.

    Never raises for a failed job: the failure (errno from the ranks' output, their security
    state) is the evidence.
    """
    from advisor.measure import LaunchError, run_mpi

    env = config_env(flavour, ON, threshold)
    nbytes = max(SMOKE_BYTES, 4 * threshold)
    values: dict = {"message_bytes": nbytes, "threshold_bytes": threshold}
    try:
        res = run_mpi(RANK, ["smoke", "--bytes", str(nbytes)], env=env, timeout_s=timeout_s,
                      launcher=launcher)
        values.update(ok=bool(res.get("ok")), seconds=float(sum(res.get("seconds") or [0.0])),
                      **placement_values(res))
        if not res.get("ok"):
            values["error"] = "message content differs after the exchange"
    except LaunchError as exc:
        err = exc.stderr or str(exc)
        code = classify_log(err)
        ranks = rank_security(err)
        values.update(ok=False, errno=code if code is not None else -1,
                      error=_first_error(err) if code is not None else str(exc)[:500],
                      timed_out=bool(exc.timed_out))
        if code is None:  # no CMA error in the output: the job itself did not run
            values["launch_failed"] = True
        if ranks:
            values["rank_seccomp"] = max(int(r.get("seccomp") or 0) for r in ranks)
            values["rank_user_ns_distinct"] = len({r.get("user_ns") for r in ranks}) > 1
            values["rank_cap_eff"] = ranks[0].get("cap_eff") or ""
    return Evidence(id=ev_id, description="2-rank MPI run with CMA forced on above the "
                    "threshold (must complete)",
                    conditions=Conditions(env=shown(env), launcher=list(launcher) if launcher
                                          else None),
                    values={k: v for k, v in values.items() if v is not None})


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "process_vm" in line or "Fatal error" in line or "Abort" in line:
            return line.strip()[:300]
    return text.strip()[-300:]


def check(facts: Facts) -> Applicability:
    """The probe's ``check``: is CMA usable here (see the module docstring)?"""
    mpi = mpi_facts(facts)
    lib_ev, cvars = library_evidence(mpi)
    evidence = [lib_ev]
    evidence.append(sibling_evidence(SIBLING))
    applicable, why = cma_applicability(mpi, cvars)
    if applicable and evidence[-1].values.get("result") == "ok":
        from advisor.measure import mpi_launch_available

        ok, launch = mpi_launch_available()
        if ok:
            thr = int(lib_ev.values.get("threshold_default_bytes") or 0)
            evidence.append(smoke_evidence(mpi.flavour, thr))
        else:
            why += f"; no 2-rank MPI run possible ({launch})"
    use = usability(evidence, facts)
    smoke = [e for e in evidence if e.id == SMOKE]
    if smoke and smoke[0].values.get("launch_failed"):  # recommend adds launcher-failed
        return Applicability(usable=False, failed=True, evidence=evidence, reason=(
            "launcher failed: the 2-rank MPI run could not be started (not a CMA result): "
            + str(smoke[0].values.get("error", ""))))
    if smoke and smoke[0].values.get("ranks_one_node") is False:  # mpi-ranks-not-colocated
        return Applicability(usable=False, evidence=evidence, reason=(
            "the 2 MPI ranks ran on different nodes: MPI results not used"))
    if not applicable:
        return Applicability(usable=False, reason=why, evidence=evidence)
    return Applicability(usable=use.usable, reason=use.reason if not use.usable else why,
                         evidence=evidence)


def measure(ctx: MeasureContext) -> list[Evidence]:
    """The probe's ``measure``: ``run_sweeps`` for the MPI library of ``ctx.facts``."""
    return run_sweeps(ctx, mpi_facts(ctx.facts), started=time.monotonic())


def plan(ctx: MeasureContext) -> dict:
    """Sizes, repeats and per-size target seconds for this context
    (``advisor.measure.mpi.sweep.plan`` of this probe's quick and full sweeps)."""
    return sweep_plan(ctx, quick=(QUICK_SIZES, QUICK_REPEATS, QUICK_TARGET_S),
                      full=(FULL_SIZES, FULL_REPEATS, FULL_TARGET_S))


def pairs(facts) -> list[tuple[str, Optional[str]]]:
    """Rank pairs to sweep: ``[("", None)]`` on one NUMA node; with several, an intra-node pair
    (two CPUs of node 0) and a cross-NUMA pair (node 0 and node 1), as ``--cpus A/B``."""
    nodes = facts.memory.numa_node_cpus or {}
    if (facts.memory.numa_nodes or 1) < 2 or len(nodes) < 2:
        return [("", None)]
    keys = sorted(nodes, key=lambda k: int(k) if str(k).isdigit() else str(k))
    n0 = sorted(parse_cpulist(nodes[keys[0]]))
    n1 = sorted(parse_cpulist(nodes[keys[1]]))
    out: list[tuple[str, Optional[str]]] = []
    if len(n0) >= 2:
        out.append(("same-numa", f"{n0[0]}/{n0[1]}"))
    if n0 and n1:
        out.append(("cross-numa", f"{n0[0]}/{n1[0]}"))
    return out or [("", None)]


def run_sweeps(ctx: MeasureContext, mpi: MpiFacts,
               started: Optional[float] = None) -> list[Evidence]:
    """Run the interleaved sweep for every rank pair; returns ``cma-sweep[.pair]`` evidence
    (and a ``cma-mpi-smoke.launcher`` evidence first when ``ctx.launcher`` was given and fails).
    ``started``: when the measurement began (``time.monotonic()``; the paired launches' default
    measuring time counts from it, ``sequential.measure_end``; None: when the paired launches
    begin).

    Raises ``advisor.measure.LaunchError`` when a sweep launch fails for another reason than a
    CMA failure (the runner records the probe as failed).
    """
    from advisor.measure import conditions, interleave, plausibility, run_mpi

    out: list[Evidence] = []
    flavour = mpi.flavour
    if ctx.launcher:
        thr = knobs.knob(knobs.CRAY_SIZE if flavour == knobs.CRAY else knobs.CMA_THRESHOLD).default_for(
            mpi.version) or 0
        ev = smoke_evidence(flavour, int(thr), launcher=ctx.launcher,
                              ev_id=SMOKE + ".launcher",
                              timeout_s=max(5.0, min(SMOKE_TIMEOUT_S, ctx.remaining_s())))
        if ev.values.get("launch_failed"):
            from advisor.errors import ProbeFailed

            raise ProbeFailed(f"the launcher {' '.join(map(str, ctx.launcher))!r} could not run "
                              f"a 2-rank MPI job: {ev.values.get('error', '')}")
        out.append(ev)
        if not ev.values.get("ok"):
            return out
    p = plan(ctx)
    sizes, target = p["sizes"], p["target_s"]
    todo = pairs(ctx.facts)
    # the copy ceiling of this run at the largest message: every bandwidth point, paired or
    # not, is judged against it (clpeak's 3x rule, advisor.measure.plausibility), sampled as
    # the host-buffer and openmpi probes sample theirs for the same rule (5 copies at least,
    # 0.3 s: a median for a factor of 3, not a figure of its own; 1 s took 1.1 s of the probe)
    t_ceiling = time.monotonic()
    ceiling = shared_ceiling(max(sizes), source="mpich-cma", min_samples=CEILING_MIN_SAMPLES,
                             max_time_s=CEILING_MAX_S, deadline=ctx.deadline,
                             seed=ctx.seed).stats
    t_ceiling = time.monotonic() - t_ceiling
    if flavour != knobs.CRAY and ctx.options.get("paired", "1") != "0":
        from advisor_mpich_cma.trust import run_check, run_trace_check

        checking = ctx.options.get("switch_check", "1") != "0"
        # the switch traced first (one launch): an untrusted switch costs no paired launch;
        # the same launch traces the library default in the form emit writes, before any
        # MPI_T write, so advice that keeps the default needs no traced launch of its own
        check = (run_trace_check(ctx, mpi, env_threshold=default_threshold(ctx))
                 if checking else None)
        if check is not None and not check.values.get("trusted"):
            out.append(check)  # recommend says why the paired rounds were not used
            why_not = str(check.values.get("why"))
        else:
            paired, why_not = run_paired(ctx, mpi, p, todo, started)
            if paired:
                paired = [judged(e, ceiling, t_ceiling) for e in paired]
                if check is None and checking:  # not traceable here: checked by bandwidth
                    check = run_check(ctx, mpi, paired, target, cpus=todo[0][1])
                if check is None or check.values.get("trusted"):
                    decided = decision_evidence(paired, ctx)
                    thr = (int(decided[0].values.get("advice_threshold_bytes", -1)) if decided
                           else -1)
                    return (out + ([check] if check else []) + paired + decided
                            + emitted_evidence(ctx, mpi, thr, check))
                out.append(check)
                why_not = str(check.values.get("why"))
        ctx.progress(f"paired MPI_T mode not used ({why_not}): separate launches", 0.0)
    est = launch_estimate(sizes, target)
    configs = (ON, OFF)
    for idx, (pair, cpus) in enumerate(todo):
        share = ctx.remaining_s() / (len(todo) - idx)
        # rounds that fit the share (each round = one launch per configuration)
        repeats = max(1, min(p["repeats"], int(share // (est * len(configs))) or 1))
        raw: dict[tuple[str, int], dict] = {}
        envs = {c: config_env(flavour, c, 0) for c in configs}
        args = ["sweep", "--sizes", ",".join(map(str, sizes)), "--target-s", str(target)]
        if cpus:
            args += ["--cpus", cpus]

        def run_one(config: str, rnd: int) -> list[float]:
            timeout = max(10.0, min(ctx.remaining_s() + 10.0, 20 * est))
            res = run_mpi(RANK, args, env=envs[config], timeout_s=timeout,
                          launcher=ctx.launcher)
            raw[(config, rnd)] = res
            import statistics

            return [statistics.median(s["lat_s"]) for s in res["sizes"]]

        deadline = min(ctx.deadline, time.monotonic() + share) - est * len(configs)
        res = interleave(configs, run_one, repeats=repeats, deadline=deadline,
                         max_extra_rounds=0 if ctx.quick else 1, progress=ctx.progress)
        out.append(to_evidence(pair, raw, res.rounds, sizes, envs, ceiling, plausibility,
                                conditions, ctx, cpus, p, t_ceiling))
    from advisor_mpich_cma.trust import SWITCH_CHECK

    return out + emitted_evidence(ctx, mpi, advised_threshold(ctx, out),
                                  next((e for e in out if e.id == SWITCH_CHECK), None))


def advised_threshold(ctx: MeasureContext, evidence: list[Evidence]) -> int:
    """The CMA threshold (bytes) that ``recommend`` (pure) advises from ``evidence`` and the
    check-time evidence, kept default or not; -1 when it advises none."""
    from advisor_mpich_cma.recommend import recommend

    evs = list(ctx.applicability.evidence) if ctx.applicability else []
    for rec in recommend([*evs, *evidence], ctx.facts).recommendations:
        for s in rec.settings:
            if s.name == knobs.CMA_THRESHOLD:
                return int(s.value)
    return -1


def default_threshold(ctx: MeasureContext) -> Optional[int]:
    """The library default threshold (bytes) the check step read (``cma-library``), or None."""
    lib = Evidence.find(list(ctx.applicability.evidence) if ctx.applicability else [], LIBRARY)
    v = lib.values.get("threshold_default_bytes") if lib else None
    return int(v) if isinstance(v, (int, float)) and v >= 2 else None


def emitted_evidence(ctx: MeasureContext, mpi: MpiFacts, thr: int,
                     check: Optional[Evidence] = None) -> list[Evidence]:
    """The advised threshold ``thr`` (bytes; -1: none) traced in the form emit writes
    (``advisor_mpich_cma.emitted``; ``--option emitted_check=0`` skips it): taken from the
    switch check ``check`` when its launch traced that threshold so (``env_form.*`` values of
    ``trust.run_trace_check``), else in a launch of its own."""
    if thr < 2 or ctx.options.get("emitted_check", "1") == "0" or mpi.flavour == knobs.CRAY:
        return []
    from advisor_mpich_cma.emitted import evidence_of, run_route_check

    got = {k.removeprefix("env_form."): v for k, v in (check.values if check else {}).items()
           if k.startswith("env_form.")}
    if got.get("checked") and got.get("threshold_bytes") == thr:
        return [evidence_of(got)]
    return [run_route_check(ctx, mpi, thr)]


def judged(ev: Evidence, ceiling, seconds: float) -> Evidence:
    """``ev`` with its bandwidth points judged during measurement by the harness: above 3x the
    copy ceiling ``ceiling`` (``Stats``, bytes/s) -> ``checked_point`` (label, no samples, no
    warm-up, no statistics); then ``relabel`` (first touch into the receive buffer when its
    recorded fill is untouched, ``first_touch_artefact``).  Records the ceiling (median and
    peak, bytes/s), the seconds it took and ``artefact_points``."""
    from advisor.measure import CEILING_PEAK_KEY, checked_point, relabel

    series = [s.model_copy(update={"points": [checked_point(p, ceiling) for p in s.points]})
              if s.unit == "bytes/s" else s for s in ev.series]
    out = relabel(ev.model_copy(update={"series": series}))
    n = sum(1 for s in out.series for p in s.points if p.artefact)
    return out.model_copy(update={"values": {
        **out.values, "copy_ceiling_bytes_per_s": float(ceiling.median),
        CEILING_PEAK_KEY: float(ceiling.max), "copy_ceiling_seconds": round(seconds, 3),
        "artefact_points": n}})


def to_evidence(pair, raw, rounds, sizes, envs, ceiling, plausibility, conditions, ctx, cpus,
                 p, t_ceiling) -> Evidence:
    series: dict[str, list[Point]] = {}
    buffer = {}
    dst_fill = None
    for (config, rnd), res in sorted(raw.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        buffer = res.get("buffer") or buffer
        dst_fill = res.get("dst_fill") or dst_fill
        for s in res["sizes"]:
            n = int(s["bytes"])
            series.setdefault(f"{LAT}:{config}", []).append(Point(
                x=n, label=f"run{rnd}", samples=s["lat_s"], warmup=s["lat_warmup_s"]))
            bw = [n * s["window"] / t for t in s["bw_window_s"] if t > 0]
            bw_warm = [n * s["window"] / t for t in s["bw_warmup_s"] if t > 0]
            # judged against the ceiling below (judged): an artefact keeps no bandwidth
            series.setdefault(f"{BW}:{config}", []).append(Point(
                x=n, label=f"run{rnd}", samples=bw, warmup=bw_warm))
    sers = [Series(name=name, unit="s" if name.startswith(LAT) else "bytes/s",
                   x_name="message size", x_unit="bytes", points=pts)
            for name, pts in sorted(series.items())]
    env_note = {f"{c}:{k}": v for c, e in envs.items() for k, v in e.items() if v is not None}
    cond_fields = {k: v for k, v in buffer.items() if k in (
        "buffer_kind", "buffer_fill", "hugepages", "align_bytes")}
    cond = conditions(launcher=list(ctx.launcher) if ctx.launcher else None,
                      notes={"pair": pair or "default", "cpus": cpus or "unbound",
                             "configs": "cma-on: CMA forced at every size; cma-off: CMA disabled",
                             **({"dst_fill": dst_fill} if dst_fill else {}), **env_note},
                      **cond_fields)
    return judged(Evidence(
        id=SWEEP + (f".{pair}" if pair else ""),
        description="CMA forced on at every size vs off: one-way ping-pong latency and "
                    "osu_bw-style streaming bandwidth, interleaved across independent launches",
        series=sers, conditions=cond,
        values={"rounds": rounds, "sizes": len(sizes), "target_s_per_size": p["target_s"],
                "quick": bool(ctx.quick)}), ceiling, t_ceiling)
