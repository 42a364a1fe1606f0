"""Interleaved launches of the ping-pong sweep, one configuration (env overlay) per launch,
recorded as one evidence: shared by ``measure`` (``ompi-paths``), ``limits`` (``ompi-limits``)
and ``verify`` (``ompi-verify``).  Layout: ``advisor_openmpi.evidence``."""

from __future__ import annotations

import os
import statistics
from typing import TYPE_CHECKING, Callable, Mapping, Optional

from advisor.measure.mpi import RANK
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from advisor_openmpi.evidence import BW, LAT

if TYPE_CHECKING:  # pragma: no cover
    from advisor_openmpi.decide import Decision

#: Open MPI's launcher refuses to run as root without these (``mpirun --help``).
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def root_env() -> dict[str, str]:
    """``ROOT_ENV`` when running as root, else empty."""
    return dict(ROOT_ENV) if hasattr(os, "geteuid") and os.geteuid() == 0 else {}


#: Why the rounds stopped (evidence value ``stopped``).
STOP_STABLE, STOP_BUDGET, STOP_CAP, STOP_PLANNED = "stable", "budget", "round cap", "planned"


def run_configs(ctx: MeasureContext, envs: Mapping[str, Mapping[str, Optional[str]]],
                sizes: list[int], repeats: int, target: float, *, ev_id: str,
                description: str, values: Optional[dict] = None,
                max_extra_rounds: int = 0,
                stable: Optional[Callable[[Evidence], Optional["Decision"]]] = None,
                max_rounds: int = 0) -> Evidence:
    """Interleave the configurations ``envs`` (name -> env overlay) across launches of the
    ping-pong sweep and record them as one evidence (layout: ``advisor_openmpi.evidence``).

    Sequential measurement: with ``stable`` (the evidence as the profile keeps it,
    ``advisor.measure.thinning.thin_evidence``, -> its ``decide.Decision``, or None when there is no
    decision), one more round (a launch of every configuration) follows the planned
    ``repeats`` while the decision's stability is below ``advisor.measure.STABLE_SHARE``, a
    round fits before ``ctx.deadline`` and fewer than ``max_rounds`` ran.  Values ``stopped``
    (why: stable / budget / round cap / planned) and ``stability_by_round`` record it, and
    ``decision.<key>`` the last decision's figures (``Decision.as_values``: advice, best,
    stability, tie band, regret per configuration): what ``recommend`` decides on the stored
    evidence.
    Raises ``LaunchError`` when a launch fails (the runner records the probe as failed)."""
    from advisor.measure import STABLE_SHARE, interleave, run_mpi, shared_ceiling

    raw: dict[tuple[str, int], dict] = {}
    args = ["sweep", "--sizes", ",".join(map(str, sizes)), "--target-s", str(target)]
    # one launch: ~1.2 s start + 2 measures per size of `target` s plus warm-up and calibration
    est = 1.5 + 3 * 2 * target * len(sizes)
    full_env = {c: {**e, **root_env()} for c, e in envs.items()}

    offset = [0]  # rounds already run: later interleave calls number theirs after them

    def run_one(config: str, rnd: int) -> list[float]:
        res = run_mpi(RANK, args, env=full_env[config], launcher=ctx.launcher,
                      timeout_s=max(20.0, min(ctx.remaining_s() + 10.0, 20 * est)))
        raw[(config, rnd + offset[0])] = res
        return [statistics.median(s["lat_s"]) for s in res["sizes"]]

    deadline = ctx.deadline - est * len(envs)
    res = interleave(list(envs), run_one, repeats=repeats, deadline=deadline,
                     max_extra_rounds=max_extra_rounds, progress=ctx.progress)
    rounds, truncated = res.rounds, res.truncated
    # this run's copy ceiling at the largest message: a bandwidth above 3x it is an artefact
    # (clpeak's rule, advisor.measure.plausibility), stored with its label and no samples
    ceiling = shared_ceiling(max(sizes), source="openmpi", min_samples=5, max_time_s=0.3,
                             deadline=ctx.deadline, seed=ctx.seed).stats

    def record() -> Evidence:
        return _evidence(ctx, envs, raw, sizes, ceiling, ev_id, description, target,
                         {"rounds": rounds, "truncated": truncated, **(values or {})})

    ev = record()
    if stable is None:
        return ev
    from advisor.measure.thinning import thin_evidence

    history: list[float] = []
    stopped = STOP_PLANNED
    while True:
        # the decision on the samples the profile keeps, which is what recommend decides on:
        # on the whole samples the stop rule once read 0.82 where the stored advice read 0.76
        last = stable(thin_evidence(ev))
        got = last.stability if last is not None else None
        history.append(got if got is not None else 0.0)
        if got is None or got >= STABLE_SHARE:
            stopped = STOP_STABLE if got is not None else STOP_PLANNED
            break
        if rounds >= max_rounds:
            stopped = STOP_CAP
            break
        if ctx.remaining_s() < est * len(envs):
            stopped = STOP_BUDGET
            break
        offset[0] = rounds
        ctx.progress(f"one more round: stability {got:.2f} < {STABLE_SHARE}", None)
        more = interleave(list(envs), run_one, repeats=1, max_extra_rounds=0)
        rounds += more.rounds
        ev = record()
    return ev.model_copy(update={"values": {
        **ev.values, "stopped": stopped,
        "stability_by_round": ",".join(f"{x:.2f}" for x in history),
        **({f"decision.{k}": v for k, v in last.as_values().items()} if last else {})}})


def _evidence(ctx: MeasureContext, envs, raw: dict, sizes: list[int], ceiling, ev_id: str,
              description: str, target: float, values: dict) -> Evidence:
    """The evidence of the rounds in ``raw`` ((config, round) -> the worker's result)."""
    from advisor.measure import CEILING_PEAK_KEY, checked_point, conditions, relabel

    series: dict[str, list[Point]] = {}
    dst_fill = None
    for (config, rnd), r in sorted(raw.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        dst_fill = r.get("dst_fill") or dst_fill
        for s in r["sizes"]:
            n = int(s["bytes"])
            series.setdefault(f"{LAT}:{config}", []).append(Point(
                x=n, label=f"run{rnd}", samples=s["lat_s"], warmup=s["lat_warmup_s"]))
            bw = [n * s["window"] / t for t in s["bw_window_s"] if t > 0]
            series.setdefault(f"{BW}:{config}", []).append(checked_point(Point(
                x=n, label=f"run{rnd}", samples=bw,
                warmup=[n * s["window"] / t for t in s["bw_warmup_s"] if t > 0]), ceiling))
    sers = [Series(name=k, unit="s" if k.startswith(LAT) else "bytes/s", x_name="message size",
                   x_unit="bytes", points=v) for k, v in series.items()]
    env_note = {f"{c}:{k}": ("" if v is None else str(v)) for c, e in envs.items()
                for k, v in e.items() if v is not None}
    cond = conditions(launcher=list(ctx.launcher) if ctx.launcher else None,
                      env=root_env(), notes={**env_note,
                                             **({"dst_fill": dst_fill} if dst_fill else {})})
    vals = {"paths": ",".join(envs), "sizes": len(sizes),
            "target_s_per_size": target, "quick": bool(ctx.quick),
            "copy_ceiling_bytes_per_s": float(ceiling.median), CEILING_PEAK_KEY: ceiling.max}
    vals.update(values)
    # first touch into the receive buffer, when its recorded fill says untouched (relabel)
    return relabel(Evidence(id=ev_id, description=description, series=sers, conditions=cond,
                            values=vals))
